// Per-packet cost of the switch model's hot path: admit (with ECN on enqueue and the PFC
// check of a lossless PG) followed by dequeue (scheduler, release, PFC check).
#include <benchmark/benchmark.h>

#include "rocelab/fabric/clock.hpp"
#include "rocelab/fabric/switch_model.hpp"

namespace {

using namespace rocelab::fabric;

switch_config bench_config(int ports, bool lossless) {
  switch_config cfg;
  cfg.buffer_bytes = 32 * 1024 * 1024;
  cfg.cell_bytes = 256;
  cfg.lossless_priorities = lossless ? 0b0000'1000 : 0;
  for (int i = 0; i < ports; ++i) {
    port_config p;
    p.rate_bps = 100'000'000'000;
    for (auto& pg : p.pgs) {
      pg.reserve_bytes = 4096;
      pg.shared = buffer_threshold::dynamic(-3);
      pg.headroom_bytes = 64 * 1024;
      pg.xon_offset_bytes = 3 * 1024;
    }
    for (auto& q : p.queues) {
      q.reserve_bytes = 4096;
      q.shared = buffer_threshold::dynamic(0);
      q.ecn = {true, 100'000, 400'000, 0.2};
    }
    cfg.ports.push_back(p);
  }
  return cfg;
}

// Keeps `depth` packets resident per queue so ECN sits in its probabilistic band and the
// thresholds are evaluated against a non-empty buffer, then measures one admit+dequeue.
void BM_admit_dequeue(benchmark::State& state) {
  const int ports = 32;
  const bool lossless = state.range(0) != 0;
  const auto depth = static_cast<int>(state.range(1));
  virtual_clock clk;
  auto sw = switch_model::create(bench_config(ports, lossless), clk).value();
  packet pkt;
  pkt.size_bytes = 1048;
  pkt.priority = 3;
  pkt.ecn = ecn_codepoint::ect0;
  for (int i = 0; i < depth; ++i) {
    pkt.ingress_port = static_cast<std::uint16_t>(i % (ports - 1) + 1);
    pkt.egress_port = 0;
    (void)sw->admit(pkt, 0);
  }
  std::int64_t now = 0;
  std::uint16_t in = 1;
  for (auto _ : state) {
    pkt.ingress_port = in;
    in = static_cast<std::uint16_t>(in % (ports - 1) + 1);
    benchmark::DoNotOptimize(sw->admit(pkt, now));
    now = sw->next_transmit_time_ns(0);
    auto d = sw->dequeue(0, now);
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_admit_dequeue)->Args({1, 0})->Args({1, 200})->Args({0, 200});

void BM_virtual_clock_schedule_step(benchmark::State& state) {
  struct noop final : timer_client {
    std::uint64_t n = 0;
    void on_timer(std::int64_t, std::uint64_t c) override { n += c; }
  } client;
  virtual_clock clk;
  clk.reserve(1 << 16);
  const auto backlog = state.range(0);
  for (std::int64_t i = 0; i < backlog; ++i) clk.schedule(i * 7 % 1000 + 1, client, 1);
  std::int64_t t = 1000;
  for (auto _ : state) {
    clk.schedule(t += 3, client, 1);
    clk.step();
  }
  benchmark::DoNotOptimize(client.n);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_virtual_clock_schedule_step)->Arg(1000)->Arg(100000);

}  // namespace

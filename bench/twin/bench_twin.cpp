// bench_twin: wall time of the twin on the work the HPCC ns-3 simulator was timed on
// (shared/scenarios/hpcc-ns3/README.md), with its modelling choices (hpcc_ns3_compat):
//   ls64_ws50      4 leaves x 16 hosts at 100G, 4 spines at 400G, 1 us links, 32 MB buffers,
//                  the scenario's own flow.txt (2,344 WebSearch flows at 50% load plus a
//                  16 x 500 KB incast); ns-3: 20.8 ms simulated in 48.3 s (0.55 M hops/s).
//   incast16_32MB  16 x 8 MB into one host through one switch; ns-3: last flow 13.02 ms,
//                  0.70-0.77 s wall.
//   incast16_2MB   the same with a 2 MB buffer; ns-3: last flow 12.02 ms, 1,254 pauses.
// It also runs the leaf-spine without compat (rocelab's own frame sizes, preamble/IFG,
// ECN at enqueue, CNP packets, mlx5 DCQCN) to show the cost of the full model.
//
// Prints wall time, simulated time, packet-hops through switches per second of wall
// time and the wall/simulated ratio.
//
// Then a parallel sweep: `sweep_runs` incast runs (16 x 8 MB into one host, compat mode,
// seeds 1.., buffers cycling 2/4/32 MB) spread over 1 thread and then over every
// hardware thread, one twin per run and per thread (the twin is single-threaded and
// shares nothing), reporting runs/s and the speedup over one thread.
// Usage: bench_twin [path/to/scenarios/hpcc-ns3] [repeats (0: sweep only)] [sweep_runs (0: no sweep)] [threads]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "rocelab/fabric/twin/twin.hpp"
#include "rocelab/traffic/message_list.hpp"

namespace {

using namespace rocelab;
using namespace rocelab::fabric;
using namespace rocelab::fabric::twin;

// HPCC ns-3 config.txt of these scenarios, in twin terms.
twin_config hpcc_config(std::int64_t buffer_mb) {
  twin_config c;
  c.hpcc_ns3_compat = true;
  c.topology.link_gbps = 100;
  c.topology.link_delay_ns = 1000;
  c.switch_template.buffer_bytes = buffer_mb * 1024 * 1024;  // BUFFER_SIZE, MB
  // KMIN_MAP/KMAX_MAP in KB (x1000), PMAX_MAP.
  c.ecn_by_rate = {{100, ecn_config{true, 400'000, 1'600'000, 0.2}},
                   {400, ecn_config{true, 1'600'000, 6'400'000, 0.2}}};
  c.nic.mtu_bytes = 1000;     // PACKET_PAYLOAD_SIZE
  c.nic.ack_priority = 0;     // ACK_HIGH_PRIO 1
  c.nic.data_priority = 3;    // flow.txt priority
  auto& d = c.nic.dcqcn;
  d.rpg_ai_rate_mbps = 20;    // RATE_AI
  d.rpg_hai_rate_mbps = 200;  // RATE_HAI
  d.rpg_min_rate_mbps = 1000; // MIN_RATE
  d.dce_tcp_g = 1020;         // EWMA_GAIN 1/256 = (1024 - 1020) / 1024
  d.initial_alpha_value = 1024;
  d.dce_tcp_rtt_us = 1;                 // ALPHA_RESUME_INTERVAL
  d.rate_reduce_monitor_period_us = 4;  // RATE_DECREASE_INTERVAL
  d.rpg_time_reset_us = 300;            // RP_TIMER
  d.rpg_threshold = 1;                  // FAST_RECOVERY_TIMES
  d.clamp_tgt_rate = false;             // CLAMP_TARGET_RATE
  return c;
}

// flow.txt: count, then "src dst priority dport bytes start_seconds"; starts are
// shifted so the first flow starts at 0 (ns-3 starts traffic at 2 s).
std::vector<message> read_flows(const std::string& path) {
  std::ifstream in(path);
  std::vector<message> out;
  std::size_t n = 0;
  if (!(in >> n)) return out;
  double t0 = -1;
  for (std::size_t i = 0; i < n; ++i) {
    unsigned src = 0, dst = 0, prio = 0, dport = 0;
    unsigned long long bytes = 0;
    double start_s = 0;
    if (!(in >> src >> dst >> prio >> dport >> bytes >> start_s)) break;
    if (t0 < 0) t0 = start_s;
    message m;
    m.src = src;
    m.dst = dst;
    m.bytes = bytes;
    m.priority = static_cast<std::int16_t>(prio);
    m.start_ns = static_cast<std::int64_t>(std::llround((start_s - t0) * 1e9));
    m.kind = dport == 200 ? workload_kind::incast : workload_kind::background;
    m.tag = i;
    out.push_back(m);
  }
  return out;
}

// A stand-in when the scenario files are absent: 2,344 flows with WebSearch-like sizes at
// random starts over 10 ms, from a fixed seed.
std::vector<message> synthetic_flows() {
  std::vector<message> out;
  std::uint64_t s = 12345;
  auto next = [&] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(s >> 11) * 0x1.0p-53;
  };
  for (std::uint32_t i = 0; i < 2344; ++i) {
    message m;
    m.src = static_cast<std::uint32_t>(next() * 64);
    do m.dst = static_cast<std::uint32_t>(next() * 64);
    while (m.dst == m.src);
    m.bytes = static_cast<std::uint64_t>(std::exp(std::log(1e3) + next() * (std::log(2e7) - std::log(1e3))));
    m.start_ns = static_cast<std::int64_t>(next() * 10e6);
    out.push_back(m);
  }
  std::sort(out.begin(), out.end(), [](const message& a, const message& b) { return a.start_ns < b.start_ns; });
  return out;
}

std::vector<message> incast16() {
  std::vector<message> out;
  for (std::uint32_t i = 1; i <= 16; ++i) out.push_back(message{i, 0, 8'000'000, 0, workload_kind::incast, -1, i});
  return out;
}

void run(const char* name, const twin_config& cfg, const std::vector<message>& msgs, int repeats, const char* ns3) {
  double best = 1e300, best_cpu = 1e300;
  run_records rec;
  // CPU time beside wall time: on a shared machine the process's own CPU seconds are
  // the steadier figure (wall includes time descheduled).
  auto cpu_now = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  };
  for (int k = 0; k < repeats; ++k) {
    traffic::message_list_workload load(msgs);
    const double c0 = cpu_now();
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_twin(cfg, load);
    const auto t1 = std::chrono::steady_clock::now();
    best_cpu = std::min(best_cpu, cpu_now() - c0);
    if (!r.ok()) {
      std::fprintf(stderr, "%s: %s\n", name, r.error().message().c_str());
      std::exit(1);
    }
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
    rec = std::move(r).value();
  }
  std::int64_t last = 0;
  std::size_t done = 0;
  for (const auto& f : rec.flows)
    if (f.completed()) ++done, last = std::max(last, f.end_ns);
  const double sim_s = static_cast<double>(rec.simulated_ns) * 1e-9;
  std::printf("%-16s flows %zu/%zu  simulated %.3f ms (last flow %.3f ms)  wall %.3f s  cpu %.3f s  "
              "packet-hops %llu  %.2f M hops/s  wall/sim %.1f  pauses %llu  marks %llu  drops %llu\n",
              name, done, rec.flows.size(), sim_s * 1e3, static_cast<double>(last) * 1e-6, best, best_cpu,
              static_cast<unsigned long long>(rec.totals.packets_forwarded),
              static_cast<double>(rec.totals.packets_forwarded) / best * 1e-6, best / sim_s,
              static_cast<unsigned long long>(rec.totals.pfc_pause_frames),
              static_cast<unsigned long long>(rec.totals.ce_marked),
              static_cast<unsigned long long>(rec.totals.drops));
  if (rec.totals.drops > 0) {
    std::uint64_t by[3] = {0, 0, 0};
    const char* names[3] = {"drops_ingress_limit", "drops_egress_limit", "drops_headroom_exhausted"};
    for (const auto& c : rec.counters)
      for (int k = 0; k < 3; ++k)
        if (c.name == names[k]) by[k] += c.value;
    std::printf("%-16s drops: ingress_limit %llu egress_limit %llu headroom_exhausted %llu\n", "",
                static_cast<unsigned long long>(by[0]), static_cast<unsigned long long>(by[1]),
                static_cast<unsigned long long>(by[2]));
  }
  std::printf("%-16s ns-3 reference: %s\n", "", ns3);
}

// One sweep: `runs` incasts over `threads` threads pulling run numbers from a shared
// counter (runs differ in length with the buffer, so static slicing would idle threads).
// Returns wall seconds; `hops` gets the packet-hops of all runs.
double sweep(int runs, unsigned threads, std::uint64_t& hops) {
  std::atomic<int> next{0};
  std::atomic<std::uint64_t> total{0};
  std::atomic<bool> failed{false};
  const std::vector<message> msgs = incast16();
  auto worker = [&] {
    for (int k = next.fetch_add(1); k < runs; k = next.fetch_add(1)) {
      static constexpr std::int64_t buffers_mb[] = {2, 4, 32};
      twin_config c = hpcc_config(buffers_mb[k % 3]);
      c.topology.hosts = 17;
      c.seed = static_cast<std::uint64_t>(k) + 1;
      traffic::message_list_workload load(msgs);
      auto r = run_twin(c, load);
      if (!r.ok()) {
        failed = true;
        return;
      }
      total += r->totals.packets_forwarded;
    }
  };
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  const auto t1 = std::chrono::steady_clock::now();
  if (failed) {
    std::fprintf(stderr, "sweep: a run failed\n");
    std::exit(1);
  }
  hops = total;
  return std::chrono::duration<double>(t1 - t0).count();
}

void run_sweep(int runs, unsigned threads) {
  std::uint64_t hops1 = 0, hopsn = 0;
  const double one = sweep(runs, 1, hops1);
  const double many = sweep(runs, threads, hopsn);
  std::printf("sweep            %d incast runs (seeds 1..%d, 2/4/32 MB)  1 thread: %.3f s, %.2f runs/s, %.2f M hops/s  "
              "%u threads: %.3f s, %.2f runs/s, %.2f M hops/s  speedup %.2fx\n",
              runs, runs, one, runs / one, static_cast<double>(hops1) / one * 1e-6, threads, many, runs / many,
              static_cast<double>(hopsn) / many * 1e-6, one / many);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : std::string(ROCELAB_SHARED_DIR) + "/scenarios/hpcc-ns3";
  // repeats 0: the sweep alone.
  const int repeats = argc > 2 ? std::max(0, std::atoi(argv[2])) : 3;
  const int sweep_runs = argc > 3 ? std::max(0, std::atoi(argv[3])) : 24;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads = argc > 4 ? static_cast<unsigned>(std::max(1, std::atoi(argv[4]))) : hw;

  if (repeats == 0) {
    if (sweep_runs > 0) run_sweep(sweep_runs, threads);
    return 0;
  }
  std::vector<message> ws = read_flows(dir + "/ls64_ws50/flow.txt");
  const bool synthetic = ws.empty();
  if (synthetic) {
    std::fprintf(stderr, "no %s/ls64_ws50/flow.txt: using 2,344 synthetic flows\n", dir.c_str());
    ws = synthetic_flows();
  }
  twin_config ls = hpcc_config(32);
  ls.topology.type = topology_config::kind::leaf_spine;
  ls.topology.hosts = 64;
  ls.topology.leaves = 4;
  ls.topology.spines = 4;
  ls.topology.spine_link_gbps = 400;
  run(synthetic ? "ls64_synthetic" : "ls64_ws50", ls, ws, repeats, "20.8 ms simulated in 48.3 s wall, 0.55 M hops/s");

  twin_config in32 = hpcc_config(32);
  in32.topology.hosts = 17;
  run("incast16_32MB", in32, incast16(), repeats, "last flow 13.02 ms, 0 pauses, 0.70-0.77 s wall");
  twin_config in2 = in32;
  in2.switch_template.buffer_bytes = 2 * 1024 * 1024;
  run("incast16_2MB", in2, incast16(), repeats, "last flow 12.02 ms, 1,254 pauses, 3.9% of data packets marked");

  // The full model: rocelab frames, preamble/IFG, ECN at enqueue, CNPs, mlx5 DCQCN,
  // SONiC-style thresholds (PG alpha 1/8, lossless queue unlimited).
  twin_config full;
  full.topology = ls.topology;
  full.topology.link_gbps = 100;
  full.topology.link_delay_ns = 1000;
  full.ecn_by_rate = {{100, ecn_config{true, 400'000, 1'600'000, 0.2}},
                      {400, ecn_config{true, 1'600'000, 6'400'000, 0.2}}};
  port_config p;
  for (auto& pg : p.pgs) pg.shared = buffer_threshold::dynamic(-3);
  p.queues[3].shared = buffer_threshold::unlimited();
  full.switch_template.ports = {p};
  run("ls64_full_model", full, ws, repeats, "(not comparable: rocelab's own model)");
  if (sweep_runs > 0) run_sweep(sweep_runs, threads);
  return 0;
}

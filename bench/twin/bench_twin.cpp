// bench_twin: wall time of the twin on the work the HPCC ns-3 simulator was timed on
// (shared/scenarios/hpcc-ns3/README.md), with its modelling choices (hpcc_ns3_compat):
//   ls64_ws50      4 leaves x 16 hosts at 100G, 4 spines at 400G, 1 us links, 32 MB buffers,
//                  the scenario's own flow.txt (2,344 WebSearch flows at 50% load plus a
//                  16 x 500 KB incast); ns-3: 20.8 ms simulated in 48.3 s (0.55 M hops/s)
//                  by the shared README; built here with waf's optimized profile, 33 s
//                  to 94 s on one core by host and hour, so the ratio to the twin is
//                  taken by bench/twin/vs_ns3, which times both in the same minutes.
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
// The scenarios are read as `rocelab run --hpcc` reads them (experiments::load_hpcc_scenario,
// hpcc_messages); simulated time counts from the first flow's start (ns-3 traffic starts
// at 2 s).
// Usage: bench_twin [--only RUN] [path/to/scenarios/hpcc-ns3] [repeats (0: sweep only)] [sweep_runs (0: no sweep)] [threads]
// --only RUN (ls64_ws50, incast16_32MB, incast16_2MB or ls64_full_model) runs that one
// alone: bench/twin/vs_ns3 times ls64_ws50 and nothing else between its ns-3 runs.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "rocelab/experiments/spec/hpcc_ns3.hpp"
#include "rocelab/fabric/twin/twin.hpp"
#include "rocelab/traffic/message_list.hpp"

namespace {

using namespace rocelab;
using namespace rocelab::fabric;
using namespace rocelab::fabric::twin;

// A scenario as `rocelab run --hpcc` reads it (experiments::load_hpcc_scenario): its
// config in twin terms (compat mode) and its flows as messages.
struct scenario {
  twin_config config;
  std::vector<message> messages;
};

scenario load(const std::string& dir, const char* name) {
  auto sc = experiments::load_hpcc_scenario(dir + "/" + name + "/config.txt");
  if (!sc.ok()) {
    std::fprintf(stderr, "bench_twin: %s\n", sc.error().message().c_str());
    std::exit(2);
  }
  return {sc->config, experiments::hpcc_messages(*sc)};
}

// The runs main() times, by the names run() prints; --only names one of them.
constexpr const char* run_names[] = {"ls64_ws50", "incast16_32MB", "incast16_2MB", "ls64_full_model"};
std::string only_run;  // --only: the one run to time, or empty for all

void run(const char* name, const twin_config& cfg, const std::vector<message>& msgs, int repeats, const char* ns3) {
  if (!only_run.empty() && only_run != name) return;
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
  std::int64_t last = 0, first = rec.simulated_ns;
  std::size_t done = 0;
  for (const auto& f : rec.flows) {
    first = std::min(first, f.start_ns);
    if (f.completed()) ++done, last = std::max(last, f.end_ns);
  }
  const double sim_s = static_cast<double>(rec.simulated_ns - first) * 1e-9;
  std::printf("%-16s flows %zu/%zu  simulated %.3f ms (last flow %.3f ms)  wall %.3f s  cpu %.3f s  "
              "packet-hops %llu  %.2f M hops/s  wall/sim %.1f  pauses %llu  marks %llu  drops %llu\n",
              name, done, rec.flows.size(), sim_s * 1e3, static_cast<double>(last - first) * 1e-6, best, best_cpu,
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
double sweep(const std::vector<scenario>& incasts, int runs, unsigned threads, std::uint64_t& hops) {
  std::atomic<int> next{0};
  std::atomic<std::uint64_t> total{0};
  std::atomic<bool> failed{false};
  auto worker = [&] {
    for (int k = next.fetch_add(1); k < runs; k = next.fetch_add(1)) {
      const scenario& sc = incasts[static_cast<std::size_t>(k) % incasts.size()];
      twin_config c = sc.config;
      c.seed = static_cast<std::uint64_t>(k) + 1;
      traffic::message_list_workload load(sc.messages);
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

void run_sweep(const std::string& dir, int runs, unsigned threads) {
  const std::vector<scenario> incasts = {load(dir, "incast16_buf2MB"), load(dir, "incast16_buf4MB"),
                                         load(dir, "incast16_noqmon")};
  std::uint64_t hops1 = 0, hopsn = 0;
  const double one = sweep(incasts, runs, 1, hops1);
  const double many = sweep(incasts, runs, threads, hopsn);
  std::printf("sweep            %d incast runs (seeds 1..%d, 2/4/32 MB)  1 thread: %.3f s, %.2f runs/s, %.2f M hops/s  "
              "%u threads: %.3f s, %.2f runs/s, %.2f M hops/s  speedup %.2fx\n",
              runs, runs, one, runs / one, static_cast<double>(hops1) / one * 1e-6, threads, many, runs / many,
              static_cast<double>(hopsn) / many * 1e-6, one / many);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::string(argv[1]) == "--only") {
    only_run = argv[2];
    if (std::find(std::begin(run_names), std::end(run_names), only_run) == std::end(run_names)) {
      std::string known;
      for (const char* n : run_names) known += (known.empty() ? "" : ", ") + std::string(n);
      std::fprintf(stderr, "bench_twin: --only %s: no such run (%s)\n", only_run.c_str(), known.c_str());
      return 2;
    }
    argv[2] = argv[0];
    argv += 2;
    argc -= 2;
  }
  std::string dir = argc > 1 ? argv[1] : std::string(ROCELAB_SHARED_DIR) + "/scenarios/hpcc-ns3";
  // repeats 0: the sweep alone.
  const int repeats = argc > 2 ? std::max(0, std::atoi(argv[2])) : 3;
  const int sweep_runs = argc > 3 ? std::max(0, std::atoi(argv[3])) : 24;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads = argc > 4 ? static_cast<unsigned>(std::max(1, std::atoi(argv[4]))) : hw;

  if (repeats > 0) {
    const scenario ls = load(dir, "ls64_ws50");
    run("ls64_ws50", ls.config, ls.messages, repeats, "20.8 ms simulated in 48.3 s wall (shared README), on this VM class 33-117 s as built here, by host and hour: time it beside the twin with bench/twin/vs_ns3");
    const scenario in32 = load(dir, "incast16_noqmon");
    run("incast16_32MB", in32.config, in32.messages, repeats, "last flow 13.02 ms, 0 pauses, 0.70-0.77 s wall");
    const scenario in2 = load(dir, "incast16_buf2MB");
    run("incast16_2MB", in2.config, in2.messages, repeats,
        "last flow 12.02 ms, 1,254 pauses, 3.9% of data packets marked");

    // The full model on the same topology and flows: rocelab frames, preamble/IFG, ECN at
    // enqueue, CNPs, mlx5 DCQCN, SONiC-style thresholds (PG alpha 1/8, lossless queue
    // unlimited), the scenario's ECN thresholds per speed.
    twin_config full;
    full.topology = ls.config.topology;
    full.topology.ecmp = topology_config::ecmp_kind::twin;
    full.ecn_by_rate = ls.config.ecn_by_rate;
    full.switch_template.buffer_bytes = ls.config.switch_template.buffer_bytes;
    port_config p;
    for (auto& pg : p.pgs) pg.shared = buffer_threshold::dynamic(-3);
    p.queues[3].shared = buffer_threshold::unlimited();
    full.switch_template.ports = {p};
    run("ls64_full_model", full, ls.messages, repeats, "(not comparable: rocelab's own model)");
  }
  if (sweep_runs > 0) run_sweep(dir, sweep_runs, threads);
  return 0;
}

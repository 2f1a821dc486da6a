// NCCL-style all-reduce on a rail-optimized fabric of multi-NIC servers, through specs on
// the twin: the hierarchical ring keeps every inter-server message on one rail and every
// intra-server one on the local link, comes within a tenth of its ideal busbw, and beats
// the flat ring on the same fabric; the trees over rails beat the rings on small buffers
// only; the spec refuses layouts it cannot run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "rocelab/experiments/analysis/correlation.hpp"
#include "rocelab/experiments/report/report.hpp"
#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/spec/spec_files.hpp"
#include "rocelab/fabric/twin/fabric_graph.hpp"
#include "spec_on_twin.hpp"

namespace rocelab::experiments {
namespace {

// 8 servers of 4 NICs at 400 Gb/s, 2 leaves a rail (4 servers each), 4 spines (no
// oversubscription), NVLink-class local links at 3,600 Gb/s; 8 MiB a rank.
constexpr const char* rails_yaml = R"(
topology:
  type: rail_optimized
  hosts: 32
  nics_per_host: 4
  leaves: 2
  spines: 4
  link_gbps: 400
  link_delay_ns: 1us
  local_link_gbps: 3600
  local_link_delay_ns: 1us
switch: {buffer_bytes: 32MiB}
nic: {mtu_bytes: 4096, qp_per_peer: true}
workload:
  allreduce: {algorithm: hierarchical_ring, ranks: 32, bytes: 8MiB, iterations: 2}
twin: {stop_ns: 100ms}
)";

using testing::run_on_twin;

experiment_spec spec_of(const std::vector<std::string>& overrides = {}) {
  return testing::spec_of(rails_yaml, "rails.yaml", overrides);
}

TEST(RailAllReduce, HierarchicalRingKeepsToRailsAndLocalLinksWithinATenthOfItsIdeal) {
  const experiment_spec spec = spec_of();
  const run_records r = run_on_twin(spec);
  constexpr std::uint32_t g = 4, servers = 8, ranks = 32;
  constexpr std::uint64_t bytes = 8 << 20;
  ASSERT_EQ(r.allreduce.size(), 2u);
  // Every rank: 2(g-1) local steps and 2(N-1) rail steps an iteration.
  ASSERT_EQ(r.flows.size(), 2u * ranks * (2 * (g - 1) + 2 * (servers - 1)));
  auto twin = to_twin_config(spec, spec.seed);
  ASSERT_TRUE(twin.ok());
  const auto graph = fabric::twin::fabric_graph::build(twin->topology).value();
  std::map<std::uint32_t, std::uint64_t> local_bytes, rail_bytes;
  for (const flow_record& f : r.flows) {
    ASSERT_TRUE(f.completed()) << "h" << f.src + 1 << " -> h" << f.dst + 1;
    if (f.src / g == f.dst / g) {
      EXPECT_EQ(f.ideal_fct_ns, graph.local_transfer_ns(f.bytes)) << "within a server: the local link";
      EXPECT_EQ(f.cnps, 0u);
      local_bytes[f.src] += f.bytes;
    } else {
      EXPECT_EQ(f.src % g, f.dst % g) << "between servers: NIC i to NIC i, one rail";
      rail_bytes[f.src] += f.bytes;
    }
  }
  // Per rank and iteration: 2(g-1)/g x S on the local link, 2(N-1)/N x S/g on its rail.
  ASSERT_EQ(local_bytes.size(), ranks);
  for (const auto& [h, b] : local_bytes) EXPECT_EQ(b, 2 * 2 * (g - 1) * bytes / g) << "h" << h + 1;
  for (const auto& [h, b] : rail_bytes) EXPECT_EQ(b, 2 * 2 * (servers - 1) * (bytes / g) / servers) << "h" << h + 1;
  // The ideal: the steps run in lockstep (a rank's next step waits for its own message and
  // the one it receives), so an iteration takes at best the sum over steps of the longest
  // ideal FCT in that step (the local link's transfer, or the rail hop's serialization
  // and its ACK's round trip). Tag: iteration << 40 | step << 20 | rank (allreduce.cpp).
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::int64_t> step_ideal;
  for (const flow_record& f : r.flows) {
    auto& t = step_ideal[{f.tag >> 40, (f.tag >> 20) & 0xfffff}];
    t = std::max(t, f.ideal_fct_ns);
  }
  std::int64_t ideal_ns = 0;
  for (const auto& [key, t] : step_ideal)
    if (key.first == 0) ideal_ns += t;
  const double ideal_busbw = bytes * 8.0 / static_cast<double>(ideal_ns) * 2.0 * (ranks - 1) / ranks;
  for (const allreduce_result& a : r.allreduce) {
    EXPECT_EQ(a.algorithm, "hierarchical_ring");
    EXPECT_EQ(a.ranks, ranks);
    EXPECT_GE(a.time_ns, ideal_ns);
    // The rails are uncontended (one ring a rail, one flow a leaf uplink): within 10%.
    EXPECT_GE(a.busbw_gbps, 0.9 * ideal_busbw) << "ideal " << ideal_busbw << " Gb/s in " << ideal_ns << " ns";
  }
  std::cerr << "hierarchical_ring busbw " << r.allreduce[0].busbw_gbps << " Gb/s (ideal " << ideal_busbw << ")\n";
}

// The flat ring on the same fabric: a server's last GPU sends to the next server's first
// across rails, and every step waits for the NIC-rate hop: far below the rings over rails.
TEST(RailAllReduce, FlatRingOnTheSameRailsIsFarSlower) {
  const run_records hier = run_on_twin(spec_of());
  const run_records flat = run_on_twin(spec_of({"workload.allreduce.algorithm=ring"}));
  ASSERT_EQ(hier.allreduce.size(), 2u);
  ASSERT_EQ(flat.allreduce.size(), 2u);
  std::uint32_t cross_rail = 0;
  for (const flow_record& f : flat.flows) {
    ASSERT_TRUE(f.completed());
    if (f.src / 4 != f.dst / 4 && f.src % 4 != f.dst % 4) ++cross_rail;
  }
  EXPECT_EQ(cross_rail, 2u * 8 * 62) << "each server's boundary rank, 62 steps, 2 iterations";
  // At most NIC rate: every step has eight messages at 400 Gb/s on the critical path.
  EXPECT_LE(flat.allreduce[0].busbw_gbps, 400.0);
  EXPECT_LT(2 * flat.allreduce[0].busbw_gbps, hier.allreduce[0].busbw_gbps);
  std::cerr << "busbw: flat ring " << flat.allreduce[0].busbw_gbps << " Gb/s, hierarchical "
            << hier.allreduce[0].busbw_gbps << " Gb/s\n";
}

// NCCL's trees over rails: every inter-server message on its rail carries the whole shard
// the server's ring left on that NIC (a tree moves the shard on every edge). A tree takes
// 2 log2(N) steps where the ring over the rail takes 2(N-1), so it wins where the steps'
// latency dominates (a small buffer) and loses where bandwidth does (a large one): the
// crossover behind NCCL's choice between them.
TEST(RailAllReduce, HierarchicalTreeKeepsToRailsAndBeatsTheRingOnlyOnSmallBuffers) {
  constexpr std::uint32_t g = 4;
  auto busbw = [](const run_records& r) {
    EXPECT_EQ(r.allreduce.size(), 2u);
    return r.allreduce.empty() ? 0.0 : r.allreduce.back().busbw_gbps;
  };
  const run_records small_tree =
      run_on_twin(spec_of({"workload.allreduce.algorithm=hierarchical_tree", "workload.allreduce.bytes=256KiB"}));
  const run_records small_ring = run_on_twin(spec_of({"workload.allreduce.bytes=256KiB"}));
  std::size_t rail_messages = 0;
  for (const flow_record& f : small_tree.flows) {
    ASSERT_TRUE(f.completed());
    if (f.src / g == f.dst / g) continue;
    EXPECT_EQ(f.src % g, f.dst % g) << "between servers: NIC i to NIC i, one rail";
    EXPECT_EQ(f.bytes, (256u << 10) / g) << "the whole shard on every tree edge";
    ++rail_messages;
  }
  // Per rail and iteration: every edge of a tree of 8 servers twice (up and down).
  EXPECT_EQ(rail_messages, 2u * g * 2 * (8 - 1));
  for (const allreduce_result& a : small_tree.allreduce) EXPECT_EQ(a.algorithm, "hierarchical_tree");
  EXPECT_GT(busbw(small_tree), 1.5 * busbw(small_ring)) << "256 KiB: latency-bound rings";

  const run_records large_tree = run_on_twin(spec_of({"workload.allreduce.algorithm=hierarchical_tree"}));
  const run_records large_ring = run_on_twin(spec_of());
  EXPECT_GT(busbw(large_ring), 1.5 * busbw(large_tree)) << "8 MiB: the ring's bandwidth wins";
  std::cerr << "busbw 256 KiB: tree " << busbw(small_tree) << ", ring " << busbw(small_ring)
            << " Gb/s; 8 MiB: tree " << busbw(large_tree) << ", ring " << busbw(large_ring) << " Gb/s\n";
}

// The report states the iterations' busbw; a message over a local link has no fabric path,
// so no pause or queue of the fabric is pinned on it.
TEST(RailAllReduce, TheReportShowsBusBandwidthAndLocalMessagesCrossNoFabricHop) {
  const experiment_spec spec = spec_of({"workload.allreduce.iterations=1"});
  const run_records r = run_on_twin(spec);
  ASSERT_EQ(r.allreduce.size(), 1u);
  auto twin = to_twin_config(spec, spec.seed);
  ASSERT_TRUE(twin.ok());
  const path_fn paths = twin_paths(twin->topology, twin->seed);
  std::size_t local = 0;
  for (const flow_record& f : r.flows) {
    const auto hops = paths(f);
    if (f.src / 4 == f.dst / 4) {
      EXPECT_TRUE(hops.empty());
      ++local;
    } else {
      EXPECT_FALSE(hops.empty());
    }
  }
  EXPECT_EQ(local, 32u * 6);
  report_header h;
  h.run_id = "rails";
  h.configuration = run_configuration(spec);
  const std::string html = report_html(analyze_run(r, h, paths));
  const auto at = html.find("id=\"table-allreduce\"");
  ASSERT_NE(at, std::string::npos);
  char busbw[32];
  std::snprintf(busbw, sizeof busbw, "<td>%.1f</td></tr>", r.allreduce[0].busbw_gbps);
  EXPECT_NE(html.find(busbw, at), std::string::npos) << html.substr(at, 800);
  EXPECT_NE(html.find("<td>topology.type</td><td>rail_optimized</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>topology.nics_per_host</td><td>4</td>"), std::string::npos);
}

// Slices pipeline the phases: one slice's rail phase overlaps the next one's phase on the
// local link. Faster than one slice, never faster than the busier of the two links allows.
TEST(RailAllReduce, SlicesOverlapTheLocalAndRailPhases) {
  const run_records one = run_on_twin(spec_of({"workload.allreduce.iterations=1"}));
  const run_records eight =
      run_on_twin(spec_of({"workload.allreduce.iterations=1", "workload.allreduce.slices=8"}));
  ASSERT_EQ(one.allreduce.size(), 1u);
  ASSERT_EQ(eight.allreduce.size(), 1u);
  ASSERT_EQ(eight.flows.size(), 8 * one.flows.size());
  std::uint64_t bytes_one = 0, bytes_eight = 0;
  for (const auto& f : one.flows) bytes_one += f.bytes;
  for (const auto& f : eight.flows) {
    ASSERT_TRUE(f.completed());
    bytes_eight += f.bytes;
  }
  EXPECT_EQ(bytes_eight, bytes_one) << "the same bytes, in eight slices";
  EXPECT_GT(eight.allreduce[0].busbw_gbps, 1.2 * one.allreduce[0].busbw_gbps);
  // 4 NICs a server, 8 servers, 8 MiB: the local link's 2(g-1)/g x S at 3,600 Gb/s and the
  // rail's 2(N-1)/N x S/g at 400 Gb/s, each a floor on the time.
  const double s_bits = 8.0 * (8 << 20);
  const double local_ns = 2.0 * 3 / 4 * s_bits / 3600, rail_ns = 2.0 * 7 / 8 * (s_bits / 4) / 400;
  EXPECT_GE(static_cast<double>(eight.allreduce[0].time_ns), std::max(local_ns, rail_ns));
  std::cerr << "busbw: 1 slice " << one.allreduce[0].busbw_gbps << " Gb/s, 8 slices " << eight.allreduce[0].busbw_gbps
            << " Gb/s; floor " << std::max(local_ns, rail_ns) << " ns, took " << eight.allreduce[0].time_ns << " ns\n";
}

TEST(RailAllReduce, SpecsNameWhatTheRailsCannotRun) {
  struct bad_case {
    const char* name;
    std::vector<std::string> overrides;
    const char* field;
    const char* needle;
  };
  const std::vector<bad_case> cases = {
      {"NICs that are not whole servers", {"topology.hosts=30", "workload.allreduce.ranks=28"}, "topology.hosts",
       "whole servers of 4"},
      {"servers that do not fill a rail's leaves", {"topology.leaves=3"}, "topology.leaves", "leaves a rail"},
      {"no spines", {"topology.spines=0"}, "topology.spines", "join its rails"},
      {"NICs a host on a leaf-spine", {"topology.type=leaf_spine", "topology.leaves=4"}, "topology.nics_per_host",
       "rail_optimized only"},
      {"a rank off its rail",
       {"workload.allreduce.rank_hosts=0,1,3,2,4-7"},
       "workload.allreduce.rank_hosts",
       "rank 2 is on host 3, not NIC 2"},
      {"ranks that are not whole servers", {"workload.allreduce.ranks=30"}, "workload.allreduce",
       "not whole servers of 4"},
  };
  for (const auto& c : cases) {
    const experiment_spec spec = spec_of(c.overrides);
    const status st = validate(spec);
    ASSERT_FALSE(st.ok()) << c.name;
    EXPECT_NE(st.message().find(c.field), std::string::npos) << c.name << ": " << st.message();
    EXPECT_NE(st.message().find(c.needle), std::string::npos) << c.name << ": " << st.message();
  }
}

TEST(RailAllReduce, TheExampleRunsOnTheTwin) {
  auto spec = load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/twin-rail-optimized.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  ASSERT_TRUE(validate(*spec).ok()) << validate(*spec).message();
  EXPECT_EQ(spec->topology.type, "rail_optimized");
  EXPECT_EQ(spec->topology.nics_per_host, 8u);
  auto twin = to_twin_config(*spec, spec->seed);
  ASSERT_TRUE(twin.ok()) << twin.error().message();
  EXPECT_EQ(twin->topology.type, fabric::twin::topology_config::kind::rail_optimized);
  const auto graph = fabric::twin::fabric_graph::build(twin->topology).value();
  EXPECT_EQ(graph.switches(), 8u * 2 + 8);
  EXPECT_EQ(graph.hosts(), 128u);
}

}  // namespace
}  // namespace rocelab::experiments

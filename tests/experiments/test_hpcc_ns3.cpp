// Reading the HPCC project's ns-3 scenarios and writing its output formats, checked on
// the scenarios in shared/scenarios/hpcc-ns3 and on hand-made texts for the errors.
#include "rocelab/experiments/spec/hpcc_ns3.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "rocelab/fabric/twin/routing.hpp"

namespace rocelab::experiments {
namespace {

std::string scenario_dir(const std::string& name) {
  return std::string(ROCELAB_SHARED_DIR) + "/scenarios/hpcc-ns3/" + name;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

TEST(hpcc_ns3_scenario, incast_reads_config_topology_and_flows) {
  auto sc = load_hpcc_scenario(scenario_dir("incast16_buf2MB") + "/config.txt");
  ASSERT_TRUE(sc.ok()) << sc.error().message();
  const auto& c = sc->config;
  EXPECT_TRUE(c.hpcc_ns3_compat);
  EXPECT_EQ(c.topology.type, fabric::twin::topology_config::kind::single_switch);
  EXPECT_EQ(c.topology.hosts, 17u);
  EXPECT_DOUBLE_EQ(c.topology.link_gbps, 100);
  EXPECT_EQ(c.topology.link_delay_ns, 1000);
  EXPECT_EQ(c.switch_template.buffer_bytes, 2 * 1024 * 1024);  // BUFFER_SIZE 2 (MiB)
  EXPECT_EQ(c.nic.mtu_bytes, 1000u);
  EXPECT_TRUE(c.nic.dcqcn_enabled);
  // EWMA_GAIN 1/256 is dce_tcp_g 1020 in mlx5's fixed point; rates in Mb/s; timers in us.
  EXPECT_EQ(c.nic.dcqcn.dce_tcp_g, 1020);
  EXPECT_EQ(c.nic.dcqcn.rpg_time_reset_us, 300);
  EXPECT_EQ(c.nic.dcqcn.rate_reduce_monitor_period_us, 4);
  EXPECT_EQ(c.nic.dcqcn.dce_tcp_rtt_us, 1);
  EXPECT_EQ(c.nic.dcqcn.rpg_ai_rate_mbps, 20);
  EXPECT_EQ(c.nic.dcqcn.rpg_hai_rate_mbps, 200);
  EXPECT_EQ(c.nic.dcqcn.rpg_min_rate_mbps, 1000);
  EXPECT_EQ(c.nic.dcqcn.rpg_threshold, 1);
  EXPECT_FALSE(c.nic.dcqcn.byte_counter_enabled);
  EXPECT_EQ(c.nic.dcqcn.min_time_between_cnps_us, 0);
  // KMIN_MAP 400 KB and KMAX_MAP 1600 KB at 100G, 1600/6400 at 400G, PMAX 0.2.
  ASSERT_EQ(c.ecn_by_rate.size(), 2u);
  EXPECT_DOUBLE_EQ(c.ecn_by_rate[1].gbps, 400);
  EXPECT_EQ(c.ecn_by_rate[1].ecn.kmin_bytes, 1'600'000);
  EXPECT_EQ(c.switch_template.ports.at(0).queues[3].ecn.kmin_bytes, 400'000);
  EXPECT_EQ(c.switch_template.ports.at(0).queues[3].ecn.kmax_bytes, 1'600'000);
  EXPECT_DOUBLE_EQ(c.switch_template.ports.at(0).queues[3].ecn.pmax, 0.2);
  EXPECT_EQ(c.stop_ns, 2'100'100'000);
  ASSERT_EQ(sc->flows.size(), 16u);
  EXPECT_EQ(sc->flows[0].src, 1u);
  EXPECT_EQ(sc->flows[0].dst, 0u);
  EXPECT_EQ(sc->flows[0].dport, 100);
  EXPECT_EQ(sc->flows[0].sport, 10000);
  EXPECT_EQ(sc->flows[0].bytes, 8'000'000u);
  EXPECT_EQ(sc->flows[0].start_ns, 2'000'000'000);
  EXPECT_EQ(sc->switch_nodes, std::vector<std::uint32_t>{17});
}

TEST(hpcc_ns3_scenario, ideal_fct_equals_the_simulators_standalone_fct) {
  // Every line of the simulator's fct.txt carries its standalone FCT last.
  for (const char* name : {"incast16_buf2MB", "incast16_buf4MB", "incast16_noqmon"}) {
    SCOPED_TRACE(name);
    auto sc = load_hpcc_scenario(scenario_dir(name) + "/config.txt");
    ASSERT_TRUE(sc.ok()) << sc.error().message();
    for (const auto& line : lines_of(scenario_dir(name) + "/fct.txt")) {
      std::istringstream in(line);
      std::string sip, dip;
      unsigned sport = 0, dport = 0;
      long long bytes = 0, start = 0, fct = 0, ideal = 0;
      in >> sip >> dip >> sport >> dport >> bytes >> start >> fct >> ideal;
      const std::uint32_t src = (std::stoul(sip, nullptr, 16) >> 8) & 0xffff;
      const hpcc_flow* flow = nullptr;
      for (const auto& f : sc->flows)
        if (f.src == src && f.sport == sport) flow = &f;
      ASSERT_NE(flow, nullptr) << line;
      EXPECT_EQ(hpcc_ideal_fct_ns(*sc, *flow), ideal) << line;
      EXPECT_EQ(flow->start_ns, start) << line;
    }
  }
}

// Lone flows on ls64_ws50's fabric, run by ns-3 (this scenario's config and topology
// with a two-line flow.txt, 2026-11-25): 0 -> 1 (one leaf) with 2 MB ended at 170,091 ns
// and 2 -> 20 (across a spine) with 100 KB at 16,433 ns; 1 MB each at 87,091 and
// 91,133 ns. With nothing to share, every nanosecond is frame sizes and frame times:
// 1048-byte data frames and 60-byte ACKs, each holding its link for its bits / rate
// truncated to whole ns.
TEST(hpcc_ns3_scenario, lone_flows_end_at_the_simulators_nanosecond) {
  auto sc = load_hpcc_scenario(scenario_dir("ls64_ws50") + "/config.txt");
  ASSERT_TRUE(sc.ok()) << sc.error().message();
  struct lone {
    std::uint32_t src, dst;
    std::uint64_t bytes;
    std::int64_t ns3_fct_ns;
  };
  for (const lone& l : {lone{0, 1, 2'000'000, 170'091}, lone{2, 20, 100'000, 16'433}, lone{0, 1, 1'000'000, 87'091},
                        lone{2, 20, 1'000'000, 91'133}}) {
    SCOPED_TRACE(std::to_string(l.src) + " -> " + std::to_string(l.dst) + ", " + std::to_string(l.bytes) + " B");
    hpcc_scenario one = *sc;
    one.flows.resize(1);
    one.flows[0].src = l.src;
    one.flows[0].dst = l.dst;
    one.flows[0].bytes = l.bytes;
    one.flows[0].sport = 10000;  // the pair's first flow: its ECMP path is ns-3's
    one.flows[0].dport = 100;
    one.flows[0].start_ns = 2'000'000'000;
    auto records = run_hpcc_scenario(one);
    ASSERT_TRUE(records.ok()) << records.error().message();
    ASSERT_EQ(records->flows.size(), 1u);
    EXPECT_EQ(records->flows[0].fct_ns, l.ns3_fct_ns);
    // Alone, a flow is ideal: pins the ideal FCT's steady-state shortcut (twin topology.cpp
    // ideal_fct skips the full frames once each moves every link by the same whole ns)
    // against the simulation of every frame.
    EXPECT_EQ(records->flows[0].ideal_fct_ns, l.ns3_fct_ns);
  }
}

TEST(hpcc_ns3_scenario, leaf_spine_shape_with_400g_uplinks) {
  auto sc = load_hpcc_scenario(scenario_dir("ls64_ws50") + "/config.txt");
  ASSERT_TRUE(sc.ok()) << sc.error().message();
  const auto& t = sc->config.topology;
  EXPECT_EQ(t.type, fabric::twin::topology_config::kind::leaf_spine);
  EXPECT_EQ(t.hosts, 64u);
  EXPECT_EQ(t.leaves, 4u);
  EXPECT_EQ(t.spines, 4u);
  EXPECT_DOUBLE_EQ(t.spine_link_gbps, 400);
  EXPECT_EQ(sc->flows.size(), 2344u);
  EXPECT_EQ(sc->config.switch_template.buffer_bytes, 32 * 1024 * 1024);
  EXPECT_EQ(sc->switch_nodes.size(), 8u);
  // 24 -> 20 share leaf 1: two hops; 1 -> 17 crosses a spine: four, 400G in the middle.
  hpcc_flow local{.src = 24, .dst = 20, .bytes = 2546};
  hpcc_flow remote{.src = 1, .dst = 17, .bytes = 1000};
  // 2 x 2000 + 2 x 80 + (2546 + 3 x 48) x 8 / 100 = 4375 (truncated)
  EXPECT_EQ(hpcc_ideal_fct_ns(*sc, local), 4375);
  // 2 x 4000 + (80 + 20 + 20 + 80) + 1048 x 8 / 100 = 8283 (truncated)
  EXPECT_EQ(hpcc_ideal_fct_ns(*sc, remote), 8283);
}

// A k=4 fat-tree in HPCC's own format (hosts 0..15; edges 16..23, aggregation 24..31,
// cores 32..35), as that simulator's topology generators write three tiers.
hpcc_texts fat_tree_texts() {
  hpcc_texts t;
  t.config =
      "TOPOLOGY_FILE topo.txt\nFLOW_FILE flow.txt\nBUFFER_SIZE 4\nCC_MODE 1\nENABLE_QCN 1\n"
      "KMAX_MAP 1 100000000000 1600\nKMIN_MAP 1 100000000000 400\nPMAX_MAP 1 100000000000 0.2\n";
  std::string links;
  int n = 0;
  auto link = [&](int a, int b) {
    links += std::to_string(a) + " " + std::to_string(b) + " 100Gbps 1000ns 0\n";
    ++n;
  };
  for (int h = 0; h < 16; ++h) link(h, 16 + h / 2);
  for (int e = 0; e < 8; ++e)
    for (int j = 0; j < 2; ++j) link(16 + e, 24 + (e / 2) * 2 + j);
  for (int a = 0; a < 8; ++a)
    for (int j = 0; j < 2; ++j) link(24 + a, 32 + (a % 2) * 2 + j);
  std::string switches;
  for (int s = 16; s < 36; ++s) switches += std::to_string(s) + (s < 35 ? " " : "\n");
  t.topology = "36 20 " + std::to_string(n) + "\n" + switches + links;
  // An incast into host 0 from the other pods, and one flow within a pod.
  t.flows = "5\n4 0 3 100 200000 2.0\n9 0 3 100 200000 2.0\n14 0 3 100 200000 2.0\n15 0 3 100 200000 2.0\n"
            "2 3 3 100 100000 2.0\n";
  return t;
}

TEST(hpcc_ns3_scenario, a_three_tier_fat_tree_runs_as_the_graph_it_is) {
  auto sc = parse_hpcc_scenario(fat_tree_texts());
  ASSERT_TRUE(sc.ok()) << sc.error().message();
  const auto& t = sc->config.topology;
  ASSERT_EQ(t.type, fabric::twin::topology_config::kind::graph);
  EXPECT_EQ(t.hosts, 16u);
  EXPECT_EQ(t.switches, 20u);
  ASSERT_EQ(sc->switch_nodes.size(), 20u);
  EXPECT_EQ(sc->switch_nodes.front(), 16u);
  EXPECT_EQ(t.ecmp_seeds, sc->switch_nodes);
  // Between pods: five switches, and ns-3's per-switch hash of the simulator's source
  // ports (10000 + i from one host) reaches every core.
  std::set<std::uint32_t> cores;
  for (std::uint16_t i = 0; i < 64; ++i) {
    const auto hops = fabric::twin::flow_hops(t, 1, 0, 12, 1, static_cast<std::uint16_t>(10000 + i), 100);
    ASSERT_EQ(hops.size(), 5u);
    cores.insert(hops[2].device);
  }
  EXPECT_EQ(cores, (std::set<std::uint32_t>{16, 17, 18, 19})) << "cores are switch devices 16..19";
  // Six 100G links and six 1 us delays: 2 x 6000 + 6 x 80 + 1048 x 8 / 100, truncated.
  EXPECT_EQ(hpcc_ideal_fct_ns(*sc, hpcc_flow{.src = 0, .dst = 12, .bytes = 1000}), 12563);
  EXPECT_EQ(hpcc_ideal_fct_ns(*sc, hpcc_flow{.src = 0, .dst = 1, .bytes = 1000}), 4243);
  auto records = run_hpcc_scenario(*sc);
  ASSERT_TRUE(records.ok()) << records.error().message();
  ASSERT_EQ(records->flows.size(), 5u);
  for (const auto& f : records->flows) {
    EXPECT_TRUE(f.completed()) << f.src << " -> " << f.dst;
    EXPECT_GE(f.fct_ns, f.ideal_fct_ns);
  }
  EXPECT_EQ(records->devices.at(0), "sw0");
  EXPECT_EQ(records->devices.at(20), "h1");
  // fct.txt: one line per flow.
  const std::string fct = format_hpcc_fct(*sc, *records);
  EXPECT_EQ(std::count(fct.begin(), fct.end(), '\n'), 5);
}

hpcc_texts minimal_texts() {
  hpcc_texts t;
  t.config =
      "TOPOLOGY_FILE topo.txt\nFLOW_FILE flow.txt\nBUFFER_SIZE 4\nCC_MODE 1\nENABLE_QCN 1\n"
      "KMAX_MAP 1 100000000000 1600\nKMIN_MAP 1 100000000000 400\nPMAX_MAP 1 100000000000 0.2\n";
  t.topology = "3 1 2\n2\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n";
  t.flows = "1\n0 1 3 100 1000 2.0\n";
  return t;
}

struct error_case {
  const char* name;
  std::string hpcc_texts::*field;
  std::string text;
  std::string expected;  // a part of the message
};

class hpcc_ns3_errors : public ::testing::TestWithParam<error_case> {};

TEST_P(hpcc_ns3_errors, name_the_file_line_and_key) {
  hpcc_texts t = minimal_texts();
  t.*(GetParam().field) = GetParam().text;
  auto sc = parse_hpcc_scenario(t);
  ASSERT_FALSE(sc.ok());
  EXPECT_NE(sc.error().message().find(GetParam().expected), std::string::npos) << sc.error().message();
}

INSTANTIATE_TEST_SUITE_P(
    cases, hpcc_ns3_errors,
    ::testing::Values(
        error_case{"unknown_key", &hpcc_texts::config, minimal_texts().config + "NOT_A_KEY 3\n",
                   "config.txt:9: unknown key NOT_A_KEY"},
        error_case{"hpcc_mode", &hpcc_texts::config, minimal_texts().config + "CC_MODE 3\n",
                   "config.txt:9: CC_MODE: only CC_MODE 1"},
        error_case{"bad_gain", &hpcc_texts::config, minimal_texts().config + "EWMA_GAIN 2\n",
                   "config.txt:9: EWMA_GAIN"},
        error_case{"bad_rate", &hpcc_texts::config, minimal_texts().config + "RATE_AI 20 furlongs\n",
                   "config.txt:9: RATE_AI"},
        error_case{"lossy_links", &hpcc_texts::topology, "3 1 2\n2\n0 2 100Gbps 1000ns 0.01\n1 2 100Gbps 1000ns 0\n",
                   "topo.txt:3"},
        error_case{"hosts_after_switches", &hpcc_texts::topology, "3 1 2\n0\n1 0 100Gbps 1000ns 0\n2 0 100Gbps 1000ns 0\n",
                   "hosts must be numbered first"},
        error_case{"flow_to_itself", &hpcc_texts::flows, "1\n1 1 3 100 1000 2.0\n", "flow.txt:2"},
        error_case{"short_flow_file", &hpcc_texts::flows, "2\n0 1 3 100 1000 2.0\n", "expected 2 flows"},
        error_case{"bad_start_time", &hpcc_texts::flows, "1\n0 1 3 100 1000 soon\n", "flow.txt:2"},
        // Found by fuzz_hpcc: seconds whose nanoseconds overflow int64 are refused, not wrapped.
        error_case{"start_time_beyond_int64_ns", &hpcc_texts::flows, "1\n0 1 3 100 1000 25009482608.5\n",
                   "flow.txt:2"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(hpcc_ns3_output, fct_lines_in_completion_order_with_the_simulators_fields) {
  auto sc = parse_hpcc_scenario(minimal_texts());
  ASSERT_TRUE(sc.ok()) << sc.error().message();
  sc->flows.push_back(sc->flows[0]);
  sc->flows[1].sport = 10001;
  run_records r;
  flow_record a;
  a.tag = 0;
  a.start_ns = 2'000'000'000;
  a.end_ns = 2'000'020'000;
  a.fct_ns = 20'000;
  flow_record b = a;
  b.tag = 1;
  b.end_ns = 2'000'010'000;
  b.fct_ns = 10'000;
  flow_record unfinished = a;
  unfinished.end_ns = -1;
  r.flows = {a, b, unfinished};
  // Node 0 is 11.0.0.1, node 1 is 11.0.1.1. Ideal: 2 x 2000 + 2 x 80 + 1048 x 8 / 100.
  EXPECT_EQ(format_hpcc_fct(*sc, r),
            "0b000001 0b000101 10001 100 1000 2000000000 10000 4243\n"
            "0b000001 0b000101 10000 100 1000 2000000000 20000 4243\n");
}

TEST(hpcc_ns3_output, pfc_lines_where_the_pause_was_received) {
  auto sc = parse_hpcc_scenario(minimal_texts());
  ASSERT_TRUE(sc.ok()) << sc.error().message();
  run_records r;
  r.devices = {"sw0", "h1", "h2"};
  r.pauses = {{.device = 1, .port = 0, .priority = 3, .start_ns = 100, .end_ns = 500},
              {.device = 0, .port = 1, .priority = 3, .start_ns = 200, .end_ns = 300}};
  EXPECT_EQ(format_hpcc_pfc(*sc, r),
            "100 0 0 1 1\n"
            "200 2 1 2 1\n"
            "300 2 1 2 0\n"
            "500 0 0 1 0\n");
}

}  // namespace
}  // namespace rocelab::experiments

// The twin's k-ary fat-tree (fabric_graph.hpp): its shape, shortest-path routing with
// ECMP at every tier, the ideal FCT over its longest path, and the engine forwarding on
// the ports the routing names.
#include "rocelab/fabric/twin/fabric_graph.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "rocelab/fabric/twin/flow_ideal.hpp"
#include "rocelab/fabric/twin/routing.hpp"
#include "rocelab/fabric/twin/twin.hpp"
#include "twin_test_support.hpp"

namespace rocelab::fabric::twin {
namespace {

using testing::fixed_messages;

topology_config fat_tree(std::uint32_t k, double oversubscription = 1.0) {
  topology_config t;
  t.type = topology_config::kind::fat_tree;
  t.k = k;
  t.hosts = k * k * k / 4;
  t.link_gbps = 100;
  t.link_delay_ns = 1000;
  t.oversubscription = oversubscription;
  return t;
}

class FatTreeShape : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(FatTreeShape, CountsNamesTiersAndSymmetricLinks) {
  const std::uint32_t k = GetParam(), half = k / 2;
  const auto g = fabric_graph::build(fat_tree(k, 2.0)).value();
  ASSERT_EQ(g.hosts(), k * k * k / 4);
  ASSERT_EQ(g.switches(), k * k + half * half);  // k pods x (k/2 edge + k/2 agg), (k/2)^2 cores
  std::map<std::uint8_t, std::uint32_t> per_tier;
  for (std::uint32_t s = 0; s < g.switches(); ++s) {
    const graph_switch& sw = g.switch_at(s);
    ++per_tier[sw.tier];
    ASSERT_EQ(sw.ports.size(), k) << sw.name;
    for (std::uint32_t p = 0; p < k; ++p) {
      const graph_port& gp = sw.ports[p];
      if (g.is_host_device(gp.peer)) {
        EXPECT_EQ(sw.tier, 0) << sw.name;
        EXPECT_EQ(gp.rate_bps, 100'000'000'000) << sw.name;
        const graph_host& h = g.host(gp.peer - g.switches());
        EXPECT_EQ(h.sw, s);
        EXPECT_EQ(h.port, p);
        continue;
      }
      // The far end's port leads back here, at the same speed; tiers differ by one.
      const graph_port& back = g.switch_at(gp.peer).ports[gp.peer_port];
      EXPECT_EQ(back.peer, s) << sw.name << " port " << p;
      EXPECT_EQ(back.peer_port, p) << sw.name << " port " << p;
      EXPECT_EQ(gp.rate_bps, 50'000'000'000) << "oversubscription 2: uplinks at half the host speed";
      EXPECT_EQ(back.rate_bps, gp.rate_bps);
      EXPECT_EQ(std::abs(int{g.switch_at(gp.peer).tier} - int{sw.tier}), 1) << sw.name;
    }
  }
  EXPECT_EQ(per_tier[0], k * half);
  EXPECT_EQ(per_tier[1], k * half);
  EXPECT_EQ(per_tier[2], half * half);
  // Names and the wiring fabric_graph.hpp states.
  EXPECT_EQ(g.device_name(0), "edge0_0");
  EXPECT_EQ(g.device_name(k * half), "agg0_0");
  EXPECT_EQ(g.device_name(k * k), "core0");
  EXPECT_EQ(g.device_name(g.switches() - 1), "core" + std::to_string(half * half - 1));
  EXPECT_EQ(g.device_name(g.host_device(0)), "h1");
  const std::uint32_t edge1_1 = g.device_index("edge1_1"), agg1_1 = g.device_index("agg1_1");
  ASSERT_NE(edge1_1, fabric_graph::none);
  EXPECT_EQ(g.switch_at(edge1_1).ports[half + 1].peer, agg1_1);
  EXPECT_EQ(g.switch_at(agg1_1).ports[half].peer, g.device_index("core" + std::to_string(half)));
  EXPECT_EQ(g.switch_at(g.device_index("core0")).ports[1].peer, g.device_index("agg1_0"));
  // Host h: pod h / (k^2/4), edge (h mod k^2/4) / (k/2), port h mod k/2.
  const std::uint32_t h = half * half + half + 1;  // pod 1, edge 1, port 1
  EXPECT_EQ(g.host(h).sw, edge1_1);
  EXPECT_EQ(g.host(h).port, 1u);
}

INSTANTIATE_TEST_SUITE_P(K, FatTreeShape, ::testing::Values(4u, 8u));

TEST(FatTreeShape, RefusesAnOddKAndAHostCountThatIsNotKCubedOverFour) {
  topology_config t = fat_tree(5);
  EXPECT_FALSE(fabric_graph::build(t).ok());
  t = fat_tree(4);
  t.hosts = 20;
  const auto r = fabric_graph::build(t);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("16 hosts"), std::string::npos) << r.error().message();
}

// Every host pair, several QPs each: the path climbs to the lowest tier the two hosts
// share and comes down (1, 3 or 5 switches), every hop enters where the previous one
// left, and the last leaves on the destination's port.
TEST_P(FatTreeShape, EveryPairTakesAShortestUpDownPath) {
  const std::uint32_t k = GetParam(), half = k / 2, per_pod = half * half;
  const auto routes = fabric_routes::create(fat_tree(k)).value();
  const fabric_graph& g = routes->graph();
  std::vector<hop> hops;
  for (std::uint32_t src = 0; src < g.hosts(); ++src)
    for (std::uint32_t dst = 0; dst < g.hosts(); ++dst) {
      if (src == dst) continue;
      const std::size_t expected = src / half == dst / half ? 1 : src / per_pod == dst / per_pod ? 3 : 5;
      for (std::uint32_t qp = 1; qp <= (k == 4 ? 4u : 1u); ++qp) {
        routes->hops(src, dst, routes->path_code({src, dst, qp, 0, 0}, 7), hops);
        ASSERT_EQ(hops.size(), expected) << src << " -> " << dst;
        EXPECT_EQ(hops.front().device, g.host(src).sw);
        EXPECT_EQ(hops.front().ingress_port, g.host(src).port);
        EXPECT_EQ(hops.back().device, g.host(dst).sw);
        EXPECT_EQ(hops.back().egress_port, g.host(dst).port);
        for (std::size_t i = 0; i + 1 < hops.size(); ++i) {
          const graph_port& out = g.switch_at(hops[i].device).ports[hops[i].egress_port];
          ASSERT_EQ(out.peer, hops[i + 1].device);
          ASSERT_EQ(out.peer_port, hops[i + 1].ingress_port);
          // Up to the middle hop, then down.
          const int step = int{g.switch_at(hops[i + 1].device).tier} - int{g.switch_at(hops[i].device).tier};
          EXPECT_EQ(step, i < hops.size() / 2 ? 1 : -1) << src << " -> " << dst;
        }
      }
    }
}

// Flows between two pods: the edge's hash and the aggregation switch's hash together
// reach every core, and an aggregation switch's flows leave it on all of its uplinks (its
// pick is not a copy of the edge's).
TEST_P(FatTreeShape, EcmpSpreadsFlowsOverEveryCore) {
  const std::uint32_t k = GetParam(), half = k / 2, per_pod = half * half;
  const auto routes = fabric_routes::create(fat_tree(k)).value();
  const fabric_graph& g = routes->graph();
  std::set<std::uint32_t> cores;
  std::map<std::uint32_t, std::set<std::uint16_t>> uplinks_of_agg;
  std::vector<hop> hops;
  for (std::uint32_t qp = 1; qp <= 64 * per_pod; ++qp) {
    const std::uint32_t src = qp % per_pod, dst = per_pod + (qp * 7) % per_pod;  // pod 0 -> pod 1
    routes->hops(src, dst, routes->path_code({src, dst, qp, 0, 0}, 3), hops);
    ASSERT_EQ(hops.size(), 5u);
    cores.insert(hops[2].device);
    uplinks_of_agg[hops[1].device].insert(hops[1].egress_port);
  }
  EXPECT_EQ(cores.size(), per_pod);
  for (std::uint32_t c = 0; c < per_pod; ++c) EXPECT_TRUE(cores.count(g.device_index("core" + std::to_string(c))));
  EXPECT_EQ(uplinks_of_agg.size(), half);
  for (const auto& [agg, ups] : uplinks_of_agg) EXPECT_EQ(ups.size(), half) << g.device_name(agg);
}

// Five switches (edge, agg, core, agg, edge): six links of 8 Gb/s (a byte a ns), 1 us of
// cable, 100 ns per switch. One packet: every hop's delay and serialization there, and
// the ACK's back (ideal_fct.hpp's formula with n = 1 and equal rates).
TEST(FatTreeIdeal, FiveSwitchPathIsTheFormula) {
  twin_config cfg;
  cfg.topology = fat_tree(4);
  cfg.topology.link_gbps = 8;
  cfg.fabric.switch_latency_ns = 100;
  cfg.nic.mtu_bytes = 1024;
  const auto ideal = flow_ideal::create(cfg).value();
  const auto path = ideal.path(0, 15);  // pod 0 -> pod 3
  ASSERT_EQ(path.size(), 6u);
  EXPECT_EQ(path[0].delay_ns, 1000);
  for (std::size_t i = 1; i < path.size(); ++i) EXPECT_EQ(path[i].delay_ns, 1100);
  for (const auto& h : path) EXPECT_EQ(h.rate_bps, 8'000'000'000);
  const frame_sizes f = frame_sizes_of(cfg);
  const std::int64_t oh = wire_overhead_of(cfg);
  const std::uint64_t bytes = 1000;
  const std::int64_t w = static_cast<std::int64_t>(bytes + f.data_overhead + f.first_extra) + oh;
  const std::int64_t delays = 1000 + 5 * 1100;
  EXPECT_EQ(ideal.fct_ns(0, 15, bytes), 2 * delays + 6 * w + 6 * (f.ack + oh));
  // Within a pod: three switches, four links.
  EXPECT_EQ(ideal.path(0, 3).size(), 4u);
}

// A k=4 fat-tree: an incast from every other pod into h1 with DCQCN and PFC, beside a
// pod-to-pod flow. Every flow completes, none beats its ideal, and the incast shares h1's
// link about fairly (no flow slower than the 8 together would take, with slack).
TEST(FatTreeTwin, IncastCompletesWithSaneSlowdowns) {
  twin_config cfg = testing::single_switch(16, 4 << 20, true, true, true);
  cfg.topology = fat_tree(4);
  std::vector<message> msgs;
  for (std::uint32_t s = 4; s < 16; s += 3) msgs.push_back({s, 0, 256 * 1024, 0, workload_kind::incast, -1, 0});
  for (std::uint32_t s = 5; s < 16; s += 4) msgs.push_back({s, 1, 256 * 1024, 0, workload_kind::incast, -1, 0});
  msgs.push_back({2, 13, 1 << 20, 0, workload_kind::background, -1, 0});
  fixed_messages load(msgs);
  auto r = run_twin(cfg, load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->flows.size(), msgs.size());
  ASSERT_EQ(r->devices.size(), 20u + 16u);
  EXPECT_EQ(r->devices[16], "core0");
  for (const auto& f : r->flows) {
    ASSERT_TRUE(f.completed()) << "h" << f.src + 1 << " -> h" << f.dst + 1;
    ASSERT_GT(f.ideal_fct_ns, 0);
    const double slowdown = static_cast<double>(f.fct_ns) / static_cast<double>(f.ideal_fct_ns);
    EXPECT_GE(slowdown, 1.0);
    EXPECT_LT(slowdown, f.kind == workload_kind::incast ? 3.0 * 4 : 3.0) << "h" << f.src + 1 << " -> h" << f.dst + 1;
  }
}

// Flows one at a time between pods, with their ACKs: the switch ports that sent anything
// are exactly the egress ports flow_hops names, forward and back.
TEST(FatTreeTwin, EngineForwardsOnThePortsFlowHopsNames) {
  twin_config cfg = testing::single_switch(16, 16 << 20, true, false, false);
  cfg.topology = fat_tree(4);
  std::set<std::uint32_t> cores_seen;
  for (std::uint32_t k = 0; k < 12; ++k) {
    const std::uint32_t src = k % 4, dst = 4 + (k * 5) % 12;
    cfg.seed = 99 + k;
    fixed_messages load({message{src, dst, 8192, 0, workload_kind::other, -1, 0}});
    auto r = run_twin(cfg, load);
    ASSERT_TRUE(r.ok()) << r.error().message();
    ASSERT_TRUE(r->flows.at(0).completed());
    std::set<std::pair<std::uint32_t, std::uint32_t>> expected, used;
    const auto fwd = flow_hops(cfg.topology, cfg.seed, src, dst, r->flows[0].qp);
    const auto rev = flow_hops(cfg.topology, cfg.seed, dst, src, r->flows[0].qp);
    for (const auto& h : fwd) expected.insert({h.device, h.egress_port});
    for (const auto& h : rev) expected.insert({h.device, h.egress_port});
    if (fwd.size() == 5) cores_seen.insert(fwd[2].device);
    for (const auto& c : r->counters)
      if (c.name == "tx_packets" && c.device < 20 && c.value > 0) used.insert({c.device, c.port});
    EXPECT_EQ(used, expected) << "h" << src + 1 << " -> h" << dst + 1;
  }
  EXPECT_GE(cores_seen.size(), 2u);
}

}  // namespace
}  // namespace rocelab::fabric::twin

// The twin's rail-optimized fabric (fabric_graph.hpp): servers of several NICs, NIC i of
// every server on rail i's leaves, spines joining the rails; two NICs of one server
// exchange messages over their local link, never through a switch.
#include "rocelab/fabric/twin/fabric_graph.hpp"

#include <gtest/gtest.h>

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

// 8 servers of 4 NICs (32 hosts), 2 leaves a rail (4 servers each), 4 spines.
topology_config rails(double oversubscription = 1.0) {
  topology_config t;
  t.type = topology_config::kind::rail_optimized;
  t.nics_per_host = 4;
  t.hosts = 32;
  t.leaves = 2;
  t.spines = 4;
  t.link_gbps = 400;
  t.link_delay_ns = 1000;
  t.oversubscription = oversubscription;
  t.local_link_gbps = 3600;
  t.local_link_delay_ns = 500;
  return t;
}

TEST(RailOptimizedShape, NicIOfEveryServerHangsOffRailI) {
  const auto g = fabric_graph::build(rails(2.0)).value();
  ASSERT_EQ(g.hosts(), 32u);
  ASSERT_EQ(g.switches(), 4u * 2 + 4);  // 4 rails x 2 leaves, 4 spines
  EXPECT_EQ(g.nics_per_host(), 4u);
  EXPECT_EQ(g.device_name(0), "rail0_leaf0");
  EXPECT_EQ(g.device_name(3), "rail1_leaf1");
  EXPECT_EQ(g.device_name(8), "spine0");
  for (std::uint32_t h = 0; h < g.hosts(); ++h) {
    const std::uint32_t server = h / 4, nic = h % 4;
    const graph_host& gh = g.host(h);
    EXPECT_EQ(g.device_name(gh.sw), "rail" + std::to_string(nic) + "_leaf" + std::to_string(server / 4)) << h;
    EXPECT_EQ(gh.port, server % 4) << h;
    EXPECT_EQ(g.switch_at(gh.sw).tier, 0);
    EXPECT_EQ(gh.link.rate_bps, 400'000'000'000);
  }
  // Every leaf: 4 servers down, one uplink to each spine at 4 x 400 / (2 x 4) = 200 Gb/s.
  for (std::uint32_t leaf = 0; leaf < 8; ++leaf) {
    const graph_switch& sw = g.switch_at(leaf);
    ASSERT_EQ(sw.ports.size(), 8u) << sw.name;
    for (std::uint32_t s = 0; s < 4; ++s) {
      const graph_port& up = sw.ports[4 + s];
      EXPECT_EQ(g.device_name(up.peer), "spine" + std::to_string(s));
      EXPECT_EQ(up.peer_port, leaf);
      EXPECT_EQ(up.rate_bps, 200'000'000'000);
      EXPECT_EQ(g.switch_at(up.peer).ports[leaf].peer, leaf);
    }
  }
  EXPECT_TRUE(g.same_server(4, 7));
  EXPECT_FALSE(g.same_server(3, 4));
  // 1 GB at 3,600 Gb/s: 2,222,222.2 ns, rounded up; plus the link's 500 ns.
  EXPECT_EQ(g.local_transfer_ns(1'000'000'000), 2'222'223 + 500);
}

TEST(RailOptimizedShape, RefusesServersThatDoNotFillTheirRails) {
  topology_config t = rails();
  t.hosts = 30;  // not whole servers of 4
  auto r = fabric_graph::build(t);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("whole servers"), std::string::npos) << r.error().message();
  t = rails();
  t.leaves = 3;  // 8 servers over 3 leaves a rail
  r = fabric_graph::build(t);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("leaves a rail"), std::string::npos) << r.error().message();
  t = rails();
  t.nics_per_host = 1;
  EXPECT_FALSE(fabric_graph::build(t).ok());
  twin_config c;
  c.topology = rails();
  c.topology.type = topology_config::kind::leaf_spine;
  const status st = validate(c);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("nics_per_host applies to rail_optimized only"), std::string::npos) << st.message();
}

// Same rail, same leaf: one switch. Same rail, other leaf, or another rail: leaf, spine,
// leaf, over every spine as the flows' hashes pick.
TEST(RailOptimizedRouting, SameRailStaysOnItsLeafOtherwiseOneSpineBetween) {
  const auto routes = fabric_routes::create(rails()).value();
  const fabric_graph& g = routes->graph();
  std::vector<hop> hops;
  std::set<std::uint32_t> spines;
  for (std::uint32_t src = 0; src < g.hosts(); ++src)
    for (std::uint32_t dst = 0; dst < g.hosts(); ++dst) {
      if (src == dst) continue;
      routes->hops(src, dst, routes->path_code({src, dst, 1, 0, 0}, 5), hops);
      const bool one_leaf = g.host(src).sw == g.host(dst).sw;
      ASSERT_EQ(hops.size(), one_leaf ? 1u : 3u) << src << " -> " << dst;
      EXPECT_EQ(one_leaf, src % 4 == dst % 4 && src / 16 == dst / 16);
      if (!one_leaf) spines.insert(hops[1].device);
      EXPECT_EQ(hops.back().egress_port, g.host(dst).port);
    }
  EXPECT_EQ(spines.size(), 4u);
}

// A message between NICs of one server takes the local link: its FCT is its ideal, the
// local link's serialization plus delay, it crosses no switch, and a second message from
// the same NIC waits for the first to be serialized. A message to another server's NIC
// goes over the fabric at the NIC's rate.
TEST(RailOptimizedTwin, NicsOfOneServerTalkOverTheLocalLinkOneMessageAtATime) {
  twin_config cfg = testing::single_switch(32, 16 << 20, true, false, false);
  cfg.topology = rails();
  constexpr std::uint64_t bytes = 9'000'000;  // 20,000 ns at 3,600 Gb/s
  fixed_messages load({message{0, 1, bytes, 0, workload_kind::allreduce, -1, 0},
                       message{0, 2, bytes, 0, workload_kind::allreduce, -1, 0},
                       message{5, 6, bytes, 1000, workload_kind::allreduce, -1, 0},
                       message{0, 4, 1 << 20, 0, workload_kind::allreduce, -1, 0}});
  auto r = run_twin(cfg, load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->flows.size(), 4u);
  const auto& first = r->flows[0];
  const auto& second = r->flows[1];
  const auto& other = r->flows[2];
  EXPECT_EQ(first.ideal_fct_ns, 20'000 + 500);
  EXPECT_EQ(first.fct_ns, first.ideal_fct_ns) << "alone on its link: exactly the ideal";
  EXPECT_EQ(second.end_ns, 2 * 20'000 + 500) << "behind the first on NIC 0's local port";
  EXPECT_EQ(other.start_ns, 1000);
  EXPECT_EQ(other.fct_ns, other.ideal_fct_ns) << "another server's local link is its own";
  // h1 -> h5: NIC 0 of server 0 to NIC 0 of server 1, rail 0's leaf: over the fabric.
  const auto& fabric_flow = r->flows[3];
  ASSERT_TRUE(fabric_flow.completed());
  const auto ideal = flow_ideal::create(cfg).value();
  EXPECT_EQ(fabric_flow.ideal_fct_ns, ideal.fct_ns(0, 4, 1 << 20));
  EXPECT_EQ(ideal.path(0, 4).size(), 2u) << "NIC link and one leaf";
  EXPECT_GE(fabric_flow.fct_ns, fabric_flow.ideal_fct_ns);
  // Only rail 0's leaf 0 forwarded anything (the fabric flow and its ACKs).
  std::set<std::uint32_t> forwarding;
  for (const auto& c : r->counters)
    if (c.name == "tx_packets" && c.device < 12 && c.value > 0) forwarding.insert(c.device);
  EXPECT_EQ(forwarding, (std::set<std::uint32_t>{0}));
}

}  // namespace
}  // namespace rocelab::fabric::twin

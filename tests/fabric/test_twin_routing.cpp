// The twin's public routing (routing.hpp) on the single switch and the leaf-spine: the
// hops a flow crosses, with the device indexes of run_records::devices, and agreement
// with the ports the engine's packets actually left on.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "rocelab/fabric/twin/routing.hpp"
#include "rocelab/fabric/twin/twin.hpp"
#include "twin_test_support.hpp"

namespace rocelab::fabric::twin {
namespace {

using testing::fixed_messages;
using testing::single_switch;

topology_config leaf_spine_topology(std::uint32_t hosts, std::uint32_t leaves, std::uint32_t spines) {
  topology_config t;
  t.type = topology_config::kind::leaf_spine;
  t.hosts = hosts;
  t.leaves = leaves;
  t.spines = spines;
  return t;
}

TEST(TwinRouting, SingleSwitchIsOneHopFromTheSourcePortToTheDestinationPort) {
  topology_config t;
  t.hosts = 8;
  const auto hops = flow_hops(t, 1, 2, 5, 1);
  ASSERT_EQ(hops.size(), 1u);
  EXPECT_EQ(hops[0], (hop{0, 2, 5}));
  const auto l = fabric_graph::build(t).value();
  EXPECT_EQ(l.switches(), 1u);
  EXPECT_EQ(l.host_device(0), 1u);
  EXPECT_EQ(l.device_name(0), "sw0");
  EXPECT_EQ(l.device_name(l.host_device(7)), "h8");
}

// The leaf-spine graph hangs host h off leaf h / H at port h % H (H hosts per leaf), and
// that port leads back to the host: for every host at the extremes of leaf size.
TEST(TwinRouting, LeafAndPortOfEveryHostMatchDivision) {
  for (const std::uint32_t per_leaf : {1u, 2u, 3u, 7u, 16u, 127u, 1000u, 21845u, 32767u, 65533u}) {
    const std::uint32_t leaves = 65535 / per_leaf;
    const auto l = fabric_graph::build(leaf_spine_topology(per_leaf * leaves, leaves, 2)).value();
    for (std::uint32_t h = 0; h < per_leaf * leaves; ++h) {
      ASSERT_EQ(l.host(h).sw, h / per_leaf) << "host " << h << ", " << per_leaf << " per leaf";
      ASSERT_EQ(l.host(h).port, h % per_leaf) << "host " << h << ", " << per_leaf << " per leaf";
      ASSERT_EQ(l.switch_at(l.host(h).sw).ports[l.host(h).port].peer, l.host_device(h));
    }
  }
}

TEST(TwinRouting, LeafSpineSameLeafStaysOnTheLeaf) {
  const auto t = leaf_spine_topology(16, 4, 2);  // 4 hosts per leaf
  const auto hops = flow_hops(t, 7, 5, 6, 3);     // both on leaf1
  ASSERT_EQ(hops.size(), 1u);
  EXPECT_EQ(hops[0], (hop{1, 1, 2}));
}

TEST(TwinRouting, LeafSpineAcrossLeavesIsLeafSpineLeafWithConsistentPorts) {
  const auto t = leaf_spine_topology(16, 4, 2);
  const auto l = fabric_graph::build(t).value();
  std::set<std::uint32_t> spines;
  for (std::uint32_t qp = 1; qp <= 64; ++qp) {
    const auto hops = flow_hops(t, 9, 1, 14, qp);  // h2 on leaf0 -> h15 on leaf3
    ASSERT_EQ(hops.size(), 3u);
    EXPECT_EQ(hops[0].device, 0u);
    EXPECT_EQ(hops[0].ingress_port, 1u);
    ASSERT_GE(hops[0].egress_port, 4u);
    const std::uint32_t spine = hops[0].egress_port - 4u;
    spines.insert(spine);
    EXPECT_EQ(hops[1], (hop{4 + spine, 0, 3}));  // spines follow the 4 leaves
    EXPECT_EQ(hops[2], (hop{3, static_cast<std::uint16_t>(4 + spine), 2}));
    EXPECT_EQ(l.device_name(hops[1].device), "spine" + std::to_string(spine));
    // The same flow, the same path, every time (a pure function of its inputs).
    EXPECT_EQ(hops, flow_hops(t, 9, 1, 14, qp));
  }
  // 64 QPs over 2 spines: both used (probability of not, 2^-63).
  EXPECT_EQ(spines.size(), 2u);
}

// The HPCC ns-3 simulator's ECMP, reproduced for compat runs. Observed in ns-3 (ls64_ws50's
// topology: leaves = nodes 64..67, spines 68..71, 16 hosts per leaf; 16 flows of 2 MB from
// host i to host 16 + i, sport 10000, dport 100, all at once): flows 0, 4, 6, 10 and 15
// finished 20% later than the other eleven, five sharing one 400G uplink; no spine carried
// more than four of the others. Those groups hold in any order of a leaf's next hops;
// which spine a group takes follows ns-3's order, its switches by descending node id
// (routing.cpp), which the k=8 fat-tree's fidelity pins (TwinHpccFidelity).
TEST(TwinRouting, HpccNs3EcmpGroupsFlowsAsNs3Did) {
  topology_config t = leaf_spine_topology(64, 4, 4);
  t.ecmp = topology_config::ecmp_kind::hpcc_ns3;
  t.ecmp_seeds = {64, 65, 66, 67, 68, 69, 70, 71};
  const auto routes = fabric_routes::create(t).value();
  std::vector<std::uint32_t> spine_of(16);
  std::map<std::uint32_t, std::set<std::uint32_t>> flows_on;
  for (std::uint32_t i = 0; i < 16; ++i) {
    // A leaf-spine's path code is the index of its spine among the leaf's next hops,
    // which list the spines from the highest node id down.
    spine_of[i] = 3 - routes->path_code({i, 16 + i, i + 1, 10000, 100}, 1);
    flows_on[spine_of[i]].insert(i);
    // The path the routing function reports goes over that spine.
    const auto hops = flow_hops(t, 1, i, 16 + i, i + 1, 10000, 100);
    ASSERT_EQ(hops.size(), 3u);
    EXPECT_EQ(hops[1].device, 4 + spine_of[i]);
  }
  EXPECT_EQ(flows_on[spine_of[0]], (std::set<std::uint32_t>{0, 4, 6, 10, 15}));
  for (const auto& [spine, flows] : flows_on)
    if (spine != spine_of[0]) {
      EXPECT_LE(flows.size(), 4u);
    }
  // Node 17's address as ns-3's fct.txt prints it.
  EXPECT_EQ(hpcc_ns3_node_ip(17), 0x0b001101u);
}

// Runs flows one at a time (each alone in its own run) and checks that the switch ports
// that transmitted anything are exactly the egress ports of the flow's data hops and of
// its ACK hops (dst -> src on the same QP).
TEST(TwinRouting, EngineForwardsOnThePortsFlowHopsNames) {
  twin_config cfg = single_switch(16, 16 << 20, true, false, false);
  cfg.topology = leaf_spine_topology(16, 4, 4);
  cfg.topology.link_gbps = 100;
  cfg.topology.link_delay_ns = 1000;
  cfg.seed = 1234;
  const auto l = fabric_graph::build(cfg.topology).value();
  std::set<std::uint32_t> uplinks_seen;
  for (std::uint32_t k = 0; k < 12; ++k) {
    const std::uint32_t src = k % 16, dst = (k * 7 + 5) % 16;
    if (src == dst) continue;
    // The flow is the run's only message (qp 1); the seed varies its UDP source port and
    // so its ECMP choice.
    cfg.seed = 1234 + k;
    message m;
    m.src = src;
    m.dst = dst;
    m.bytes = 8192;
    fixed_messages load({m});
    auto r = run_twin(cfg, load);
    ASSERT_TRUE(r.ok()) << r.error().message();
    ASSERT_EQ(r->flows.size(), 1u);
    ASSERT_TRUE(r->flows[0].completed());
    ASSERT_EQ(r->devices.size(), l.switches() + 16u);
    for (std::uint32_t d = 0; d < r->devices.size(); ++d) EXPECT_EQ(r->devices[d], l.device_name(d));

    std::set<std::pair<std::uint32_t, std::uint32_t>> expected;  // (device, egress port)
    const auto fwd = flow_hops(cfg.topology, cfg.seed, src, dst, r->flows[0].qp);
    const auto rev = flow_hops(cfg.topology, cfg.seed, dst, src, r->flows[0].qp);
    for (const auto& h : fwd) expected.insert({h.device, h.egress_port});
    for (const auto& h : rev) expected.insert({h.device, h.egress_port});
    if (fwd.size() == 3) uplinks_seen.insert(fwd[0].egress_port);

    std::set<std::pair<std::uint32_t, std::uint32_t>> used;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> tx;
    for (const auto& c : r->counters)
      if (c.name == "tx_packets" && c.device < l.switches() && c.value > 0) {
        used.insert({c.device, c.port});
        tx[{c.device, c.port}] = c.value;
      }
    EXPECT_EQ(used, expected) << "flow h" << src + 1 << " -> h" << dst + 1;
    // 8 data packets out of each forward egress port (a port on both paths, never here
    // since the paths run in opposite directions, would carry both).
    for (const auto& h : fwd) EXPECT_GE((tx[{h.device, h.egress_port}]), 8u);
  }
  EXPECT_GE(uplinks_seen.size(), 2u);
}

}  // namespace
}  // namespace rocelab::fabric::twin

#include "rocelab/experiments/analysis/correlation.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "correlation_scenarios.hpp"
#include "rocelab/experiments/analysis/attribution.hpp"
#include "rocelab/experiments/analysis/victims.hpp"
#include "rocelab/fabric/twin/routing.hpp"
#include "rocelab/fabric/twin/twin.hpp"

// The proof on the twin: a run where PFC spreads congestion (two incasts sharing
// an upstream link on a leaf-spine, plus flows that only share the upstream) shows the
// victim flows it should, and a run without congestion shows none.

namespace rocelab::experiments {
namespace {

using scenarios::msg;
using scenarios::run;
using scenarios::twin_run;

std::set<std::size_t> victim_flows(const victim_analysis& v) {
  std::set<std::size_t> s;
  for (const auto& f : v.victims) s.insert(f.flow);
  return s;
}

TEST(correlation_twin, pfc_spreading_from_two_incasts_makes_the_bystanders_victims) {
  // Flows 0-2: incast A, hosts 0-2 (leaf0) -> host 8 (leaf1).
  // Flows 3-5: incast B, hosts 3-5 (leaf0) -> host 9 (leaf1).
  // Flows 6-7: bystanders, hosts 6 and 7 (leaf0) -> hosts 12 and 13 (leaf1), alone at
  //            their destinations; they share only leaf0's uplink and the spine's port
  //            to leaf1 with the incasts.
  const twin_run t = scenarios::two_incasts_and_bystanders();
  const run_records& r = t.records;
  ASSERT_EQ(r.flows.size(), 8u);
  for (const auto& f : r.flows) ASSERT_TRUE(f.completed());
  ASSERT_FALSE(r.pauses.empty()) << "the incasts must make PFC pause";
  EXPECT_EQ(r.totals.drops, 0u) << "lossless";

  auto built = fabric::twin::fabric_graph::build(t.config.topology);
  ASSERT_TRUE(built.ok()) << built.error().message();
  const fabric::twin::fabric_graph& g = *built;
  const std::uint32_t leaf0 = g.device_index("leaf0"), leaf1 = g.device_index("leaf1");
  const std::uint32_t spine0 = g.device_index("spine0");
  auto flows = correlate_flows(r, twin_paths(t.config.topology, t.config.seed));
  // Every leaf-to-leaf path: NIC, leaf0 uplink (port 8), spine port 1, leaf1 edge port.
  for (const auto& c : flows) {
    ASSERT_EQ(c.hops.size(), 4u);
    EXPECT_EQ(c.hops[1].hop.device, leaf0);
    EXPECT_EQ(c.hops[1].hop.egress_port, 8u);
    EXPECT_EQ(c.hops[2].hop.device, spine0);
    EXPECT_EQ(c.hops[2].hop.egress_port, 1u);
    EXPECT_EQ(c.hops[3].hop.device, leaf1);
  }
  const pause_index pauses(r.pauses);
  EXPECT_GT(pauses.overlap_ns(pause_index::key{spine0, 1, 3}, 0, run_end_ns(r)), 0)
      << "leaf1 paused the spine: congestion spread upstream";

  const auto v = find_victims(r, flows);
  EXPECT_TRUE(v.from_queue_samples);
  EXPECT_EQ(victim_flows(v), (std::set<std::size_t>{6, 7}));
  // Victims where the spreading went: the spine's port to leaf1 is among their hops.
  for (const auto& vf : v.victims) {
    EXPECT_GT(vf.victim_paused_ns, 0);
    bool at_spine = false;
    for (const std::size_t h : vf.hops) at_spine |= flows[vf.flow].hops[h].hop.device == spine0;
    EXPECT_TRUE(at_spine) << "flow " << vf.flow;
  }
  const std::set<pause_index::key> congested(v.congested_ports.begin(), v.congested_ports.end());
  EXPECT_TRUE(congested.count(pause_index::key{leaf1, g.host(8).port, 3}));
  EXPECT_TRUE(congested.count(pause_index::key{leaf1, g.host(9).port, 3}));
  EXPECT_FALSE(congested.count(pause_index::key{leaf1, g.host(12).port, 3}));

  // Pause exposure ranks with slowdown here: the slowed flows are the paused ones.
  const auto tail = attribute_tail(r, flows);
  ASSERT_FALSE(tail.empty());
  for (const auto& a : tail)
    EXPECT_EQ(a.pause_ns + a.queueing_ns + a.retransmission_ns + a.sharing_ns + a.unexplained_ns, a.excess_ns);
}

TEST(correlation_twin, without_congestion_there_are_no_victims) {
  // A permutation: every host of leaf0 sends to a different host of leaf1, one flow each.
  std::vector<fabric::twin::message> m;
  for (std::uint32_t s = 0; s < 8; ++s) m.push_back(msg(s, 8 + s, 512 * 1024));
  const twin_run t = run(m);
  const run_records& r = t.records;
  ASSERT_EQ(r.flows.size(), 8u);
  auto flows = correlate_flows(r, twin_paths(t.config.topology, t.config.seed));
  const auto v = find_victims(r, flows);
  EXPECT_TRUE(r.pauses.empty());
  EXPECT_TRUE(v.victims.empty());
  EXPECT_TRUE(v.congested_ports.empty());
  for (const auto& c : flows) EXPECT_EQ(c.paused_ns, 0);
}

TEST(correlation_twin, an_incast_alone_has_no_victims_but_a_bystander_behind_a_paused_nic_is_one) {
  // Hosts 1 and 2 send to host 8 (an incast) and host 1 also sends to host 12 on another
  // QP: that flow waits behind host 1's paused NIC though host 12's port is idle.
  std::vector<fabric::twin::message> m = {msg(1, 8, 512 * 1024), msg(2, 8, 512 * 1024), msg(3, 8, 512 * 1024),
                                          msg(4, 8, 512 * 1024), msg(1, 12, 512 * 1024)};
  const twin_run t = run(m);
  auto flows = correlate_flows(t.records, twin_paths(t.config.topology, t.config.seed));
  const auto v = find_victims(t.records, flows);
  ASSERT_FALSE(t.records.pauses.empty());
  EXPECT_EQ(victim_flows(v), (std::set<std::size_t>{4}));
}

}  // namespace
}  // namespace rocelab::experiments

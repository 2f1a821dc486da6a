// The twin's congestion_event records (twin_config::max_events): CE marks at the switch
// that set them, CNPs at the sender, retransmits, drops; the same counts as the totals
// and per-flow counters, in time order, bounded, and absent unless asked for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "rocelab/fabric/twin/routing.hpp"
#include "rocelab/fabric/twin/twin.hpp"
#include "twin_test_support.hpp"

namespace rocelab::fabric::twin {
namespace {

using testing::fixed_messages;
using testing::incast;
using testing::single_switch;

std::size_t count(const run_records& r, event_kind k) {
  return static_cast<std::size_t>(
      std::count_if(r.events.begin(), r.events.end(), [&](const congestion_event& e) { return e.kind == k; }));
}

bool time_ordered(const run_records& r) {
  return std::is_sorted(r.events.begin(), r.events.end(),
                        [](const congestion_event& a, const congestion_event& b) { return a.t_ns < b.t_ns; });
}

TEST(TwinEvents, OffByDefault) {
  fixed_messages load(incast(8, 256 * 1024));
  auto r = run_twin(single_switch(9, 16 << 20, true, true, true), load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_GT(r->totals.ce_marked, 0u);
  EXPECT_TRUE(r->events.empty());
}

// ECN + DCQCN incast: every mark is on the receiver's port of the switch, every CNP at
// the sender of its flow; counts equal the switch's marks and the flows' CNP counters.
TEST(TwinEvents, MarksAtTheBottleneckAndCnpsAtTheSenders) {
  twin_config cfg = single_switch(9, 16 << 20, true, true, true);
  cfg.max_events = 1'000'000;
  fixed_messages load(incast(8, 256 * 1024));
  auto r = run_twin(cfg, load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_GT(r->totals.ce_marked, 0u);
  EXPECT_EQ(count(*r, event_kind::ce_mark), r->totals.ce_marked);
  std::uint64_t cnps = 0;
  for (const auto& f : r->flows) cnps += f.cnps;
  ASSERT_GT(cnps, 0u);
  EXPECT_EQ(count(*r, event_kind::cnp), cnps);
  auto l = fabric_graph::build(cfg.topology);
  ASSERT_TRUE(l.ok());
  for (const auto& e : r->events) {
    ASSERT_GE(e.qp, 1u);
    const flow_record& f = r->flows[e.qp - 1];
    EXPECT_EQ(e.src, f.src);
    EXPECT_EQ(e.dst, f.dst);
    EXPECT_EQ(e.source, pause_source::model);
    if (e.kind == event_kind::ce_mark) {
      EXPECT_EQ(r->devices[e.device], "sw0");
      EXPECT_EQ(e.port, 0u);  // h1's port: the incast's bottleneck
      EXPECT_EQ(e.priority, 3u);
      EXPECT_GE(e.t_ns, f.start_ns);
    } else if (e.kind == event_kind::cnp) {
      EXPECT_EQ(e.device, l->host_device(f.src));
      EXPECT_LE(e.t_ns, f.end_ns);
    }
  }
  EXPECT_TRUE(time_ordered(*r));
}

// The HPCC ns-3 compat mode marks at dequeue and flags ACKs instead of sending CNPs: the
// marks are still recorded once, at the switch.
TEST(TwinEvents, CompatMarksAtDequeueAreRecordedOnce) {
  twin_config cfg;
  cfg.hpcc_ns3_compat = true;
  cfg.topology.hosts = 17;
  cfg.switch_template.buffer_bytes = 2 * 1024 * 1024;
  cfg.ecn_by_rate = {{100, ecn_config{true, 400'000, 1'600'000, 0.2}}};
  cfg.nic.mtu_bytes = 1000;
  cfg.max_events = 1'000'000;
  fixed_messages load(incast(16, 1'000'000));
  auto r = run_twin(cfg, load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_GT(r->totals.ce_marked, 0u);
  EXPECT_EQ(count(*r, event_kind::ce_mark), r->totals.ce_marked);
  EXPECT_EQ(count(*r, event_kind::cnp), r->totals.cnps);
  EXPECT_TRUE(time_ordered(*r));
}

// PFC off and a small buffer: drops at the switch and retransmits at the senders, as
// many as the totals count.
TEST(TwinEvents, DropsAndRetransmits) {
  twin_config cfg = single_switch(9, 256 * 1024, false, false, false);
  cfg.nic.retransmit_timeout_ns = 200'000;
  cfg.max_events = 1'000'000;
  fixed_messages load(incast(8, 256 * 1024));
  auto r = run_twin(cfg, load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_GT(r->totals.drops, 0u);
  ASSERT_GT(r->totals.retransmits, 0u);
  EXPECT_EQ(count(*r, event_kind::drop), r->totals.drops);
  EXPECT_EQ(count(*r, event_kind::retransmit), r->totals.retransmits);
  auto l = fabric_graph::build(cfg.topology);
  ASSERT_TRUE(l.ok());
  for (const auto& e : r->events) {
    if (e.kind == event_kind::drop) {
      EXPECT_LT(e.device, l->switches());
    } else if (e.kind == event_kind::retransmit) {
      EXPECT_EQ(e.device, l->host_device(e.src));
    }
  }
  EXPECT_TRUE(time_ordered(*r));
}

TEST(TwinEvents, BoundedByMaxEvents) {
  twin_config cfg = single_switch(9, 16 << 20, true, true, true);
  cfg.max_events = 10;
  fixed_messages load(incast(8, 256 * 1024));
  auto r = run_twin(cfg, load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_GT(r->totals.ce_marked, 10u);
  EXPECT_EQ(r->events.size(), 10u);
  EXPECT_TRUE(time_ordered(*r));
}

}  // namespace
}  // namespace rocelab::fabric::twin

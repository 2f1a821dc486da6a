// The twin's per-flow transmit timelines (twin_config::flow_timeline_interval_ns): each
// flow's payload bytes as its last switch sends them toward the receiver, and a run with
// them off exactly as before.
#include "rocelab/fabric/twin/twin.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "twin_test_support.hpp"

namespace rocelab::fabric::twin {
namespace {

using testing::fixed_messages;
using testing::single_switch;

// 4-to-1 incast, sizes that end in a partial packet, DCQCN with ECN and PFC (no loss).
std::vector<message> uneven_incast() {
  std::vector<message> m = testing::incast(4, 0);
  const std::uint64_t bytes[] = {300'000, 120'500, 64'001, 250'000};
  for (std::size_t i = 0; i < m.size(); ++i) m[i].bytes = bytes[i];
  m[3].start_ns = 40'000;
  return m;
}

run_records run(std::int64_t interval_ns) {
  twin_config c = single_switch(5, 1 << 20, true, true, true);
  c.flow_timeline_interval_ns = interval_ns;
  fixed_messages load(uneven_incast());
  auto r = run_twin(c, load);
  EXPECT_TRUE(r.ok()) << r.error().message();
  return std::move(*r);
}

TEST(TwinFlowTimeline, EachFlowsSamplesRiseFromZeroToItsBytesAtTheSendersDevice) {
  const run_records r = run(10'000);
  ASSERT_EQ(r.flows.size(), 4u);
  std::map<std::uint32_t, std::vector<counter_sample>> by_flow;
  for (const auto& c : r.counters)
    if (c.name == "flow_tx_bytes") by_flow[c.port].push_back(c);
  ASSERT_EQ(by_flow.size(), 4u);
  for (const auto& [flow, s] : by_flow) {
    ASSERT_LT(flow, r.flows.size());
    const flow_record& f = r.flows[flow];
    ASSERT_TRUE(f.completed());
    ASSERT_EQ(f.retransmits, 0u) << "lossless: the wire carries each byte once";
    ASSERT_GE(s.size(), 3u);
    EXPECT_EQ(s.front().value, 0u) << "flow " << flow;
    EXPECT_EQ(s.back().value, f.bytes) << "flow " << flow << ": the series sums to the flow's bytes";
    EXPECT_LE(s.back().t_ns, f.end_ns + 10'000) << "closed at the first sample after it completed";
    EXPECT_GE(s.front().t_ns, f.start_ns - 10'000) << "no earlier than the interval before its first byte";
    for (std::size_t i = 0; i < s.size(); ++i) {
      EXPECT_EQ(s[i].device, 1u + f.src) << "one switch, then the hosts";
      if (i == 0) continue;
      EXPECT_GE(s[i].t_ns, s[i - 1].t_ns);
      EXPECT_GE(s[i].value, s[i - 1].value);
      if (i + 1 < s.size()) {
        EXPECT_EQ(s[i].t_ns - s[i - 1].t_ns, 10'000) << "every interval";
      }
    }
  }
}

TEST(TwinFlowTimeline, OffTheRunsRecordsAreTheSameAsWithoutIt) {
  const run_records off = run(0), on = run(10'000);
  auto others = [](const run_records& r) {
    std::vector<std::tuple<std::uint32_t, std::uint32_t, std::string, std::int64_t, std::uint64_t>> out;
    for (const auto& c : r.counters)
      if (c.name != "flow_tx_bytes") out.emplace_back(c.device, c.port, c.name, c.t_ns, c.value);
    return out;
  };
  for (const auto& c : off.counters) EXPECT_NE(c.name, "flow_tx_bytes");
  EXPECT_EQ(others(off), others(on));
  ASSERT_EQ(off.flows.size(), on.flows.size());
  for (std::size_t i = 0; i < off.flows.size(); ++i) {
    EXPECT_EQ(off.flows[i].end_ns, on.flows[i].end_ns) << i;
    EXPECT_EQ(off.flows[i].ce_marked, on.flows[i].ce_marked) << i;
    EXPECT_EQ(off.flows[i].cnps, on.flows[i].cnps) << i;
  }
  EXPECT_EQ(off.queues.size(), on.queues.size());
  EXPECT_EQ(off.pauses.size(), on.pauses.size());
  EXPECT_EQ(off.totals.ce_marked, on.totals.ce_marked);
  EXPECT_EQ(off.totals.cnps, on.totals.cnps);
  EXPECT_EQ(off.simulated_ns, on.simulated_ns);
}

TEST(TwinFlowTimeline, ANegativeIntervalIsRefused) {
  twin_config c = single_switch(3, 1 << 20, true, true, true);
  c.flow_timeline_interval_ns = -1;
  EXPECT_FALSE(validate(c).ok());
}

}  // namespace
}  // namespace rocelab::fabric::twin

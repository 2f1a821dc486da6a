#include "rocelab/fabric/uec_congestion_control.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "rocelab/fabric/uec_load_balancing.hpp"

namespace rocelab::fabric {
namespace {

// 400 Gb/s, 10 us base RTT (BDP 500 KB, ceiling 750 KB), target 7.5 us (trimming);
// the window starts at 300 KB so it can move either way.
nscc_config config() {
  nscc_config c;
  c.line_rate_bps = 400'000'000'000;
  c.mss_bytes = 4096;
  c.base_rtt_ns = 10'000;
  c.network_rtt_ns = 10'000;
  c.trimming = true;
  c.initial_window_bytes = 300'000;
  return c;
}

struct quadrant_case {
  const char* name;
  bool marked;
  std::int64_t queueing_delay_ns;
  int want_direction;  // -1 down, 0 held, +1 up
};

// UEC NSCC's four cases, each fed 200 ACKs (about 800 KB) spaced 50 ns apart after a
// first ACK that opens the quick-adapt period.
const quadrant_case quadrant_cases[] = {
    {"unmarked_low_delay_increases", false, 500, +1},
    {"unmarked_high_delay_increases_fairly", false, 20'000, +1},
    {"marked_high_delay_decreases", true, 20'000, -1},
    {"marked_low_delay_holds", true, 500, 0},
    {"marked_just_below_target_holds", true, 7'400, 0},
};

TEST(Nscc, WindowFollowsTheFourQuadrantsOfMarkAndDelay) {
  for (const auto& c : quadrant_cases) {
    SCOPED_TRACE(c.name);
    nscc_window w(config());
    const std::uint64_t start = w.window_bytes();
    std::int64_t t = 1'000;
    for (int i = 0; i < 200; ++i, t += 50) w.on_ack(t, 4096, c.marked, 10'000 + c.queueing_delay_ns);
    const std::uint64_t end = w.window_bytes();
    const int direction = end > start ? 1 : end < start ? -1 : 0;
    EXPECT_EQ(direction, c.want_direction) << start << " -> " << end;
  }
}

TEST(Nscc, HoldsItsWindowWhenMarksArriveWithLowDelay) {
  nscc_window w(config());
  const std::uint64_t start = w.window_bytes();
  std::int64_t t = 1'000;
  // A thousand marked ACKs over 50 us (five base RTTs) with 1 us of queueing each.
  for (int i = 0; i < 1000; ++i, t += 50) w.on_ack(t, 4096, true, 11'000);
  EXPECT_EQ(w.window_bytes(), start);
  EXPECT_EQ(w.counters().holds, 1000u);
  EXPECT_EQ(w.counters().multiplicative_decreases, 0u);
}

TEST(Nscc, NackTakesThePacketOffTheWindowAndLossTriggersQuickAdapt) {
  nscc_window w(config());
  const std::uint64_t start = w.window_bytes();
  w.on_ack(1'000, 4096, false, 10'500);  // opens the quick-adapt period
  w.on_nack(2'000, 4096);
  EXPECT_LE(w.window_bytes(), start - 4096 + 4096 / 2);
  // A period later, little was delivered and a loss was seen: the window drops to what
  // was delivered (two packets), far below the 300 KB it had.
  w.on_ack(30'000, 4096, false, 10'500);
  EXPECT_LE(w.window_bytes(), 3u * 4096);
  EXPECT_EQ(w.counters().quick_adapts, 1u);
}

TEST(Nscc, WindowStaysBetweenOnePacketAndTheCeiling) {
  nscc_window w(config());
  std::int64_t t = 1'000;
  for (int i = 0; i < 20'000; ++i, t += 10) w.on_ack(t, 4096, false, 10'000);
  EXPECT_LE(static_cast<double>(w.window_bytes()), w.max_window_bytes());
  EXPECT_NEAR(w.max_window_bytes(), 1.5 * 500'000, 1.0);
  for (int i = 0; i < 200; ++i) w.on_nack(t += 10, 4096);
  EXPECT_GE(w.window_bytes(), 4096u);
}

// htsim's base RTT (uec.cpp update_base_rtt): a flow starts at the network's RTT and takes
// the smallest sample it sees, from an ACK or a NACK, the ceiling following; a larger
// sample never raises it. Without learn_base_rtt the configured base RTT stays.
TEST(Nscc, LearnsItsBaseRttFromAckAndNackSamplesWhenAskedTo) {
  nscc_config c = config();
  c.learn_base_rtt = true;
  nscc_window learning(c);
  nscc_window fixed(config());
  for (nscc_window* w : {&learning, &fixed}) {
    w->on_ack(1'000, 4096, false, 6'000);  // an unloaded same-leaf path's RTT
    w->on_ack(2'000, 4096, false, 15'000);
  }
  EXPECT_EQ(learning.base_rtt_ns(), 6'000);
  EXPECT_NEAR(learning.max_window_bytes(), 1.5 * 400e9 / 8 * 6e-6, 1.0);
  EXPECT_EQ(fixed.base_rtt_ns(), 10'000);
  EXPECT_NEAR(fixed.max_window_bytes(), 1.5 * 500'000, 1.0);
  // A trimmed packet's NACK overtakes the queue it was cut from: its RTT is the lowest.
  learning.on_rtt_sample(4'200);
  fixed.on_rtt_sample(4'200);
  EXPECT_EQ(learning.base_rtt_ns(), 4'200);
  EXPECT_EQ(fixed.base_rtt_ns(), 10'000);
  // Queueing delay is now measured from the learnt base: 4.2 us + 7.4 us is past the
  // 7.5 us target, so a marked ACK there is a decrease, not the hold it is from 10 us.
  learning.on_ack(30'000, 4096, true, 4'200 + 7'600);
  fixed.on_ack(30'000, 4096, true, 4'200 + 7'600);
  EXPECT_EQ(learning.counters().holds, 0u);
  EXPECT_EQ(fixed.counters().holds, 1u);
}

TEST(Rccc, ReceiverNeverHasMoreThanItsBudgetOutstanding) {
  rccc_receiver rx(40'000, 4096);
  for (std::uint32_t f = 0; f < 8; ++f) rx.add_demand(f, 100'000);
  std::uint64_t granted = 0;
  std::uint32_t flows_seen = 0;
  std::vector<bool> seen(8, false);
  while (auto g = rx.next_grant()) {
    granted += g->bytes;
    if (!seen[g->flow]) seen[g->flow] = true, ++flows_seen;
  }
  EXPECT_EQ(granted, 40'000u);
  EXPECT_EQ(rx.outstanding_bytes(), 40'000u);
  EXPECT_EQ(flows_seen, 8u) << "grants go round robin";
  rx.on_arrival(4096);
  auto g = rx.next_grant();
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->bytes, 4096u);
  EXPECT_FALSE(rx.next_grant().has_value());
  EXPECT_EQ(rx.max_outstanding_bytes(), 40'000u);
}

TEST(Rccc, SenderSpendsItsCredit) {
  rccc_credit c(400'000'000'000);
  EXPECT_EQ(c.credit_bytes(), 0u);
  c.on_credit(0, 8192);
  c.on_bytes_sent(0, 4096);
  EXPECT_EQ(c.credit_bytes(), 4096u);
  c.on_bytes_sent(0, 8192);
  EXPECT_EQ(c.credit_bytes(), 0u);
}

TEST(EntropyPicker, EcmpKeepsOneEntropyAndObliviousSprays) {
  entropy_picker ecmp(load_balancing::ecmp, 7, 0xc123);
  entropy_picker spray(load_balancing::oblivious, 7, 0xc123);
  std::vector<std::uint16_t> seen;
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(ecmp.next(), 0xc123);
    seen.push_back(spray.next());
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_GT(std::unique(seen.begin(), seen.end()) - seen.begin(), 60);
}

TEST(EntropyPicker, RepsReusesEntropiesThatCameBackUnmarked) {
  entropy_picker reps(load_balancing::reps, 7, 0xc123, 8);
  const std::uint16_t a = reps.next(), b = reps.next();
  reps.on_ack(a, false);
  reps.on_ack(b, true);  // marked: not re-used
  EXPECT_EQ(reps.next(), a);
  EXPECT_EQ(reps.recycled(), 1u);
  const std::uint16_t fresh = reps.next();
  EXPECT_NE(fresh, b);
}

TEST(LoadBalancing, ParsesItsNames) {
  EXPECT_EQ(*parse_load_balancing("reps"), load_balancing::reps);
  EXPECT_EQ(*parse_load_balancing("oblivious"), load_balancing::oblivious);
  EXPECT_EQ(*parse_load_balancing("ecmp"), load_balancing::ecmp);
  EXPECT_FALSE(parse_load_balancing("random").ok());
}

}  // namespace
}  // namespace rocelab::fabric

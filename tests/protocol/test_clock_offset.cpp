#include "rocelab/protocol/clock_offset.hpp"

#include <gtest/gtest.h>

namespace rocelab::protocol {
namespace {

// A symmetric path of one-way delay d and an agent clock ahead by `offset`.
void probe(clock_offset_estimator& e, std::int64_t t1, std::int64_t offset, std::int64_t out_ns, std::int64_t back_ns,
           std::int64_t hold_ns = 1000) {
  const std::int64_t t2 = t1 + out_ns + offset;
  const std::int64_t t3 = t2 + hold_ns;
  const std::int64_t t4 = t3 - offset + back_ns;
  ASSERT_TRUE(e.add(t1, t2, t3, t4));
}

TEST(clock_offset, symmetric_path_gives_the_exact_offset) {
  clock_offset_estimator e;
  probe(e, 1'000'000, 5'000'000'000, 20'000, 20'000);
  auto est = e.estimate();
  ASSERT_TRUE(est);
  EXPECT_DOUBLE_EQ(est->offset_ns, 5'000'000'000.0);
  EXPECT_DOUBLE_EQ(est->uncertainty_ns, 20'000.0);  // delay 40 us, half of it
  EXPECT_EQ(e.to_controller(5'000'000'123), 123);
  EXPECT_EQ(e.to_agent(123), 5'000'000'123);
}

TEST(clock_offset, min_delay_sample_wins_over_queued_ones) {
  clock_offset_estimator e(8);
  const std::int64_t offset = -7'300'000;
  // Queued samples: 2 ms out, 10 us back (asymmetric: off by ~1 ms).
  for (int i = 0; i < 5; ++i) probe(e, i * 1'000'000'000LL, offset, 2'000'000, 10'000);
  probe(e, 9'000'000'000LL, offset, 10'000, 12'000);  // a quiet one
  for (int i = 0; i < 2; ++i) probe(e, 10'000'000'000LL + i, offset, 10'000, 3'000'000);
  auto est = e.estimate();
  ASSERT_TRUE(est);
  EXPECT_NEAR(est->offset_ns, static_cast<double>(offset), 1'000.0);  // (10-12)/2 us asymmetry
  // Half its 22 us round trip, plus its age at the newest sample (t4 of the last probe)
  // times the clocks' largest drift: still far below the queued samples' 1.5 ms.
  const double age_ns = (10'000'000'001.0 + 3'011'000.0) - (9'000'000'000.0 + 23'000.0);
  EXPECT_NEAR(est->uncertainty_ns, 11'000.0 + age_ns * max_frequency_error, 1.0);
  EXPECT_LE(std::abs(est->offset_ns - static_cast<double>(offset)), est->uncertainty_ns);
}

// Unsynchronised clocks drift apart, so an old sample's bound grows with its age: a tight
// sample from 10 s ago (5 us + 500 us of drift) loses to a fresh one of 40 us, and the
// bound keeps growing up to the instant the estimate is used at.
TEST(clock_offset, an_old_tight_sample_loses_to_a_fresh_one_as_the_clocks_drift) {
  clock_offset_estimator e;
  const std::int64_t offset = 1'000'000;
  probe(e, 0, offset - 300, 5'000, 5'000, 0);                 // tight, 10 s old
  probe(e, 10'000'000'000LL, offset, 40'000, 40'000, 0);      // fresh, round trip 80 us
  auto est = e.estimate();
  ASSERT_TRUE(est);
  EXPECT_DOUBLE_EQ(est->offset_ns, static_cast<double>(offset));
  EXPECT_DOUBLE_EQ(est->uncertainty_ns, 40'000.0);
  // Used 2 s after the newest sample: 100 us more.
  auto later = e.estimate(10'000'080'000LL + 2'000'000'000LL);
  ASSERT_TRUE(later);
  EXPECT_NEAR(later->uncertainty_ns, 40'000.0 + 2e9 * max_frequency_error, 1e-3);
  // An instant before the newest sample does not make it younger.
  EXPECT_DOUBLE_EQ(e.estimate(0)->uncertainty_ns, 40'000.0);
}

TEST(clock_offset, window_forgets_old_samples) {
  clock_offset_estimator e(2);
  probe(e, 0, 100, 1'000, 1'000);                  // best delay, but will age out
  probe(e, 10, 900'000, 50'000, 50'000);
  probe(e, 20, 900'000, 60'000, 60'000);
  EXPECT_DOUBLE_EQ(e.estimate()->offset_ns, 900'000.0);
  EXPECT_EQ(e.estimate()->samples, 2u);
}

TEST(clock_offset, inconsistent_timestamps_are_refused) {
  clock_offset_estimator e;
  EXPECT_FALSE(e.add(100, 50, 40, 200));  // t3 < t2
  EXPECT_FALSE(e.add(100, 50, 60, 90));   // t4 < t1
  EXPECT_FALSE(e.add(0, 0, 100, 50));     // hold longer than the round trip
  EXPECT_FALSE(e.estimate().has_value());
}

TEST(clock_offset, wall_clock_magnitudes_do_not_overflow) {
  clock_offset_estimator e;
  const std::int64_t now = 1'790'000'000'000'000'000LL;  // ~2026 in Unix ns
  ASSERT_TRUE(e.add(now, -now, -now + 10, now + 100));
  EXPECT_NEAR(e.estimate()->offset_ns, -2.0 * static_cast<double>(now), 1e3);
}

// The agent starts the exchange (the UDP clock service): t1 and t4 on the agent's clock.
TEST(clock_offset, an_exchange_the_agent_starts_gives_the_same_offset_and_delay) {
  const std::int64_t offset = 2'500'000'000;  // agent ahead
  const std::int64_t a1 = 9'000'000 + offset;
  const std::int64_t c2 = 9'000'000 + 15'000;  // 15 us out
  const std::int64_t c3 = c2 + 400'000;         // the controller took 400 us to answer
  const std::int64_t a4 = c3 + 25'000 + offset;  // 25 us back
  clock_offset_estimator e;
  ASSERT_TRUE(e.add_agent_initiated(a1, c2, c3, a4));
  auto est = e.estimate();
  ASSERT_TRUE(est);
  // The controller's 400 us hold is left out: delay 40 us, the 10 us asymmetry puts it 5 us ahead.
  EXPECT_DOUBLE_EQ(est->uncertainty_ns, 20'000.0);
  EXPECT_DOUBLE_EQ(est->offset_ns, static_cast<double>(offset + 5'000));
  EXPECT_EQ(e.to_agent(0), offset + 5'000);
  // Inconsistent timestamps are refused like add()'s.
  EXPECT_FALSE(e.add_agent_initiated(a1, c3, c2, a4)) << "answered before it was received";
  EXPECT_FALSE(e.add_agent_initiated(a4, c2, c3, a1)) << "received before it was sent";
  EXPECT_EQ(e.estimate()->samples, 1u);
}

}  // namespace
}  // namespace rocelab::protocol

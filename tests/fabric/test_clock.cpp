#include "rocelab/fabric/clock.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace rocelab::fabric {
namespace {

struct recorder final : timer_client {
  std::vector<std::pair<std::int64_t, std::uint64_t>> fired;
  virtual_clock* clk = nullptr;
  void on_timer(std::int64_t now, std::uint64_t cookie) override {
    fired.emplace_back(now, cookie);
    if (cookie == 99 && clk != nullptr) clk->schedule(now + 5, *this, 100);  // re-arm from inside
  }
};

TEST(VirtualClock, RunsEventsByTimeThenBySchedulingOrder) {
  virtual_clock clk;
  recorder r;
  clk.schedule(30, r, 1);
  clk.schedule(10, r, 2);
  clk.schedule(30, r, 3);  // same time as cookie 1, scheduled later: runs after it
  clk.schedule(10, r, 4);
  EXPECT_EQ(clk.run(), 4u);
  const std::vector<std::pair<std::int64_t, std::uint64_t>> want{{10, 2}, {10, 4}, {30, 1}, {30, 3}};
  EXPECT_EQ(r.fired, want);
  EXPECT_EQ(clk.now_ns(), 30);
}

TEST(VirtualClock, CancelledTimerNeverFiresAndCancelTwiceIsHarmless) {
  virtual_clock clk;
  recorder r;
  const timer_id a = clk.schedule(10, r, 1);
  clk.schedule(20, r, 2);
  EXPECT_TRUE(clk.cancel(a));
  EXPECT_FALSE(clk.cancel(a));
  EXPECT_FALSE(clk.cancel(no_timer));
  EXPECT_EQ(clk.pending(), 1u);
  clk.run();
  ASSERT_EQ(r.fired.size(), 1u);
  EXPECT_EQ(r.fired[0].second, 2u);
}

TEST(VirtualClock, StaleIdDoesNotCancelTheTimerThatReusedItsSlot) {
  virtual_clock clk;
  recorder r;
  const timer_id a = clk.schedule(10, r, 1);
  clk.run();
  clk.schedule(20, r, 2);  // reuses a's slot with a new generation
  EXPECT_FALSE(clk.cancel(a));
  clk.run();
  EXPECT_EQ(r.fired.size(), 2u);
}

TEST(VirtualClock, RunUntilStopsAtTheLimitAndAdvancesTime) {
  virtual_clock clk;
  recorder r;
  r.clk = &clk;
  clk.schedule(10, r, 99);  // re-arms itself at 15
  clk.schedule(50, r, 7);
  EXPECT_EQ(clk.run_until(20), 2u);  // 10 and 15
  EXPECT_EQ(clk.now_ns(), 20);
  EXPECT_EQ(clk.next_event_ns(), 50);
  clk.schedule(5, r, 8);  // in the past: fires next, stamped now
  clk.step();
  EXPECT_EQ(r.fired.back(), (std::pair<std::int64_t, std::uint64_t>{20, 8}));
}

}  // namespace
}  // namespace rocelab::fabric

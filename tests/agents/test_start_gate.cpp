#include "rocelab/agents/agent/start_gate.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "rocelab/common/monotonic_clock.hpp"

namespace rocelab::agents::agent {
namespace {

struct fired_log {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::pair<int, std::int64_t>> fired;  // (which, fired at)

  start_gate::fire_fn record(int which) {
    return [this, which](std::int64_t at) {
      std::lock_guard lock(mutex);
      fired.emplace_back(which, at);
      changed.notify_all();
    };
  }
  bool wait_for(std::size_t n) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, std::chrono::seconds(10), [&] { return fired.size() >= n; });
  }
};

TEST(start_gate, fires_each_start_at_or_after_its_instant_in_instant_order) {
  start_gate gate;
  fired_log log;
  const std::int64_t now = monotonic_ns();
  const std::int64_t at[] = {now + 30'000'000, now + 10'000'000, now + 10'020'000};
  for (int i = 0; i < 3; ++i) (void)gate.arm(at[i], log.record(i));
  ASSERT_TRUE(log.wait_for(3));
  ASSERT_EQ(log.fired.size(), 3u);
  EXPECT_EQ(log.fired[0].first, 1);
  EXPECT_EQ(log.fired[1].first, 2);
  EXPECT_EQ(log.fired[2].first, 0);
  for (const auto& [which, t] : log.fired) EXPECT_GE(t, at[which]) << "start " << which << " fired early";
}

// A slow hand-off does not make the next start late: starts close together are all opened
// by their clock reads first, and handed off after.
TEST(start_gate, starts_close_together_are_opened_before_any_of_them_is_handed_off) {
  start_gate gate;
  fired_log log;
  std::int64_t first_handed_off_ns = 0;
  const std::int64_t now = monotonic_ns();
  (void)gate.arm(now + 10'000'000, [&](std::int64_t at) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    first_handed_off_ns = monotonic_ns();
    log.record(0)(at);
  });
  (void)gate.arm(now + 10'020'000, log.record(1));
  ASSERT_TRUE(log.wait_for(2));
  std::lock_guard lock(log.mutex);
  ASSERT_EQ(log.fired.size(), 2u);
  EXPECT_EQ(log.fired[1].first, 1);
  EXPECT_GE(log.fired[1].second, now + 10'020'000) << "opened before its instant";
  EXPECT_LT(log.fired[1].second, first_handed_off_ns) << "the second start waited for the first's hand-off";
}

TEST(start_gate, a_start_cancelled_before_its_instant_never_fires) {
  start_gate gate;
  fired_log log;
  const std::int64_t now = monotonic_ns();
  const auto cancelled = gate.arm(now + 20'000'000, log.record(0));
  (void)gate.arm(now + 40'000'000, log.record(1));
  gate.cancel(cancelled);
  ASSERT_TRUE(log.wait_for(1));
  std::lock_guard lock(log.mutex);
  ASSERT_EQ(log.fired.size(), 1u);
  EXPECT_EQ(log.fired[0].first, 1);
}

TEST(start_gate, a_start_armed_for_a_past_instant_fires_at_once_with_the_real_time) {
  start_gate gate;
  fired_log log;
  const std::int64_t past = monotonic_ns() - 1'000'000'000;
  (void)gate.arm(past, log.record(0));
  ASSERT_TRUE(log.wait_for(1));
  EXPECT_GT(log.fired[0].second, past + 900'000'000);
}

}  // namespace
}  // namespace rocelab::agents::agent

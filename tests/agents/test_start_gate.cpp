#include "rocelab/agents/agent/start_gate.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
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

// 64 agents on loopback, each with its own injected clock offset, start a timer job at
// one agreed instant in each of 5 rounds, within 200 us of each other on the machine's
// clock. The offsets come from the UDP clock service's exchanges (kernel timestamps), so
// the controller's start uncertainty is tens of microseconds, not the TLS probes'
// milliseconds. Lab-labelled: it runs alone (the lab suite is serial) with the start
// gate's real-time priority; bench/controller/run reports the same figures at 16, 64 and
// 1,000 agents.
#include "rocelab/controller/controller.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "controller_test_support.hpp"

namespace rocelab::controller {
namespace {

using namespace std::chrono_literals;
using test::agent_pool;
using test::eventually;
using test::temp_dir;

constexpr std::size_t agent_count = 64;
constexpr std::int64_t skew_limit_ns = 200'000;

TEST(controller_start_skew, sixty_four_agents_start_within_200_us_in_each_of_five_rounds) {
  temp_dir dir("skew64");
  auto started = controller::start(test::quick_controller_options(dir));
  ASSERT_TRUE(started.ok()) << started.error().message();
  auto& c = *started;
  agent_pool pool;
  std::vector<std::string> names;
  std::vector<std::int64_t> offsets;
  for (std::size_t i = 0; i < agent_count; ++i) {
    names.push_back("a" + std::to_string(i));
    // Agents 1.5 ms apart, half of them behind: a dropped or flipped offset moves a start
    // by far more than the limit.
    offsets.push_back((static_cast<std::int64_t>(i) - 32) * 1'500'000);
    ASSERT_TRUE(pool.add(c->address(), names.back(), offsets.back())) << names.back();
  }
  ASSERT_TRUE(c->wait_for_agents(names, 30s, 8));
  ASSERT_TRUE(eventually(
      [&] {
        const auto views = c->agents();
        return std::all_of(views.begin(), views.end(), [](const agent_view& a) { return a.clock_probes == "udp"; });
      },
      10s))
      << "not every agent's offset came from the clock service";

  for (int round = 1; round <= 5; ++round) {
    auto r = c->run_jobs(test::timer_plans(names), 20s);
    ASSERT_TRUE(r.ok()) << r.error().message();
    ASSERT_EQ(r->outcomes.size(), agent_count);
    std::int64_t earliest = INT64_MAX, latest = INT64_MIN;
    for (std::size_t i = 0; i < agent_count; ++i) {
      const auto& o = r->outcomes[i];
      ASSERT_TRUE(o.reported && o.error.empty()) << o.agent << ": " << o.error;
      // On the machine's CLOCK_MONOTONIC: what the agent reported minus its injected offset.
      const std::int64_t true_start = o.agent_started_ns - offsets[i];
      earliest = std::min(earliest, true_start);
      latest = std::max(latest, true_start);
      EXPECT_GE(static_cast<double>(true_start - r->t0_ns), -r->clock.agents[i].uncertainty_ns - 1)
          << o.agent << " started before T0";
    }
    EXPECT_LE(latest - earliest, skew_limit_ns)
        << "round " << round << ": 64 starts spread over " << (latest - earliest) / 1000 << " us (clock "
        << r->clock.source << ", uncertainty " << r->clock.uncertainty_ns / 1000 << " us)";
  }
}

}  // namespace
}  // namespace rocelab::controller

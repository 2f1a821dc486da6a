// 64 agents on loopback start a timer job together: within 200 us of each other (max -
// min of the starts the controller records, on its clock through the run's offsets) in
// each of 5 rounds. The agents' clocks are offset by up to +-2 s, so the starts go through
// the offset estimates, not around them. The true spread on the machine's clock (each
// agent's start minus its injected offset) adds the estimates' errors, which the run
// reports as its start uncertainty (test_clock_sync.cpp pins that bound); it is printed
// beside the recorded one. Label `serial`: what it measures is how the machine schedules
// 64 agents, so it runs alone, never beside the parallel unit suite.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <iostream>
#include <map>

#include "clock_test_support.hpp"

namespace rocelab::controller {
namespace {

using namespace std::chrono_literals;

std::int64_t recorded_skew_ns(const jobs_result& r) {
  std::int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const auto& o : r.outcomes) {
    lo = std::min(lo, o.started_ns);
    hi = std::max(hi, o.started_ns);
  }
  return hi - lo;
}

TEST(start_skew, sixty_four_agents_start_within_200_us_in_each_of_5_rounds) {
  test::temp_dir dir("start64");
  auto c = test::start_controller(dir, test::unsynchronised_host());
  ASSERT_TRUE(c);
  test::agent_pool pool;
  std::vector<std::string> names;
  std::map<std::string, std::int64_t> injected;
  for (int i = 0; i < 64; ++i) {
    names.push_back("a" + std::to_string(i));
    injected[names.back()] = (i % 2 ? 1 : -1) * static_cast<std::int64_t>(i) * 31'250'000;
    pool.add(c->address(), names.back(), injected[names.back()]);
  }
  // A full window of probes per agent (clock_offset_estimator{16}) before the first round.
  ASSERT_TRUE(c->wait_for_agents(names, 30s, 16));
  std::string skews;
  for (int round = 0; round < 5; ++round) {
    auto r = c->run_jobs(test::timer_plans(names), 20s);
    ASSERT_TRUE(r.ok()) << r.error().message();
    for (const auto& o : r->outcomes) ASSERT_TRUE(o.reported && o.error.empty()) << o.agent << ": " << o.error;
    EXPECT_EQ(r->outcomes.size(), 64u);
    EXPECT_LE(recorded_skew_ns(*r), 200'000) << "round " << round + 1;
    EXPECT_EQ(r->clock.source, "estimate");
    std::int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const auto& o : r->outcomes) {
      lo = std::min(lo, o.agent_started_ns - injected[o.agent]);
      hi = std::max(hi, o.agent_started_ns - injected[o.agent]);
    }
    skews += " " + std::to_string(recorded_skew_ns(*r)) + "/" + std::to_string(hi - lo);
  }
  std::cout << "start skew of the five rounds, recorded/true, ns:" << skews << "\n";
}

}  // namespace
}  // namespace rocelab::controller

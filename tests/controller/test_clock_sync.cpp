// Armed starts through agents and the clocks they are agreed on: an agent whose clock is
// offset still starts at the agreed instant, and synchronised host clocks (a test double
// of the pmc / adjtimex readers) replace the controller's estimate and are reported.
// How closely 64 agents start is pinned by lab_controller_start_skew.cpp (alone, at
// real-time priority) and measured at 16, 64 and 1,000 by bench/controller/run.
#include "rocelab/controller/controller.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "controller_test_support.hpp"
#include "rocelab/agents/clock/host_clock_reader.hpp"

namespace rocelab::controller {
namespace {

using namespace std::chrono_literals;
using test::agent_pool;
using test::temp_dir;
using test::timer_plans;
namespace clk = agents::clock;

// Recorded pmc / adjtimex / process-table readings standing in for linuxptp and the kernel.
class recorded_pmc final : public clk::pmc_reader {
 public:
  explicit recorded_pmc(result<std::string> text) : text_(std::move(text)) {}
  result<std::string> time_status_text() override { return text_; }

 private:
  result<std::string> text_;
};
class recorded_timex final : public clk::timex_reader {
 public:
  explicit recorded_timex(clk::timex_reading r) : r_(r) {}
  result<clk::timex_reading> read() override { return r_; }

 private:
  clk::timex_reading r_;
};

class recorded_discipline final : public clk::discipline_reader {
 public:
  explicit recorded_discipline(bool phc2sys) : phc2sys_(phc2sys) {}
  bool phc2sys_running() override { return phc2sys_; }
  result<std::string> chronyc_tracking_text() override { return status(error_code::not_found, "chronyc: not installed"); }

 private:
  bool phc2sys_;
};

std::shared_ptr<clk::host_clock_monitor> ptp_host(std::int64_t master_offset_ns) {
  const std::string pmc = "sending: GET TIME_STATUS_NP\n\t90e2ba.fffe.20c7f8-0 seq 0 RESPONSE MANAGEMENT TIME_STATUS_NP\n"
                          "\t\tmaster_offset " + std::to_string(master_offset_ns) +
                          "\n\t\tgmPresent true\n\t\tgmIdentity 00a069.fffe.0b552d\n";
  // phc2sys runs and keeps the kernel clock marked synchronised.
  return std::make_shared<clk::host_clock_monitor>(std::make_unique<recorded_pmc>(pmc),
                                                   std::make_unique<recorded_timex>(clk::timex_reading{0, 0x2001, 0, 0}),
                                                   std::make_unique<recorded_discipline>(true));
}

std::shared_ptr<clk::host_clock_monitor> unsynchronised_host() {
  return std::make_shared<clk::host_clock_monitor>(
      std::make_unique<recorded_pmc>(status(error_code::not_found, "pmc: not installed")),
      std::make_unique<recorded_timex>(clk::timex_reading{clk::time_error_state, clk::sta_unsync_bit, 16'000'000, 16'000'000}),
      std::make_unique<recorded_discipline>(false));
}

std::unique_ptr<controller> start_controller(const temp_dir& dir, std::shared_ptr<const clk::host_clock_monitor> host_clock) {
  auto o = test::quick_controller_options(dir);
  o.host_clock = std::move(host_clock);
  auto c = controller::start(o);
  EXPECT_TRUE(c.ok()) << c.error().message();
  return c ? std::move(*c) : nullptr;
}

// The agents' offsets are injected, so the truth is known: an agent's start on the shared
// CLOCK_MONOTONIC is what it reported minus its injected offset. It must be T0, give or
// take the estimate's uncertainty (never earlier) plus the wake-up (bounded by 4 ms, less
// than the 5 ms a dropped or flipped offset would add or take).
TEST(clock_sync, an_injected_clock_offset_is_removed_from_the_start) {
  temp_dir dir("offset");
  auto c = start_controller(dir, unsynchronised_host());
  ASSERT_TRUE(c);
  agent_pool pool;
  const std::vector<std::pair<std::string, std::int64_t>> agents = {{"ahead", 5'000'000}, {"behind", -5'000'000}, {"exact", 0}};
  std::vector<std::string> names;
  for (const auto& [n, offset] : agents) {
    names.push_back(n);
    pool.add(c->address(), n, offset);
  }
  ASSERT_TRUE(c->wait_for_agents(names, 10s, 8));
  for (int round = 0; round < 3; ++round) {
    auto r = c->run_jobs(timer_plans(names), 10s);
    ASSERT_TRUE(r.ok()) << r.error().message();
    for (std::size_t i = 0; i < agents.size(); ++i) {
      const auto& o = r->outcomes[i];
      ASSERT_TRUE(o.reported && o.error.empty()) << o.agent << ": " << o.error;
      const double u = r->clock.agents[i].uncertainty_ns;
      EXPECT_LE(std::abs(o.clock_offset_ns - static_cast<double>(agents[i].second)), u + 1) << o.agent;
      const std::int64_t true_start = o.agent_started_ns - agents[i].second;
      EXPECT_GE(static_cast<double>(true_start - r->t0_ns), -u - 1) << o.agent << " started before T0";
      EXPECT_LE(static_cast<double>(true_start - r->t0_ns), u + 4e6) << o.agent;
      // The controller's record of the same start is on its clock: at T0 or after it.
      EXPECT_GE(o.started_ns, r->t0_ns) << o.agent;
    }
  }
}

TEST(clock_sync, synchronised_host_clocks_replace_the_estimate_and_are_reported) {
  temp_dir dir("ptp");
  auto c = start_controller(dir, ptp_host(-40));
  ASSERT_TRUE(c);
  agent_pool pool;
  const auto agent_clock = ptp_host(250);  // each agent: PTP, 250 ns from its grandmaster
  pool.add(c->address(), "h1", 3'000'000, test::test_token, 5000ms, {}, agent_clock);
  pool.add(c->address(), "h2", -7'000'000, test::test_token, 5000ms, {}, agent_clock);
  ASSERT_TRUE(c->wait_for_agents({"h1", "h2"}, 10s, 8));
  for (const auto& a : c->agents()) {
    EXPECT_EQ(a.host_clock_source, "ptp") << a.name;
    EXPECT_EQ(a.host_clock_error_bound_ns, 250 + clk::phc_to_system_allowance_ns) << a.name;
  }
  auto r = c->run_jobs(timer_plans({"h1", "h2"}), 10s);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->clock.source, "ptp") << r->clock.reason;
  EXPECT_EQ(r->clock.uncertainty_ns, 250 + clk::phc_to_system_allowance_ns);
  // Both hosts read the same realtime clock here, so the host offsets are the injected
  // ones to the read jitter of realtime - monotonic.
  EXPECT_NEAR(r->outcomes[0].clock_offset_ns, 3'000'000, 50'000);
  EXPECT_NEAR(r->outcomes[1].clock_offset_ns, -7'000'000, 50'000);
  for (const auto& o : r->outcomes) EXPECT_TRUE(o.reported && o.error.empty()) << o.agent << ": " << o.error;
}

TEST(clock_sync, one_unsynchronised_host_keeps_the_estimate_and_says_which) {
  temp_dir dir("mixed");
  auto c = start_controller(dir, ptp_host(0));
  ASSERT_TRUE(c);
  agent_pool pool;
  pool.add(c->address(), "h1", 0, test::test_token, 5000ms, {}, ptp_host(100));
  pool.add(c->address(), "h2", 0, test::test_token, 5000ms, {}, unsynchronised_host());
  ASSERT_TRUE(c->wait_for_agents({"h1", "h2"}, 10s, 8));
  auto r = c->run_jobs(timer_plans({"h1", "h2"}), 10s);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->clock.source, "estimate");
  EXPECT_NE(r->clock.reason.find("h2's host clock is not synchronised"), std::string::npos) << r->clock.reason;
  // The estimate's uncertainty: half a loopback round trip, not the PTP host's bound.
  EXPECT_GT(r->clock.uncertainty_ns, 0);
}

}  // namespace
}  // namespace rocelab::controller

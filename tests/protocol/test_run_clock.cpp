#include "rocelab/protocol/run_clock.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rocelab::protocol {
namespace {

clock_estimate estimate(double offset_ns, double uncertainty_ns) { return {offset_ns, uncertainty_ns, 8}; }
host_offset host(const char* source, double offset_ns, double bound_ns) { return {source, offset_ns, bound_ns, "recorded"}; }

const controller_host_clock synchronised{true, 500, "chrony"};

TEST(run_clock, every_host_synchronised_uses_the_host_clocks_and_their_bounds) {
  auto c = choose_run_clock({{"h1", estimate(5'000'020, 40'000), host("ptp", 5'000'000, 1'300)},
                             {"h2", estimate(-3'000'010, 30'000), host("ptp", -3'000'000, 900)}},
                            synchronised);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->source, "ptp");
  EXPECT_EQ(c->uncertainty_ns, 1'300);
  ASSERT_EQ(c->agents.size(), 2u);
  EXPECT_EQ(c->agents[0].offset_ns, 5'000'000);
  EXPECT_EQ(c->agents[1].to_agent(1'000'000'000), 1'000'000'000 - 3'000'000);
  EXPECT_EQ(c->agents[1].to_controller(1'000'000'000 - 3'000'000), 1'000'000'000);
  EXPECT_TRUE(c->reason.empty());
}

TEST(run_clock, mixed_sources_name_both) {
  // Probes across a loaded WAN link: the estimate is looser than ntp's 2 ms.
  auto c = choose_run_clock({{"h1", estimate(0, 3'000'000), host("ptp", 0, 1'000)},
                             {"h2", estimate(0, 3'000'000), host("ntp", 0, 2'000'000)}},
                            synchronised);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->source, "ntp+ptp");
  EXPECT_EQ(c->uncertainty_ns, 2'000'000);
}

struct fallback_case {
  const char* name;
  std::vector<agent_clock_inputs> agents;
  controller_host_clock controller;
  const char* reason;  // part of it
};

class run_clock_falls_back : public ::testing::TestWithParam<fallback_case> {};

TEST_P(run_clock_falls_back, to_the_estimate_and_says_why) {
  const auto& c = GetParam();
  auto r = choose_run_clock(c.agents, c.controller);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->source, "estimate");
  EXPECT_NE(r->reason.find(c.reason), std::string::npos) << r->reason;
  double worst = 0;
  for (std::size_t i = 0; i < c.agents.size(); ++i) {
    EXPECT_EQ(r->agents[i].offset_ns, c.agents[i].estimate->offset_ns);
    worst = std::max(worst, c.agents[i].estimate->uncertainty_ns);
  }
  EXPECT_EQ(r->uncertainty_ns, worst);
}

INSTANTIATE_TEST_SUITE_P(
    cases, run_clock_falls_back,
    ::testing::Values(
        fallback_case{"controller_unsynchronised",
                      {{"h1", estimate(7, 40'000), host("ptp", 0, 1'000)}},
                      {false, 0, "STA_UNSYNC"},
                      "the controller's host clock is not synchronised (STA_UNSYNC)"},
        fallback_case{"one_agent_reports_none",
                      {{"h1", estimate(7, 40'000), host("ptp", 0, 1'000)}, {"h2", estimate(9, 60'000), std::nullopt}},
                      synchronised,
                      "h2 reports no host clock"},
        fallback_case{"one_agent_unsynchronised",
                      {{"h1", estimate(7, 40'000), host("none", 0, 0)}},
                      synchronised,
                      "h1's host clock is not synchronised (recorded)"},
        fallback_case{"host_offset_disagrees_with_the_probes",
                      {{"h1", estimate(2'000'000'000, 40'000), host("ptp", 0, 1'000)}},
                      synchronised,
                      "h1's host clock disagrees with the probes"},
        // chrony last updated h2 ~30 s ago: maxerror grew 500 us/s to 16 ms, while the
        // probes bound the estimate to 40-60 us. Every host is synchronised and consistent.
        fallback_case{"host_bound_looser_than_the_estimate",
                      {{"h1", estimate(7, 40'000), host("ptp", 0, 1'000)},
                       {"h2", estimate(9, 60'000), host("ntp", 9'000, 16'000'000)}},
                      synchronised,
                      "the host clocks' bound, 16000 us (h2's ntp), is looser than rocelab's estimate's, 60 us"},
        fallback_case{"one_ntp_host_a_little_looser",
                      {{"h1", estimate(7, 40'000), host("ntp", 0, 40'001)}},
                      synchronised,
                      "is looser than rocelab's estimate's"}),
    [](const auto& info) { return std::string(info.param.name); });

// The tighter bound wins either way: host clocks as tight as the estimate are used.
TEST(run_clock, host_clocks_as_tight_as_the_estimate_are_used) {
  auto c = choose_run_clock({{"h1", estimate(0, 40'000), host("ntp", 0, 40'000)},
                             {"h2", estimate(0, 60'000), host("ptp", 0, 1'000)}},
                            synchronised);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->source, "ntp+ptp");
  EXPECT_EQ(c->uncertainty_ns, 40'000);
}

TEST(run_clock, an_agent_without_an_estimate_is_an_error) {
  auto r = choose_run_clock({{"h1", std::nullopt, host("ptp", 0, 1'000)}}, synchronised);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("h1: no clock estimate yet"), std::string::npos);
}

}  // namespace
}  // namespace rocelab::protocol

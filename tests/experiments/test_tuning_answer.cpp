// The pure parts of a tuning's answer: Student's t intervals against tabulated values,
// the Pareto front on a table of points, range edges on the search scale, the choice
// among trials and baselines, the baselines' fields.
#include "rocelab/experiments/tuning/tuning_answer.hpp"
#include "rocelab/experiments/tuning/tuning_decision.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace rocelab::experiments {
namespace {

TEST(tuning_answer, student_t_matches_the_tables) {
  struct row {
    std::size_t df;
    double t;
  };
  // t_{0.975, df} from the standard tables (df <= 30 exact, beyond by the expansion).
  for (const row r : {row{1, 12.7062}, row{2, 4.3027}, row{4, 2.7764}, row{9, 2.2622}, row{29, 2.0452},
                      row{30, 2.0423}, row{40, 2.0211}, row{60, 2.0003}, row{120, 1.9799}, row{100000, 1.9600}})
    EXPECT_NEAR(student_t_975(r.df), r.t, 2e-4) << "df " << r.df;
}

TEST(tuning_answer, confidence_interval_of_five_samples) {
  const confidence_interval ci = mean_ci95({1, 2, 3, 4, 5});
  EXPECT_EQ(ci.n, 5u);
  EXPECT_DOUBLE_EQ(ci.mean, 3.0);
  EXPECT_NEAR(ci.stddev, std::sqrt(2.5), 1e-12);
  // t_{0.975,4} = 2.776445, s = 1.581139, sqrt(5) = 2.236068.
  EXPECT_NEAR(ci.half_width, 2.776445105 * std::sqrt(2.5) / std::sqrt(5.0), 1e-9);
  EXPECT_NEAR(ci.low, 3.0 - 1.963243, 1e-5);
  EXPECT_NEAR(ci.high, 3.0 + 1.963243, 1e-5);
  const confidence_interval one = mean_ci95({7});
  EXPECT_EQ(one.half_width, 0);
  EXPECT_EQ(one.low, 7);
  const confidence_interval same = mean_ci95({2, 2, 2});
  EXPECT_EQ(same.half_width, 0);
}

TEST(tuning_answer, pareto_front_on_a_table_of_points) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct test_case {
    const char* name;
    std::vector<std::pair<double, double>> points;
    std::vector<std::size_t> front;
  };
  const test_case cases[] = {
      {"a chain of trade-offs is all front", {{1, 5}, {2, 3}, {4, 1}}, {0, 1, 2}},
      {"dominated points drop out", {{1, 5}, {2, 6}, {3, 3}, {3, 4}, {5, 1}, {6, 2}}, {0, 2, 4}},
      {"equal on one axis and worse on the other is dominated", {{1, 2}, {1, 3}, {0.5, 9}}, {0, 2}},
      {"identical points are both on the front", {{1, 1}, {1, 1}, {2, 2}}, {0, 1}},
      {"NaN is never on the front", {{nan, 0}, {1, 1}, {0, nan}}, {1}},
      {"one point", {{3, 3}}, {0}},
  };
  for (const auto& c : cases) EXPECT_EQ(pareto_front(c.points), c.front) << c.name;
}

tuning_settings three_parameters() {
  tuning_settings s;
  s.parameters.push_back({"switch.ecn.kmin_bytes", 5000, 200000, true, true, "", 0});
  s.parameters.push_back({"switch.ecn.kmax_bytes", 200000, 2000000, true, true, "", 0});
  s.parameters.push_back({"switch.ecn.pmax", 0.01, 1, false, false, "", 0});
  s.objective.terms.push_back({"incast.slowdown_p99", 1});
  return s;
}

TEST(tuning_answer, at_edge_is_within_two_percent_on_the_search_scale) {
  const tuning_settings s = three_parameters();
  // kmin on a log scale: 5300 is 1.6% of log(200000/5000) above the minimum, 5500 is 2.6%.
  EXPECT_EQ(at_edge(s, std::vector<double>{5300, 600000, 0.5}), std::vector<std::string>{"switch.ecn.kmin_bytes"});
  EXPECT_TRUE(at_edge(s, std::vector<double>{5500, 600000, 0.5}).empty());
  // pmax linear: 0.985 is within 2% of 1 (0.99 x 0.98 + 0.01 = 0.9802), 0.97 is not.
  EXPECT_EQ(at_edge(s, std::vector<double>{20000, 2000000, 0.985}),
            (std::vector<std::string>{"switch.ecn.kmax_bytes", "switch.ecn.pmax"}));
  EXPECT_TRUE(at_edge(s, std::vector<double>{20000, 1900000, 0.97}).empty());
  // The at_least tie counts: kmax raised to kmin's value is where the run was.
  tuning_settings tied = s;
  tied.parameters[1] = {"switch.ecn.kmax_bytes", 10000, 2000000, true, true, "switch.ecn.kmin_bytes", 0};
  EXPECT_TRUE(at_edge(tied, std::vector<double>{100000, 10000, 0.5}).empty());
}

// Fresh-seed evidence with objectives and nothing else (no summaries: no class gains).
fresh_evidence evidence(const std::string& name, const std::string& baseline, std::vector<double> objectives,
                        bool feasible = true) {
  return {name, baseline, feasible, feasible ? "" : "drops <= 0", std::move(objectives), {}};
}

TEST(tuning_answer, the_rule_picks_a_tuned_answer_only_beyond_the_paired_ci_and_a_tie_goes_to_the_baseline) {
  struct test_case {
    const char* name;
    std::optional<fresh_evidence> contender;
    std::vector<fresh_evidence> baselines;
    std::string answer;
  };
  const std::vector<double> pfc{10, 12, 11, 13, 12};
  const test_case cases[] = {
      {"beats both beyond the CI", evidence("trial 3", "", {5, 6, 5.5, 6.5, 6}),
       {evidence("pfc_only", "pfc_only", pfc), evidence("vendor_default", "vendor_default", {8, 9, 8.5, 9.5, 9})},
       "tuned"},
      {"identical everywhere: PFC only", evidence("trial 0", "", {2, 2, 2, 2, 2}),
       {evidence("pfc_only", "pfc_only", {2, 2, 2, 2, 2}), evidence("vendor_default", "vendor_default", {2, 2, 2, 2, 2})},
       "pfc_only"},
      // Lower on average but within the noise of the paired differences: not a win.
      {"better on the mean, not beyond the CI", evidence("trial 1", "", {9, 13, 10, 14, 11}),
       {evidence("pfc_only", "pfc_only", pfc), evidence("vendor_default", "vendor_default", {20, 21, 20, 22, 21})},
       "pfc_only"},
      {"beats PFC only, ties the vendor defaults, which beat PFC only", evidence("trial 2", "", {5, 6, 5, 7, 6}),
       {evidence("pfc_only", "pfc_only", pfc), evidence("vendor_default", "vendor_default", {5.5, 5.5, 5.5, 6.5, 6})},
       "vendor_default"},
      {"an infeasible baseline is beaten by feasibility", evidence("trial 4", "", {5, 6, 5.5, 6.5, 6}),
       {evidence("pfc_only", "pfc_only", {1, 1, 1, 1, 1}, false),
        evidence("vendor_default", "vendor_default", {8, 9, 8.5, 9.5, 9})},
       "tuned"},
      {"an infeasible contender never wins", evidence("trial 5", "", {1, 1, 1, 1, 1}, false),
       {evidence("pfc_only", "pfc_only", pfc), evidence("vendor_default", "vendor_default", {20, 21, 20, 22, 21})},
       "pfc_only"},
      {"no feasible trial", std::nullopt,
       {evidence("pfc_only", "pfc_only", pfc), evidence("vendor_default", "vendor_default", {20, 21, 20, 22, 21})},
       "pfc_only"},
  };
  for (const auto& c : cases) {
    auto d = decide(c.contender, c.baselines);
    ASSERT_TRUE(d.ok()) << c.name << ": " << d.error().message();
    EXPECT_EQ(d->answer, c.answer) << c.name;
    EXPECT_EQ(d->versus.size(), c.contender ? 2u : 0u) << c.name;
  }
  auto none = decide(evidence("trial 6", "", {1, 1}, false),
                     {evidence("pfc_only", "pfc_only", {1, 1}, false), evidence("vendor_default", "vendor_default", {1, 1}, false)});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message().find("no configuration met the constraints"), std::string::npos);
}

TEST(tuning_answer, paired_comparisons_are_ties_within_noise_and_name_the_side) {
  const auto same = compare_paired("objective", {2, 2, 2}, {2, 2, 2});
  EXPECT_EQ(same.outcome, paired_outcome::tie);
  EXPECT_DOUBLE_EQ(same.difference.half_width, 0);
  const auto lower = compare_paired("objective", {1, 2, 3}, {2, 3, 4.1});
  EXPECT_EQ(lower.outcome, paired_outcome::better);
  EXPECT_NEAR(lower.difference.mean, -1.0333, 1e-3);
  EXPECT_EQ(compare_paired("objective", {3, 4, 5}, {1, 2, 3}).outcome, paired_outcome::worse);
  // One pair is no evidence; a NaN drops its pair.
  EXPECT_EQ(compare_paired("objective", {1}, {5}).outcome, paired_outcome::tie);
  EXPECT_EQ(compare_paired("objective", {1, std::nan(""), 1.1, 1}, {5, 1, 5.2, 5}).difference.n, 3u);
}

TEST(tuning_answer, baselines_are_pfc_only_and_the_field_defaults_of_the_tuned_paths) {
  tuning_settings s = three_parameters();
  s.parameters.push_back({"nic.dcqcn.rpg_time_reset", 10, 1000, true, true, "", 0});
  const auto configs = baseline_configs(s);
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_EQ(configs[0].name, "pfc_only");
  EXPECT_EQ(configs[0].sets, (std::vector<std::pair<std::string, std::string>>{{"switch.ecn.enabled", "false"},
                                                                               {"nic.dcqcn.enabled", "false"}}));
  EXPECT_EQ(configs[1].name, "vendor_default");
  experiment_spec example;  // starting values far from the defaults, as the examples have
  example.sw.ecn.kmin_bytes = 100000;
  example.sw.ecn.kmax_bytes = 400000;
  example.sw.ecn.pmax = 0.2;
  example.sw.ecn.enabled = false;
  ASSERT_TRUE(set_field(example, "nic.dcqcn.rpg_time_reset", "75000", "test").ok());
  example.topology.hosts = 5;
  example.workload.incast.enabled = true;
  example.workload.incast.senders = 4;
  auto vendor = apply_baseline(example, configs[1]);
  ASSERT_TRUE(vendor.ok()) << vendor.error().message();
  EXPECT_TRUE(vendor->sw.ecn.enabled);
  EXPECT_EQ(vendor->sw.ecn.kmin_bytes, 1048576);  // SONiC AZURE_LOSSLESS: 1 MiB, 2 MiB, 5%
  EXPECT_EQ(vendor->sw.ecn.kmax_bytes, 2097152);
  EXPECT_DOUBLE_EQ(vendor->sw.ecn.pmax, 0.05);
  EXPECT_EQ(vendor->nic.dcqcn.rpg_time_reset_us, 300);  // mlx5 default
  auto pfc = apply_baseline(example, configs[0]);
  ASSERT_TRUE(pfc.ok()) << pfc.error().message();
  EXPECT_FALSE(pfc->sw.ecn.enabled);
  EXPECT_FALSE(pfc->nic.dcqcn_enabled);
  EXPECT_TRUE(pfc->sw.pfc.enabled);
}

TEST(tuning_answer, tradeoff_axes_fall_back_to_the_objectives_first_flow_metric) {
  objective_spec o;
  o.terms = {{"paused_us", 0.01}, {"incast.slowdown_p99", 1}};
  run_summary s;
  s.by_kind["incast"] = {};
  const tradeoff_axes a = tradeoff_axes_for(o, {s});
  EXPECT_EQ(a.x, "incast.slowdown_p99");
  EXPECT_EQ(a.y, "paused_us");
}

// A sweep whose trials mostly failed recommends nothing and says how many failed and why.
TEST(tuning_answer, more_than_half_the_trials_failed_answers_nothing_with_counted_reasons) {
  const auto trials_with = [](std::size_t failed, std::size_t total) {
    std::vector<trial> out(total);
    for (std::size_t i = 0; i < total; ++i) {
      out[i].index = static_cast<std::uint32_t>(i);
      out[i].evaluated = i >= failed;
      if (i < failed) out[i].error = i % 5 == 0 ? "result refused: fct_ns below its ideal" : "lost 3 times (worker w1 lost)";
    }
    return out;
  };
  const status mostly = enough_trials_evaluated(trials_with(29, 30));
  ASSERT_FALSE(mostly.ok());
  EXPECT_EQ(mostly.code(), failed_trials_code);
  EXPECT_EQ(mostly.message(),
            "29 of 30 trials failed, so the search recommends nothing: 23x lost 3 times (worker w1 lost); 6x result "
            "refused: fct_ns below its ideal");
  EXPECT_FALSE(enough_trials_evaluated(trials_with(16, 30)).ok());
  EXPECT_TRUE(enough_trials_evaluated(trials_with(15, 30)).ok()) << "half is not most";
  EXPECT_TRUE(enough_trials_evaluated(trials_with(0, 30)).ok());
}

}  // namespace
}  // namespace rocelab::experiments

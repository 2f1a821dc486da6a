// The rule on the twin, on examples/tune-incast.yaml, where ECN helps: a 16-to-1 incast
// whose senders also send victim flows. The tuned answer beats both baselines beyond the
// paired fresh-seed CI, and two searches with different search seeds land on answers
// within each other's CI (the answer is a property of the fabric, not of the search's
// luck). The spec's budget is cut to keep the test short; the rule is the same.
#include <gtest/gtest.h>

#include <iostream>

#include "rocelab/experiments/spec/spec_files.hpp"
#include "rocelab/experiments/tuning/tuning_spec.hpp"
#include "tuning_on_twin.hpp"

namespace rocelab::experiments {
namespace {

const std::string example = std::string(ROCELAB_SOURCE_DIR) + "/examples/tune-incast.yaml";

tuning_answer tune_example(std::uint64_t search_seed) {
  auto spec = load_spec_file(example);
  EXPECT_TRUE(spec.ok()) << spec.error().message();
  auto settings = load_tuning_file(example, *spec);
  EXPECT_TRUE(settings.ok()) << settings.error().message();
  settings->budget = 30;
  settings->seed = search_seed;
  settings->parallelism = 2;
  const testing::tuned t = testing::tune_on_twin(*spec, *settings, 5);
  std::cout << "search seed " << search_seed << ":\n" << answer_text(t.settings, t.answer);
  return t.answer;
}

TEST(tuning_decision_twin, where_ecn_helps_the_answer_is_tuned_beyond_the_ci_and_stable_across_search_seeds) {
  const tuning_answer first = tune_example(7);
  ASSERT_EQ(first.decision.answer, "tuned");
  ASSERT_EQ(first.decision.versus.size(), 2u);
  for (const baseline_verdict& v : first.decision.versus) {
    EXPECT_EQ(v.outcome, paired_outcome::better) << v.baseline;
    EXPECT_LT(v.objective.difference.high, 0) << v.baseline << ": the paired CI excludes zero";
  }
  // The answer names its gain per class: the victims' tail is what ECN buys here.
  bool victims = false;
  for (const paired_comparison& c : first.decision.versus[0].metrics) victims = victims || c.metric == "victim.slowdown_p99";
  EXPECT_TRUE(victims);

  const tuning_answer second = tune_example(8);
  ASSERT_EQ(second.decision.answer, "tuned");
  // The two answers ran the same fresh seeds: their intervals overlap, and the paired
  // difference between them is within noise (its 95% CI contains zero).
  EXPECT_EQ(first.fresh_seeds, second.fresh_seeds);
  EXPECT_LE(first.best_ci.low, second.best_ci.high);
  EXPECT_LE(second.best_ci.low, first.best_ci.high);
  const paired_comparison between = compare_paired("objective", first.best_fresh.objectives, second.best_fresh.objectives);
  std::cout << "first - second on the fresh seeds: " << between.difference.mean << " (95% CI " << between.difference.low
            << " .. " << between.difference.high << ")\n";
  EXPECT_EQ(between.outcome, paired_outcome::tie);
}

}  // namespace
}  // namespace rocelab::experiments

// Range edges: a best at an edge widens that range once within its physical bounds (one
// MTU to the buffer for ECN thresholds, Pmax at most 1) and searches again; a best at a
// physical bound is reported as that bound; an interrupted widened sweep resumes into the
// same trials as the uninterrupted one. The evaluator is a closed-form objective, so the
// edge is known.
#include "rocelab/experiments/tuning/tuning_edges.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

namespace rocelab::experiments {
namespace {

experiment_spec small_spec() {
  experiment_spec spec;
  spec.nic.mtu_bytes = 1024;
  spec.sw.buffer_bytes = 4 * 1024 * 1024;
  return spec;
}

tuning_settings ecn_settings(tuning_method method, std::uint32_t budget) {
  tuning_settings s;
  s.name = "edges";
  s.parameters = {{"switch.ecn.kmin_bytes", 5000, 200000, true, true, "", 0},
                  {"switch.ecn.kmax_bytes", 200000, 2000000, true, true, "", 0},
                  {"switch.ecn.pmax", 0.01, 1, true, false, "", 0}};
  s.objective.terms = {{"slowdown_p99", 1}};
  s.method = method;
  s.budget = budget;
  s.seed = 11;
  s.seeds = 3;
  return s;
}

trial scored(std::uint32_t index, std::vector<double> values, double objective) {
  trial t;
  t.index = index;
  t.values = std::move(values);
  t.evaluated = true;
  t.feasible = true;
  t.objective = objective;
  return t;
}

// Lower Kmin is better all the way down to one MTU; Pmax best at 1; Kmax indifferent.
trial_evaluator closed_form(const tuning_settings&) {
  return [](std::uint32_t index, const std::vector<double>& v, trial_payload&) {
    return scored(index, v, std::log(v[0]) + (1 - v[2]));
  };
}

TEST(tuning_edges, physical_ranges_are_one_mtu_to_the_buffer_and_pmax_at_most_one) {
  const experiment_spec spec = small_spec();
  EXPECT_EQ(physical_range(spec, "switch.ecn.kmin_bytes"), std::make_pair(1024.0, 4194304.0));
  EXPECT_EQ(physical_range(spec, "switch.ecn.kmax_bytes"), std::make_pair(1024.0, 4194304.0));
  EXPECT_EQ(physical_range(spec, "switch.ecn.pmax"), std::make_pair(0.0, 1.0));
  EXPECT_EQ(physical_range(spec, "nic.dcqcn.rpg_time_reset").first, 0.0);
}

TEST(tuning_edges, a_best_at_an_edge_widens_that_range_once_within_its_physical_bound) {
  const experiment_spec spec = small_spec();
  const tuning_settings s = ecn_settings(tuning_method::random, 3);
  // The best (trial 1) has Kmin at its low edge and Pmax at 1, its physical bound.
  const std::vector<trial> trials{scored(0, {50000, 500000, 0.1}, 3), scored(1, {5000, 500000, 1.0}, 1),
                                  scored(2, {100000, 900000, 0.5}, 2)};
  auto wider = widened_settings(spec, s, trials);
  ASSERT_TRUE(wider.has_value());
  // 5000 / sqrt(40) = 790 B is below one MTU: the range stops at 1024.
  EXPECT_DOUBLE_EQ(wider->parameters[0].min, 1024);
  EXPECT_DOUBLE_EQ(wider->parameters[0].max, 200000);
  EXPECT_DOUBLE_EQ(wider->parameters[2].max, 1.0);  // at its bound: not widened
  EXPECT_EQ(wider->parameters[1].min, 200000);
  ASSERT_EQ(wider->widened.size(), 1u);
  EXPECT_NE(wider->widened[0].find("switch.ecn.kmin_bytes widened from 5000 .. 200000 to 1024 .. 200000"),
            std::string::npos)
      << wider->widened[0];
  EXPECT_EQ(wider->method, tuning_method::random);
  EXPECT_EQ(wider->budget, 3 + extension_trials(s));
  const auto bounds = at_physical_bound(spec, s, trials[1].values);
  ASSERT_EQ(bounds.size(), 1u);
  EXPECT_EQ(bounds[0].path, "switch.ecn.pmax");
  EXPECT_NE(bounds[0].text.find("physical bound (Pmax <= 1)"), std::string::npos) << bounds[0].text;
  // A best inside every range, or at a bound only, widens nothing.
  EXPECT_FALSE(widened_settings(spec, s, {scored(0, {50000, 500000, 0.1}, 1)}).has_value());
  EXPECT_FALSE(widened_settings(spec, s, {scored(0, {50000, 500000, 1.0}, 1)}).has_value());
  // Only the first search's trials decide.
  EXPECT_TRUE(widened_settings(spec, s, {trials[0], trials[1], trials[2], scored(3, {50000, 500000, 0.2}, 0)}));
}

TEST(tuning_edges, the_widened_search_runs_once_and_resumes_into_the_same_trials) {
  const experiment_spec spec = small_spec();
  const tuning_settings s = ecn_settings(tuning_method::bayes, 10);
  // A first search whose best trial lies at Kmin's low end (5000 B).
  auto first = run_sweep(s, closed_form(s), {});
  ASSERT_TRUE(first.ok()) << first.error().message();
  ASSERT_EQ(first->size(), 10u);
  (*first)[3].values = {5000, 500000, 0.5};
  (*first)[3].objective = -1;

  auto full = run_sweep_with_edges(spec, s, closed_form, *first);
  ASSERT_TRUE(full.ok()) << full.error().message();
  ASSERT_FALSE(full->interrupted);
  ASSERT_EQ(full->settings.widened.size(), 1u);
  EXPECT_EQ(full->settings.widened[0].rfind("switch.ecn.kmin_bytes widened from 5000 .. 200000 to 1024 .. 200000", 0),
            0u)
      << full->settings.widened[0];
  EXPECT_EQ(full->planned, 10 + extension_trials(s));
  ASSERT_EQ(full->trials.size(), full->planned);
  double lowest_kmin = 1e12;
  for (std::size_t i = 10; i < full->trials.size(); ++i) lowest_kmin = std::min(lowest_kmin, full->trials[i].values[0]);
  EXPECT_LT(lowest_kmin, 5000) << "the second search explores the widened range";
  EXPECT_GE(lowest_kmin, 1024);

  // Stopped two trials into the second search, then resumed.
  std::atomic<bool> stop{false};
  sweep_hooks hooks;
  hooks.stop = &stop;
  std::size_t seen = 0;
  hooks.on_trial = [&](trial&, trial_payload&) {
    if (++seen == 2) stop = true;
    return status::success();
  };
  auto part = run_sweep_with_edges(spec, s, closed_form, *first, hooks);
  ASSERT_TRUE(part.ok());
  ASSERT_TRUE(part->interrupted);
  ASSERT_EQ(part->trials.size(), 12u);
  auto resumed = run_sweep_with_edges(spec, s, closed_form, part->trials);
  ASSERT_TRUE(resumed.ok());
  ASSERT_EQ(resumed->trials.size(), full->trials.size());
  for (std::size_t i = 0; i < full->trials.size(); ++i) EXPECT_EQ(resumed->trials[i].values, full->trials[i].values) << i;
  EXPECT_EQ(resumed->settings.widened, full->settings.widened);
}

TEST(tuning_edges, kmin_and_kmax_without_a_tie_never_widen_into_each_other) {
  const experiment_spec spec = small_spec();
  const tuning_settings s = ecn_settings(tuning_method::random, 2);
  // The best has Kmin at its top (200000) and Kmax at its bottom (200000): neither may
  // cross the other, or a proposal would set Kmin above Kmax.
  auto wider = widened_settings(spec, s, {scored(0, {200000, 200000, 0.5}, 1), scored(1, {50000, 900000, 0.5}, 2)});
  EXPECT_FALSE(wider.has_value());
  tuning_settings tied = s;
  tied.parameters[1].at_least = "switch.ecn.kmin_bytes";
  auto tied_wider = widened_settings(spec, tied, {scored(0, {200000, 200000, 0.5}, 1), scored(1, {50000, 900000, 0.5}, 2)});
  ASSERT_TRUE(tied_wider.has_value()) << "with at_least the applied Kmax follows Kmin";
  EXPECT_GT(tied_wider->parameters[0].max, 200000);
  EXPECT_LT(tied_wider->parameters[1].min, 200000);
}

TEST(tuning_edges, a_grid_is_never_widened_its_best_at_an_end_is_reported) {
  const experiment_spec spec = small_spec();
  const tuning_settings s = ecn_settings(tuning_method::grid, 8);  // 2 x 2 x 2: every point at an end
  auto swept = run_sweep_with_edges(spec, s, closed_form, {});
  ASSERT_TRUE(swept.ok());
  EXPECT_EQ(swept->trials.size(), 8u);
  EXPECT_TRUE(swept->settings.widened.empty());
}

}  // namespace
}  // namespace rocelab::experiments

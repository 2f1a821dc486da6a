#include "rocelab/experiments/tuning/tuning.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <mutex>
#include <set>
#include <unordered_set>

namespace rocelab::experiments {
namespace {

// Branin-Hoo on [-5,10] x [0,15]: three global minima of 0.397887.
double branin(double x1, double x2) {
  const double b = 5.1 / (4 * M_PI * M_PI), c = 5 / M_PI, t = 1 / (8 * M_PI);
  return std::pow(x2 - b * x1 * x1 + c * x1 - 6, 2) + 10 * (1 - t) * std::cos(x1) + 10;
}

tuning_settings branin_settings(tuning_method method, std::uint32_t budget) {
  tuning_settings s;
  s.name = "branin";
  s.parameters = {{"x1", -5, 10, false, false, "", 0}, {"x2", 0, 15, false, false, "", 0}};
  s.objective.terms = {{"slowdown_p99", 1}};  // the metric is not read: the evaluator scores
  s.objective.require_complete = false;
  s.method = method;
  s.budget = budget;
  s.seed = 3;
  return s;
}

trial_evaluator function_evaluator(std::function<double(const std::vector<double>&)> f) {
  return [f](std::uint32_t, const std::vector<double>& v, trial_payload&) {
    trial t;
    t.evaluated = true;
    t.feasible = true;
    t.objective = f(v);
    return t;
  };
}

TEST(bayesian_optimisation, finds_the_minimum_of_a_2d_function_in_few_evaluations) {
  const tuning_settings s = branin_settings(tuning_method::bayes, 30);
  auto trials = run_sweep(s, function_evaluator([](const auto& v) { return branin(v[0], v[1]); }), {});
  ASSERT_TRUE(trials.ok()) << trials.error().message();
  ASSERT_EQ(trials->size(), 30u);
  const trial* best = best_trial(*trials);
  ASSERT_NE(best, nullptr);
  EXPECT_LT(best->objective, 0.397887 + 0.1);  // from values up to 300 on the square
  // Random search with the same budget does far worse on average; the comparison the
  // method exists for (seeds fixed, so this is a fixed fact about these sequences).
  auto random_trials = run_sweep(branin_settings(tuning_method::random, 30),
                                 function_evaluator([](const auto& v) { return branin(v[0], v[1]); }), {});
  ASSERT_TRUE(random_trials.ok());
  EXPECT_LT(best->objective, best_trial(*random_trials)->objective);
}

TEST(bayesian_optimisation, respects_a_constraint) {
  // Minimize x1 + x2 on the unit square subject to x1 + x2 >= 1 (margin 1 - x1 - x2 <= 0):
  // the optimum is on the line, objective 1.
  tuning_settings s;
  s.parameters = {{"a", 0, 1, false, false, "", 0}, {"b", 0, 1, false, false, "", 0}};
  s.objective.terms = {{"slowdown_p99", 1}};
  s.objective.constraints = {{"slowdown_p50", 1.0, std::nullopt}};
  s.objective.require_complete = false;
  s.budget = 25;
  s.seed = 5;
  auto evaluate = [](std::uint32_t, const std::vector<double>& v, trial_payload&) {
    trial t;
    t.evaluated = true;
    t.objective = v[0] + v[1];
    t.margins = {1.0 - v[0] - v[1]};
    t.feasible = t.margins[0] <= 0;
    return t;
  };
  auto trials = run_sweep(s, evaluate, {});
  ASSERT_TRUE(trials.ok()) << trials.error().message();
  const trial* best = best_trial(*trials);
  ASSERT_NE(best, nullptr);
  EXPECT_GE(best->values[0] + best->values[1], 1.0);
  EXPECT_LT(best->objective, 1.08);
  // Most proposals after the start are near the boundary, not deep in the infeasible half.
  int deep_infeasible = 0;
  for (std::size_t i = initial_points(s); i < trials->size(); ++i)
    if ((*trials)[i].values[0] + (*trials)[i].values[1] < 0.7) ++deep_infeasible;
  EXPECT_LE(deep_infeasible, 3);
}

TEST(tuning, parallel_and_resumed_sweeps_make_the_same_proposals) {
  const auto f = function_evaluator([](const auto& v) { return branin(v[0], v[1]); });
  tuning_settings serial = branin_settings(tuning_method::bayes, 16);
  auto whole = run_sweep(serial, f, {});
  ASSERT_TRUE(whole.ok());
  // Interrupted after 9 trials, resumed from them.
  std::vector<trial> first_nine(whole->begin(), whole->begin() + 9);
  auto resumed = run_sweep(serial, f, first_nine);
  ASSERT_TRUE(resumed.ok());
  ASSERT_EQ(resumed->size(), whole->size());
  for (std::size_t i = 0; i < whole->size(); ++i) EXPECT_EQ((*resumed)[i].values, (*whole)[i].values) << i;
  // Stopping between batches keeps what ran.
  std::atomic<bool> stop{false};
  int seen = 0;
  sweep_hooks hooks;
  hooks.stop = &stop;
  hooks.on_trial = [&](trial&, trial_payload&) {
    if (++seen == 5) stop = true;
    return status::success();
  };
  auto stopped = run_sweep(serial, f, {}, hooks);
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(stopped->size(), 5u);
  // Parallel trials: every proposal distinct, evaluated on several threads, same budget.
  tuning_settings parallel = serial;
  parallel.parallelism = 4;
  std::mutex m;
  std::unordered_set<std::thread::id> threads;
  auto counted = [&](std::uint32_t i, const std::vector<double>& v, trial_payload& p) {
    {
      std::lock_guard lock(m);
      threads.insert(std::this_thread::get_id());
    }
    return f(i, v, p);
  };
  auto par = run_sweep(parallel, counted, {});
  ASSERT_TRUE(par.ok()) << par.error().message();
  EXPECT_EQ(par->size(), 16u);
  EXPECT_GT(threads.size(), 1u);
  std::set<std::vector<double>> distinct;
  for (const trial& t : *par) distinct.insert(t.values);
  EXPECT_EQ(distinct.size(), par->size());
  EXPECT_LT(best_trial(*par)->objective, 3.0);
}

TEST(tuning, grid_covers_the_space_on_the_log_scale) {
  tuning_settings s;
  s.parameters = {{"k", 1000, 1'000'000, true, true, "", 0}, {"p", 0.1, 1, false, false, "", 2}};
  s.objective.terms = {{"slowdown_p99", 1}};
  const auto g = grid(s, 8);
  ASSERT_EQ(g.size(), 8u);  // 4 x 2
  EXPECT_EQ(g[0], (std::vector<double>{1000, 0.1}));
  EXPECT_EQ(g[1], (std::vector<double>{1000, 1}));
  EXPECT_EQ(g[2][0], 10000);   // decades: 1e3, 1e4, 1e5, 1e6
  EXPECT_EQ(g[4][0], 100000);
  EXPECT_EQ(g[7], (std::vector<double>{1'000'000, 1}));
  s.method = tuning_method::grid;
  s.budget = 8;
  int calls = 0;
  auto trials = run_sweep(s, [&](std::uint32_t, const std::vector<double>& v, trial_payload&) {
    ++calls;
    trial t;
    t.evaluated = t.feasible = true;
    t.objective = std::abs(std::log10(v[0]) - 4) + v[1];
    return t;
  }, {});
  ASSERT_TRUE(trials.ok());
  EXPECT_EQ(calls, 8);
  EXPECT_EQ(best_trial(*trials)->values, (std::vector<double>{10000, 0.1}));
}

TEST(tuning, unit_mapping_rounds_integers_and_ties_at_least) {
  tuning_settings s;
  s.parameters = {{"kmin", 10, 1000, true, true, "", 0}, {"kmax", 10, 1000, true, true, "kmin", 0}};
  s.objective.terms = {{"slowdown_p99", 1}};
  ASSERT_TRUE(validate(s).ok());
  const std::vector<double> v = from_unit(s, std::vector<double>{0.5, 0.0});
  EXPECT_EQ(v[0], 100);  // the log-scale middle of 10..1000
  EXPECT_EQ(v[1], 10);
  EXPECT_EQ(applied_values(s, v), (std::vector<double>{100, 100}));
  const auto u = to_unit(s, v);
  EXPECT_NEAR(u[0], 0.5, 1e-12);
  // at_least must name an earlier parameter.
  std::swap(s.parameters[0], s.parameters[1]);
  EXPECT_FALSE(validate(s).ok());
}

TEST(tuning, failed_trials_are_kept_and_avoided) {
  // The left half of the square fails to run; the optimum is in the right half.
  tuning_settings s = branin_settings(tuning_method::bayes, 20);
  s.parameters = {{"a", 0, 1, false, false, "", 0}, {"b", 0, 1, false, false, "", 0}};
  auto evaluate = [](std::uint32_t, const std::vector<double>& v, trial_payload&) {
    trial t;
    if (v[0] < 0.5) {
      t.error = "twin failed";
      return t;
    }
    t.evaluated = t.feasible = true;
    t.objective = (v[0] - 0.9) * (v[0] - 0.9) + (v[1] - 0.3) * (v[1] - 0.3);
    return t;
  };
  auto trials = run_sweep(s, evaluate, {});
  ASSERT_TRUE(trials.ok()) << trials.error().message();
  EXPECT_EQ(trials->size(), 20u);
  int failed_after_start = 0;
  for (std::size_t i = initial_points(s); i < trials->size(); ++i) {
    failed_after_start += (*trials)[i].evaluated ? 0 : 1;
  }
  // Half the square fails; the model probes its edge but spends most trials where runs work.
  EXPECT_LE(failed_after_start, 7);
  EXPECT_LT(best_trial(*trials)->objective, 0.02);
}

TEST(tuning, rejects_bad_settings) {
  tuning_settings s;
  EXPECT_FALSE(validate(s).ok());  // no parameters
  s.parameters = {{"x", 1, 1, false, false, "", 0}};
  s.objective.terms = {{"slowdown_p99", 1}};
  EXPECT_FALSE(validate(s).ok());  // empty range
  s.parameters = {{"x", 0, 1, true, false, "", 0}};
  EXPECT_FALSE(validate(s).ok());  // log with min 0
  s.parameters = {{"x", 0, 1, false, false, "", 0}};
  s.objective.terms = {{"no_such_metric", 1}};
  EXPECT_FALSE(validate(s).ok());
  EXPECT_FALSE(parse_tuning_method("annealing").ok());
}

}  // namespace
}  // namespace rocelab::experiments

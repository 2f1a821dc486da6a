#pragma once
// A whole tuning on the twin, as `rocelab tune` runs it without a store: the sweep with
// its one widening (tuning_edges.hpp), then the answer on fresh seeds. For the tests that
// check what a tuning answers; failures are test failures.
#include <gtest/gtest.h>

#include "rocelab/experiments/tuning/tuning_baselines.hpp"
#include "rocelab/experiments/tuning/tuning_edges.hpp"
#include "rocelab/experiments/tuning/tuning_trials.hpp"

namespace rocelab::experiments::testing {

struct tuned {
  tuning_settings settings;  // the final search's (widened ranges, when widened)
  tuning_answer answer;
};

inline tuned tune_on_twin(const experiment_spec& spec, const tuning_settings& settings, std::uint32_t fresh_seeds) {
  auto swept =
      run_sweep_with_edges(spec, settings, [&](const tuning_settings& s) { return spec_evaluator(spec, s); }, {});
  EXPECT_TRUE(swept.ok()) << swept.error().message();
  if (!swept) return {};
  answer_options o;
  o.fresh_seeds = fresh_seeds;
  o.parallelism = 2;
  auto a = answer_tuning(spec, swept->settings, swept->trials, o);
  EXPECT_TRUE(a.ok()) << a.error().message();
  if (!a) return {swept->settings, {}};
  return {swept->settings, std::move(*a)};
}

}  // namespace rocelab::experiments::testing

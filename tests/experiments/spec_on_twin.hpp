#pragma once
// Specs written in a test and run on the twin as `rocelab run` runs them: the spec from
// YAML text with `--set`-style overrides, and the first repeat's records. Failures are
// test failures (and give an empty spec or empty records).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::experiments::testing {

inline experiment_spec spec_of(const std::string& yaml, const std::string& file_name,
                               const std::vector<std::string>& overrides = {}) {
  auto spec = load_spec(yaml, file_name);
  EXPECT_TRUE(spec.ok()) << spec.error().message();
  if (!spec.ok()) return {};
  for (const auto& o : overrides) EXPECT_TRUE(apply_override(*spec, o).ok()) << o;
  return *spec;
}

inline run_records run_on_twin(const experiment_spec& spec) {
  EXPECT_TRUE(validate(spec).ok()) << validate(spec).message();
  auto ran = run_experiment(spec);
  EXPECT_TRUE(ran.ok()) << ran.error().message();
  return ran.ok() ? ran->repeats.front() : run_records{};
}

}  // namespace rocelab::experiments::testing

#pragma once
// Trials of a tuning sweep as experiment runs: each trial is the spec with the trial's
// values applied through the field table (the `--set` path), run on the spec's backend
// (the twin for sweeps; the virtual lab for sim-to-real checks), each repeat summarized
// and scored by the objective (objective.hpp).
//
// Thread-safety: the evaluator copies the spec per trial and the twin keeps no global
// state, so trials run in parallel threads. The virtual backend brings up one lab per run
// and is run with parallelism 1.

#include <string>

#include "rocelab/experiments/spec.hpp"
#include "rocelab/experiments/summary.hpp"
#include "rocelab/experiments/tuning.hpp"
#include "rocelab/experiments/virtual_backend.hpp"

namespace rocelab::experiments {

// The evaluator for run_sweep. A spec that the values make invalid, or a run that fails,
// is a trial with evaluated = false and the error, not a sweep error.
[[nodiscard]] trial_evaluator spec_evaluator(experiment_spec base, tuning_settings settings,
                                             virtual_backend_options virtual_options = {});

// Scores finished runs (one per repeat) into the trial's fields and metrics_json (the
// pooled summary with each repeat, as `rocelab run --json` prints it).
void score_into(trial& t, const objective_spec& objective, const experiment_spec& spec,
                const std::vector<run_records>& repeats, const std::vector<std::uint64_t>& seeds);

// "kmin_bytes=20480 kmax_bytes=204800 pmax=0.2": the applied values by their last path
// component, for progress lines and tables.
[[nodiscard]] std::string describe_values(const tuning_settings& settings, std::span<const double> values);

}  // namespace rocelab::experiments

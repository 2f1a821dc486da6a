#pragma once
// Trials of a tuning sweep as experiment runs: each trial is the spec with the trial's
// values applied through the field table (the `--set` path), run on the spec's backend
// (the twin for sweeps; the virtual lab for sim-to-real checks), each repeat summarized
// and scored by the objective (objective.hpp).
//
// Thread-safety: the evaluator copies the spec per trial and the twin keeps no global
// state, so trials run in parallel threads. The virtual backend brings up one lab per run
// and is run with parallelism 1.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "rocelab/experiments/run/backend.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/tuning/tuning.hpp"

namespace rocelab::experiments {

// Where a trial's spec runs: here on its backend (a backend_registry), on a lab behind a
// controller, which returns the runs' summaries rather than their records, or on workers
// (an executor: worker processes here or Slurm jobs, cli/executors), which return the
// records and where they ran. A trial_runner is the executor seam: the sweep neither
// knows nor asks where its trials run.
struct trial_runs {
  std::vector<std::uint64_t> seeds;
  std::vector<run_records> repeats;    // empty when the runner only has summaries
  std::vector<run_summary> summaries;  // one per repeat, when repeats is empty
  std::string summary_json;            // the pooled summary JSON, when repeats is empty
  std::int64_t run_id = 0;             // the run in the runner's own store, if any
  // Where it ran, stored with the trial's run as parameters (worker.host, worker.node,
  // worker.slurm_job, worker.attempts); empty when it ran here.
  std::map<std::string, std::string> placement;
};
using trial_runner = std::function<result<trial_runs>(const experiment_spec& spec)>;

// The evaluator for run_sweep. A spec that the values make invalid, or a run that fails,
// is a trial with evaluated = false and the error, not a sweep error. A runner's
// error_code::cancelled (the executor was stopped) abandons the trial (trial_payload).
// Trials run on the backend of `backends` their spec names.
[[nodiscard]] trial_evaluator spec_evaluator(experiment_spec base, tuning_settings settings,
                                             backend_registry backends = core_backends());
// The same with the runs made by `run` (one trial loop for every place trials run).
[[nodiscard]] trial_evaluator spec_evaluator(experiment_spec base, tuning_settings settings, trial_runner run);

// Scores summaries (one per repeat) into the trial's fields; metrics_json as given.
void score_summaries_into(trial& t, const objective_spec& objective, const std::vector<run_summary>& each,
                          std::string metrics_json);

// Scores finished runs (one per repeat) into the trial's fields and metrics_json (the
// pooled summary with each repeat, as `rocelab run --json` prints it).
void score_into(trial& t, const objective_spec& objective, const experiment_spec& spec,
                const std::vector<run_records>& repeats, const std::vector<std::uint64_t>& seeds);

// The common seeds every trial and baseline runs: tuning.seeds, or the spec's repeats when
// the settings were not resolved by load_tuning. Trials run seeds spec.seed .. spec.seed +
// count - 1.
[[nodiscard]] std::uint32_t search_seed_count(const experiment_spec& spec, const tuning_settings& settings) noexcept;

// "kmin_bytes=20480 kmax_bytes=204800 pmax=0.2": the applied values by their last path
// component, for progress lines and tables.
[[nodiscard]] std::string describe_values(const tuning_settings& settings, std::span<const double> values);

}  // namespace rocelab::experiments

#pragma once
// Sim-to-real: the configurations a twin sweep found, and the baselines they are judged
// against, run again on another backend (the virtual lab; a real lab once the controller
// runs them), with the twin's prediction beside each measurement.
//
// The prediction of a measured run replays that run's flows at their measured start
// times on the twin (sim_to_real.hpp), with the same spec (the lab-scaled DCQCN knobs of a
// virtual-lab spec included): a lab's senders do not start together, and a prediction
// from the spec alone, which starts them at once, predicts another experiment. That one
// is kept too (`from_spec`), so a reader sees how much of the difference the schedule was.
//
// Runs are sequential (one lab at a time). Each measured run is stored in the run store
// as part of the sweep when a store is given, with its prediction ("sim_to_real.*"
// parameters) and, for a baseline, "tuning.baseline" (its name).

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/analysis/sim_to_real.hpp"
#include "rocelab/experiments/run/backend.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/tuning/tuning.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::experiments {

struct verify_config {
  std::string label;     // "pfc_only", "vendor_default", "trial 12", "baseline"
  std::string baseline;  // the baseline's name when it is one
  std::map<std::string, std::string> params;  // spec path -> value text, set as --set would
};

struct verify_row {
  std::string label;
  std::string baseline;
  std::string settings;     // the configuration's values, "kmin_bytes=... pmax=..."
  run_summary predicted;    // the twin replaying the measured flows (the from_spec one when the run failed)
  run_summary from_spec;    // the twin from the spec alone (every sender on its schedule)
  run_summary measured;     // the other backend
  sim_to_real_comparison comparison;  // predicted against measured
  std::int64_t run_id = 0;  // the measured run in the store (0: none was started)
  bool ran = false;         // the backend returned records: `measured` and `comparison` are filled
  // Empty: measured on both sides (the backend ran it and completed flows the twin's
  // replay can be set beside). Otherwise why not: the run failed, the backend cannot run
  // here (not root), or it completed no flow. from_spec is filled either way.
  std::string error;

  [[nodiscard]] bool is_measured() const noexcept { return error.empty(); }
};

// Runs each configuration on `backend` and predicts it on the twin. A failed measurement
// is a row with its error, not an error. Once the backend answers error_code::unavailable
// (it cannot run here: the virtual lab without root), the configurations after it are not
// run: their rows carry the same reason and no stored run, and `log` says it once. Errors
// are a configuration that cannot be set, twin failures and store failures.
[[nodiscard]] result<std::vector<verify_row>> verify_configs(
    const experiment_spec& spec, const std::vector<verify_config>& configs, const std::string& backend,
    const backend_registry& backends, store::run_store* db, std::int64_t sweep,
    const std::function<void(const std::string&)>& log = {});

// The spec as written ("baseline") and the `count` best trials (distinct applied values,
// feasible), as configurations.
[[nodiscard]] result<std::vector<verify_config>> best_trial_configs(const experiment_spec& spec,
                                                                    const tuning_settings& settings,
                                                                    const std::vector<trial>& trials,
                                                                    std::uint32_t count);

// best_trial_configs, then verify_configs.
[[nodiscard]] result<std::vector<verify_row>> verify_on_backend(
    const experiment_spec& spec, const tuning_settings& settings, const std::vector<trial>& trials, std::uint32_t count,
    const std::string& backend, const backend_registry& backends, store::run_store* db, std::int64_t sweep,
    const std::function<void(const std::string&)>& log = {});

// How many rows are measured (verify_row::is_measured).
[[nodiscard]] std::size_t measured_count(const std::vector<verify_row>& rows);

// The table, one row per configuration, predicted | measured per metric, with whether
// FCT p50/p99 and pause time are within the tolerance, then each row's explanation. A row
// not measured says so; each distinct reason is printed once, after the table, with the
// rows it holds for. The closing agreement line ("every FCT p50, p99 and pause time within
// 15%") is printed only when at least one row is measured and every measured row agrees,
// and names how many were measured; with none measured it says there is nothing to compare.
[[nodiscard]] std::string verify_table(const std::vector<verify_row>& rows);
// The same as a JSON array, one object per row: label, baseline, settings, predicted
// {...}, from_spec {...}, `status` ("measured" or "not measured"), and when measured
// measured {...}, within, tolerance, cells, differences; when not, `reason` (also as
// `error`) and measured {...} if the run returned records; run when one was stored.
[[nodiscard]] std::string verify_json_text(const std::vector<verify_row>& rows);

}  // namespace rocelab::experiments

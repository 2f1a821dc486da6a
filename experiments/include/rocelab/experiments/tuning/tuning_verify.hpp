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
#include <optional>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/analysis/sim_to_real.hpp"
#include "rocelab/experiments/run/backend.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/tuning/tuning.hpp"
#include "rocelab/experiments/tuning/tuning_answer.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::experiments {

struct verify_config {
  std::string label;     // "pfc_only", "vendor_default", "trial 12", "baseline"
  std::string baseline;  // the baseline's name when it is one
  std::map<std::string, std::string> params;  // spec path -> value text, set as --set would
};

struct verify_options {
  // Runs of each configuration on the backend (at least the spec's repeats): the lab's
  // run-to-run CI needs more than one, and one run of a random fabric can mislead.
  std::uint32_t runs = 3;
  // Scores every run on both sides for the ranking (verify_ranking); null: no ranking.
  const objective_spec* objective = nullptr;
  double tolerance = 0.15;
  // The lab's calibration the twin models in every prediction (twin.calibration: its YAML
  // inline), so the twin stands for the lab it is compared with; empty: the spec's own.
  std::string calibration;
  // Which calibration that is, for the table and the stored runs ("virtual lab 'tune',
  // taken 2026-11-29T05:10:00Z"); empty with no calibration.
  std::string calibration_label;
};

struct verify_row {
  std::string label;
  std::string baseline;
  std::string settings;     // the configuration's values, "kmin_bytes=... pmax=..."
  run_summary predicted;    // the twin replaying the measured flows (the from_spec one when the run failed)
  run_summary from_spec;    // the twin from the spec alone (every sender on its schedule)
  run_summary measured;     // the other backend
  sim_to_real_comparison comparison;  // predicted against measured, each cell with the lab's CI
  // The measured runs and their replays on the twin, each summarized alone (same order).
  std::vector<run_summary> measured_each, predicted_each;
  // The objective of each run on each side, as a 95% CI over the runs (options.objective).
  std::optional<confidence_interval> lab_objective, twin_objective;
  std::int64_t run_id = 0;  // the measured run in the store (0: none was started)
  std::string calibration;  // which calibration the twin modelled (verify_options::calibration_label); "": none
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
    const std::function<void(const std::string&)>& log = {}, const verify_options& options = {});

// The order of the measured configurations by objective (lowest first) on the lab and on
// the twin replaying the lab's runs, each with its CIs: do the two sides pick the same?
struct verify_ranking {
  struct entry {
    std::string label;
    confidence_interval lab, twin;
  };
  std::vector<entry> lab_order, twin_order;  // best first
  bool same_order = false;
  // Pairs the two sides order differently: "A/B", with whether each side's CIs separate
  // them (a side whose CIs overlap has not told them apart).
  struct disagreement {
    std::string better_on_lab, better_on_twin;
    bool lab_separates = false, twin_separates = false;
  };
  std::vector<disagreement> disagreements;
  std::string text;  // one paragraph, for the table and the main job's conclusion
};
// Over the rows measured with an objective on both sides; fewer than 2: nothing ranked
// (text says so).
[[nodiscard]] verify_ranking rank_verified(const std::vector<verify_row>& rows);

// The spec as written ("baseline") and the `count` best trials (distinct applied values,
// feasible), as configurations.
[[nodiscard]] result<std::vector<verify_config>> best_trial_configs(const experiment_spec& spec,
                                                                    const tuning_settings& settings,
                                                                    const std::vector<trial>& trials,
                                                                    std::uint32_t count);

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
// rank_verified as JSON: same_order, text, lab_order and twin_order [{label, lab {n, mean,
// half_width, low, high}, twin {...}}], disagreements [{better_on_lab, better_on_twin,
// lab_separates, twin_separates}].
[[nodiscard]] std::string verify_ranking_json_text(const std::vector<verify_row>& rows);

}  // namespace rocelab::experiments

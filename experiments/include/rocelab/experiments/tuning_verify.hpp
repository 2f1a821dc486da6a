#pragma once
// Sim-to-real: the configurations a twin sweep found, run again on another backend (the
// virtual lab; a real lab once the controller runs them), with the twin's prediction
// beside each measurement: FCT p50/p99, PFC pause frames and paused time, CE marks, CNPs,
// drops. The first row is the spec as written (the untuned baseline), then the best
// distinct feasible trials.
//
// Runs are sequential (one lab at a time). Each measured run is stored in the run store
// as part of the sweep when a store is given.

#include <functional>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec.hpp"
#include "rocelab/experiments/summary.hpp"
#include "rocelab/experiments/tuning.hpp"
#include "rocelab/experiments/virtual_backend.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::experiments {

struct verify_row {
  std::string label;     // "baseline" or "trial 12"
  std::string settings;  // the tuned values, "kmin_bytes=... pmax=..."
  run_summary predicted;  // twin
  run_summary measured;   // the other backend
  std::int64_t run_id = 0;  // the measured run in the store
  std::string error;        // the measured run failed: why (predicted still filled)
};

// `count` best trials (distinct applied values, feasible) plus the baseline. A failed
// measurement is a row with its error, not an error; errors are twin failures and store
// failures.
[[nodiscard]] result<std::vector<verify_row>> verify_on_backend(
    const experiment_spec& spec, const tuning_settings& settings, const std::vector<trial>& trials, std::uint32_t count,
    const std::string& backend, const virtual_backend_options& options, store::run_store* db, std::int64_t sweep,
    const std::function<void(const std::string&)>& log = {});

// The table, one row per configuration, predicted | measured per metric.
[[nodiscard]] std::string verify_table(const std::vector<verify_row>& rows);
// The same as a JSON array (label, settings, predicted {...}, measured {...}, run, error).
[[nodiscard]] std::string verify_json_text(const std::vector<verify_row>& rows);

}  // namespace rocelab::experiments

#pragma once
// A tuning sweep kept in the run store (store/run_store.hpp): the sweep row, one run per
// trial (its records, resolved spec and the values set as run parameters) and one trial
// row (proposed values, objective, feasibility, the summary it was scored from).
//
// Resuming: a sweep is identified by its name, method and identity text (the resolved
// spec plus the tuning section, budget and parallelism left out, so a larger budget
// continues the same sweep). open_sweep finds the newest matching sweep and returns its
// trials; since proposals depend only on the trials before them (tuning.hpp), the resumed
// sweep proposes what the uninterrupted one would have.
//
// Not thread-safe: the hook is called from run_sweep's calling thread.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/tuning/tuning.hpp"
#include "rocelab/store/run_store.hpp"
#include "rocelab/store/sweep_claim.hpp"

namespace rocelab::experiments {

// The text that identifies a sweep: to_yaml(spec) and the tuning settings that shape
// the proposals (parameters, objective, method, seed, initial points).
[[nodiscard]] std::string sweep_identity(const experiment_spec& spec, const tuning_settings& settings);

struct opened_sweep {
  std::int64_t id = 0;
  bool resumed = false;
  std::vector<trial> trials;  // stored trials in index order (empty when new)
  store::sweep_claim claim;   // this process's claim on the sweep: hold it while trials are added
};

// `resume`: a sweep id to continue (its identity must match: a different spec or search
// is an error naming what differs). Without it: the newest sweep with the same name and
// identity whose trials are fewer than the budget, else a new sweep. The sweep is claimed
// (store/sweep_claim.hpp) before its trials are read: a sweep another process is running
// is refused (unavailable, naming that process's pid and host). `start_new`: a new sweep
// whatever is stored (lab.tune(resume=False)); it cannot be given with `resume`.
[[nodiscard]] result<opened_sweep> open_sweep(store::run_store& db, const experiment_spec& spec,
                                              const tuning_settings& settings, std::optional<std::int64_t> resume,
                                              bool start_new = false);

// The on_trial hook that stores each trial: its run through a run session (one run, each
// repeat's records as that repeat, finished completed, partial or failed) then its trial
// row. Sets trial::run_id.
[[nodiscard]] std::function<status(trial&, trial_payload&)> store_trials(store::run_store& db, std::int64_t sweep,
                                                                          const experiment_spec& spec,
                                                                          const tuning_settings& settings);

// Trial <-> stored row (metrics_json carries margins, violation and error under "trial").
[[nodiscard]] store::trial_record to_record(const trial& t, std::int64_t sweep, const tuning_settings& settings);
[[nodiscard]] result<trial> from_record(const store::trial_record& r, const tuning_settings& settings);

}  // namespace rocelab::experiments

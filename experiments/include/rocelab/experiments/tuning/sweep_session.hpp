#pragma once
// One sweep kept in the run store, as every front end runs it (rocelab tune, Python's
// lab.tune, with or without workers): the settings resolved once from the tuning section
// and the front end's overrides, the sweep opened or resumed by one identity, each trial
// stored as it ends, and the answer stored in the sweep.
//
//   auto settings = resolve_settings(*loaded, request);           // --budget, budget=, ...
//   auto session = sweep_session::open(db, spec, *settings, {});   // new, or resumed
//   auto swept = session->run(make_evaluator, hooks);              // trials, each stored
//   auto answer = session->answer(*swept, options, runner);        // baselines, the rule
//
// Identity: sweep_identity(spec, settings) (sweep.hpp): the resolved spec and the search
// (parameters with their ranges, objective, method, seed, initial points, seeds), not the
// budget or parallelism. So a sweep begun by `rocelab tune` is resumed by lab.tune of the
// same spec and search and the other way round, a larger budget continues it, and changed
// ranges are another sweep.
// Trials: every trial is stored, evaluated or not (a failed trial's run is failed), so a
// sweep's trial indexes are 0 .. n-1 without gaps and a resume proposes what the
// uninterrupted sweep would have.
//
// Not thread-safe: a session and its store are used from the calling thread (hooks run
// there too, run_sweep's contract).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/tuning/sweep.hpp"
#include "rocelab/experiments/tuning/tuning.hpp"
#include "rocelab/experiments/tuning/tuning_answer.hpp"
#include "rocelab/experiments/tuning/tuning_baselines.hpp"
#include "rocelab/experiments/tuning/tuning_edges.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::experiments {

// What a front end asks of a sweep beyond its tuning section (rocelab tune's flags,
// lab.tune's keywords); zero or empty keeps the section's.
struct sweep_request {
  std::uint32_t budget = 0;
  std::string method;            // bayes | grid | random
  std::uint32_t parallelism = 0;
  std::string name;
  std::string default_name;      // when neither the section nor the spec names the sweep: the spec file's stem
};

// `loaded` (load_tuning's) with the request's values in place of the section's, validated.
// The one place the overrides are applied, so every front end names and sizes a sweep
// alike. Errors: invalid_argument for an unknown method or invalid settings.
[[nodiscard]] result<tuning_settings> resolve_settings(tuning_settings loaded, const sweep_request& request);

class sweep_session {
 public:
  // open_sweep (sweep.hpp): `resume` names a sweep to continue (same identity, else
  // invalid_argument); without it the newest unfinished sweep of this identity and name is
  // resumed, else a new one begins; `start_new` begins a new one whatever is stored. The
  // sweep is claimed for this session's lifetime.
  [[nodiscard]] static result<sweep_session> open(store::run_store& db, experiment_spec spec,
                                                  tuning_settings settings, std::optional<std::int64_t> resume,
                                                  bool start_new = false);

  [[nodiscard]] std::int64_t id() const noexcept { return opened_.id; }
  [[nodiscard]] bool resumed() const noexcept { return opened_.resumed; }
  [[nodiscard]] const std::vector<trial>& stored_trials() const noexcept { return opened_.trials; }
  [[nodiscard]] const tuning_settings& settings() const noexcept { return settings_; }
  [[nodiscard]] const experiment_spec& spec() const noexcept { return spec_; }
  [[nodiscard]] store::run_store& store() const noexcept { return *db_; }

  // The rest of the sweep (run_sweep_with_edges from the stored trials): each trial is
  // stored (its run through a run session, then its row; store_trials) before
  // `hooks.on_trial` sees it with its run id. Errors: run_sweep's, the store's.
  [[nodiscard]] result<edge_sweep> run(const std::function<trial_evaluator(const tuning_settings&)>& make_evaluator,
                                       const sweep_hooks& hooks);

  // answer_tuning over the sweep's trials with the sweep's settings (its final search's),
  // the baselines' runs stored in this sweep and reused when it is answered again.
  [[nodiscard]] result<tuning_answer> answer(const edge_sweep& swept, answer_options options,
                                             const config_runner& runner) const;

 private:
  sweep_session(store::run_store& db, experiment_spec spec, tuning_settings settings, opened_sweep opened)
      : db_(&db), spec_(std::move(spec)), settings_(std::move(settings)), opened_(std::move(opened)) {}

  store::run_store* db_;
  experiment_spec spec_;
  tuning_settings settings_;
  opened_sweep opened_;  // holds the claim
};

}  // namespace rocelab::experiments

#include "rocelab/experiments/tuning/sweep_session.hpp"

#include <utility>

namespace rocelab::experiments {

result<tuning_settings> resolve_settings(tuning_settings s, const sweep_request& request) {
  if (request.budget) s.budget = request.budget;
  if (request.parallelism) s.parallelism = request.parallelism;
  if (!request.name.empty()) s.name = request.name;
  if (s.name.empty()) s.name = request.default_name;
  if (!request.method.empty()) {
    auto m = parse_tuning_method(request.method);
    if (!m) return m.error().with_context("the sweep's method");
    s.method = *m;
  }
  if (auto st = validate(s); !st.ok()) return st;
  return s;
}

result<sweep_session> sweep_session::open(store::run_store& db, experiment_spec spec, tuning_settings settings,
                                          std::optional<std::int64_t> resume, bool start_new) {
  auto opened = open_sweep(db, spec, settings, resume, start_new);
  if (!opened) return opened.error();
  return sweep_session(db, std::move(spec), std::move(settings), std::move(*opened));
}

result<edge_sweep> sweep_session::run(const std::function<trial_evaluator(const tuning_settings&)>& make_evaluator,
                                      const sweep_hooks& hooks) {
  auto store_hook = store_trials(*db_, opened_.id, spec_, settings_);
  sweep_hooks storing;
  storing.stop = hooks.stop;
  storing.on_trial = [&](trial& t, trial_payload& payload) -> status {
    ROCELAB_RETURN_IF_ERROR(store_hook(t, payload));
    return hooks.on_trial ? hooks.on_trial(t, payload) : status::success();
  };
  return run_sweep_with_edges(spec_, settings_, make_evaluator, opened_.trials, storing);
}

result<tuning_answer> sweep_session::answer(const edge_sweep& swept, answer_options options,
                                            const config_runner& runner) const {
  options.db = db_;
  options.sweep = opened_.id;
  return answer_tuning(spec_, swept.settings, swept.trials, options, runner);
}

}  // namespace rocelab::experiments

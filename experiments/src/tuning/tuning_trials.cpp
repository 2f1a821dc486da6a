#include "rocelab/experiments/tuning/tuning_trials.hpp"

#include <algorithm>
#include <cstdio>

#include "rocelab/experiments/tuning/tuning_spec.hpp"

namespace rocelab::experiments {

void score_into(trial& t, const objective_spec& objective, const experiment_spec& spec,
                const std::vector<run_records>& repeats, const std::vector<std::uint64_t>& seeds) {
  std::vector<run_summary> each;
  std::vector<const run_records*> all;
  for (std::size_t i = 0; i < repeats.size(); ++i) {
    each.push_back(summarize({&repeats[i]}, {seeds[i]}));
    all.push_back(&repeats[i]);
  }
  const run_summary pooled = summarize(all, seeds);
  score_summaries_into(t, objective, each,
                       summary_json({"trial-" + std::to_string(t.index), spec.backend, spec.name}, pooled, each));
}

void score_summaries_into(trial& t, const objective_spec& objective, const std::vector<run_summary>& each,
                          std::string metrics_json) {
  t.metrics_json = std::move(metrics_json);
  auto scored = score(objective, each);
  if (!scored) {
    t.evaluated = false;
    t.error = scored.error().message();
    return;
  }
  t.evaluated = true;
  t.objective = scored->objective;
  t.feasible = scored->feasible;
  t.margins = scored->margins;
  t.violated = scored->violated;
}

trial_evaluator spec_evaluator(experiment_spec base, tuning_settings settings, backend_registry backends) {
  return spec_evaluator(std::move(base), std::move(settings),
                        [backends = std::move(backends)](const experiment_spec& spec) -> result<trial_runs> {
                          auto ran = backends.run(spec);
                          if (!ran) return std::move(ran).error();
                          trial_runs r;
                          r.seeds = std::move(ran->seeds);
                          r.repeats = std::move(ran->repeats);
                          return r;
                        });
}

trial_evaluator spec_evaluator(experiment_spec base, tuning_settings settings, trial_runner run) {
  base.repeats = search_seed_count(base, settings);
  return [base = std::move(base), settings = std::move(settings), run = std::move(run)](
             std::uint32_t index, const std::vector<double>& values, trial_payload& payload) {
    trial t;
    t.index = index;
    t.values = values;
    auto spec = apply_trial(base, settings, values, &payload.applied);
    if (!spec) {
      t.error = spec.error().message();
      return t;
    }
    payload.spec_yaml = to_yaml(*spec);
    auto ran = run(*spec);
    if (!ran) {
      t.error = ran.error().message();
      payload.abandoned = ran.error().code() == error_code::cancelled;
      return t;
    }
    if (!ran->repeats.empty())
      score_into(t, settings.objective, *spec, ran->repeats, ran->seeds);
    else
      score_summaries_into(t, settings.objective, ran->summaries, std::move(ran->summary_json));
    if (ran->run_id != 0) t.run_id = ran->run_id;
    payload.seeds = std::move(ran->seeds);
    payload.repeats = std::move(ran->repeats);
    payload.placement = std::move(ran->placement);
    return t;
  };
}

std::uint32_t search_seed_count(const experiment_spec& spec, const tuning_settings& settings) noexcept {
  return settings.seeds ? settings.seeds : std::max<std::uint32_t>(1, spec.repeats);
}

std::string describe_values(const tuning_settings& settings, std::span<const double> values) {
  const std::vector<double> v = applied_values(settings, values);
  std::string out;
  for (std::size_t i = 0; i < settings.parameters.size(); ++i) {
    const std::string& path = settings.parameters[i].path;
    const auto dot = path.rfind('.');
    std::string value = field_text(path, v[i]);
    if (!integer_field(path)) {  // reals to 4 significant digits: readable progress lines
      char b[32];
      std::snprintf(b, sizeof b, "%.4g", v[i]);
      value = b;
    }
    out += (out.empty() ? "" : " ") + path.substr(dot == std::string::npos ? 0 : dot + 1) + "=" + value;
  }
  return out;
}

}  // namespace rocelab::experiments

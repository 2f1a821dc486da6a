#include "rocelab/experiments/tuning/sweep.hpp"

#include <nlohmann/json.hpp>
#include <chrono>
#include <limits>
#include <yaml-cpp/yaml.h>

#include "rocelab/experiments/calibration/calibration_store.hpp"
#include "rocelab/experiments/tuning/tuning_spec.hpp"
#include "rocelab/experiments/run/run_session.hpp"

namespace rocelab::experiments {

namespace {

// The initial points the section asks for (its own, else the default for its dimension),
// not initial_points(s), which a budget below them clips: the budget is not the identity,
// so a sweep begun with a small budget continues with a larger one.
std::uint32_t asked_initial_points(const tuning_settings& s) {
  tuning_settings unclipped = s;
  unclipped.budget = std::numeric_limits<std::uint32_t>::max();
  return initial_points(unclipped);
}

}  // namespace

std::string sweep_identity(const experiment_spec& spec, const tuning_settings& s) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "tuning" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "method" << YAML::Value << to_string(s.method);
  out << YAML::Key << "seed" << YAML::Value << s.seed;
  out << YAML::Key << "initial_points" << YAML::Value << asked_initial_points(s);
  out << YAML::Key << "seeds" << YAML::Value << s.seeds;
  out << YAML::Key << "parameters" << YAML::Value << YAML::BeginSeq;
  for (const tuning_parameter& p : s.parameters) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "path" << YAML::Value << p.path;
    out << YAML::Key << "min" << YAML::Value << field_text(p.path, p.min) << YAML::Key << "max" << YAML::Value
        << field_text(p.path, p.max);
    out << YAML::Key << "log" << YAML::Value << p.log << YAML::Key << "integer" << YAML::Value << p.integer;
    if (!p.at_least.empty()) out << YAML::Key << "at_least" << YAML::Value << p.at_least;
    if (p.grid_points) out << YAML::Key << "grid_points" << YAML::Value << p.grid_points;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::Key << "objective" << YAML::Value << YAML::BeginSeq;
  for (const objective_term& t : s.objective.terms)
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "metric" << YAML::Value << t.metric << YAML::Key << "weight"
        << YAML::Value << t.weight << YAML::EndMap;
  out << YAML::EndSeq << YAML::Key << "constraints" << YAML::Value << YAML::BeginSeq;
  for (const constraint_bound& c : s.objective.constraints) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "metric" << YAML::Value << c.metric;
    if (c.min) out << YAML::Key << "min" << YAML::Value << *c.min;
    if (c.max) out << YAML::Key << "max" << YAML::Value << *c.max;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::Key << "require_complete" << YAML::Value << s.objective.require_complete;
  out << YAML::EndMap << YAML::EndMap;
  return to_yaml(spec) + out.c_str() + "\n";
}

store::trial_record to_record(const trial& t, std::int64_t sweep, const tuning_settings& settings) {
  store::trial_record r;
  r.sweep = sweep;
  r.index = t.index;
  for (std::size_t i = 0; i < settings.parameters.size() && i < t.values.size(); ++i)
    r.params[settings.parameters[i].path] = t.values[i];
  r.objective = t.evaluated ? t.objective : 0.0;
  r.feasible = t.evaluated && t.feasible;
  if (t.run_id) r.run = t.run_id;
  nlohmann::json j = nlohmann::json::object();
  if (!t.metrics_json.empty()) {
    auto parsed = nlohmann::json::parse(t.metrics_json, nullptr, false);
    if (!parsed.is_discarded() && parsed.is_object()) j = std::move(parsed);
  }
  j["trial"] = {{"evaluated", t.evaluated}, {"margins", t.margins}, {"violated", t.violated}, {"error", t.error}};
  r.metrics_json = j.dump();
  return r;
}

result<trial> from_record(const store::trial_record& r, const tuning_settings& settings) {
  trial t;
  t.index = r.index;
  for (const tuning_parameter& p : settings.parameters) {
    const auto it = r.params.find(p.path);
    if (it == r.params.end())
      return status(error_code::malformed_input,
                    "stored trial " + std::to_string(r.index) + " has no value for " + p.path);
    t.values.push_back(it->second);
  }
  t.objective = r.objective;
  t.feasible = r.feasible;
  t.run_id = r.run.value_or(0);
  auto j = nlohmann::json::parse(r.metrics_json, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("trial"))
    return status(error_code::malformed_input, "stored trial " + std::to_string(r.index) + ": metrics_json has no trial object");
  const auto& tj = j["trial"];
  t.evaluated = tj.value("evaluated", false);
  t.margins = tj.value("margins", std::vector<double>{});
  t.violated = tj.value("violated", std::string());
  t.error = tj.value("error", std::string());
  j.erase("trial");
  if (!j.empty()) t.metrics_json = j.dump(2);
  return t;
}

result<opened_sweep> open_sweep(store::run_store& db, const experiment_spec& spec, const tuning_settings& settings,
                                std::optional<std::int64_t> resume, bool start_new) {
  if (resume && start_new)
    return status(error_code::invalid_argument, "sweep " + std::to_string(*resume) + ": resume it or start a new one");
  const std::string identity = sweep_identity(spec, settings);
  auto sweeps = db.sweeps();
  if (!sweeps) return sweeps.error().with_context("listing sweeps");
  const store::sweep_info* found = nullptr;
  if (resume) {
    for (const auto& sw : *sweeps)
      if (sw.id == *resume) found = &sw;
    if (!found) return status(error_code::not_found, "no sweep " + std::to_string(*resume) + " in " + db.path());
    if (found->spec_yaml != identity || found->method != to_string(settings.method))
      return status(error_code::invalid_argument,
                    "sweep " + std::to_string(*resume) + " was run with another spec or search (" + found->method +
                        ", name " + found->name + "); resume it with the same spec, --set values and method");
  } else if (!start_new) {
    for (const auto& sw : *sweeps)
      if (sw.name == settings.name && sw.method == to_string(settings.method) && sw.spec_yaml == identity &&
          (!found || sw.id > found->id))
        found = &sw;
  }
  opened_sweep out;
  if (found) {
    const auto load_trials = [&]() -> status {
      out.trials.clear();
      auto rows = db.trials(found->id);
      if (!rows) return rows.error().with_context("reading the trials of sweep " + std::to_string(found->id));
      for (const auto& r : *rows) {
        auto t = from_record(r, settings);
        if (!t) return t.error();
        if (t->index != out.trials.size())
          return status(error_code::malformed_input, "sweep " + std::to_string(found->id) + " misses trial " +
                                                         std::to_string(out.trials.size()));
        out.trials.push_back(std::move(*t));
      }
      return status::success();
    };
    ROCELAB_RETURN_IF_ERROR(load_trials());
    // A finished sweep is reused only when asked for or when the budget grew.
    if (resume || out.trials.size() < settings.budget) {
      // Claimed before its trials are read again: those are what this process continues.
      auto claim = store::sweep_claim::take(db.path(), found->id);
      if (!claim) return claim.error();
      out.claim = std::move(*claim);
      ROCELAB_RETURN_IF_ERROR(load_trials());
      out.id = found->id;
      out.resumed = true;
      return out;
    }
    out.trials.clear();
  }
  store::sweep_info info;
  info.name = settings.name;
  info.method = to_string(settings.method);
  info.spec_yaml = identity;
  info.budget = settings.budget;
  info.started_unix_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto id = db.begin_sweep(info);
  if (!id) return id.error().with_context("starting sweep " + settings.name);
  auto claim = store::sweep_claim::take(db.path(), *id);
  if (!claim) return claim.error();
  out.claim = std::move(*claim);
  out.id = *id;
  return out;
}

std::function<status(trial&, trial_payload&)> store_trials(store::run_store& db, std::int64_t sweep,
                                                           const experiment_spec& spec,
                                                           const tuning_settings& settings) {
  return [&db, sweep, spec, settings](trial& t, trial_payload& payload) -> status {
    const std::string context = "storing trial " + std::to_string(t.index) + " of sweep " + std::to_string(sweep);
    // A run the runner stored in its own store (a controller's) is named, not copied.
    const bool stored_elsewhere = payload.repeats.empty() && t.run_id != 0;
    if (!payload.spec_yaml.empty() && !stored_elsewhere) {
      store::new_run run;
      run.name = spec.name;
      run.backend = spec.backend;
      run.seed = payload.seeds.empty() ? spec.seed : payload.seeds.front();
      run.spec_yaml = payload.spec_yaml;
      run.parameters = payload.applied;
      run.parameters.insert(payload.placement.begin(), payload.placement.end());
      run.sweep = sweep;
      auto session = run_session::begin(db, run);
      if (!session) return session.error().with_context(context);
      t.run_id = session->id();
      ROCELAB_RETURN_IF_ERROR(record_calibration(db, session->id(), spec).with_context(context));
      for (std::uint32_t i = 0; i < payload.repeats.size(); ++i)
        ROCELAB_RETURN_IF_ERROR(session->append_repeat(i, payload.repeats[i]).with_context(context));
      if (t.evaluated) {
        if (auto ending = session->finish_ran(payload.repeats); !ending)
          return std::move(ending).error().with_context(context);
      } else {
        ROCELAB_RETURN_IF_ERROR(session->finish_failed(t.error).with_context(context));
      }
    }
    store::trial_record record = to_record(t, sweep, settings);
    if (stored_elsewhere) {
      // Not a run of this store: named in the trial's metrics instead of its run column.
      record.run.reset();
      auto j = nlohmann::json::parse(record.metrics_json, nullptr, false);
      if (!j.is_discarded() && j.is_object()) {
        j["trial"]["runner_run"] = t.run_id;
        record.metrics_json = j.dump();
      }
    }
    return db.add_trial(record).with_context(context);
  };
}

}  // namespace rocelab::experiments

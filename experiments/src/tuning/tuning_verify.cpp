#include "rocelab/experiments/tuning/tuning_verify.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "rocelab/experiments/calibration/calibration_store.hpp"
#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/tuning/tuning_spec.hpp"
#include "rocelab/experiments/tuning/tuning_trials.hpp"
#include "rocelab/store/run_ending.hpp"

namespace rocelab::experiments {
namespace {

run_summary summary_of(const experiment_result& r) {
  std::vector<const run_records*> all;
  for (const auto& x : r.repeats) all.push_back(&x);
  return summarize(all, r.seeds);
}

nlohmann::json metrics(const run_summary& s) {
  nlohmann::json j{{"fct_p50_ns", s.all.fct_p50_ns},   {"fct_p99_ns", s.all.fct_p99_ns}, {"slowdown_p99", s.all.slowdown_p99},
                   {"pause_frames", s.pause_frames},   {"paused_ns", s.paused_ns},       {"ce_marked", s.ce_marked},
                   {"cnp", s.cnp},                     {"drops", s.drops},               {"completed", s.all.completed},
                   {"flows", s.all.flows}};
  // Per traffic class ("victim_slowdown_p99", "incast_fct_p99_ns", ...), over its completed flows.
  for (const auto& [kind, k] : s.by_kind) {
    if (k.completed == 0) continue;
    j[kind + "_slowdown_p99"] = k.slowdown_p99;
    j[kind + "_fct_p99_ns"] = k.fct_p99_ns;
  }
  return j;
}

}  // namespace

result<std::vector<verify_config>> best_trial_configs(const experiment_spec& spec, const tuning_settings& settings,
                                                      const std::vector<trial>& trials, std::uint32_t count) {
  std::vector<const trial*> ranked;
  for (const trial& t : trials)
    if (t.evaluated && t.feasible) ranked.push_back(&t);
  std::stable_sort(ranked.begin(), ranked.end(), [](const trial* a, const trial* b) { return a->objective < b->objective; });
  std::vector<verify_config> out;
  verify_config written{"baseline", "", {}};
  for (const tuning_parameter& p : settings.parameters)
    if (auto v = get_field(spec, p.path)) written.params[p.path] = *v;
  out.push_back(std::move(written));
  std::vector<std::vector<double>> seen;
  for (const trial* t : ranked) {
    if (out.size() > count) break;
    const std::vector<double> applied = applied_values(settings, t->values);
    if (std::find(seen.begin(), seen.end(), applied) != seen.end()) continue;
    seen.push_back(applied);
    verify_config c{"trial " + std::to_string(t->index), "", {}};
    auto set = apply_trial(spec, settings, t->values, &c.params);
    if (!set) return set.error().with_context(c.label);
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

std::string settings_text(const std::map<std::string, std::string>& params) {
  std::string out;
  for (const auto& [path, value] : params) {
    const auto dot = path.find('.');
    out += (out.empty() ? "" : " ") + (dot == std::string::npos ? path : path.substr(dot + 1)) + "=" + value;
  }
  return out;
}

}  // namespace

result<std::vector<verify_row>> verify_configs(const experiment_spec& spec, const std::vector<verify_config>& configs,
                                               const std::string& backend, const backend_registry& backends,
                                               store::run_store* db, std::int64_t sweep,
                                               const std::function<void(const std::string&)>& log) {
  std::vector<verify_row> rows;
  // Set once the backend answered that it cannot run here: the rest would fail the same way.
  std::string unavailable;
  for (const verify_config& config : configs) {
    verify_row row;
    row.label = config.label;
    row.baseline = config.baseline;
    row.settings = settings_text(config.params);
    experiment_spec twin_spec = spec;
    for (const auto& [path, value] : config.params)
      if (auto st = set_field(twin_spec, path, value, config.label); !st.ok())
        return st.with_context(config.label + ": " + path + "=" + value);
    twin_spec.backend = "twin";
    // The twin predicts what the backend runs (the virtual lab's timeout and headroom
    // included). A backend not registered fails its measured run below, as a row.
    const auto measuring = backends.find(backend);
    const experiment_spec prediction_spec = measuring ? (*measuring)->as_run_here(twin_spec) : twin_spec;
    auto from_spec = run_experiment(prediction_spec);
    if (!from_spec) return from_spec.error().with_context(row.label + " on the twin");
    row.from_spec = summary_of(*from_spec);
    row.predicted = row.from_spec;
    if (!unavailable.empty()) {
      row.error = unavailable;
      rows.push_back(std::move(row));
      continue;
    }
    experiment_spec measured_spec = twin_spec;
    measured_spec.backend = backend;
    if (log) log(row.label + " (" + row.settings + ") on the " + backend + " backend");
    std::int64_t run_id = 0;
    store::new_run nr{measured_spec.name, backend, measured_spec.seed, to_yaml(measured_spec), {}, sweep};
    if (db) {
      nr.parameters = config.params;
      nr.parameters["sim_to_real.label"] = row.label;
      if (!config.baseline.empty()) nr.parameters["tuning.baseline"] = config.baseline;
      auto id = db->begin_run(nr);
      if (!id) return id.error().with_context("storing the " + backend + " run of " + row.label);
      run_id = *id;
      ROCELAB_RETURN_IF_ERROR(record_calibration(*db, run_id, measured_spec)
                                  .with_context("storing the " + backend + " run of " + row.label));
    }
    auto measured = backends.run(measured_spec);
    if (measured) {
      row.ran = true;
      row.measured = summary_of(*measured);
      // The twin replays what the lab ran, when the lab ran it.
      auto replayed = predict_measured_runs(prediction_spec, measured->repeats, measured->seeds);
      if (!replayed) return replayed.error().with_context(row.label + ": the twin's replay");
      row.predicted = *replayed;
      row.comparison = compare_sim_to_real(row.predicted, row.measured);
      // Percentiles of no completed flow are zeros, not a measurement to agree with.
      if (row.measured.all.completed == 0 || row.predicted.all.completed == 0)
        row.error = "no flow completed (" + backend + ": " + std::to_string(row.measured.all.completed) + " of " +
                    std::to_string(row.measured.all.flows) + ", twin: " + std::to_string(row.predicted.all.completed) +
                    " of " + std::to_string(row.predicted.all.flows) + "): nothing to compare";
      if (db) {
        for (const auto& r : measured->repeats) ROCELAB_RETURN_IF_ERROR(db->append(run_id, r));
        // The prediction travels with the measured run, for its report's sim-to-real table.
        ROCELAB_RETURN_IF_ERROR(db->set_parameter(
            run_id, "sim_to_real.predicted", summary_json({"predicted", "twin", measured_spec.name}, row.predicted, {})));
        ROCELAB_RETURN_IF_ERROR(db->set_parameter(run_id, "sim_to_real.method", replay_prediction_method));
        if (auto ending = store::finish_ran(*db, run_id, measured->repeats); !ending) return std::move(ending).error();
      }
    } else {
      row.error = measured.error().message();
      if (measured.error().code() == error_code::unavailable) {
        unavailable = row.error;
        if (log)
          log("the " + backend + " backend cannot run here: " + row.error + "; " +
              std::to_string(configs.size() - rows.size()) + " of " + std::to_string(configs.size()) +
              " configurations not measured");
      } else if (log) {
        log(row.label + " failed on the " + backend + " backend: " + row.error);
      }
      if (db) ROCELAB_RETURN_IF_ERROR(db->finish(run_id, store::run_status::failed, row.error));
    }
    row.run_id = run_id;
    rows.push_back(std::move(row));
  }
  return rows;
}

result<std::vector<verify_row>> verify_on_backend(const experiment_spec& spec, const tuning_settings& settings,
                                                  const std::vector<trial>& trials, std::uint32_t count,
                                                  const std::string& backend, const backend_registry& backends,
                                                  store::run_store* db, std::int64_t sweep,
                                                  const std::function<void(const std::string&)>& log) {
  auto configs = best_trial_configs(spec, settings, trials, count);
  if (!configs) return configs.error();
  return verify_configs(spec, *configs, backend, backends, db, sweep, log);
}

std::size_t measured_count(const std::vector<verify_row>& rows) {
  return static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [](const verify_row& r) { return r.is_measured(); }));
}

std::string verify_table(const std::vector<verify_row>& rows) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-16s  %-21s  %-21s  %-21s  %-13s  %-13s  %s\n", "config",
                "FCT p50 ms (twin|lab)", "FCT p99 ms (twin|lab)", "paused ms (twin|lab)", "pauses", "CE marks",
                "settings");
  out += line;
  const auto ms = [](std::int64_t ns) { return static_cast<double>(ns) / 1e6; };
  const auto flag = [](const verify_row& r, std::size_t i) {
    return i < r.comparison.cells.size() && !r.comparison.cells[i].within ? '!' : ' ';
  };
  // Each reason a row is not measured, once, with the rows it holds for.
  std::vector<std::pair<std::string, std::string>> reasons;
  for (const verify_row& r : rows) {
    if (!r.is_measured()) {
      std::snprintf(line, sizeof line, "%-16s  %8.2f|not measured%-*s%s\n", r.label.c_str(), ms(r.from_spec.all.fct_p50_ns),
                    75, "", r.settings.c_str());
      out += line;
      auto same = std::find_if(reasons.begin(), reasons.end(), [&](const auto& x) { return x.first == r.error; });
      if (same == reasons.end())
        reasons.emplace_back(r.error, r.label);
      else
        same->second += ", " + r.label;
      continue;
    }
    std::snprintf(line, sizeof line,
                  "%-16s  %8.2f|%-10.2f%c  %8.2f|%-10.2f%c  %8.2f|%-10.2f%c  %5llu|%-7llu  %5llu|%-7llu  %s\n",
                  r.label.c_str(), ms(r.predicted.all.fct_p50_ns), ms(r.measured.all.fct_p50_ns), flag(r, 0),
                  ms(r.predicted.all.fct_p99_ns), ms(r.measured.all.fct_p99_ns), flag(r, 1), ms(r.predicted.paused_ns),
                  ms(r.measured.paused_ns), flag(r, 2), static_cast<unsigned long long>(r.predicted.pause_frames),
                  static_cast<unsigned long long>(r.measured.pause_frames),
                  static_cast<unsigned long long>(r.predicted.ce_marked),
                  static_cast<unsigned long long>(r.measured.ce_marked), r.settings.c_str());
    out += line;
  }
  for (const auto& [reason, labels] : reasons) out += "not measured (" + labels + "): " + reason + "\n";
  const std::size_t measured = measured_count(rows);
  if (measured == 0) {
    if (!rows.empty()) out += "no configuration measured: nothing to compare the twin with (twin = the twin from the spec)\n";
    return out;
  }
  bool any = false;
  for (const verify_row& r : rows) {
    if (!r.is_measured()) continue;
    for (const auto& e : r.comparison.explanation) {
      if (!any) out += "! beyond " + std::to_string(static_cast<int>(r.comparison.tolerance * 100 + 0.5)) + "%:\n";
      any = true;
      out += "  " + r.label + ": " + e + "\n";
    }
  }
  if (!any)
    out += "twin = the twin replaying each measured run's flows at their measured start times; every FCT p50, p99 "
           "and pause time within 15% in the " +
           std::to_string(measured) + " of " + std::to_string(rows.size()) + " configurations measured\n";
  return out;
}

std::string verify_json_text(const std::vector<verify_row>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const verify_row& r : rows) {
    nlohmann::json j{{"label", r.label},
                     {"settings", r.settings},
                     {"status", r.is_measured() ? "measured" : "not measured"},
                     {"predicted", metrics(r.predicted)},
                     {"from_spec", metrics(r.from_spec)}};
    if (!r.baseline.empty()) j["baseline"] = r.baseline;
    if (r.ran) j["measured"] = metrics(r.measured);
    if (r.is_measured()) {
      j["within"] = r.comparison.within;
      j["tolerance"] = r.comparison.tolerance;
      nlohmann::json cells = nlohmann::json::array();
      for (const auto& c : r.comparison.cells)
        cells.push_back({{"metric", c.metric}, {"predicted", c.predicted}, {"measured", c.measured},
                         {"difference", std::isfinite(c.difference) ? nlohmann::json(c.difference) : nlohmann::json(nullptr)},
                         {"within", c.within}});
      j["cells"] = std::move(cells);
      j["differences"] = r.comparison.explanation;
    } else {
      j["reason"] = r.error;
      j["error"] = r.error;
    }
    if (r.run_id) j["run"] = r.run_id;
    out.push_back(std::move(j));
  }
  return out.dump();
}

}  // namespace rocelab::experiments

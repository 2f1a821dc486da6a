#include "rocelab/experiments/tuning_verify.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

#include "rocelab/experiments/runner.hpp"
#include "rocelab/experiments/tuning_spec.hpp"
#include "rocelab/experiments/tuning_trials.hpp"

namespace rocelab::experiments {
namespace {

run_summary summary_of(const experiment_result& r) {
  std::vector<const run_records*> all;
  for (const auto& x : r.repeats) all.push_back(&x);
  return summarize(all, r.seeds);
}

nlohmann::json metrics(const run_summary& s) {
  return {{"fct_p50_ns", s.all.fct_p50_ns},   {"fct_p99_ns", s.all.fct_p99_ns}, {"slowdown_p99", s.all.slowdown_p99},
          {"pause_frames", s.pause_frames},   {"paused_ns", s.paused_ns},       {"ce_marked", s.ce_marked},
          {"cnp", s.cnp},                     {"drops", s.drops},               {"completed", s.all.completed},
          {"flows", s.all.flows}};
}

}  // namespace

result<std::vector<verify_row>> verify_on_backend(const experiment_spec& spec, const tuning_settings& settings,
                                                  const std::vector<trial>& trials, std::uint32_t count,
                                                  const std::string& backend, const virtual_backend_options& options,
                                                  store::run_store* db, std::int64_t sweep,
                                                  const std::function<void(const std::string&)>& log) {
  // The baseline, then the best distinct feasible trials.
  std::vector<const trial*> ranked;
  for (const trial& t : trials)
    if (t.evaluated && t.feasible) ranked.push_back(&t);
  std::stable_sort(ranked.begin(), ranked.end(), [](const trial* a, const trial* b) { return a->objective < b->objective; });
  std::vector<std::pair<std::string, std::vector<double>>> picks;
  std::vector<std::vector<double>> seen;
  for (const trial* t : ranked) {
    if (picks.size() >= count) break;
    const std::vector<double> applied = applied_values(settings, t->values);
    if (std::find(seen.begin(), seen.end(), applied) != seen.end()) continue;
    seen.push_back(applied);
    picks.emplace_back("trial " + std::to_string(t->index), t->values);
  }
  std::vector<verify_row> rows;
  for (std::size_t i = 0; i <= picks.size(); ++i) {
    verify_row row;
    experiment_spec twin_spec = spec;
    if (i == 0) {
      row.label = "baseline";
      for (const tuning_parameter& p : settings.parameters) {
        auto v = get_field(spec, p.path);
        const auto dot = p.path.rfind('.');
        row.settings += (row.settings.empty() ? "" : " ") + p.path.substr(dot + 1) + "=" + (v ? *v : "?");
      }
    } else {
      row.label = picks[i - 1].first;
      auto applied = apply_trial(spec, settings, picks[i - 1].second);
      if (!applied) return applied.error().with_context(row.label);
      twin_spec = *applied;
      row.settings = describe_values(settings, picks[i - 1].second);
    }
    twin_spec.backend = "twin";
    auto predicted = run_experiment(twin_spec);
    if (!predicted) return predicted.error().with_context(row.label + " on the twin");
    row.predicted = summary_of(*predicted);
    experiment_spec measured_spec = twin_spec;
    measured_spec.backend = backend;
    if (log) log(row.label + " (" + row.settings + ") on the " + backend + " backend");
    std::int64_t run_id = 0;
    if (db) {
      store::new_run nr{measured_spec.name, backend, measured_spec.seed, to_yaml(measured_spec), {}, sweep};
      for (const tuning_parameter& p : settings.parameters)
        if (auto v = get_field(measured_spec, p.path)) nr.parameters[p.path] = *v;
      // The prediction travels with the measured run, for its report's sim-to-real table.
      nr.parameters["sim_to_real.label"] = row.label;
      nr.parameters["sim_to_real.predicted"] =
          summary_json({"predicted", "twin", measured_spec.name}, row.predicted, {});
      auto id = db->begin_run(nr);
      if (!id) return id.error().with_context("storing the " + backend + " run of " + row.label);
      run_id = *id;
    }
    auto measured = run_experiment(measured_spec, {}, options);
    if (measured) {
      row.measured = summary_of(*measured);
      if (db) {
        for (const auto& r : measured->repeats) ROCELAB_RETURN_IF_ERROR(db->append(run_id, r));
        ROCELAB_RETURN_IF_ERROR(db->finish(run_id, store::run_status::completed));
      }
    } else {
      row.error = measured.error().message();
      if (log) log(row.label + " failed on the " + backend + " backend: " + row.error);
      if (db) ROCELAB_RETURN_IF_ERROR(db->finish(run_id, store::run_status::failed, row.error));
    }
    row.run_id = run_id;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string verify_table(const std::vector<verify_row>& rows) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-10s  %-19s  %-19s  %-13s  %-21s  %-13s  %s\n", "config", "FCT p50 us (twin|lab)",
                "FCT p99 us (twin|lab)", "pauses", "paused us", "CE marks", "settings");
  out += line;
  for (const verify_row& r : rows) {
    const auto us = [](std::int64_t ns) { return static_cast<double>(ns) / 1e3; };
    if (!r.error.empty()) {
      std::snprintf(line, sizeof line, "%-10s  %8.1f | failed: %s\n", r.label.c_str(), us(r.predicted.all.fct_p50_ns),
                    r.error.substr(0, 120).c_str());
      out += line;
      continue;
    }
    std::snprintf(line, sizeof line, "%-10s  %8.1f|%-10.1f  %8.1f|%-10.1f  %5llu|%-7llu  %9.1f|%-11.1f  %5llu|%-7llu  %s\n",
                  r.label.c_str(), us(r.predicted.all.fct_p50_ns), us(r.measured.all.fct_p50_ns),
                  us(r.predicted.all.fct_p99_ns), us(r.measured.all.fct_p99_ns),
                  static_cast<unsigned long long>(r.predicted.pause_frames),
                  static_cast<unsigned long long>(r.measured.pause_frames), us(r.predicted.paused_ns),
                  us(r.measured.paused_ns), static_cast<unsigned long long>(r.predicted.ce_marked),
                  static_cast<unsigned long long>(r.measured.ce_marked), r.settings.c_str());
    out += line;
  }
  return out;
}

std::string verify_json_text(const std::vector<verify_row>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const verify_row& r : rows) {
    nlohmann::json j{{"label", r.label}, {"settings", r.settings}, {"predicted", metrics(r.predicted)}};
    if (r.error.empty()) j["measured"] = metrics(r.measured);
    else j["error"] = r.error;
    if (r.run_id) j["run"] = r.run_id;
    out.push_back(std::move(j));
  }
  return out.dump();
}

}  // namespace rocelab::experiments

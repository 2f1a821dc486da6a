#include "rocelab/experiments/tuning/tuning_verify.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "rocelab/experiments/calibration/calibration_store.hpp"
#include "rocelab/experiments/run/flow_timeline.hpp"
#include "rocelab/experiments/run/runner.hpp"
#include "tuning/ci_json.hpp"
#include "rocelab/experiments/tuning/tuning_spec.hpp"
#include "rocelab/experiments/tuning/tuning_trials.hpp"
#include "rocelab/experiments/run/run_session.hpp"

namespace rocelab::experiments {
namespace {

run_summary summary_of(const std::vector<run_records>& repeats, const std::vector<std::uint64_t>& seeds) {
  std::vector<const run_records*> all;
  for (const auto& x : repeats) all.push_back(&x);
  return summarize(all, seeds);
}

run_summary summary_of(const experiment_result& r) { return summary_of(r.repeats, r.seeds); }

std::vector<run_summary> each_of(const std::vector<run_records>& repeats, const std::vector<std::uint64_t>& seeds) {
  std::vector<run_summary> out;
  for (std::size_t i = 0; i < repeats.size(); ++i)
    out.push_back(summarize({&repeats[i]}, {i < seeds.size() ? seeds[i] : 0}));
  return out;
}

// The objective of each run alone, as a CI; none when a run lacks one of its metrics (a
// class that did not complete): such a row is not ranked rather than ranked wrongly.
std::optional<confidence_interval> objective_ci(const objective_spec& objective, const std::vector<run_summary>& runs) {
  std::vector<double> values;
  for (const run_summary& r : runs) {
    auto scored = score(objective, {r});
    if (!scored) return std::nullopt;
    values.push_back(scored->objective);
  }
  if (values.empty()) return std::nullopt;
  return mean_ci95(values);
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
                                               const std::function<void(const std::string&)>& log,
                                               const verify_options& options) {
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
    experiment_spec prediction_spec = measuring ? (*measuring)->as_run_here(twin_spec) : twin_spec;
    if (!options.calibration.empty()) {
      prediction_spec.twin.calibration = options.calibration;
      row.calibration = options.calibration_label;
    }
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
    measured_spec.repeats = std::max(measured_spec.repeats, options.runs);
    if (log)
      log(row.label + " (" + row.settings + ") on the " + backend + " backend, " +
          std::to_string(measured_spec.repeats) + " runs");
    std::int64_t run_id = 0;
    store::new_run nr{measured_spec.name, backend, measured_spec.seed, to_yaml(measured_spec), {}, sweep};
    std::optional<run_session> session;
    if (db) {
      nr.parameters = config.params;
      nr.parameters["sim_to_real.label"] = row.label;
      if (!config.baseline.empty()) nr.parameters["tuning.baseline"] = config.baseline;
      auto begun = run_session::begin(*db, nr);
      if (!begun) return begun.error().with_context("storing the " + backend + " run of " + row.label);
      session.emplace(std::move(*begun));
      run_id = session->id();
      ROCELAB_RETURN_IF_ERROR(record_calibration(*db, run_id, measured_spec)
                                  .with_context("storing the " + backend + " run of " + row.label));
    }
    auto measured = backends.run(measured_spec);
    if (measured) {
      row.ran = true;
      row.measured = summary_of(*measured);
      row.measured_each = each_of(measured->repeats, measured->seeds);
      // The twin replays what the lab ran, when the lab ran it: every run, pooled as the
      // lab's runs are.
      auto replayed = predict_measured_records(prediction_spec, measured->repeats, measured->seeds);
      if (!replayed) return replayed.error().with_context(row.label + ": the twin's replay");
      row.predicted = summary_of(*replayed, measured->seeds);
      row.predicted_each = each_of(*replayed, measured->seeds);
      row.comparison = compare_sim_to_real(row.predicted, row.measured, options.tolerance, 100'000, row.measured_each);
      if (options.objective) {
        row.lab_objective = objective_ci(*options.objective, row.measured_each);
        row.twin_objective = objective_ci(*options.objective, row.predicted_each);
      }
      // Percentiles of no completed flow are zeros, not a measurement to agree with.
      if (row.measured.all.completed == 0 || row.predicted.all.completed == 0)
        row.error = "no flow completed (" + backend + ": " + std::to_string(row.measured.all.completed) + " of " +
                    std::to_string(row.measured.all.flows) + ", twin: " + std::to_string(row.predicted.all.completed) +
                    " of " + std::to_string(row.predicted.all.flows) + "): nothing to compare";
      if (db) {
        for (std::uint32_t i = 0; i < measured->repeats.size(); ++i)
          ROCELAB_RETURN_IF_ERROR(session->append_repeat(i, measured->repeats[i]));
        // The prediction travels with the measured run, for its report's sim-to-real table.
        ROCELAB_RETURN_IF_ERROR(db->set_parameter(
            run_id, "sim_to_real.predicted", summary_json({"predicted", "twin", measured_spec.name}, row.predicted, {})));
        ROCELAB_RETURN_IF_ERROR(db->set_parameter(run_id, "sim_to_real.method", replay_prediction_method));
        ROCELAB_RETURN_IF_ERROR(db->set_parameter(
            run_id, "sim_to_real.calibration", row.calibration.empty() ? "none (the twin as the spec says)" : row.calibration));
        if (!replayed->empty())
          ROCELAB_RETURN_IF_ERROR(db->set_parameter(run_id, "sim_to_real.predicted_flow_timeline",
                                                    flow_timeline_json(replayed->front().counters)));
        if (auto ending = session->finish_ran(measured->repeats); !ending) return std::move(ending).error();
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
      if (session) ROCELAB_RETURN_IF_ERROR(session->finish_failed(row.error));
    }
    row.run_id = run_id;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::size_t measured_count(const std::vector<verify_row>& rows) {
  return static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [](const verify_row& r) { return r.is_measured(); }));
}

namespace {

// Under a measured row: its runs, the lab's CI of the three pooled cells, and the
// per-class cells, each flagged '!' when beyond max(tolerance, lab CI).
std::string cell_lines(const verify_row& r) {
  const auto& cells = r.comparison.cells;
  if (cells.empty()) return "";
  char b[160];
  std::string out = "    " + std::to_string(cells[0].lab_runs) + " runs; the lab's 95% CI:";
  for (std::size_t i = 0; i < cells.size() && i < 3; ++i) {
    std::snprintf(b, sizeof b, " %s +-%.0f%%%s", cells[i].metric.c_str(), cells[i].lab_ci * 100,
                  cells[i].by_lab_ci ? " (judged by it)" : "");
    out += b;
  }
  out += "\n";
  if (cells.size() > 3) {
    out += "    per class (ms, twin|lab):";
    for (std::size_t i = 3; i < cells.size(); ++i) {
      std::snprintf(b, sizeof b, " %s %.2f|%.2f%s%s", cells[i].metric.c_str(), cells[i].predicted / 1e6,
                    cells[i].measured / 1e6, cells[i].by_lab_ci ? " (by lab CI)" : "", cells[i].within ? "" : " !");
      out += b;
      if (i + 1 < cells.size()) out += ";";
    }
    out += "\n";
  }
  return out;
}

}  // namespace

std::string verify_table(const std::vector<verify_row>& rows) {
  std::string out;
  if (!rows.empty())
    out += "twin calibrated to: " +
           (rows.front().calibration.empty() ? std::string("none (ideal NICs and switch, as the spec says)")
                                             : rows.front().calibration) +
           "\n";
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
    out += cell_lines(r);
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
  if (!any) {
    std::size_t by_ci = 0;
    for (const verify_row& r : rows)
      if (r.is_measured())
        by_ci += static_cast<std::size_t>(std::count_if(r.comparison.cells.begin(), r.comparison.cells.end(),
                                                        [](const sim_to_real_cell& c) { return c.by_lab_ci; }));
    out += "twin = the twin replaying each measured run's flows at their measured start times; every FCT p50, p99 "
           "(all flows and per class) and pause time within 15% in the " +
           std::to_string(measured) + " of " + std::to_string(rows.size()) + " configurations measured" +
           (by_ci ? " (" + std::to_string(by_ci) + " cells by the lab's own 95% CI, wider than 15%)" : std::string()) +
           "\n";
  }
  if (const verify_ranking ranking = rank_verified(rows); !ranking.lab_order.empty()) out += ranking.text + "\n";
  return out;
}

namespace {

std::string ci_text(const confidence_interval& ci) {
  char b[64];
  if (ci.n >= 2)
    std::snprintf(b, sizeof b, "%.4g +- %.2g", ci.mean, ci.half_width);
  else
    std::snprintf(b, sizeof b, "%.4g (1 run)", ci.mean);
  return b;
}

std::string labels(const std::vector<verify_ranking::entry>& order, bool lab) {
  std::string out;
  for (const auto& e : order) out += (out.empty() ? "" : ", ") + e.label + " " + ci_text(lab ? e.lab : e.twin);
  return out;
}

}  // namespace

verify_ranking rank_verified(const std::vector<verify_row>& rows) {
  verify_ranking out;
  std::size_t runs = 0;
  for (const verify_row& r : rows)
    if (r.is_measured() && r.lab_objective && r.twin_objective) {
      out.lab_order.push_back({r.label, *r.lab_objective, *r.twin_objective});
      runs = std::max(runs, r.lab_objective->n);
    }
  if (out.lab_order.size() < 2) {
    out.lab_order.clear();
    out.text = "ranking: fewer than two configurations were measured with the objective on both sides";
    return out;
  }
  out.twin_order = out.lab_order;
  std::stable_sort(out.lab_order.begin(), out.lab_order.end(),
                   [](const auto& a, const auto& b) { return a.lab.mean < b.lab.mean; });
  std::stable_sort(out.twin_order.begin(), out.twin_order.end(),
                   [](const auto& a, const auto& b) { return a.twin.mean < b.twin.mean; });
  out.same_order = std::equal(out.lab_order.begin(), out.lab_order.end(), out.twin_order.begin(),
                              [](const auto& a, const auto& b) { return a.label == b.label; });
  for (std::size_t i = 0; i < out.lab_order.size(); ++i)
    for (std::size_t j = i + 1; j < out.lab_order.size(); ++j) {
      const auto& a = out.lab_order[i];  // better than b on the lab
      const auto& b = out.lab_order[j];
      if (!(b.twin.mean < a.twin.mean)) continue;
      out.disagreements.push_back({a.label, b.label, a.lab.high < b.lab.low, b.twin.high < a.twin.low});
    }
  out.text = "ranking by the objective (lower is better; mean +- 95% CI over " + std::to_string(runs) +
             " runs each): the lab " + labels(out.lab_order, true) + "; the twin replaying those runs " +
             labels(out.twin_order, false) + ". ";
  if (out.same_order) {
    out.text += "The lab's ranking agrees with the twin's.";
  } else {
    out.text += "The lab's ranking differs from the twin's: ";
    for (std::size_t i = 0; i < out.disagreements.size(); ++i) {
      const auto& d = out.disagreements[i];
      out.text += std::string(i ? "; " : "") + "the lab puts " + d.better_on_lab + " before " + d.better_on_twin +
                  (d.lab_separates ? " (its CIs separate them)" : " (its CIs overlap: not told apart)") +
                  ", the twin the other way" +
                  (d.twin_separates ? " (its CIs separate them)" : " (its CIs overlap: not told apart)");
    }
    out.text += ".";
  }
  return out;
}

std::string verify_ranking_json_text(const std::vector<verify_row>& rows) {
  const verify_ranking r = rank_verified(rows);
  nlohmann::json j{{"same_order", r.same_order}, {"text", r.text}};
  for (const char* side : {"lab", "twin"}) {
    nlohmann::json order = nlohmann::json::array();
    for (const auto& e : side == std::string_view("lab") ? r.lab_order : r.twin_order)
      order.push_back({{"label", e.label}, {"lab", ci_json(e.lab)}, {"twin", ci_json(e.twin)}});
    j[std::string(side) + "_order"] = std::move(order);
  }
  nlohmann::json d = nlohmann::json::array();
  for (const auto& x : r.disagreements)
    d.push_back({{"better_on_lab", x.better_on_lab}, {"better_on_twin", x.better_on_twin},
                 {"lab_separates", x.lab_separates}, {"twin_separates", x.twin_separates}});
  j["disagreements"] = std::move(d);
  return j.dump();
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
                         {"within", c.within},
                         {"lab_ci", c.lab_ci},
                         {"lab_runs", c.lab_runs},
                         {"judged_by", c.by_lab_ci ? "lab CI" : "tolerance"}});
      j["cells"] = std::move(cells);
      j["differences"] = r.comparison.explanation;
    } else {
      j["reason"] = r.error;
      j["error"] = r.error;
    }
    if (r.run_id) j["run"] = r.run_id;
    j["calibration"] = r.calibration;
    if (r.lab_objective) j["lab_objective"] = ci_json(*r.lab_objective);
    if (r.twin_objective) j["twin_objective"] = ci_json(*r.twin_objective);
    j["runs"] = r.measured_each.size();
    out.push_back(std::move(j));
  }
  return out.dump();
}

}  // namespace rocelab::experiments

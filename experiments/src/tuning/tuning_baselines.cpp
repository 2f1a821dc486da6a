#include "rocelab/experiments/tuning/tuning_baselines.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>

#include "rocelab/experiments/tuning/objective.hpp"
#include "rocelab/experiments/tuning/tuning_spec.hpp"
#include "rocelab/experiments/tuning/tuning_trials.hpp"

namespace rocelab::experiments {
namespace {

constexpr const char* role_key = "tuning.role";

// A configuration to run on a set of seeds.
struct config_job {
  config_evaluation eval;
  experiment_spec spec;
  std::string role;
  std::vector<run_records> records;  // one per seed
};

std::map<std::string, std::string> trial_params(const tuning_settings& s, const std::vector<double>& values) {
  std::map<std::string, std::string> out;
  const std::vector<double> v = applied_values(s, values);
  for (std::size_t i = 0; i < s.parameters.size() && i < v.size(); ++i)
    out[s.parameters[i].path] = field_text(s.parameters[i].path, v[i]);
  return out;
}

// Runs (or finds in the store) every seed of every job, then scores each job.
status evaluate_jobs(std::vector<config_job>& jobs, const objective_spec& objective, const answer_options& o,
                     const config_runner& run) {
  std::map<std::pair<std::string, std::uint64_t>, std::int64_t> stored;
  if (o.db && o.sweep) {
    auto runs = o.db->runs();
    if (!runs) return runs.error().with_context("listing the stored runs of sweep " + std::to_string(o.sweep));
    for (const store::run_info& r : *runs) {
      if (r.sweep != o.sweep || r.status != store::run_status::completed) continue;
      const auto it = r.parameters.find(role_key);
      if (it != r.parameters.end()) stored[{it->second, r.seed}] = r.id;
    }
  }
  struct pending {
    std::size_t job, slot;
  };
  std::vector<pending> todo;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    config_job& job = jobs[j];
    job.records.assign(job.eval.seeds.size(), {});
    job.eval.run_ids.assign(job.eval.seeds.size(), 0);
    for (std::size_t k = 0; k < job.eval.seeds.size(); ++k) {
      const auto it = stored.find({job.role, job.eval.seeds[k]});
      if (it == stored.end()) {
        todo.push_back({j, k});
        continue;
      }
      auto records = o.db->load(it->second);
      if (!records) return records.error().with_context("loading run " + std::to_string(it->second) + " (" + job.role + ")");
      job.records[k] = std::move(*records);
      job.eval.run_ids[k] = it->second;
    }
  }
  std::size_t total = 0;
  for (const config_job& j : jobs) total += j.eval.seeds.size();
  if (o.log && todo.size() < total)
    o.log(std::to_string(total - todo.size()) + " of " + std::to_string(total) + " runs found in the store");
  std::vector<std::optional<status>> errors(todo.size());
  parallel_for(static_cast<std::uint32_t>(todo.size()), o.parallelism, [&](std::uint32_t i) {
    config_job& job = jobs[todo[i].job];
    auto r = run(job.spec, job.eval.seeds[todo[i].slot]);
    if (!r) {
      errors[i] = r.error().with_context(job.role + ", seed " + std::to_string(job.eval.seeds[todo[i].slot]));
      return;
    }
    job.records[todo[i].slot] = std::move(*r);
  });
  for (std::size_t i = 0; i < todo.size(); ++i) {
    if (errors[i]) return *errors[i];
    config_job& job = jobs[todo[i].job];
    const std::size_t k = todo[i].slot;
    if (!o.db || !o.sweep) continue;
    const std::string context = "storing " + job.role + " (seed " + std::to_string(job.eval.seeds[k]) + ")";
    store::new_run nr;
    nr.name = job.spec.name;
    nr.backend = job.spec.backend;
    nr.seed = job.eval.seeds[k];
    experiment_spec seeded = job.spec;
    seeded.seed = job.eval.seeds[k];
    seeded.repeats = 1;
    nr.spec_yaml = to_yaml(seeded);
    nr.parameters = job.eval.params;
    nr.parameters[role_key] = job.role;
    nr.sweep = o.sweep;
    auto id = o.db->begin_run(nr);
    if (!id) return id.error().with_context(context);
    ROCELAB_RETURN_IF_ERROR(o.db->append(*id, job.records[k]).with_context(context));
    ROCELAB_RETURN_IF_ERROR(o.db->finish(*id, store::run_status::completed).with_context(context));
    job.eval.run_ids[k] = *id;
  }
  for (config_job& job : jobs) {
    job.eval.summaries.clear();
    job.eval.objectives.clear();
    for (std::size_t k = 0; k < job.records.size(); ++k) {
      job.eval.summaries.push_back(summarize({&job.records[k]}, {job.eval.seeds[k]}));
      auto one = score(objective, {job.eval.summaries.back()});
      job.eval.objectives.push_back(one ? one->objective : std::numeric_limits<double>::quiet_NaN());
    }
    score_into(job.eval.scored, objective, job.spec, job.records, job.eval.seeds);
    if (!job.eval.scored.evaluated)
      return status(error_code::invalid_argument, job.eval.name + ": " + job.eval.scored.error);
  }
  return status::success();
}

std::vector<std::uint64_t> seed_range(std::uint64_t first, std::uint32_t count) {
  std::vector<std::uint64_t> out;
  for (std::uint32_t k = 0; k < count; ++k) out.push_back(first + k);
  return out;
}

nlohmann::json ci_json(const confidence_interval& ci) {
  return {{"level", 0.95}, {"method", "student_t"}, {"n", ci.n},         {"mean", ci.mean},
          {"stddev", ci.stddev}, {"half_width", ci.half_width}, {"low", ci.low}, {"high", ci.high}};
}

nlohmann::json summary_of(const std::string& metrics_json) {
  auto j = nlohmann::json::parse(metrics_json, nullptr, false);
  return j.is_discarded() ? nlohmann::json(nullptr) : j;
}

// Spec values as JSON: numbers and booleans as such (what `rocelab tune --json` has always
// printed for parameters), other text as strings.
nlohmann::json params_json(const std::map<std::string, std::string>& params) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [path, text] : params) {
    if (text == "true" || text == "false") {
      j[path] = text == "true";
      continue;
    }
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (!text.empty() && end && *end == '\0') j[path] = v;
    else j[path] = text;
  }
  return j;
}

std::string fmt(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

}  // namespace

config_runner local_config_runner(backend_registry backends) {
  return [backends = std::move(backends)](const experiment_spec& spec, std::uint64_t seed) -> result<run_records> {
    experiment_spec one = spec;
    one.seed = seed;
    one.repeats = 1;
    auto ran = backends.run(one);
    if (!ran) return std::move(ran).error();
    if (ran->repeats.empty()) return status(error_code::unavailable, "the run made no records");
    return std::move(ran->repeats.front());
  };
}

result<tuning_answer> answer_tuning(const experiment_spec& spec, const tuning_settings& settings,
                                    const std::vector<trial>& trials, const answer_options& o,
                                    const config_runner& run) {
  tuning_answer out;
  const std::vector<std::uint64_t> search_seeds = seed_range(spec.seed, std::max<std::uint32_t>(1, spec.repeats));
  out.fresh_seeds = seed_range(spec.seed + fresh_seed_offset, std::max<std::uint32_t>(2, o.fresh_seeds));
  const auto configs = baseline_configs(settings);

  // Baselines on the search seeds.
  std::vector<config_job> jobs;
  for (const baseline_config& c : configs) {
    auto bspec = apply_baseline(spec, c);
    if (!bspec) return bspec.error();
    config_job job;
    job.spec = std::move(*bspec);
    job.role = "baseline " + c.name;
    job.eval.name = c.name;
    job.eval.baseline = c.name;
    for (const auto& [path, value] : c.sets) job.eval.params[path] = value;
    job.eval.seeds = search_seeds;
    jobs.push_back(std::move(job));
  }
  if (o.log) o.log("baselines " + std::string(pfc_only_baseline) + " and " + vendor_default_baseline);
  ROCELAB_RETURN_IF_ERROR(evaluate_jobs(jobs, settings.objective, o, run));
  for (const config_job& j : jobs) out.baselines.push_back(j.eval);

  // The recommendation: trials and baselines alike.
  std::vector<candidate> candidates;
  for (const trial& t : trials)
    if (t.evaluated) candidates.push_back({"", t.index, t.objective, t.feasible});
  for (const config_evaluation& b : out.baselines)
    candidates.push_back({b.baseline, 0, b.scored.objective, b.scored.evaluated && b.scored.feasible});
  const auto best = best_candidate(candidates);
  if (!best) return status(error_code::not_found, "no trial and no baseline met the constraints");
  const candidate& winner = candidates[*best];
  out.best_objective = winner.objective;
  std::vector<config_job> fresh;
  if (winner.baseline.empty()) {
    const trial* t = nullptr;
    for (const trial& x : trials)
      if (x.index == winner.trial_index) t = &x;
    out.best_trial = winner.trial_index;
    out.best_label = "trial " + std::to_string(winner.trial_index);
    out.best_params = trial_params(settings, t->values);
    out.best_values = t->values;
    out.best_metrics_json = t->metrics_json;
    out.best_at_edge = at_edge(settings, t->values);
    auto tspec = apply_trial(spec, settings, t->values);
    if (!tspec) return tspec.error().with_context(out.best_label);
    config_job job;
    job.spec = std::move(*tspec);
    job.role = "confirm " + out.best_label;
    job.eval.name = out.best_label;
    job.eval.trial_index = winner.trial_index;
    job.eval.params = out.best_params;
    job.eval.seeds = out.fresh_seeds;
    fresh.push_back(std::move(job));
  } else {
    out.best_baseline = winner.baseline;
    out.best_label = winner.baseline;
    for (const config_evaluation& b : out.baselines)
      if (b.baseline == winner.baseline) {
        out.best_params = b.params;
        out.best_metrics_json = b.scored.metrics_json;
      }
  }

  // Fresh seeds: the recommendation (when a trial) and every baseline.
  for (std::size_t i = 0; i < configs.size(); ++i) {
    config_job job;
    job.spec = jobs[i].spec;
    job.role = "confirm " + configs[i].name;
    job.eval = jobs[i].eval;
    job.eval.seeds = out.fresh_seeds;
    job.eval.scored = {};
    fresh.push_back(std::move(job));
  }
  if (o.log) o.log("confirming " + out.best_label + " and the baselines on " + std::to_string(out.fresh_seeds.size()) +
                   " fresh seeds");
  ROCELAB_RETURN_IF_ERROR(evaluate_jobs(fresh, settings.objective, o, run));
  for (const config_job& j : fresh) {
    if (!j.eval.baseline.empty()) out.baselines_fresh.push_back(j.eval);
    if (j.eval.name == out.best_label) out.best_fresh = j.eval;
  }
  out.best_ci = mean_ci95(out.best_fresh.objectives);
  for (const config_evaluation& b : out.baselines_fresh) {
    out.baseline_ci[b.baseline] = mean_ci95(b.objectives);
    std::vector<double> diff;
    for (std::size_t k = 0; k < b.objectives.size() && k < out.best_fresh.objectives.size(); ++k)
      diff.push_back(out.best_fresh.objectives[k] - b.objectives[k]);
    out.vs_baseline_ci[b.baseline] = mean_ci95(diff);
  }

  // The trade-off over every trial and baseline (search seeds, pooled summaries).
  struct source {
    pareto_point p;
    run_summary s;
  };
  std::vector<source> sources;
  for (const trial& t : trials) {
    if (!t.evaluated || t.metrics_json.empty()) continue;
    auto parsed = parse_summary_json(t.metrics_json);
    if (!parsed) continue;
    pareto_point p;
    p.label = "trial " + std::to_string(t.index);
    p.trial_index = t.index;
    p.params = trial_params(settings, t.values);
    sources.push_back({std::move(p), parsed->aggregate});
  }
  for (const config_evaluation& b : out.baselines) {
    auto parsed = parse_summary_json(b.scored.metrics_json);
    if (!parsed) continue;
    pareto_point p;
    p.label = b.baseline;
    p.baseline = b.baseline;
    p.params = b.params;
    sources.push_back({std::move(p), parsed->aggregate});
  }
  std::vector<run_summary> all;
  for (const source& s : sources) all.push_back(s.s);
  out.axes = tradeoff_axes_for(settings.objective, all);
  std::vector<std::pair<double, double>> xy;
  for (source& s : sources) {
    auto x = metric_value(s.s, out.axes.x);
    auto y = metric_value(s.s, out.axes.y);
    s.p.x = x ? *x : std::numeric_limits<double>::quiet_NaN();
    s.p.y = y ? *y : std::numeric_limits<double>::quiet_NaN();
    xy.emplace_back(s.p.x, s.p.y);
  }
  for (std::size_t i : pareto_front(xy)) sources[i].p.on_front = true;
  for (source& s : sources) out.pareto.push_back(std::move(s.p));
  return out;
}

std::string answer_json_text(const tuning_settings& settings, const tuning_answer& a) {
  nlohmann::json j;
  nlohmann::json baselines = nlohmann::json::object();
  for (const config_evaluation& b : a.baselines) {
    nlohmann::json row{{"params", params_json(b.params)},
                       {"objective", b.scored.objective},
                       {"feasible", b.scored.feasible},
                       {"seeds", b.seeds},
                       {"runs", b.run_ids},
                       {"summary", summary_of(b.scored.metrics_json)}};
    if (!b.scored.violated.empty()) row["violated"] = b.scored.violated;
    for (const config_evaluation& f : a.baselines_fresh)
      if (f.baseline == b.baseline)
        row["fresh"] = {{"seeds", f.seeds}, {"objectives", f.objectives}, {"runs", f.run_ids},
                        {"ci", ci_json(a.baseline_ci.at(b.baseline))}};
    baselines[b.baseline] = std::move(row);
  }
  j["baselines"] = std::move(baselines);
  nlohmann::json best{{"label", a.best_label},
                      {"params", params_json(a.best_params)},
                      {"objective", a.best_objective},
                      {"baseline", a.best_baseline.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.best_baseline)},
                      {"at_edge", a.best_at_edge},
                      {"ci", ci_json(a.best_ci)},
                      {"fresh", {{"seeds", a.best_fresh.seeds}, {"objectives", a.best_fresh.objectives},
                                 {"runs", a.best_fresh.run_ids}}},
                      {"summary", summary_of(a.best_metrics_json)}};
  if (a.best_trial) best["trial"] = *a.best_trial;
  for (const config_evaluation& b : a.baselines)
    if (b.baseline == a.best_baseline && !b.run_ids.empty() && b.run_ids.front() != 0) best["run"] = b.run_ids.front();
  nlohmann::json vs = nlohmann::json::object();
  for (const auto& [name, ci] : a.vs_baseline_ci) vs[name] = ci_json(ci);
  best["vs_baselines"] = std::move(vs);
  j["best"] = std::move(best);
  j["pareto_axes"] = {{"x", a.axes.x}, {"y", a.axes.y}};
  nlohmann::json front = nlohmann::json::array();
  nlohmann::json points = nlohmann::json::array();
  for (const pareto_point& p : a.pareto) {
    nlohmann::json row{{"label", p.label},
                       {"trial", p.trial_index ? nlohmann::json(*p.trial_index) : nlohmann::json(nullptr)},
                       {"baseline", p.baseline.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.baseline)},
                       {"params", params_json(p.params)},
                       {a.axes.x, std::isnan(p.x) ? nlohmann::json(nullptr) : nlohmann::json(p.x)},
                       {a.axes.y, std::isnan(p.y) ? nlohmann::json(nullptr) : nlohmann::json(p.y)}};
    if (p.on_front) front.push_back(row);
    row["on_front"] = p.on_front;
    points.push_back(std::move(row));
  }
  j["pareto"] = std::move(front);
  j["pareto_points"] = std::move(points);
  (void)settings;
  return j.dump();
}

std::string answer_text(const tuning_settings& settings, const tuning_answer& a) {
  std::string out;
  double pfc = 0, vendor = 0;
  for (const config_evaluation& b : a.baselines) {
    if (b.baseline == pfc_only_baseline) pfc = b.scored.objective;
    if (b.baseline == vendor_default_baseline) vendor = b.scored.objective;
  }
  if (a.best_baseline == pfc_only_baseline) {
    out += "PFC only wins: leave ECN off (objective " + fmt(a.best_objective) + "; vendor defaults " + fmt(vendor) +
           ", best ECN trial no better).\n";
  } else if (a.best_baseline == vendor_default_baseline) {
    std::string defaults;
    for (const auto& [path, value] : a.best_params)
      if (path != "switch.ecn.enabled" && path != "nic.dcqcn.enabled")
        defaults += (defaults.empty() ? "" : " ") + path.substr(path.rfind('.') + 1) + "=" + value;
    out += "The vendor defaults win: leave the tuned settings at their defaults (" + defaults + "; objective " +
           fmt(a.best_objective) + ", PFC only " + fmt(pfc) + ").\n";
  } else {
    out += "Tuned ECN wins: " + a.best_label + " (" + describe_values(settings, a.best_values) + "), objective " + fmt(a.best_objective) + " against PFC only " + fmt(pfc) + " and vendor defaults " +
           fmt(vendor) + ".\n";
  }
  out += "On " + std::to_string(a.best_ci.n) + " fresh seeds: " + a.best_label + " " + fmt(a.best_ci.mean) + " +- " +
         fmt(a.best_ci.half_width) + " (95% CI, Student t)";
  for (const auto& [name, ci] : a.baseline_ci)
    if (name != a.best_baseline) out += ", " + name + " " + fmt(ci.mean) + " +- " + fmt(ci.half_width);
  out += ".\n";
  // Paired on the fresh seeds: does the pick hold up against each baseline?
  for (const auto& [name, d] : a.vs_baseline_ci) {
    if (name == a.best_baseline) continue;
    const std::string range = fmt(d.mean) + ", 95% CI " + fmt(d.low) + " .. " + fmt(d.high);
    if (d.high < 0)
      out += "Against " + name + " on the fresh seeds: better by " + fmt(-d.mean) + " (difference " + range + ").\n";
    else if (d.low > 0)
      out += "Against " + name + " on the fresh seeds: worse (difference " + range +
             "): the search's pick does not hold up; prefer " + name + " or tune with more repeats.\n";
    else
      out += "Against " + name + " on the fresh seeds: not distinguishable (difference " + range + ").\n";
  }
  if (!a.best_at_edge.empty()) {
    out += "At the edge of its range: ";
    for (std::size_t i = 0; i < a.best_at_edge.size(); ++i) out += (i ? ", " : "") + a.best_at_edge[i];
    out += " -- the optimum may lie outside the searched range; widen it and tune again.\n";
  }
  return out;
}

}  // namespace rocelab::experiments

#include "rocelab/experiments/tuning/tuning_baselines.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>

#include "rocelab/experiments/calibration/calibration_store.hpp"
#include "rocelab/experiments/tuning/objective.hpp"
#include "rocelab/experiments/tuning/tuning_spec.hpp"
#include "rocelab/experiments/tuning/tuning_edges.hpp"
#include "rocelab/experiments/run/run_session.hpp"
#include "tuning/ci_json.hpp"
#include "rocelab/experiments/tuning/tuning_trials.hpp"

namespace rocelab::experiments {

nlohmann::json ci_json(const confidence_interval& ci) {
  return {{"level", 0.95}, {"method", "student_t"}, {"n", ci.n},         {"mean", ci.mean},
          {"stddev", ci.stddev}, {"half_width", ci.half_width}, {"low", ci.low}, {"high", ci.high}};
}

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
      // A run that ran to its end, whole or partial (store/run_ending.hpp), is reused.
      if (r.sweep != o.sweep ||
          (r.status != store::run_status::completed && r.status != store::run_status::partial))
        continue;
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
    auto session = run_session::begin(*o.db, nr);
    if (!session) return session.error().with_context(context);
    ROCELAB_RETURN_IF_ERROR(record_calibration(*o.db, session->id(), seeded).with_context(context));
    ROCELAB_RETURN_IF_ERROR(session->append_repeat(0, job.records[k]).with_context(context));
    auto ended = session->finish_ran(std::vector<const run_records*>{&job.records[k]});
    if (!ended) return ended.error().with_context(context);
    job.eval.run_ids[k] = session->id();
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

nlohmann::json comparison_json(const paired_comparison& c) {
  return {{"metric", c.metric}, {"answer_mean", c.mean_a}, {"baseline_mean", c.mean_b},
          {"difference", ci_json(c.difference)}, {"outcome", to_string(c.outcome)}};
}

nlohmann::json decision_json(const tuning_answer& a) {
  const tuning_decision& d = a.decision;
  nlohmann::json j{{"answer", d.answer}, {"rule", d.rule}, {"label", a.best_label}};
  if (a.contender_trial) {
    j["contender"] = {{"label", a.contender_fresh.name},
                      {"trial", *a.contender_trial},
                      {"params", params_json(a.contender_params)},
                      {"feasible", a.contender_fresh.scored.feasible},
                      {"fresh", {{"seeds", a.contender_fresh.seeds},
                                 {"objectives", a.contender_fresh.objectives},
                                 {"runs", a.contender_fresh.run_ids},
                                 {"ci", ci_json(mean_ci95(a.contender_fresh.objectives))}}}};
  } else {
    j["contender"] = nullptr;
  }
  nlohmann::json versus = nlohmann::json::object();
  for (const baseline_verdict& v : d.versus) {
    nlohmann::json metrics = nlohmann::json::array();
    for (const paired_comparison& c : v.metrics) metrics.push_back(comparison_json(c));
    versus[v.baseline] = {{"outcome", to_string(v.outcome)},
                          {"baseline_feasible", v.baseline_feasible},
                          {"objective", comparison_json(v.objective)},
                          {"metrics", std::move(metrics)}};
  }
  j["versus"] = std::move(versus);
  j["vendor_vs_pfc"] = d.vendor_vs_pfc ? comparison_json(*d.vendor_vs_pfc) : nlohmann::json(nullptr);
  return j;
}

std::string fmt(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}


// The trade-off over every trial and baseline (search seeds, pooled summaries), one point
// per distinct configuration: trials with the same applied values, or the same result on
// both axes, are one point; a baseline among them names it. Sets `axes`.
std::vector<pareto_point> distinct_points(const tuning_settings& settings, const std::vector<trial>& trials,
                                          const std::vector<config_evaluation>& baselines, tradeoff_axes& axes) {
  struct source {
    pareto_point p;
    run_summary s;
  };
  std::vector<source> sources;
  for (const config_evaluation& b : baselines) {
    auto parsed = parse_summary_json(b.scored.metrics_json);
    if (!parsed) continue;
    pareto_point p;
    p.label = b.baseline;
    p.baseline = b.baseline;
    p.params = b.params;
    sources.push_back({std::move(p), parsed->aggregate});
  }
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
  std::vector<run_summary> all;
  for (const source& s : sources) all.push_back(s.s);
  axes = tradeoff_axes_for(settings.objective, all);
  std::vector<pareto_point> points;
  const auto same_value = [](double a, double b) {
    return a == b || std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
  };
  for (source& s : sources) {
    auto x = metric_value(s.s, axes.x);
    auto y = metric_value(s.s, axes.y);
    s.p.x = x ? *x : std::numeric_limits<double>::quiet_NaN();
    s.p.y = y ? *y : std::numeric_limits<double>::quiet_NaN();
    // Baselines come first, so a trial equal to one joins the baseline's point.
    auto it = std::find_if(points.begin(), points.end(), [&](const pareto_point& q) {
      const bool same_config = q.params == s.p.params && q.baseline.empty() && s.p.baseline.empty();
      const bool same_result = std::isfinite(s.p.x) && std::isfinite(s.p.y) && same_value(q.x, s.p.x) &&
                               same_value(q.y, s.p.y);
      return same_config || same_result;
    });
    if (it == points.end() || (!s.p.baseline.empty() && !it->baseline.empty())) {
      points.push_back(std::move(s.p));
      continue;
    }
    it->same.push_back(s.p.label);
  }
  std::vector<std::pair<double, double>> xy;
  for (const pareto_point& p : points) xy.emplace_back(p.x, p.y);
  for (std::size_t i : pareto_front(xy)) points[i].on_front = true;
  return points;
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
  ROCELAB_RETURN_IF_ERROR(enough_trials_evaluated(trials));
  tuning_answer out;
  const std::vector<std::uint64_t> search_seeds = seed_range(spec.seed, search_seed_count(spec, settings));
  out.fresh_seeds = seed_range(spec.seed + fresh_seed_offset, std::max<std::uint32_t>(2, o.fresh_seeds));
  out.widened = settings.widened;
  const auto configs = baseline_configs(settings);

  // Baselines on the search seeds: the same seeds every trial ran.
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
  if (o.log) o.log("baselines " + std::string(pfc_only_baseline) + " and " + vendor_default_baseline + " on " +
                   std::to_string(search_seeds.size()) + " common seeds");
  ROCELAB_RETURN_IF_ERROR(evaluate_jobs(jobs, settings.objective, o, run));
  for (const config_job& j : jobs) out.baselines.push_back(j.eval);

  // The contender: the best feasible trial on the search seeds.
  std::vector<config_job> fresh;
  const trial* contender = best_trial(trials);
  if (contender) {
    out.contender_trial = contender->index;
    out.contender_objective = contender->objective;
    out.contender_params = trial_params(settings, contender->values);
    out.contender_values = contender->values;
    auto tspec = apply_trial(spec, settings, contender->values);
    if (!tspec) return tspec.error().with_context("trial " + std::to_string(contender->index));
    config_job job;
    job.spec = std::move(*tspec);
    job.eval.name = "trial " + std::to_string(contender->index);
    job.role = "confirm " + job.eval.name;
    job.eval.trial_index = contender->index;
    job.eval.params = out.contender_params;
    job.eval.seeds = out.fresh_seeds;
    fresh.push_back(std::move(job));
  }
  // Fresh seeds: the contender and every baseline, paired seed by seed.
  for (std::size_t i = 0; i < configs.size(); ++i) {
    config_job job;
    job.spec = jobs[i].spec;
    job.role = "confirm " + configs[i].name;
    job.eval = jobs[i].eval;
    job.eval.seeds = out.fresh_seeds;
    job.eval.scored = {};
    fresh.push_back(std::move(job));
  }
  if (o.log)
    o.log("confirming " + (contender ? "trial " + std::to_string(contender->index) + " and " : std::string()) +
          "the baselines on " + std::to_string(out.fresh_seeds.size()) + " fresh seeds");
  ROCELAB_RETURN_IF_ERROR(evaluate_jobs(fresh, settings.objective, o, run));
  std::optional<fresh_evidence> contender_evidence;
  std::vector<fresh_evidence> baseline_evidence;
  for (const config_job& j : fresh) {
    fresh_evidence e{j.eval.name, j.eval.baseline, j.eval.scored.feasible, j.eval.scored.violated,
                     j.eval.objectives, j.eval.summaries};
    if (j.eval.baseline.empty()) {
      out.contender_fresh = j.eval;
      contender_evidence = std::move(e);
    } else {
      out.baselines_fresh.push_back(j.eval);
      baseline_evidence.push_back(std::move(e));
    }
  }
  auto decision = decide(contender_evidence, baseline_evidence);
  if (!decision) return decision.error();
  out.decision = std::move(*decision);

  // The answer's fields: the contender's, or the winning baseline's.
  if (out.decision.answer == "tuned") {
    out.best_trial = contender->index;
    out.best_label = out.contender_fresh.name;
    out.best_objective = contender->objective;
    out.best_params = out.contender_params;
    out.best_values = contender->values;
    out.best_metrics_json = contender->metrics_json;
    out.best_fresh = out.contender_fresh;
    std::vector<std::string> bound_paths;
    for (const bound_note& n : at_physical_bound(spec, settings, contender->values)) {
      out.best_at_bound.push_back(n.text);
      bound_paths.push_back(n.path);
    }
    for (const std::string& path : at_edge(settings, contender->values))
      if (std::find(bound_paths.begin(), bound_paths.end(), path) == bound_paths.end()) out.best_at_edge.push_back(path);
  } else {
    out.best_baseline = out.decision.answer;
    out.best_label = out.decision.answer;
    for (const config_evaluation& b : out.baselines)
      if (b.baseline == out.best_baseline) {
        out.best_params = b.params;
        out.best_metrics_json = b.scored.metrics_json;
        out.best_objective = b.scored.objective;
      }
    for (const config_evaluation& b : out.baselines_fresh)
      if (b.baseline == out.best_baseline) out.best_fresh = b;
  }
  out.best_ci = mean_ci95(out.best_fresh.objectives);
  for (const config_evaluation& b : out.baselines_fresh) {
    out.baseline_ci[b.baseline] = mean_ci95(b.objectives);
    if (b.baseline == out.best_baseline) continue;
    out.vs_baseline_ci[b.baseline] = compare_paired("objective", out.best_fresh.objectives, b.objectives).difference;
  }
  out.pareto = distinct_points(settings, trials, out.baselines, out.axes);
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
  best["at_bound"] = a.best_at_bound;
  best["widened"] = a.widened;
  j["best"] = std::move(best);
  j["decision"] = decision_json(a);
  j["decision"]["text"] = answer_text(settings, a);
  j["pareto_axes"] = {{"x", a.axes.x}, {"y", a.axes.y}};
  nlohmann::json front = nlohmann::json::array();
  nlohmann::json points = nlohmann::json::array();
  for (const pareto_point& p : a.pareto) {
    nlohmann::json row{{"label", p.label},
                       {"trial", p.trial_index ? nlohmann::json(*p.trial_index) : nlohmann::json(nullptr)},
                       {"baseline", p.baseline.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.baseline)},
                       {"params", params_json(p.params)},
                       {a.axes.x, std::isnan(p.x) ? nlohmann::json(nullptr) : nlohmann::json(p.x)},
                       {a.axes.y, std::isnan(p.y) ? nlohmann::json(nullptr) : nlohmann::json(p.y)},
                       {"same", p.same}};
    if (p.on_front) front.push_back(row);
    row["on_front"] = p.on_front;
    points.push_back(std::move(row));
  }
  j["pareto"] = std::move(front);
  j["pareto_points"] = std::move(points);
  return j.dump();
}

std::string answer_sentence(const tuning_settings& settings, const tuning_answer& a) {
  const tuning_decision& d = a.decision;
  const std::string contender =
      a.contender_trial ? a.contender_fresh.name + " (" + describe_values(settings, a.contender_values) + ")" : "";
  const std::string on_fresh = " on " + std::to_string(a.fresh_seeds.size()) + " fresh seeds";
  const std::string why_not = a.contender_trial ? "the best tuned configuration, " + contender +
                                                      ", does not beat every baseline" + on_fresh
                                                : "no tuned configuration met the constraints";
  if (d.answer == "tuned")
    return "Run the tuned configuration " + contender + ": it beats PFC only and the vendor defaults" + on_fresh + ".";
  if (d.answer == pfc_only_baseline)
    return "PFC alone suffices here: keep ECN and DCQCN off (pfc_only); " + why_not + ".";
  std::string defaults;
  for (const auto& [path, value] : a.best_params) {
    if (path == "switch.ecn.enabled" || path == "nic.dcqcn.enabled") continue;
    auto number = field_number(path, value);
    const std::string shown = number && !integer_field(path) ? fmt(*number) : value;
    defaults += (defaults.empty() ? "" : " ") + path.substr(path.rfind('.') + 1) + "=" + shown;
  }
  return "Keep the vendor defaults (" + defaults + "): " +
         (d.vendor_vs_pfc ? std::string("they beat PFC only") : std::string("PFC only violates the constraints")) +
         ", and " + why_not + ".";
}

std::string answer_choice_words(const tuning_answer& a) {
  return a.best_baseline.empty()
             ? a.best_label + ", the tuned configuration that beat both baselines on fresh seeds"
             : "the baseline " + a.best_label + " (no tuned configuration beat every baseline on fresh seeds)";
}

std::string answer_evidence_text(const tuning_answer& a) {
  const tuning_decision& d = a.decision;
  const std::string on_fresh = " on " + std::to_string(a.fresh_seeds.size()) + " fresh seeds";
  std::string out;
  const auto range = [](const confidence_interval& ci) {
    return fmt(ci.mean) + ", 95% CI " + fmt(ci.low) + " .. " + fmt(ci.high);
  };
  for (const baseline_verdict& v : d.versus) {
    out += a.contender_fresh.name + " against " + v.baseline + ": ";
    if (!v.baseline_feasible) {
      out += v.baseline + " violates the constraints" + on_fresh;
    } else {
      out += "objective " + fmt(v.objective.mean_a) + " against " + fmt(v.objective.mean_b) + ", difference " +
             range(v.objective.difference) + ": " +
             (v.outcome == paired_outcome::tie ? std::string("not distinguishable") : to_string(v.outcome));
    }
    if (!v.metrics.empty()) out += "; " + describe_comparisons(v.metrics);
    out += ".\n";
  }
  if (d.vendor_vs_pfc && d.answer != "tuned")
    out += "vendor_default against pfc_only: difference " + range(d.vendor_vs_pfc->difference) + ": " +
           (d.vendor_vs_pfc->outcome == paired_outcome::tie ? std::string("not distinguishable")
                                                             : to_string(d.vendor_vs_pfc->outcome)) +
           ".\n";
  out += "Objective" + on_fresh + " (mean +- 95% CI, Student t): " + a.best_label + " " + fmt(a.best_ci.mean) + " +- " +
         fmt(a.best_ci.half_width);
  if (a.contender_trial && d.answer != "tuned") {
    const confidence_interval c = mean_ci95(a.contender_fresh.objectives);
    out += ", " + a.contender_fresh.name + " " + fmt(c.mean) + " +- " + fmt(c.half_width);
  }
  for (const auto& [name, ci] : a.baseline_ci)
    if (name != a.best_baseline) out += ", " + name + " " + fmt(ci.mean) + " +- " + fmt(ci.half_width);
  out += ".\n";
  for (const std::string& w : a.widened) out += "Range widened once: " + w + ".\n";
  for (const std::string& b : a.best_at_bound) out += b + ".\n";
  if (!a.best_at_edge.empty()) {
    out += "Still at the edge of its " + std::string(a.widened.empty() ? "" : "widened ") + "range: ";
    for (std::size_t i = 0; i < a.best_at_edge.size(); ++i) out += (i ? ", " : "") + a.best_at_edge[i];
    out += " -- the optimum may lie beyond it.\n";
  }
  return out;
}

std::string answer_text(const tuning_settings& settings, const tuning_answer& a) {
  return answer_sentence(settings, a) + "\n" + answer_evidence_text(a);
}

}  // namespace rocelab::experiments

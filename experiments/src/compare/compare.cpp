// The fabric comparison (compare.hpp): scenarios per fabric on the twin, metrics, cost,
// the scale sweep.

#include <atomic>
#include "rocelab/experiments/compare/compare.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <cstdio>
#include <cmath>
#include <memory>
#include <mutex>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "rocelab/common/units.hpp"
#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/tuning/objective.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/tuning/tuning.hpp"
#include "rocelab/fabric/twin/twin.hpp"
#include "rocelab/experiments/run/run_session.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::experiments {
namespace {

// mix: incast and background together (what roce-tuned is tuned on).
enum class scenario { allreduce, incast, background, mix };
const char* name_of(scenario s) {
  switch (s) {
    case scenario::allreduce: return "allreduce";
    case scenario::incast: return "incast";
    case scenario::background: return "background";
    case scenario::mix: return "incast+background";
  }
  return "allreduce";
}

// The spec with one workload section on.
experiment_spec only(const experiment_spec& spec, scenario s) {
  experiment_spec v = spec;
  v.workload.allreduce.enabled = s == scenario::allreduce && spec.workload.allreduce.enabled;
  v.workload.incast.enabled = (s == scenario::incast || s == scenario::mix) && spec.workload.incast.enabled;
  v.workload.background.enabled = (s == scenario::background || s == scenario::mix) && spec.workload.background.enabled;
  return v;
}

bool has(const experiment_spec& spec, scenario s) {
  switch (s) {
    case scenario::allreduce: return spec.workload.allreduce.enabled;
    case scenario::incast: return spec.workload.incast.enabled;
    case scenario::background: return spec.workload.background.enabled;
    case scenario::mix: return spec.workload.incast.enabled || spec.workload.background.enabled;
  }
  return false;
}


// A fabric to run: its profile and, for roce-tuned, the tuned spec values.
struct fabric_plan {
  std::string name;
  fabric_profile_file profile;
  std::map<std::string, std::string> overrides;  // spec path -> value
  std::string tuning_note;
};

// The spec and twin config of `plan` for `spec` with `seed`.
result<fabric::twin::twin_config> config_for(const experiment_spec& base, const fabric_plan& plan, std::uint64_t seed,
                                             experiment_spec* resolved) {
  experiment_spec spec = base;
  const auto& p = plan.profile;
  // The profile's buffer per port, times the ports of the largest switch of this topology:
  // a switch of the class with as many ports in use as the topology gives it.
  spec.sw.buffer_bytes = std::max<std::int64_t>(
      p.sw.buffer_bytes / std::max<std::uint32_t>(1, p.sw.ports) * max_ports_per_switch(spec.topology), 64 * 1024);
  spec.sw.cell_bytes = p.sw.cell_bytes;
  spec.fabric.link = fabric::to_string(p.sw.link);
  spec.fabric.routing = fabric::to_string(p.routing);
  spec.fabric.switch_latency_ns = p.sw.port_to_port_latency_ns;
  spec.fabric.ib_vl_buffer_bytes = p.ib_vl_buffer_bytes;
  if (p.sw.link == fabric::link_layer::uec) {
    // The same workload on Ultra Ethernet: the base spec's RoCE settings (DCQCN, PFC) are
    // the RoCE fabrics' and do not carry over (a UEC spec that sets them is an error).
    std::erase_if(spec.origins, [](const auto& kv) {
      return kv.first.rfind("nic.dcqcn.", 0) == 0 || kv.first.rfind("switch.pfc.", 0) == 0;
    });
  }
  for (const auto& [path, value] : plan.overrides)
    ROCELAB_RETURN_IF_ERROR(set_field(spec, path, value, "compare " + plan.name).with_context(plan.name + ": " + path));
  auto c = to_twin_config(spec, seed);
  if (!c.ok()) return std::move(c).error().with_context(plan.name);
  fabric::twin::twin_config cfg = std::move(c).value();
  if (resolved != nullptr) *resolved = std::move(spec);
  return cfg;
}

struct scenario_run {
  std::vector<run_records> repeats;
  std::vector<std::uint64_t> seeds;
  double rate_bps = 0;  // host links
  fabric::twin::twin_config config;
};

status cancelled_status() { return status(error_code::cancelled, "compare: cancelled"); }

// One twin run of `resolved` at `seed`: here, or through the settings' runner.
result<run_records> run_one(const experiment_spec& resolved, fabric::twin::twin_config cfg, std::uint64_t seed,
                            const compare_settings& cs) {
  if (cs.runner) {
    experiment_spec one = resolved;
    one.seed = seed;
    one.repeats = 1;
    auto ran = cs.runner(one);
    if (!ran.ok()) return std::move(ran).error();
    if (ran->repeats.size() != 1)
      return status(error_code::internal, "the runner returned " + std::to_string(ran->repeats.size()) + " repeats for one");
    return std::move(ran->repeats.front());
  }
  auto load = make_workload(resolved, seed);
  if (!load.ok()) return std::move(load).error();
  cfg.cancel_requested = cs.cancel_requested;
  return fabric::twin::run_twin(cfg, **load);
}

// The records of a scenario's runs, made ahead (the scale sweep's parallel runs), by seed.
using made_runs = std::map<std::uint64_t, result<run_records>>;

result<scenario_run> run_scenario(const experiment_spec& spec, const fabric_plan& plan, scenario s,
                                  store::run_store* store, std::vector<std::int64_t>& run_ids,
                                  const compare_settings& cs, std::uint32_t seeds,
                                  std::optional<std::int64_t> sweep = std::nullopt, made_runs* made = nullptr) {
  const std::function<bool()>& cancel = cs.cancel_requested;
  scenario_run out;
  const experiment_spec variant = only(spec, s);
  for (std::uint32_t i = 0; i < std::max<std::uint32_t>(1, seeds); ++i) {
    const std::uint64_t seed = spec.seed + i;
    experiment_spec resolved;
    auto cfg = config_for(variant, plan, seed, &resolved);
    if (!cfg.ok()) return std::move(cfg).error();
    if (cancel && cancel()) return cancelled_status();
    result<run_records> rec = status(error_code::internal, "not run");
    if (made != nullptr && made->contains(seed))
      rec = std::move(made->at(seed));
    else
      rec = run_one(resolved, *cfg, seed, cs);
    if (!rec.ok()) return std::move(rec).error().with_context(plan.name + " " + name_of(s));
    // A cancelled twin run returns its records so far: not a result to compare or store.
    if (cancel && cancel()) return cancelled_status();
    if (store != nullptr) {
      store::new_run nr;
      nr.name = "compare/" + plan.name + "/" + name_of(s);
      nr.backend = "twin";
      nr.seed = seed;
      nr.spec_yaml = to_yaml(resolved);
      nr.parameters = plan.overrides;
      nr.sweep = sweep;
      nr.parameters["compare.fabric"] = plan.name;
      nr.parameters["compare.profile"] = plan.profile.sw.name;
      nr.parameters["compare.scenario"] = name_of(s);
      nr.parameters["fabric.link"] = fabric::to_string(cfg->fabric.link);
      nr.parameters["fabric.routing"] = fabric::to_string(cfg->fabric.routing);
      nr.parameters["fabric.congestion"] = fabric::to_string(cfg->fabric.congestion);
      auto session = run_session::begin(*store, nr);
      if (!session.ok()) return std::move(session).error().with_context("storing " + nr.name);
      ROCELAB_RETURN_IF_ERROR(session->append_repeat(0, *rec).with_context("storing " + nr.name));
      if (auto ending = session->finish_ran(std::vector<const run_records*>{&*rec}); !ending)
        return std::move(ending).error().with_context("storing " + nr.name);
      run_ids.push_back(session->id());
    }
    out.config = *cfg;
    out.rate_bps = cfg->topology.link_gbps * 1e9;
    out.repeats.push_back(std::move(rec).value());
    out.seeds.push_back(seed);
  }
  return out;
}

std::vector<const run_records*> pointers(const scenario_run& r) {
  std::vector<const run_records*> v;
  for (const auto& x : r.repeats) v.push_back(&x);
  return v;
}

// Utilisation of the switch ports that carried traffic: tx bytes over the run against
// the port's rate (host links at link_gbps; leaf uplinks and spine ports at the uplink rate).
void link_utilisation(const scenario_run& r, double& mean, double& max) {
  const auto& t = r.config.topology;
  const bool ls = t.type == fabric::twin::topology_config::kind::leaf_spine;
  const std::uint32_t hpl = ls ? t.hosts / t.leaves : t.hosts;
  const double host_bps = t.link_gbps * 1e9;
  const double up_bps =
      ls ? (t.spine_link_gbps > 0 ? t.spine_link_gbps : hpl * t.link_gbps / (t.oversubscription * t.spines)) * 1e9 : 0;
  const std::uint32_t switches = ls ? t.leaves + t.spines : 1;
  double sum = 0;
  int n = 0;
  max = 0;
  for (const auto& rec : r.repeats) {
    if (rec.simulated_ns <= 0) continue;
    for (const auto& c : rec.counters) {
      if (c.name != "tx_bytes" || c.device >= switches || c.value == 0) continue;
      const bool uplink = ls && (c.device >= t.leaves || c.port >= hpl);
      const double bps = uplink ? up_bps : host_bps;
      const double u = static_cast<double>(c.value) * 8 / (bps * static_cast<double>(rec.simulated_ns) / 1e9);
      sum += u;
      ++n;
      max = std::max(max, u);
    }
  }
  mean = n > 0 ? sum / n : 0;
}

void add_totals(fabric_metrics& m, const scenario_run& r) {
  for (const auto& rec : r.repeats) {
    m.pause_frames += rec.totals.pfc_pause_frames;
    m.paused_ns += rec.totals.paused_ns;
    m.pause_intervals += rec.pauses.size();
    m.drops += rec.totals.drops;
    m.retransmits += rec.totals.retransmits;
    m.trims += rec.totals.trims;
    m.ce_marked += rec.totals.ce_marked;
    m.cnps += rec.totals.cnps;
    for (const auto& f : rec.flows) m.incomplete_flows += f.completed() ? 0 : 1;
  }
}

// roce-tuned: `rocelab tune`'s sweep (tuning.hpp) over the ECN thresholds, Kmin and Kmax
// (log scale, 5 KB .. 1.28 MB per 100 Gb/s of link, Kmax at least Kmin) and Pmax (0.01 ..
// 1, log), on the incast and background workloads together (what ECN thresholds trade
// off: queueing delay of small messages against an incast's throughput). Objective: p99
// slowdown over all their flows, subject to no drops and every flow completing.
tuning_settings roce_tuning(const experiment_spec& spec, const std::string& fabric, const compare_settings& cs) {
  const double per100 = spec.topology.link_gbps / 100.0;
  tuning_settings ts;
  ts.name = "compare/" + fabric;
  ts.parameters = {
      {"switch.ecn.kmin_bytes", 5'000 * per100, 1'280'000 * per100, true, true, "", 0},
      {"switch.ecn.kmax_bytes", 20'000 * per100, 5'120'000 * per100, true, true, "switch.ecn.kmin_bytes", 0},
      {"switch.ecn.pmax", 0.01, 1.0, true, false, "", 0},
  };
  ts.objective.terms = {{"slowdown_p99", 1.0}};
  ts.objective.constraints = {{"drops", std::nullopt, 0.0}};
  ts.method = cs.tune_method;
  ts.budget = std::max<std::uint32_t>(1, cs.tune_budget);
  ts.seed = spec.seed;
  return ts;
}

// The tuning trials roce-tuned runs (none when the spec has nothing to tune for).
std::uint32_t roce_tuning_trials(const experiment_spec& spec, const std::string& fabric, const compare_settings& cs) {
  return has(spec, scenario::mix) ? planned_trials(roce_tuning(spec, fabric, cs)) : 0;
}

// Numbers the progress lines "step i of n: ..." against the total compare_steps() gave.
class step_counter {
 public:
  step_counter(std::uint32_t total, const compare_progress& progress) : total_(total), progress_(progress) {}
  void operator()(const std::string& what) {
    ++done_;
    if (progress_) progress_("step " + std::to_string(done_) + " of " + std::to_string(total_) + ": " + what);
  }

 private:
  std::uint32_t total_;
  std::uint32_t done_ = 0;
  const compare_progress& progress_;
};

result<std::map<std::string, std::string>> tune_roce(const experiment_spec& spec, const fabric_plan& base,
                                                     const compare_settings& cs, store::run_store* store,
                                                     std::vector<std::int64_t>& run_ids, std::string& note,
                                                     step_counter& step) {
  if (!has(spec, scenario::mix)) {
    note = "not tuned: the spec has neither an incast nor a background workload to tune for";
    return std::map<std::string, std::string>{};
  }
  const tuning_settings ts = roce_tuning(spec, base.name, cs);
  const std::uint32_t planned = planned_trials(ts);
  ROCELAB_RETURN_IF_ERROR(validate(ts).with_context("roce-tuned"));
  auto overrides_of = [&](const std::vector<double>& values) {
    const std::vector<double> applied = applied_values(ts, values);
    std::map<std::string, std::string> o{{"switch.ecn.enabled", "true"}};
    for (std::size_t i = 0; i < ts.parameters.size(); ++i) {
      char text[32];
      if (ts.parameters[i].integer)
        std::snprintf(text, sizeof text, "%lld", static_cast<long long>(std::llround(applied[i])));
      else
        std::snprintf(text, sizeof text, "%.4g", applied[i]);
      o[ts.parameters[i].path] = text;
    }
    return o;
  };
  // The sweep and its trials go to the store as `rocelab tune` keeps them.
  std::optional<std::int64_t> sweep;
  if (store != nullptr) {
    store::sweep_info si;
    si.name = ts.name;
    si.method = to_string(ts.method);
    si.spec_yaml = to_yaml(spec);
    si.budget = ts.budget;
    si.started_unix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
    auto id = store->begin_sweep(si);
    if (!id.ok()) return std::move(id).error().with_context("storing the roce-tuned sweep");
    sweep = *id;
  }
  const trial_evaluator evaluate = [&](std::uint32_t index, const std::vector<double>& values, trial_payload&) {
    trial t;
    t.index = index;
    t.values = values;
    fabric_plan plan = base;
    plan.overrides = overrides_of(values);
    plan.name = base.name + "-trial" + std::to_string(index);
    auto r = run_scenario(spec, plan, scenario::mix, store, run_ids, cs, std::max<std::uint32_t>(1, spec.repeats), sweep);
    if (!r.ok()) {
      t.error = r.error().message();
      return t;
    }
    if (store != nullptr && !run_ids.empty()) t.run_id = run_ids.back();
    std::vector<run_summary> each;
    for (std::size_t i = 0; i < r->repeats.size(); ++i) each.push_back(summarize({&r->repeats[i]}, {r->seeds[i]}));
    auto sc = score(ts.objective, each);
    if (!sc.ok()) {
      t.error = sc.error().message();
      return t;
    }
    t.evaluated = true;
    t.objective = sc->objective;
    t.feasible = sc->feasible;
    t.margins = sc->margins;
    t.violated = sc->violated;
    return t;
  };
  std::atomic<bool> stop{false};
  sweep_hooks hooks;
  hooks.stop = &stop;
  hooks.on_trial = [&](trial& t, trial_payload&) {
    if (cs.cancel_requested && cs.cancel_requested()) stop = true;
    if (sweep) {
      store::trial_record tr;
      tr.sweep = *sweep;
      tr.index = t.index;
      const std::vector<double> applied = applied_values(ts, t.values);
      for (std::size_t i = 0; i < ts.parameters.size(); ++i) tr.params[ts.parameters[i].path] = applied[i];
      tr.objective = t.objective;
      tr.feasible = t.evaluated && t.feasible;
      if (t.run_id != 0) tr.run = t.run_id;
      ROCELAB_RETURN_IF_ERROR(store->add_trial(tr).with_context("storing a roce-tuned trial"));
    }
    const auto o = overrides_of(t.values);
    char line[200];
    std::snprintf(line, sizeof line, "%s: trial %u/%u kmin %s B, kmax %s B, pmax %s: p99 slowdown %.3f%s",
                  base.name.c_str(), t.index + 1, planned, o.at("switch.ecn.kmin_bytes").c_str(),
                  o.at("switch.ecn.kmax_bytes").c_str(), o.at("switch.ecn.pmax").c_str(), t.objective,
                  !t.evaluated ? " (failed)" : t.feasible ? "" : " (infeasible)");
    step(line);
    return status::success();
  };
  auto trials = run_sweep(ts, evaluate, {}, hooks);
  if (!trials.ok()) return std::move(trials).error().with_context("roce-tuned");
  if (stop) return cancelled_status();
  const trial* best = best_trial(*trials);
  note = std::string("rocelab tune's ") + to_string(ts.method) + " search, " + std::to_string(ts.budget) +
         " trials over switch.ecn.kmin_bytes, kmax_bytes, pmax on the incast and background workloads together, "
         "objective " + describe(ts.objective);
  if (best == nullptr) {
    note += "; no trial was feasible, so the spec's thresholds are kept";
    return std::map<std::string, std::string>{};
  }
  char obj[48];
  std::snprintf(obj, sizeof obj, "%.3f", best->objective);
  note += "; best trial " + std::to_string(best->index + 1) + " (objective " + obj + ")";
  return overrides_of(best->values);
}

result<fabric_plan> plan_for(const std::string& fabric, const compare_settings& settings) {
  const auto it = settings.profiles.find(fabric);
  if (it == settings.profiles.end())
    return status(error_code::invalid_argument,
                  "fabric '" + fabric + "': no profile (ib, roce-tuned, roce-default, or a name under compare.profiles)");
  fabric_plan p;
  p.name = fabric;
  p.profile = it->second;
  return p;
}

}  // namespace

const std::vector<std::string>& compare_metric_names() {
  static const std::vector<std::string> names{"allreduce.busbw_gbps", "allreduce.algbw_gbps", "allreduce.time_ns",
                                              "usd_per_busbw_gbps",   "incast.fct_p50_ns",    "incast.fct_p99_ns",
                                              "small.fct_p50_ns",     "small.fct_p99_ns"};
  return names;
}

std::optional<metric_verdict> judge(const std::vector<fabric_metrics>& fabrics, const std::string& metric,
                                    const std::string& label, bool higher_better, double tie_tolerance) {
  const fabric_metrics* best = nullptr;
  for (const auto& m : fabrics) {
    const auto it = m.ci.find(metric);
    if (it == m.ci.end() || it->second.n == 0) continue;
    const double v = it->second.mean;
    if (best == nullptr || (higher_better ? v > best->ci.at(metric).mean : v < best->ci.at(metric).mean)) best = &m;
  }
  if (best == nullptr) return std::nullopt;
  metric_verdict out;
  out.metric = metric;
  out.label = label;
  out.higher_better = higher_better;
  out.tie_tolerance = tie_tolerance;
  out.best = best->fabric;
  const std::vector<double>& best_values = best->per_seed.at(metric);
  for (const auto& m : fabrics) {
    if (&m == best || !m.per_seed.contains(metric)) continue;
    // Paired over the seeds both ran: the seed's own variation cancels.
    std::vector<double> diff;
    const std::vector<double>& values = m.per_seed.at(metric);
    for (std::size_t i = 0; i < m.seeds.size() && i < values.size(); ++i)
      for (std::size_t j = 0; j < best->seeds.size() && j < best_values.size(); ++j)
        if (m.seeds[i] == best->seeds[j]) diff.push_back(values[i] - best_values[j]);
    const confidence_interval ci = mean_ci95(diff);
    out.vs_best[m.fabric] = ci;
    const double sliver = tie_tolerance * std::abs(best->ci.at(metric).mean);
    if (ci.n < 2 || (ci.low <= 0 && ci.high >= 0) || std::abs(ci.mean) <= sliver) out.tied.push_back(m.fabric);
  }
  return out;
}

namespace {

// A metric's value in its report unit: ns as us, Gb/s, USD per GPU per Gb/s.
std::string metric_value_text(const std::string& metric, double v) {
  char b[64];
  if (metric.ends_with("_ns"))
    std::snprintf(b, sizeof b, "%.1f us", v / 1e3);
  else if (metric.starts_with("usd_"))
    std::snprintf(b, sizeof b, "$%.2f", v);
  else
    std::snprintf(b, sizeof b, "%.1f Gb/s", v);
  return b;
}

std::string ci_text(const std::string& metric, const confidence_interval& ci) {
  return metric_value_text(metric, ci.mean) + " (95% CI " + metric_value_text(metric, ci.low) + " .. " +
         metric_value_text(metric, ci.high) + ", " + std::to_string(ci.n) + " seeds)";
}

}  // namespace

std::string verdict_text(const metric_verdict& v, const std::vector<fabric_metrics>& fabrics) {
  const fabric_metrics* best = nullptr;
  for (const auto& m : fabrics)
    if (m.fabric == v.best) best = &m;
  if (best == nullptr || !best->ci.contains(v.metric)) return v.label + ": -";
  auto diff = [&](const std::string& other) {
    const confidence_interval& d = v.vs_best.at(other);
    char b[200];
    std::snprintf(b, sizeof b, "%s - %s = %s, 95%% CI %s .. %s over %zu common seeds", other.c_str(), v.best.c_str(),
                  metric_value_text(v.metric, d.mean).c_str(), metric_value_text(v.metric, d.low).c_str(),
                  metric_value_text(v.metric, d.high).c_str(), d.n);
    return std::string(b);
  };
  std::string s = v.label + ": ";
  if (v.tie()) {
    s += "tie between " + v.best;
    for (const auto& t : v.tied) s += (&t == &v.tied.back() ? " and " : ", ") + t;
    char tolerance[32];
    std::snprintf(tolerance, sizeof tolerance, "%g%%", 100 * v.tie_tolerance);
    s += ": the paired difference's 95% CI includes zero or its mean is within " + std::string(tolerance) + " of " + v.best + "'s mean (" +
         v.best + " " + ci_text(v.metric, best->ci.at(v.metric));
    for (const auto& t : v.tied) s += "; " + diff(t);
    s += ")";
  } else {
    s += v.best + ", " + ci_text(v.metric, best->ci.at(v.metric));
  }
  for (const auto& [other, d] : v.vs_best)
    if (std::find(v.tied.begin(), v.tied.end(), other) == v.tied.end()) s += "; " + diff(other);
  return s;
}

std::uint32_t compare_steps(const experiment_spec& spec, const compare_settings& settings) {
  std::uint32_t steps = 0;
  for (const std::string& f : settings.fabrics) {
    if (f == "roce-tuned") steps += roce_tuning_trials(spec, f, settings);
    for (const scenario s : {scenario::allreduce, scenario::incast, scenario::background}) steps += has(spec, s) ? 1 : 0;
  }
  return steps + static_cast<std::uint32_t>(settings.scale_hosts.size() * settings.fabrics.size());
}

result<compare_result> run_compare(const experiment_spec& spec, const compare_settings& settings,
                                   store::run_store* store, const compare_progress& progress) {
  ROCELAB_RETURN_IF_ERROR(validate(spec));
  if (settings.fabrics.empty()) return status(error_code::invalid_argument, "compare: no fabrics");
  if (!(settings.compute_ms_per_step >= 0)) return status(error_code::invalid_argument, "compare: compute_ms_per_step must be >= 0");
  if (!(settings.tie_tolerance >= 0 && settings.tie_tolerance < 1))
    return status(error_code::invalid_argument, "compare: tie_tolerance must be in [0, 1)");
  if (settings.seeds < 3)
    return status(error_code::invalid_argument, "compare: seeds is " + std::to_string(settings.seeds) +
                                                    "; a fabric is judged on at least 3 seeds (one seed cannot tell a "
                                                    "difference from noise)");
  const std::uint32_t seeds = std::max(spec.repeats, settings.seeds);
  step_counter step(compare_steps(spec, settings), progress);
  compare_result out;
  out.name = spec.name;
  out.hosts = spec.topology.hosts;
  out.link_gbps = spec.topology.link_gbps;
  out.settings = settings;
  out.seeds = seeds;
  std::vector<fabric_plan> plans;
  for (const std::string& f : settings.fabrics) {
    auto plan = plan_for(f, settings);
    if (!plan.ok()) return std::move(plan).error();
    fabric_metrics m;
    m.fabric = f;
    if (f == "roce-tuned") {
      if (plan->profile.sw.link != fabric::link_layer::roce)
        return status(error_code::invalid_argument, "roce-tuned: its profile must be a RoCE switch");
      auto tuned = tune_roce(spec, *plan, settings, store, m.run_ids, plan->tuning_note, step);
      if (!tuned.ok()) return std::move(tuned).error();
      plan->overrides = std::move(tuned).value();
    }
    plans.push_back(*plan);
    const fabric_plan& p = plans.back();
    m.profile = p.profile.sw.name;
    m.link = fabric::to_string(p.profile.sw.link);
    m.routing = fabric::to_string(p.profile.routing);
    m.settings = p.overrides;
    m.tuning_note = p.tuning_note;
    for (const scenario s : {scenario::allreduce, scenario::incast, scenario::background}) {
      if (!has(spec, s)) continue;
      step(f + ": " + name_of(s));
      auto r = run_scenario(spec, p, s, store, m.run_ids, settings, seeds);
      if (!r.ok()) return std::move(r).error();
      m.seeds = r->seeds;
      m.congestion = fabric::to_string(r->config.fabric.congestion);
      add_totals(m, *r);
      if (s == scenario::allreduce) {
        const run_summary sum = summarize(pointers(*r), r->seeds);
        if (sum.allreduce) {
          m.has_allreduce = true;
          m.algbw_gbps = sum.allreduce->algbw_gbps;
          m.busbw_gbps = sum.allreduce->busbw_gbps;
          m.allreduce_time_ns = sum.allreduce->time_mean_ns;
          const double comm_ms = m.allreduce_time_ns / 1e6;
          m.step_ms = settings.compute_ms_per_step + comm_ms;
          m.comm_share = m.step_ms > 0 ? comm_ms / m.step_ms : 0;
          m.mfu_factor = m.step_ms > 0 ? settings.compute_ms_per_step / m.step_ms : 0;
          for (std::size_t i = 0; i < r->repeats.size(); ++i) {
            const run_summary one = summarize({&r->repeats[i]}, {r->seeds[i]});
            m.per_seed["allreduce.busbw_gbps"].push_back(one.allreduce ? one.allreduce->busbw_gbps : 0);
            m.per_seed["allreduce.algbw_gbps"].push_back(one.allreduce ? one.allreduce->algbw_gbps : 0);
            m.per_seed["allreduce.time_ns"].push_back(one.allreduce ? one.allreduce->time_mean_ns : 0);
          }
        }
        link_utilisation(*r, m.link_util_mean, m.link_util_max);
      } else {
        // Incast: its flows; background: the small messages under it.
        const std::string prefix = s == scenario::incast ? "incast" : "small";
        auto wanted = [&](const flow_record& fl) {
          return s == scenario::incast ? fl.kind == workload_kind::incast
                                       : fl.bytes <= static_cast<std::uint64_t>(settings.small_message_bytes);
        };
        std::vector<flow_record> flows;
        for (const auto& rec : r->repeats) {
          std::vector<flow_record> mine;
          for (const auto& fl : rec.flows)
            if (wanted(fl)) mine.push_back(fl);
          const flow_stats one = flow_statistics(mine);
          m.per_seed[prefix + ".fct_p50_ns"].push_back(static_cast<double>(one.fct_p50_ns));
          m.per_seed[prefix + ".fct_p99_ns"].push_back(static_cast<double>(one.fct_p99_ns));
          flows.insert(flows.end(), mine.begin(), mine.end());
        }
        const flow_stats st = flow_statistics(flows);
        std::vector<double>& cdf = s == scenario::incast ? m.incast_fct_us : m.small_fct_us;
        for (const auto& fl : flows)
          if (fl.completed()) cdf.push_back(static_cast<double>(fl.fct_ns) / 1e3);
        std::sort(cdf.begin(), cdf.end());
        if (s == scenario::incast) {
          m.has_incast = true;
          m.incast_fct_p50_ns = st.fct_p50_ns;
          m.incast_fct_p99_ns = st.fct_p99_ns;
        } else {
          m.has_background = true;
          m.small_messages = st.flows;
          m.small_fct_p50_ns = st.fct_p50_ns;
          m.small_fct_p99_ns = st.fct_p99_ns;
        }
      }
    }
    auto cost = topology_cost(p.profile, spec.topology);
    if (!cost.ok()) return std::move(cost).error().with_context(f);
    m.cost = *cost;
    m.usd_per_busbw_gbps = m.busbw_gbps > 0 ? m.cost.per_gpu_usd / m.busbw_gbps : 0;
    if (m.has_allreduce)
      for (const double bw : m.per_seed["allreduce.busbw_gbps"])
        m.per_seed["usd_per_busbw_gbps"].push_back(bw > 0 ? m.cost.per_gpu_usd / bw : 0);
    for (const auto& [metric, values] : m.per_seed) m.ci[metric] = mean_ci95(values);
    out.fabrics.push_back(std::move(m));
  }
  for (const auto& [metric, label, higher] :
       {std::tuple<const char*, const char*, bool>{"allreduce.busbw_gbps", "highest all-reduce bus bandwidth", true},
        {"usd_per_busbw_gbps", "lowest cost per delivered Gb/s of bus bandwidth", false},
        {"incast.fct_p99_ns", "lowest incast FCT p99", false},
        {"small.fct_p99_ns", "lowest small-message FCT p99 under background", false}})
    if (auto v = judge(out.fabrics, metric, label, higher, settings.tie_tolerance)) out.verdicts.push_back(std::move(*v));

  // Scale sweep: the all-reduce alone on a leaf-spine of each size.
  if (!settings.scale_hosts.empty()) {
    if (!spec.workload.allreduce.enabled)
      return status(error_code::invalid_argument, "compare.scale_hosts: the sweep runs the spec's all-reduce, which it lacks");
    // The sweep's specs first; with parallelism, their runs go at once and are stored and
    // reported below in order, as if run one by one.
    std::vector<experiment_spec> scale_specs;
    for (const std::uint32_t hosts : settings.scale_hosts) {
      const std::uint32_t hpl = settings.scale_hosts_per_leaf;
      if (hpl == 0 || hosts < 2 * hpl || hosts % hpl != 0)
        return status(error_code::invalid_argument, "compare.scale_hosts: " + std::to_string(hosts) +
                                                        " is not a multiple (>= 2x) of scale_hosts_per_leaf " +
                                                        std::to_string(hpl));
      experiment_spec s = only(spec, scenario::allreduce);
      s.topology.type = "leaf_spine";
      s.topology.hosts = hosts;
      s.topology.leaves = hosts / hpl;
      s.topology.spines = std::max<std::uint32_t>(
          1, static_cast<std::uint32_t>(std::lround(hpl / std::max(settings.scale_oversubscription, 1e-9))));
      s.topology.spine_link_gbps = 0;
      s.topology.oversubscription = static_cast<double>(hpl) / s.topology.spines;
      s.workload.allreduce.ranks = hosts;
      s.workload.allreduce.rank_hosts.clear();
      s.workload.allreduce.iterations = 1;
      if (settings.scale_allreduce_bytes > 0) s.workload.allreduce.bytes = settings.scale_allreduce_bytes;
      scale_specs.push_back(std::move(s));
    }
    std::vector<made_runs> made(scale_specs.size() * plans.size());
    if (settings.parallelism > 1) {
      std::mutex made_lock;
      const auto per_seed = static_cast<std::uint32_t>(made.size());
      parallel_for(per_seed * seeds, settings.parallelism, [&](std::uint32_t job) {
        const std::uint32_t k = job % per_seed;
        const experiment_spec variant = only(scale_specs[k / plans.size()], scenario::allreduce);
        const fabric_plan& plan = plans[k % plans.size()];
        const std::uint64_t seed = variant.seed + job / per_seed;
        experiment_spec resolved;
        auto cfg = config_for(variant, plan, seed, &resolved);
        if (!cfg.ok() || (settings.cancel_requested && settings.cancel_requested())) return;  // run_scenario says why
        auto ran = run_one(resolved, *cfg, seed, settings);
        const std::scoped_lock lock(made_lock);
        made[k].emplace(seed, std::move(ran));
      });
    }
    for (std::size_t h = 0; h < scale_specs.size(); ++h) {
      const experiment_spec& s = scale_specs[h];
      const std::uint32_t hosts = s.topology.hosts;
      scale_point pt;
      pt.hosts = hosts;
      pt.allreduce_bytes = s.workload.allreduce.bytes;
      std::vector<fabric_metrics> at_scale;  // per-seed cost per Gb/s, for judge()
      for (std::size_t i = 0; i < plans.size(); ++i) {
        step(plans[i].name + ": scale " + std::to_string(hosts) + " hosts");
        auto r = run_scenario(s, plans[i], scenario::allreduce, store, out.fabrics[i].run_ids, settings, seeds,
                              std::nullopt, &made[h * plans.size() + i]);
        if (!r.ok()) return std::move(r).error().with_context("scale " + std::to_string(hosts));
        const run_summary sum = summarize(pointers(*r), r->seeds);
        const double bw = sum.allreduce ? sum.allreduce->busbw_gbps : 0;
        auto c = topology_cost(plans[i].profile, s.topology);
        if (!c.ok()) return std::move(c).error().with_context(plans[i].name + ", scale " + std::to_string(hosts));
        pt.busbw_gbps[plans[i].name] = bw;
        pt.cost_per_gpu_usd[plans[i].name] = c->per_gpu_usd;
        pt.usd_per_busbw_gbps[plans[i].name] = bw > 0 ? c->per_gpu_usd / bw : 0;
        pt.cost[plans[i].name] = *c;
        fabric_metrics fm;
        fm.fabric = plans[i].name;
        fm.seeds = r->seeds;
        for (std::size_t k = 0; k < r->repeats.size(); ++k) {
          const run_summary one = summarize({&r->repeats[k]}, {r->seeds[k]});
          const double one_bw = one.allreduce ? one.allreduce->busbw_gbps : 0;
          if (one_bw > 0) fm.per_seed["usd_per_busbw_gbps"].push_back(c->per_gpu_usd / one_bw);
        }
        if (fm.per_seed["usd_per_busbw_gbps"].size() != r->repeats.size()) fm.per_seed.clear();  // a seed delivered nothing
        for (const auto& [metric, values] : fm.per_seed) fm.ci[metric] = mean_ci95(values);
        at_scale.push_back(std::move(fm));
      }
      if (auto v = judge(at_scale, "usd_per_busbw_gbps", "cheapest per delivered Gb/s", false, settings.tie_tolerance)) {
        pt.cheapest = v->best;
        pt.cheapest_tied = v->tied;
      }
      const bool decided = !pt.cheapest.empty() && pt.cheapest_tied.empty();
      if (!out.scale.empty() && decided && !out.scale.back().cheapest.empty() && out.scale.back().cheapest_tied.empty() &&
          out.scale.back().cheapest != pt.cheapest)
        out.crossovers.push_back("between " + std::to_string(out.scale.back().hosts) + " and " +
                                 std::to_string(hosts) + " hosts, " + pt.cheapest + " becomes cheaper per delivered Gb/s of " +
                                 "bus bandwidth than " + out.scale.back().cheapest);
      out.scale.push_back(std::move(pt));
    }
  }
  return out;
}

}  // namespace rocelab::experiments

// The twin's prediction of a measured run and the comparison (see sim_to_real.hpp).
#include "rocelab/experiments/analysis/sim_to_real.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <limits>

#include "rocelab/common/units.hpp"
#include "rocelab/experiments/run/flow_timeline.hpp"
#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/tuning/tuning_answer.hpp"
#include "rocelab/traffic/message_list.hpp"

namespace rocelab::experiments {

std::vector<fabric::twin::message> replay_messages(const run_records& measured) {
  std::int64_t first = std::numeric_limits<std::int64_t>::max();
  for (const flow_record& f : measured.flows) first = std::min(first, std::max<std::int64_t>(f.start_ns, 0));
  std::vector<fabric::twin::message> out;
  out.reserve(measured.flows.size());
  for (std::size_t i = 0; i < measured.flows.size(); ++i) {
    const flow_record& f = measured.flows[i];
    fabric::twin::message m;
    m.src = f.src;
    m.dst = f.dst;
    m.bytes = f.bytes;
    m.start_ns = std::max<std::int64_t>(f.start_ns, 0) - first;
    m.kind = f.kind;
    m.priority = static_cast<std::int16_t>(f.priority);
    m.tag = i;
    out.push_back(m);
  }
  return out;
}

result<run_records> predict_measured_run(const experiment_spec& spec, const run_records& measured,
                                         std::uint64_t seed) {
  for (std::size_t i = 0; i < measured.flows.size(); ++i) {
    const flow_record& f = measured.flows[i];
    if (f.src >= spec.topology.hosts || f.dst >= spec.topology.hosts)
      return status(error_code::invalid_argument,
                    "flow " + std::to_string(i) + " of the measured run goes from host " + std::to_string(f.src) +
                        " to host " + std::to_string(f.dst) + ", but the spec has " +
                        std::to_string(spec.topology.hosts) + " hosts");
  }
  auto config = to_twin_config(spec, seed);
  if (!config) return config.error().with_context("the twin's config for the prediction");
  // The replay's flow timelines at the lab's bins, to be drawn beside the measured ones.
  if (config->flow_timeline_interval_ns == 0) config->flow_timeline_interval_ns = default_flow_timeline_bin_ns;
  traffic::message_list_workload load(replay_messages(measured));
  auto records = fabric::twin::run_twin(*config, load);
  if (!records) return records.error().with_context("predicting the measured run on the twin");
  return records;
}

result<std::vector<run_records>> predict_measured_records(const experiment_spec& spec,
                                                         const std::vector<run_records>& measured,
                                                         const std::vector<std::uint64_t>& seeds) {
  std::vector<run_records> predicted;
  predicted.reserve(measured.size());
  for (std::size_t i = 0; i < measured.size(); ++i) {
    auto r = predict_measured_run(spec, measured[i], i < seeds.size() ? seeds[i] : spec.seed + i);
    if (!r) return r.error().with_context("repeat " + std::to_string(i));
    predicted.push_back(std::move(*r));
  }
  return predicted;
}

result<run_summary> predict_measured_runs(const experiment_spec& spec, const std::vector<run_records>& measured,
                                          const std::vector<std::uint64_t>& seeds) {
  auto predicted = predict_measured_records(spec, measured, seeds);
  if (!predicted) return predicted.error();
  std::vector<const run_records*> runs;
  for (const auto& r : *predicted) runs.push_back(&r);
  return summarize(runs, seeds);
}

namespace {

double relative(double predicted, double measured) {
  if (predicted == measured) return 0;
  if (predicted == 0) return std::numeric_limits<double>::infinity();
  return (measured - predicted) / predicted;
}

std::string percent(double d) {
  if (!std::isfinite(d)) return "from none";
  char b[32];
  std::snprintf(b, sizeof b, "%+.0f%%", d * 100);
  return b;
}

struct term {
  const char* name;
  double predicted, measured;
  bool is_time;
};

std::string value_text(const term& t, double v) {
  if (t.is_time) return readable_duration(v);
  char b[32];
  std::snprintf(b, sizeof b, "%.0f", v);
  return b;
}

}  // namespace

sim_to_real_comparison compare_sim_to_real(const run_summary& predicted, const run_summary& measured, double tolerance,
                                           std::int64_t pause_floor_ns, std::span<const run_summary> measured_each) {
  sim_to_real_comparison out;
  out.tolerance = tolerance;
  using metric_of = std::function<std::optional<double>(const run_summary&)>;
  auto add = [&](const std::string& metric, const metric_of& of, double floor) {
    sim_to_real_cell c;
    c.metric = metric;
    c.predicted = of(predicted).value_or(0);
    c.measured = of(measured).value_or(0);
    c.difference = relative(c.predicted, c.measured);
    std::vector<double> runs;
    for (const run_summary& each : measured_each)
      if (auto v = of(each)) runs.push_back(*v);
    const confidence_interval ci = mean_ci95(runs);
    c.lab_runs = runs.size();
    c.lab_ci = ci.n >= 2 && ci.mean > 0 ? ci.half_width / ci.mean : 0;
    c.by_lab_ci = c.lab_ci > tolerance;
    c.within = (c.predicted < floor && c.measured < floor) || std::fabs(c.difference) <= std::max(tolerance, c.lab_ci);
    out.within = out.within && c.within;
    out.cells.push_back(c);
  };
  const auto fct = [](std::int64_t flow_stats::*field, std::string kind) -> metric_of {
    return [field, kind](const run_summary& s) -> std::optional<double> {
      if (kind.empty()) return static_cast<double>(s.all.*field);
      const auto it = s.by_kind.find(kind);
      if (it == s.by_kind.end() || it->second.completed == 0) return std::nullopt;
      return static_cast<double>(it->second.*field);
    };
  };
  add("FCT p50", fct(&flow_stats::fct_p50_ns, ""), 0);
  add("FCT p99", fct(&flow_stats::fct_p99_ns, ""), 0);
  add("paused time", [](const run_summary& s) -> std::optional<double> { return static_cast<double>(s.paused_ns); },
      static_cast<double>(pause_floor_ns));
  // Per class, where there is more than one: a class that agrees only in the pool (the
  // incast's long flows hiding the victims' short ones) is not agreement.
  std::vector<std::string> classes;
  for (const auto& [kind, k] : measured.by_kind) {
    const auto p = predicted.by_kind.find(kind);
    if (k.completed > 0 && p != predicted.by_kind.end() && p->second.completed > 0) classes.push_back(kind);
  }
  if (classes.size() > 1)
    for (const std::string& kind : classes) {
      add(kind + " FCT p50", fct(&flow_stats::fct_p50_ns, kind), 0);
      add(kind + " FCT p99", fct(&flow_stats::fct_p99_ns, kind), 0);
    }
  if (out.within) return out;

  // The congestion terms, largest relative difference first: where the two runs parted.
  std::vector<term> terms{
      {"paused time", static_cast<double>(predicted.paused_ns), static_cast<double>(measured.paused_ns), true},
      {"PFC pause frames", static_cast<double>(predicted.pause_frames), static_cast<double>(measured.pause_frames), false},
      {"CE marks", static_cast<double>(predicted.ce_marked), static_cast<double>(measured.ce_marked), false},
      {"CNPs", static_cast<double>(predicted.cnp), static_cast<double>(measured.cnp), false},
      {"retransmissions", static_cast<double>(predicted.retransmits), static_cast<double>(measured.retransmits), false},
      {"drops", static_cast<double>(predicted.drops), static_cast<double>(measured.drops), false},
      {"incomplete flows", static_cast<double>(predicted.all.flows - predicted.all.completed),
       static_cast<double>(measured.all.flows - measured.all.completed), false}};
  // A count one side did not measure explains nothing (its 0 is not a difference).
  std::erase_if(terms, [&](const term& t) {
    return (t.name == std::string_view("CNPs") && !(predicted.cnp_measured && measured.cnp_measured)) ||
           (t.name == std::string_view("retransmissions") &&
            !(predicted.retransmits_measured && measured.retransmits_measured));
  });
  std::erase_if(terms, [&](const term& t) {
    const double d = relative(t.predicted, t.measured);
    if (t.is_time && t.predicted < static_cast<double>(pause_floor_ns) && t.measured < static_cast<double>(pause_floor_ns))
      return true;
    return std::fabs(d) <= tolerance;
  });
  std::stable_sort(terms.begin(), terms.end(), [](const term& a, const term& b) {
    return std::fabs(relative(a.predicted, a.measured)) > std::fabs(relative(b.predicted, b.measured));
  });
  std::string differing;
  for (std::size_t i = 0; i < terms.size() && i < 3; ++i)
    differing += (i ? "; " : "") + std::string(terms[i].name) + " " + value_text(terms[i], terms[i].predicted) +
                 " (twin) against " + value_text(terms[i], terms[i].measured) + " (measured)";
  for (const sim_to_real_cell& c : out.cells) {
    if (c.within) continue;
    std::string s = c.metric + " differs by " + percent(c.difference) + " (twin " + readable_duration(c.predicted) +
                    ", measured " + readable_duration(c.measured) +
                    (c.by_lab_ci ? ", beyond the lab's own 95% CI of " + percent(c.lab_ci).substr(1) : std::string()) +
                    "): ";
    s += differing.empty() ? "no congestion term differs by more than " + percent(tolerance).substr(1) +
                                 ", so the difference lies in what the twin does not model (the hosts' "
                                 "processing and pacing, the software path's latency)"
                           : "the terms that differ most are " + differing;
    out.explanation.push_back(s + ".");
  }
  return out;
}

}  // namespace rocelab::experiments

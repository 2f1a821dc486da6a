#include "rocelab/experiments/tuning/objective.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace rocelab::experiments {
namespace {

constexpr std::string_view flow_metrics[] = {"fct_p50_ns",   "fct_p99_ns",   "fct_max_ns", "slowdown_p50",
                                             "slowdown_p99", "flows",        "completed",  "incomplete"};
constexpr std::string_view run_metrics[] = {"pause_frames", "paused_ns", "paused_us", "ce_marked",
                                            "cnp",          "drops",     "retransmits"};
constexpr std::string_view allreduce_metrics[] = {"allreduce.algbw_gbps", "allreduce.busbw_gbps",
                                                  "allreduce.time_ns"};

std::optional<double> flow_metric(const flow_stats& s, std::string_view m) {
  if (m == "fct_p50_ns") return static_cast<double>(s.fct_p50_ns);
  if (m == "fct_p99_ns") return static_cast<double>(s.fct_p99_ns);
  if (m == "fct_max_ns") return static_cast<double>(s.fct_max_ns);
  if (m == "slowdown_p50") return s.slowdown_p50;
  if (m == "slowdown_p99") return s.slowdown_p99;
  if (m == "flows") return static_cast<double>(s.flows);
  if (m == "completed") return static_cast<double>(s.completed);
  if (m == "incomplete") return static_cast<double>(s.flows - s.completed);
  return std::nullopt;
}

std::string valid_names() {
  std::string out;
  for (auto m : flow_metrics) out += std::string(out.empty() ? "" : ", ") + std::string(m);
  for (auto m : run_metrics) out += ", " + std::string(m);
  for (auto m : allreduce_metrics) out += ", " + std::string(m);
  out += ", or <kind>.<flow metric> with kind ";
  for (std::size_t i = 0; i < std::size(traffic_classes); ++i)
    out += std::string(i == 0 ? "" : ", ") + std::string(traffic_classes[i]);
  return out;
}

std::string format_number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

status check_metric(std::string_view metric) {
  for (auto m : flow_metrics)
    if (metric == m) return status::success();
  for (auto m : run_metrics)
    if (metric == m) return status::success();
  for (auto m : allreduce_metrics)
    if (metric == m) return status::success();
  const auto dot = metric.find('.');
  if (dot != std::string_view::npos) {
    const auto kind = metric.substr(0, dot);
    const auto rest = metric.substr(dot + 1);
    if (std::find(std::begin(traffic_classes), std::end(traffic_classes), kind) != std::end(traffic_classes))
      for (auto m : flow_metrics)
        if (rest == m) return status::success();
  }
  return {error_code::invalid_argument, "unknown metric '" + std::string(metric) + "' (valid: " + valid_names() + ")"};
}

result<double> metric_value(const run_summary& s, std::string_view metric) {
  ROCELAB_RETURN_IF_ERROR(check_metric(metric));
  if (auto v = flow_metric(s.all, metric)) return *v;
  if (metric == "pause_frames") return static_cast<double>(s.pause_frames);
  if (metric == "paused_ns") return static_cast<double>(s.paused_ns);
  if (metric == "paused_us") return static_cast<double>(s.paused_ns) / 1e3;
  if (metric == "ce_marked") return static_cast<double>(s.ce_marked);
  // A count the hardware did not provide cannot be optimised: 0 would read as perfect.
  if ((metric == "cnp" && !s.cnp_measured) || (metric == "retransmits" && !s.retransmits_measured))
    return status(error_code::unavailable,
                  std::string(metric) + ": not measured on this run (its NICs count " + std::string(metric) +
                      " neither per flow nor per port); choose another objective");
  if (metric == "cnp") return static_cast<double>(s.cnp);
  if (metric == "drops") return static_cast<double>(s.drops);
  if (metric == "retransmits") return static_cast<double>(s.retransmits);
  if (metric.starts_with("allreduce.") && !flow_metric(s.all, metric.substr(10))) {
    if (!s.allreduce)
      return status(error_code::unavailable, std::string(metric) + ": the run has no all-reduce workload");
    if (metric == "allreduce.algbw_gbps") return s.allreduce->algbw_gbps;
    if (metric == "allreduce.busbw_gbps") return s.allreduce->busbw_gbps;
    return s.allreduce->time_mean_ns;
  }
  const auto dot = metric.find('.');
  const std::string kind(metric.substr(0, dot));
  const auto it = s.by_kind.find(kind);
  if (it == s.by_kind.end())
    return status(error_code::unavailable, std::string(metric) + ": the run has no " + kind + " flows");
  return *flow_metric(it->second, metric.substr(dot + 1));
}

std::size_t constraint_count(const objective_spec& objective) noexcept {
  return objective.constraints.size() + (objective.require_complete ? 1 : 0);
}

result<trial_score> score(const objective_spec& objective, const std::vector<run_summary>& repeats) {
  if (repeats.empty()) return status(error_code::invalid_argument, "scoring a trial without runs");
  if (objective.terms.empty()) return status(error_code::invalid_argument, "the objective has no terms");
  trial_score out;
  out.margins.assign(constraint_count(objective), 0.0);
  for (const constraint_bound& c : objective.constraints) {
    std::string name = c.metric;
    if (c.min) name += " >= " + format_number(*c.min);
    if (c.max) name += std::string(c.min ? " and" : "") + " <= " + format_number(*c.max);
    out.margin_names.push_back(name);
  }
  if (objective.require_complete) out.margin_names.emplace_back("incomplete <= 0");
  const double n = static_cast<double>(repeats.size());
  for (const run_summary& s : repeats) {
    for (const objective_term& t : objective.terms) {
      auto v = metric_value(s, t.metric);
      if (!v) return v.error().with_context("objective");
      out.objective += t.weight * *v / n;
    }
    for (std::size_t i = 0; i < objective.constraints.size(); ++i) {
      const constraint_bound& c = objective.constraints[i];
      auto v = metric_value(s, c.metric);
      if (!v) return v.error().with_context("constraint");
      double margin = -std::numeric_limits<double>::infinity();
      if (c.max) margin = std::max(margin, (*v - *c.max) / std::max(std::abs(*c.max), 1.0));
      if (c.min) margin = std::max(margin, (*c.min - *v) / std::max(std::abs(*c.min), 1.0));
      if (!std::isfinite(margin)) margin = -1;  // a constraint without bounds always holds
      out.margins[i] += margin / n;
    }
    if (objective.require_complete)
      out.margins.back() += static_cast<double>(s.all.flows - s.all.completed) / n;
  }
  for (std::size_t i = 0; i < out.margins.size(); ++i)
    if (out.margins[i] > 0) {
      out.feasible = false;
      if (!out.violated.empty()) out.violated += ", ";
      out.violated += out.margin_names[i];
    }
  return out;
}

std::string describe(const objective_spec& objective) {
  std::string out;
  for (const objective_term& t : objective.terms)
    out += (out.empty() ? "" : " + ") + format_number(t.weight) + " x " + t.metric;
  for (const constraint_bound& c : objective.constraints) {
    out += (out.find(" subject to ") == std::string::npos ? " subject to " : ", ") + c.metric;
    if (c.min) out += " >= " + format_number(*c.min);
    if (c.max) out += std::string(c.min ? " and" : "") + " <= " + format_number(*c.max);
  }
  return out;
}

}  // namespace rocelab::experiments

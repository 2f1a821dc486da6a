#include "rocelab/experiments/tuning/tuning_answer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "rocelab/experiments/tuning/objective.hpp"
#include "rocelab/experiments/tuning/tuning_spec.hpp"

namespace rocelab::experiments {
namespace {

// Metrics that count pauses, marks or losses rather than describe flows: never the
// trade-off's flow axis.
constexpr std::string_view non_flow_metrics[] = {"pause_frames", "paused_ns", "paused_us", "ce_marked",
                                                 "cnp",          "drops",     "retransmits", "flows",
                                                 "completed",    "incomplete"};

bool is_flow_metric(std::string_view m) {
  return std::find(std::begin(non_flow_metrics), std::end(non_flow_metrics), m) == std::end(non_flow_metrics) &&
         !m.starts_with("allreduce.algbw") && !m.starts_with("allreduce.busbw") && m != "allreduce.time_ns";
}

}  // namespace

std::vector<baseline_config> baseline_configs(const tuning_settings& settings) {
  std::vector<baseline_config> out;
  out.push_back({pfc_only_baseline, {{"switch.ecn.enabled", "false"}, {"nic.dcqcn.enabled", "false"}}});
  baseline_config vendor{vendor_default_baseline, {{"switch.ecn.enabled", "true"}, {"nic.dcqcn.enabled", "true"}}};
  const experiment_spec defaults;
  // The WRED profile as a whole (a default Kmin above a spec's Kmax is no configuration),
  // then every other tuned path.
  std::vector<std::string> paths{"switch.ecn.kmin_bytes", "switch.ecn.kmax_bytes", "switch.ecn.pmax"};
  for (const tuning_parameter& p : settings.parameters)
    if (std::find(paths.begin(), paths.end(), p.path) == paths.end()) paths.push_back(p.path);
  for (const std::string& path : paths) {
    const tuning_parameter p{path, 0, 0, false, false, "", 0};
    if (p.path == "switch.ecn.enabled" || p.path == "nic.dcqcn.enabled") continue;
    auto v = get_field(defaults, p.path);
    if (!v) continue;
    // The value as a number the field takes ("1048576", not "1MiB"), as trials set them.
    auto n = field_number(p.path, *v);
    vendor.sets.emplace_back(p.path, n ? field_text(p.path, *n) : *v);
  }
  out.push_back(std::move(vendor));
  return out;
}

result<experiment_spec> apply_baseline(const experiment_spec& base, const baseline_config& config) {
  experiment_spec spec = base;
  for (const auto& [path, value] : config.sets)
    ROCELAB_RETURN_IF_ERROR(
        set_field(spec, path, value, "baseline " + config.name).with_context("baseline " + config.name + ": " + path));
  ROCELAB_RETURN_IF_ERROR(validate(spec).with_context("baseline " + config.name));
  return spec;
}

double student_t_975(std::size_t df) {
  // t_{0.975, df}, df = 1..30 (standard tables, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2).
  static constexpr double table[] = {12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836,
                                     2.446911851,  2.364624252, 2.306004135, 2.262157163, 2.228138852,
                                     2.200985160,  2.178812830, 2.160368656, 2.144786688, 2.131449546,
                                     2.119905299,  2.109815578, 2.100922040, 2.093024054, 2.085963447,
                                     2.079613845,  2.073873068, 2.068657610, 2.063898562, 2.059538553,
                                     2.055529439,  2.051830516, 2.048407142, 2.045229642, 2.042272456};
  if (df == 0) return std::numeric_limits<double>::infinity();
  if (df <= 30) return table[df - 1];
  // Cornish-Fisher expansion of the t quantile in powers of 1/df around the normal's
  // (Abramowitz and Stegun 26.7.5).
  const double z = 1.959963984540054, v = static_cast<double>(df);
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z, z9 = z7 * z * z;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v) +
         (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) / (92160 * v * v * v * v);
}

confidence_interval mean_ci95(const std::vector<double>& samples) {
  confidence_interval ci;
  ci.n = samples.size();
  if (ci.n == 0) return ci;
  for (double v : samples) ci.mean += v / static_cast<double>(ci.n);
  ci.low = ci.high = ci.mean;
  if (ci.n < 2) return ci;
  double ss = 0;
  for (double v : samples) ss += (v - ci.mean) * (v - ci.mean);
  ci.stddev = std::sqrt(ss / static_cast<double>(ci.n - 1));
  ci.half_width = student_t_975(ci.n - 1) * ci.stddev / std::sqrt(static_cast<double>(ci.n));
  ci.low = ci.mean - ci.half_width;
  ci.high = ci.mean + ci.half_width;
  return ci;
}

std::vector<std::string> at_edge(const tuning_settings& settings, std::span<const double> values, double fraction) {
  std::vector<std::string> out;
  const std::vector<double> applied = applied_values(settings, values);
  for (std::size_t i = 0; i < settings.parameters.size() && i < applied.size(); ++i) {
    const tuning_parameter& p = settings.parameters[i];
    const double u = p.log ? (std::log(applied[i]) - std::log(p.min)) / (std::log(p.max) - std::log(p.min))
                           : (applied[i] - p.min) / (p.max - p.min);
    if (u <= fraction || u >= 1.0 - fraction) out.push_back(p.path);
  }
  return out;
}

std::vector<std::size_t> pareto_front(const std::vector<std::pair<double, double>>& points) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto [xi, yi] = points[i];
    if (std::isnan(xi) || std::isnan(yi)) continue;
    bool dominated = false;
    for (std::size_t j = 0; j < points.size() && !dominated; ++j) {
      if (j == i) continue;
      const auto [xj, yj] = points[j];
      if (std::isnan(xj) || std::isnan(yj)) continue;
      dominated = xj <= xi && yj <= yi && (xj < xi || yj < yi);
    }
    if (!dominated) out.push_back(i);
  }
  return out;
}

tradeoff_axes tradeoff_axes_for(const objective_spec& objective, const std::vector<run_summary>& summaries) {
  tradeoff_axes axes;
  const bool victims = !summaries.empty() && std::all_of(summaries.begin(), summaries.end(), [&](const run_summary& s) {
    return metric_value(s, axes.x).ok();
  });
  if (victims) return axes;
  axes.x = "slowdown_p99";
  for (const objective_term& t : objective.terms)
    if (is_flow_metric(t.metric)) {
      axes.x = t.metric;
      break;
    }
  return axes;
}

}  // namespace rocelab::experiments

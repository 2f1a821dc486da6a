#include "rocelab/experiments/tuning/tuning_edges.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "rocelab/experiments/tuning/tuning_spec.hpp"

namespace rocelab::experiments {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

bool ecn_threshold(std::string_view path) {
  return path == "switch.ecn.kmin_bytes" || path == "switch.ecn.kmax_bytes";
}

// Where the applied value sits in its range on the search scale (0 low end, 1 high end).
double unit_position(const tuning_parameter& p, double v) {
  if (p.log) return (std::log(v) - std::log(p.min)) / (std::log(p.max) - std::log(p.min));
  return (v - p.min) / (p.max - p.min);
}

std::string bound_reason(const experiment_spec& spec, std::string_view path, bool high) {
  if (ecn_threshold(path))
    return high ? "the switch buffer, " + std::to_string(spec.sw.buffer_bytes) + " B: a queue never reaches it"
                : "one MTU, " + std::to_string(spec.nic.mtu_bytes) + " B: below it every frame is marked";
  if (path == "switch.ecn.pmax") return high ? "Pmax <= 1" : "Pmax > 0";
  return high ? "its largest value" : "its smallest value";
}

}  // namespace

std::pair<double, double> physical_range(const experiment_spec& spec, std::string_view path) {
  if (ecn_threshold(path)) return {static_cast<double>(spec.nic.mtu_bytes), static_cast<double>(spec.sw.buffer_bytes)};
  if (path == "switch.ecn.pmax") return {0.0, 1.0};
  if (integer_field(path)) return {0.0, inf};
  return {-inf, inf};
}

std::vector<bound_note> at_physical_bound(const experiment_spec& spec, const tuning_settings& settings,
                                          std::span<const double> values, double fraction) {
  std::vector<bound_note> out;
  const std::vector<double> applied = applied_values(settings, values);
  for (std::size_t i = 0; i < settings.parameters.size() && i < applied.size(); ++i) {
    const tuning_parameter& p = settings.parameters[i];
    const auto [lo, hi] = physical_range(spec, p.path);
    const double u = unit_position(p, applied[i]);
    const auto note = [&](double bound, bool high) {
      out.push_back({p.path, bound,
                     p.path + "=" + field_text(p.path, applied[i]) + " is at its physical bound (" +
                         bound_reason(spec, p.path, high) + ")"});
    };
    if (u <= fraction && p.min <= lo) note(lo, false);
    else if (u >= 1.0 - fraction && p.max >= hi) note(hi, true);
  }
  return out;
}

std::uint32_t extension_trials(const tuning_settings& settings) noexcept {
  return std::max<std::uint32_t>(4, (settings.budget + 1) / 2);
}

std::optional<tuning_settings> widened_settings(const experiment_spec& spec, const tuning_settings& settings,
                                                const std::vector<trial>& trials) {
  // A grid is the engineer's own exhaustive choice of points, its ends among them: its
  // best at an end is reported (at_edge), not searched beyond.
  if (settings.method == tuning_method::grid) return std::nullopt;
  const std::uint32_t first = planned_trials(settings);
  if (trials.size() < first) return std::nullopt;
  const std::vector<trial> first_search(trials.begin(), trials.begin() + first);
  const trial* best = best_trial(first_search);
  if (best == nullptr) return std::nullopt;
  const std::vector<double> applied = applied_values(settings, best->values);
  tuning_settings out = settings;
  out.widened.clear();
  // Kmin and Kmax tuned side by side without an at_least tie stay a valid WRED profile
  // (Kmin <= Kmax) only while Kmax's range starts at or above Kmin's end: a widening keeps
  // it so.
  const tuning_parameter* kmin = nullptr;
  const tuning_parameter* kmax = nullptr;
  for (const tuning_parameter& p : settings.parameters) {
    if (p.path == "switch.ecn.kmin_bytes") kmin = &p;
    if (p.path == "switch.ecn.kmax_bytes") kmax = &p;
  }
  const bool untied = kmin && kmax && kmax->at_least != kmin->path;
  for (std::size_t i = 0; i < out.parameters.size(); ++i) {
    tuning_parameter& p = out.parameters[i];
    auto [lo, hi] = physical_range(spec, p.path);
    if (untied && p.path == kmax->path) lo = std::max(lo, kmin->max);
    if (untied && p.path == kmin->path) hi = std::min(hi, kmax->min);
    const double u = unit_position(p, applied[i]);
    const double before_min = p.min, before_max = p.max;
    if (u <= 0.02 && p.min > lo) {
      double m = p.log ? p.min / std::sqrt(p.max / p.min) : p.min - (p.max - p.min) / 2;
      m = std::max(m, lo);
      if (p.log && !(m > 0)) m = p.min / 2;
      if (p.integer) m = std::ceil(m);
      p.min = std::min(m, p.min);
    } else if (u >= 0.98 && p.max < hi) {
      double m = p.log ? p.max * std::sqrt(p.max / p.min) : p.max + (p.max - p.min) / 2;
      m = std::min(m, hi);
      if (p.integer) m = std::floor(m);
      p.max = std::max(m, p.max);
    }
    if (p.min != before_min || p.max != before_max)
      out.widened.push_back(p.path + " widened from " + field_text(p.path, before_min) + " .. " +
                            field_text(p.path, before_max) + " to " + field_text(p.path, p.min) + " .. " +
                            field_text(p.path, p.max) + " (the first search's best, trial " +
                            std::to_string(best->index) + ", lay at its edge)");
  }
  if (out.widened.empty()) return std::nullopt;
  out.budget = first + extension_trials(settings);
  // The second search proposes from the model at once: the first search is its start.
  out.initial_points = std::min(initial_points(settings), first);
  return out;
}

tuning_settings covering_settings(tuning_settings settings, const std::vector<trial>& trials) {
  for (const trial& t : trials)
    for (std::size_t i = 0; i < settings.parameters.size() && i < t.values.size(); ++i) {
      tuning_parameter& p = settings.parameters[i];
      const double v = t.values[i];
      if (!std::isfinite(v) || (p.log && !(v > 0))) continue;
      p.min = std::min(p.min, v);
      p.max = std::max(p.max, v);
    }
  return settings;
}

result<edge_sweep> run_sweep_with_edges(const experiment_spec& spec, const tuning_settings& settings,
                                        const std::function<trial_evaluator(const tuning_settings&)>& make_evaluator,
                                        std::vector<trial> history, const sweep_hooks& hooks) {
  edge_sweep out;
  // The first search runs in the ranges as given, or as its stored trials span them when a
  // widened sweep is resumed with a larger budget.
  out.settings = covering_settings(settings, history);
  out.settings.widened.clear();
  out.planned = planned_trials(out.settings);
  auto trials = run_sweep(out.settings, make_evaluator(out.settings), std::move(history), hooks);
  if (!trials) return std::move(trials).error();
  out.trials = std::move(*trials);
  if (out.trials.size() < out.planned) {
    out.interrupted = true;
    return out;
  }
  auto wider = widened_settings(spec, settings, out.trials);
  if (!wider) return out;
  out.settings = std::move(*wider);
  out.planned = planned_trials(out.settings);
  auto more = run_sweep(out.settings, make_evaluator(out.settings), std::move(out.trials), hooks);
  if (!more) return std::move(more).error();
  out.trials = std::move(*more);
  out.interrupted = out.trials.size() < out.planned;
  return out;
}

}  // namespace rocelab::experiments

#include "rocelab/experiments/run/summary_metrics.hpp"

#include <cmath>
#include <cstdio>

#include "rocelab/common/units.hpp"

namespace rocelab::experiments {

std::vector<summary_metric> key_metrics(const run_summary& s) {
  const auto count = [](std::string name, std::uint64_t v, bool lower_is_better = true) {
    return summary_metric{std::move(name), static_cast<double>(v), false, lower_is_better};
  };
  const auto time = [](std::string name, std::int64_t ns) {
    return summary_metric{std::move(name), static_cast<double>(ns), true, true};
  };
  const auto ratio = [](std::string name, double v) { return summary_metric{std::move(name), v, false, true}; };
  std::vector<summary_metric> m = {
      count("flows", s.all.flows, false),     count("completed", s.all.completed, false),
      time("fct p50", s.all.fct_p50_ns),      time("fct p99", s.all.fct_p99_ns),
      time("fct max", s.all.fct_max_ns),      ratio("slowdown p50", s.all.slowdown_p50),
      ratio("slowdown p99", s.all.slowdown_p99),
  };
  for (const auto& [kind, f] : s.by_kind) {
    m.push_back(time(kind + " fct p99", f.fct_p99_ns));
    m.push_back(ratio(kind + " slowdown p99", f.slowdown_p99));
  }
  m.push_back(count("pause frames", s.pause_frames));
  m.push_back(time("paused", s.paused_ns));
  m.push_back(count("CE marked", s.ce_marked, false));
  m.push_back(count("CNPs", s.cnp, false));
  m.back().measured = s.cnp_measured;
  m.push_back(count("drops", s.drops));
  m.push_back(count("retransmits", s.retransmits));
  m.back().measured = s.retransmits_measured;
  return m;
}

std::string metric_text(const summary_metric& m) {
  if (!m.measured) return "not measured";
  if (m.duration_ns) return readable_duration(m.value);
  char text[32];
  if (m.value == std::floor(m.value) && std::abs(m.value) < 1e15)
    std::snprintf(text, sizeof text, "%.0f", m.value);
  else
    std::snprintf(text, sizeof text, "%.3g", m.value);
  return text;
}

const summary_metric* find_metric(const std::vector<summary_metric>& metrics, std::string_view name) {
  for (const auto& m : metrics)
    if (m.name == name) return &m;
  return nullptr;
}

std::optional<double> change_percent(double before, double after) {
  if (before == 0) return std::nullopt;
  return 100.0 * (after - before) / std::abs(before);
}

}  // namespace rocelab::experiments

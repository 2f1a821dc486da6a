#include "rocelab/experiments/tuning/tuning_decision.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "rocelab/common/units.hpp"
#include "rocelab/experiments/tuning/objective.hpp"

namespace rocelab::experiments {
namespace {

// Three significant digits, without an exponent below a million (slowdowns of thousands
// read as 1060, not 1.06e+03).
std::string fmt(double v) {
  char b[64];
  if (std::abs(v) >= 1000 && std::abs(v) < 1e6) std::snprintf(b, sizeof b, "%.0f", v);
  else std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

std::vector<double> values_of(const std::vector<run_summary>& runs, const std::string& metric) {
  std::vector<double> out;
  for (const run_summary& s : runs) {
    auto v = metric_value(s, metric);
    out.push_back(v ? *v : std::nan(""));
  }
  return out;
}

bool every_run_has(const std::vector<run_summary>& runs, const std::string& metric) {
  if (runs.empty()) return false;
  for (const run_summary& s : runs) {
    auto v = metric_value(s, metric);
    if (!v || !std::isfinite(*v)) return false;
  }
  return true;
}

std::string metric_words(const std::string& metric) {
  const auto dot = metric.find('.');
  if (dot != std::string::npos && metric.substr(dot + 1) == "slowdown_p99") {
    const std::string kind = metric.substr(0, dot);
    return (kind == "victim" ? std::string("victims'") : kind) + " p99 slowdown";
  }
  if (metric == "paused_us") return "paused time";
  if (metric == "cnp") return "CNPs";
  return metric;
}

std::string metric_value_text(const std::string& metric, double v) {
  return metric == "paused_us" ? readable_duration(v * 1000) : fmt(v);
}

}  // namespace

const char* to_string(paired_outcome o) noexcept {
  switch (o) {
    case paired_outcome::better: return "better";
    case paired_outcome::worse: return "worse";
    case paired_outcome::tie: return "tie";
  }
  return "tie";
}

paired_comparison compare_paired(std::string metric, const std::vector<double>& a, const std::vector<double>& b) {
  paired_comparison c;
  c.metric = std::move(metric);
  std::vector<double> da, db, diff;
  for (std::size_t k = 0; k < a.size() && k < b.size(); ++k) {
    if (std::isnan(a[k]) || std::isnan(b[k])) continue;
    da.push_back(a[k]);
    db.push_back(b[k]);
    diff.push_back(a[k] - b[k]);
  }
  c.mean_a = mean_ci95(da).mean;
  c.mean_b = mean_ci95(db).mean;
  c.difference = mean_ci95(diff);
  if (diff.size() >= 2 && c.difference.high < 0) c.outcome = paired_outcome::better;
  else if (diff.size() >= 2 && c.difference.low > 0) c.outcome = paired_outcome::worse;
  return c;
}

std::vector<paired_comparison> gains_and_costs(const std::vector<run_summary>& a, const std::vector<run_summary>& b) {
  std::vector<std::string> metrics;
  for (const std::string_view kind : traffic_classes) metrics.push_back(std::string(kind) + ".slowdown_p99");
  metrics.emplace_back("paused_us");
  metrics.emplace_back("cnp");
  std::vector<paired_comparison> out;
  for (const std::string& m : metrics)
    if (every_run_has(a, m) && every_run_has(b, m)) out.push_back(compare_paired(m, values_of(a, m), values_of(b, m)));
  return out;
}

result<tuning_decision> decide(const std::optional<fresh_evidence>& contender,
                               const std::vector<fresh_evidence>& baselines) {
  tuning_decision d;
  d.rule =
      "a tuned configuration is the answer only if, on fresh seeds, it beats every baseline beyond the 95% CI of "
      "the paired differences; otherwise the best baseline is (a tie goes to the baseline, and between baselines "
      "to PFC only)";
  const fresh_evidence* pfc = nullptr;
  const fresh_evidence* vendor = nullptr;
  for (const fresh_evidence& b : baselines) {
    if (b.baseline == pfc_only_baseline) pfc = &b;
    if (b.baseline == vendor_default_baseline) vendor = &b;
  }
  bool tuned_wins = false;
  if (contender) {
    d.contender = contender->name;
    tuned_wins = contender->feasible;
    for (const fresh_evidence& b : baselines) {
      baseline_verdict v;
      v.baseline = b.baseline;
      v.baseline_feasible = b.feasible;
      v.objective = compare_paired("objective", contender->objectives, b.objectives);
      v.metrics = gains_and_costs(contender->summaries, b.summaries);
      if (!contender->feasible) v.outcome = b.feasible ? paired_outcome::worse : v.objective.outcome;
      else if (!b.feasible) v.outcome = paired_outcome::better;
      else v.outcome = v.objective.outcome;
      tuned_wins = tuned_wins && v.outcome == paired_outcome::better;
      d.versus.push_back(std::move(v));
    }
  }
  if (pfc && vendor && pfc->feasible && vendor->feasible)
    d.vendor_vs_pfc = compare_paired("objective", vendor->objectives, pfc->objectives);
  if (tuned_wins) {
    d.answer = "tuned";
    return d;
  }
  if (pfc && pfc->feasible && vendor && vendor->feasible)
    d.answer = d.vendor_vs_pfc->outcome == paired_outcome::better ? vendor_default_baseline : pfc_only_baseline;
  else if (pfc && pfc->feasible)
    d.answer = pfc_only_baseline;
  else if (vendor && vendor->feasible)
    d.answer = vendor_default_baseline;
  else if (contender && contender->feasible)
    d.answer = "tuned";  // the only configuration that meets the constraints
  else
    return status(error_code::not_found,
                  "no configuration met the constraints on the fresh seeds (" +
                      (contender ? contender->name + ": " + contender->violated + "; " : std::string()) +
                      (pfc ? "pfc_only: " + pfc->violated + "; " : std::string()) +
                      (vendor ? "vendor_default: " + vendor->violated : std::string()) + ")");
  return d;
}

std::string describe_comparisons(const std::vector<paired_comparison>& metrics) {
  std::string out;
  for (const paired_comparison& c : metrics) {
    const std::string values = metric_value_text(c.metric, c.mean_a) + " against " + metric_value_text(c.metric, c.mean_b);
    out += (out.empty() ? "" : "; ") + metric_words(c.metric) +
           (c.outcome == paired_outcome::tie ? " within noise (" + values + ")" : " " + values);
  }
  return out;
}

status enough_trials_evaluated(const std::vector<trial>& trials) {
  std::map<std::string, std::size_t> reasons;
  std::size_t failed = 0;
  for (const trial& t : trials) {
    if (t.evaluated) continue;
    ++failed;
    ++reasons[t.error.empty() ? "no reason given" : t.error.substr(0, 160)];
  }
  if (2 * failed <= trials.size()) return status::success();
  std::vector<std::pair<std::size_t, std::string>> counted;
  for (auto& [why, n] : reasons) counted.emplace_back(n, why);
  std::stable_sort(counted.begin(), counted.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string text = std::to_string(failed) + " of " + std::to_string(trials.size()) +
                     " trials failed, so the search recommends nothing:";
  for (std::size_t i = 0; i < counted.size() && i < 3; ++i)
    text += (i ? ";" : "") + std::string(" ") + std::to_string(counted[i].first) + "x " + counted[i].second;
  if (counted.size() > 3) text += "; and " + std::to_string(counted.size() - 3) + " other reasons";
  return {failed_trials_code, text};
}

}  // namespace rocelab::experiments

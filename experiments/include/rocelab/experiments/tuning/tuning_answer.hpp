#pragma once
// The answer a tuning gives, judged against what the engineer could do without it:
// - baselines: PFC only (switch.ecn.enabled=false, nic.dcqcn.enabled=false) and the vendor
//   defaults (ECN and DCQCN on, the WRED profile and every tuned path at its spec.hpp field default: SONiC
//   AZURE_LOSSLESS Kmin 1 MiB / Kmax 2 MiB / Pmax 5%, the mlx5 DCQCN defaults), run with
//   the same seeds as the trials;
// - the decision (tuning_decision.hpp): the best trial on the common search seeds is the
//   contender; it is the answer only if it beats every baseline on fresh seeds beyond the
//   95% confidence interval (Student's t, n - 1 degrees of freedom) of the paired
//   differences, else the best baseline is, so "leave ECN off" is a possible answer;
// - at_edge: a recommended value within 2% of its range's end on the search scale (log
//   for log parameters): the range may cut off the optimum;
// - the Pareto front of the trade-off the objective weighs (victim p99 slowdown against
//   pause time; the objective's first flow metric when the runs have no victim class).
// Pure functions; the runs are made by tuning_baselines.hpp.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/tuning/tuning.hpp"

namespace rocelab::experiments {

inline constexpr const char* pfc_only_baseline = "pfc_only";
inline constexpr const char* vendor_default_baseline = "vendor_default";

// A configuration the tuner evaluates beside the search: a name and the fields it sets.
struct baseline_config {
  std::string name;
  std::vector<std::pair<std::string, std::string>> sets;  // spec path -> value text, in order
};

// pfc_only, then vendor_default (the tuned paths at their field defaults).
[[nodiscard]] std::vector<baseline_config> baseline_configs(const tuning_settings& settings);
// `base` with the baseline's fields set. Errors: a field the spec rejects (named).
[[nodiscard]] result<experiment_spec> apply_baseline(const experiment_spec& base, const baseline_config& config);

// Student's t quantile t_{0.975, df} (two-sided 95%); df >= 1. Exact table to df 30,
// then the Cornish-Fisher expansion (error < 1e-4).
[[nodiscard]] double student_t_975(std::size_t df);

struct confidence_interval {
  std::size_t n = 0;
  double mean = 0;
  double stddev = 0;      // sample standard deviation (n - 1)
  double half_width = 0;  // t_{0.975, n-1} stddev / sqrt(n); 0 when n < 2
  double low = 0, high = 0;
};
// The 95% interval of the mean of `samples` (Student's t). n < 2: the mean, no width.
[[nodiscard]] confidence_interval mean_ci95(const std::vector<double>& samples);

// Paths of the parameters whose applied value lies within `fraction` of an end of its
// range, on the search scale (log(value) for log parameters).
[[nodiscard]] std::vector<std::string> at_edge(const tuning_settings& settings, std::span<const double> values,
                                               double fraction = 0.02);

// Indices of the points no other point dominates, both coordinates minimized (a point is
// dominated by one at least as good in both and better in one), in input order. Points
// with a NaN coordinate are never on the front.
[[nodiscard]] std::vector<std::size_t> pareto_front(const std::vector<std::pair<double, double>>& points);

// The trade-off's axes for these summaries: x victim.slowdown_p99 when every summary has
// it, else the objective's first term on flows (not a pause/mark/drop count); y paused_us.
struct tradeoff_axes {
  std::string x = "victim.slowdown_p99";
  std::string y = "paused_us";
};
[[nodiscard]] tradeoff_axes tradeoff_axes_for(const objective_spec& objective, const std::vector<run_summary>& summaries);

}  // namespace rocelab::experiments

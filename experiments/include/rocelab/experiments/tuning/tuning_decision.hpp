#pragma once
// The rule that turns a tuning's evidence into an answer (the runs are made by
// tuning_baselines.hpp):
// - the search ran every trial and both baselines on the same seeds (common random
//   numbers); its best feasible trial is the contender;
// - the contender and every baseline run again on fresh seeds the search never saw, paired
//   seed by seed. The contender is the answer only if it is feasible there and beats every
//   baseline beyond the 95% confidence interval of the paired differences of the objective
//   (Student's t, n - 1 degrees of freedom), or the baseline is infeasible there;
// - otherwise a baseline is the answer: vendor_default when it beats pfc_only beyond the
//   same interval, else pfc_only. A tie goes to the baseline, and between baselines to PFC
//   only, the configuration with the fewest mechanisms in play.
// The answer states its gain per traffic class and what it costs (pause time, CNPs), each
// as fresh-seed means with the paired interval. Pure functions.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/tuning/tuning_answer.hpp"

namespace rocelab::experiments {

enum class paired_outcome : std::uint8_t { better, worse, tie };
[[nodiscard]] const char* to_string(paired_outcome o) noexcept;

// A metric of configuration `a` against `b` over common seeds: the means and the 95% CI of
// the paired differences a - b (lower is better for every metric compared here).
struct paired_comparison {
  std::string metric;  // "objective", "victim.slowdown_p99", "paused_us"
  double mean_a = 0, mean_b = 0;
  confidence_interval difference;
  paired_outcome outcome = paired_outcome::tie;  // better: the CI lies below 0
};
// Pairs a[k] with b[k] for k < min(size); NaNs drop their pair. Fewer than two pairs, or a
// CI containing 0, is a tie; identical samples are a tie with a zero-width interval.
[[nodiscard]] paired_comparison compare_paired(std::string metric, const std::vector<double>& a,
                                               const std::vector<double>& b);

// What the rule reads of one configuration on the fresh seeds.
struct fresh_evidence {
  std::string name;      // "trial 12", "pfc_only"
  std::string baseline;  // empty for the contender
  bool feasible = false;
  std::string violated;
  std::vector<double> objectives;      // one per fresh seed
  std::vector<run_summary> summaries;  // one per fresh seed
};

// The contender against one baseline.
struct baseline_verdict {
  std::string baseline;
  bool baseline_feasible = true;
  paired_comparison objective;            // contender - baseline
  std::vector<paired_comparison> metrics;  // gains_and_costs
  paired_outcome outcome = paired_outcome::tie;
};

struct tuning_decision {
  // "tuned" when the contender won, else the baseline's name.
  std::string answer;
  std::optional<std::string> contender;    // the contender's name; none when no trial was feasible
  std::vector<baseline_verdict> versus;    // the contender against each baseline
  std::optional<paired_comparison> vendor_vs_pfc;  // vendor_default - pfc_only, when both feasible
  std::string rule;                        // the rule in one sentence, for output
};

// Per traffic class p99 slowdown ("<kind>.slowdown_p99" for every class every summary
// has), then paused_us and cnp: a against b, paired.
[[nodiscard]] std::vector<paired_comparison> gains_and_costs(const std::vector<run_summary>& a,
                                                             const std::vector<run_summary>& b);

// Applies the rule. `contender` is absent when no trial was feasible on the search seeds.
// Errors: no configuration feasible on the fresh seeds.
[[nodiscard]] result<tuning_decision> decide(const std::optional<fresh_evidence>& contender,
                                             const std::vector<fresh_evidence>& baselines);

// "victims' p99 slowdown 1.9 against 10.8; incast p99 slowdown within noise (14.2 against
// 14.8); paused time 2.9 ms against 9.4 ms", from gains_and_costs: "within noise" when the
// paired CI contains zero.
[[nodiscard]] std::string describe_comparisons(const std::vector<paired_comparison>& metrics);

// A search answers only from evidence: when more than half of its trials failed (not
// evaluated: lost workers, refused results, failed runs), it recommends nothing. The error
// (failed_trials_code) says how many failed of how many and why, the reasons counted, most
// frequent first (three at most).
inline constexpr error_code failed_trials_code = error_code::unavailable;
[[nodiscard]] status enough_trials_evaluated(const std::vector<trial>& trials);

}  // namespace rocelab::experiments

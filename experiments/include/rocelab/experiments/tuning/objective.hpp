#pragma once
// What a tuning sweep minimizes and what a trial must satisfy, stated in the spec's
// `tuning:` section and scored from run summaries (summary.hpp), so the same objective
// reads a twin run, a virtual-lab run or a real one.
//
// Metrics are named like the summary's fields:
//   fct_p50_ns fct_p99_ns fct_max_ns slowdown_p50 slowdown_p99 flows completed incomplete
//   pause_frames paused_ns paused_us ce_marked cnp drops retransmits
//   allreduce.algbw_gbps allreduce.busbw_gbps allreduce.time_ns
// and per workload kind, "<kind>.<flow metric>": incast.slowdown_p99, victim.slowdown_p99,
// background.fct_p99_ns, allreduce.fct_p99_ns (kinds: traffic_classes below).
//
// The objective is a weighted sum of metrics (minimized; a negative weight rewards a
// metric). Constraints bound a metric from above (max) or below (min); every flow
// completing is an implicit constraint unless switched off, since FCT percentiles are
// taken over completed flows only and would otherwise reward losing the slowest flows.
//
// Repeats (seeds) are scored one by one and averaged: objective and constraint margins
// alike, so a constraint violated in one repeat shows as a positive mean margin.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/run/summary.hpp"

namespace rocelab::experiments {

// The traffic classes (workload_kind names) a metric may be taken over, in the order
// answers and errors list them.
inline constexpr std::string_view traffic_classes[] = {"incast", "victim", "allreduce", "background", "flow_list",
                                                       "other"};

struct objective_term {
  std::string metric;
  double weight = 1.0;
};

struct constraint_bound {
  std::string metric;
  std::optional<double> min;
  std::optional<double> max;
};

struct objective_spec {
  std::vector<objective_term> terms;
  std::vector<constraint_bound> constraints;
  bool require_complete = true;  // the implicit constraint incomplete <= 0
};

// The metric's value in a summary. Errors: unknown metric (with the valid names);
// an all-reduce metric of a run without all-reduce is unavailable.
[[nodiscard]] result<double> metric_value(const run_summary& summary, std::string_view metric);
// Whether `metric` names a metric (not whether a given run has it).
[[nodiscard]] status check_metric(std::string_view metric);

struct trial_score {
  double objective = 0;
  bool feasible = true;
  // One per constraint (the spec's, then `incomplete` when required): > 0 violated, in
  // units of the bound (value - max) / max(|max|, 1) or (min - value) / max(|min|, 1).
  std::vector<double> margins;
  std::vector<std::string> margin_names;  // "drops <= 0", "allreduce.busbw_gbps >= 80"
  std::string violated;                   // what failed, for messages; empty when feasible
};

// Scores the repeats of one trial (each summarized on its own). Errors: no repeats, no
// objective terms, a metric the runs do not have.
[[nodiscard]] result<trial_score> score(const objective_spec& objective, const std::vector<run_summary>& repeats);

// The number of margins score() yields for this objective.
[[nodiscard]] std::size_t constraint_count(const objective_spec& objective) noexcept;

// "1 x incast.slowdown_p99 + 0.01 x paused_us", for headers and reports.
[[nodiscard]] std::string describe(const objective_spec& objective);

}  // namespace rocelab::experiments

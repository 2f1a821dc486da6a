#pragma once
// The key results of a run summary as named rows, for every view that puts runs side by
// side (`rocelab runs show/diff`, the multi-run report): one list, so they all name and
// order the numbers alike.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/experiments/run/summary.hpp"

namespace rocelab::experiments {

struct summary_metric {
  std::string name;            // "fct p99", "incast slowdown p99", "paused", ...
  double value = 0;
  bool duration_ns = false;    // a time in nanoseconds (print it in us/ms)
  bool lower_is_better = true; // fewer pauses, drops, shorter times, lower slowdown
  bool measured = true;        // false: the run did not measure it (value 0 means nothing)
};

// flows, completed, fct p50/p99/max, slowdown p50/p99, per traffic class fct p99 and
// slowdown p99, pause frames, paused, CE marked, CNPs, drops, retransmits.
[[nodiscard]] std::vector<summary_metric> key_metrics(const run_summary& summary);

// The value as a reader wants it: times in us/ms/s (readable_duration), counts whole,
// ratios to three significant digits; "not measured" when it was not.
[[nodiscard]] std::string metric_text(const summary_metric& metric);

// The metric named `name` in `metrics`; nullptr when that list has none (a traffic class
// one run has and another not).
[[nodiscard]] const summary_metric* find_metric(const std::vector<summary_metric>& metrics, std::string_view name);

// The change from `before` to `after` in percent of |before|; nullopt when `before` is 0.
[[nodiscard]] std::optional<double> change_percent(double before, double after);

}  // namespace rocelab::experiments

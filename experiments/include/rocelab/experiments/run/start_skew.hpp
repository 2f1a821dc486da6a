#pragma once
// How far apart a real-time run's senders started, and the spec's limit on it.
//
// An incast is only an incast if its senders start together: a virtual or hardware run
// whose start skew (max - min of run_records::start_offsets_ns), plus the uncertainty of
// the clocks that measured it, exceeds timing.max_start_skew_ns is marked degraded with
// the numbers, never silently staggered. The twin starts on schedule (skew 0).

#include <cstdint>
#include <map>
#include <string>

#include "rocelab/common/records.hpp"

namespace rocelab::experiments {

// max - min of the offsets; 0 for none.
[[nodiscard]] std::int64_t start_skew_ns(const std::map<std::string, std::int64_t>& offsets);

// The reason to mark `records` degraded, or empty when the skew plus `clock_uncertainty_ns`
// is within `max_start_skew_ns` (0: no limit) or no start was measured.
[[nodiscard]] std::string start_skew_violation(const run_records& records, std::int64_t max_start_skew_ns,
                                               std::int64_t clock_uncertainty_ns = 0);

}  // namespace rocelab::experiments

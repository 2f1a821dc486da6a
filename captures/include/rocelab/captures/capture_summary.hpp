#pragma once
// What a reader of a large capture's analysis wants first: pause time per (port, priority)
// and the few worst intervals and flows, instead of every interval of a pause storm.
// Pure functions of a capture_analysis; ties keep the analysis' order, so the output is
// deterministic.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rocelab/captures/congestion_analyzer.hpp"

namespace rocelab::captures {

// From the full list analysis.pauses (the analyzer keeps the same as it goes, in
// capture_analysis::pause_summary and longest_pause_intervals).
// One entry per (port, priority) with at least one interval, ordered by port, priority.
[[nodiscard]] std::vector<port_priority_pauses> summarize_pauses(const capture_analysis& analysis);

// Indexes into analysis.pauses of the `n` longest intervals, longest first.
[[nodiscard]] std::vector<std::size_t> longest_pauses(const capture_analysis& analysis, std::size_t n);

// Indexes into analysis.flows of the `n` flows with the most retransmissions (only flows
// with some), most first; likewise by CE-marked packets.
[[nodiscard]] std::vector<std::size_t> flows_by_retransmits(const capture_analysis& analysis, std::size_t n);
[[nodiscard]] std::vector<std::size_t> flows_by_ce(const capture_analysis& analysis, std::size_t n);

}  // namespace rocelab::captures

#pragma once
// A worker's trial_result is input from the network, checked before it counts: a worker
// holds the token, not the controller's trust. Pure functions, no I/O.
//
// check_trial_result refuses (the error names the first fault, with its repeat and index):
// - a result without an error whose repeats are not exactly the spec's: `repeats` of
//   them, repeat i with index i and seed seed + i (the seeds a backend runs, backend.hpp);
//   a result with an error carries no repeats;
// - times that are negative (beyond the -1 of a flow that did not complete) or past
//   max_result_time_ns, so no sum, mean or percentile over them can overflow;
// - a completed flow whose fct_ns is not end_ns - start_ns, a flow not completed with an
//   fct, and a completed flow faster than half its ideal (an idle path's propagation plus
//   serialization: a sanity bound with room for any model's rounding, not a measurement);
// - pause intervals that end before they start, and host or device indexes past the
//   run's name tables.
//
// held_bytes bounds what a result holds in memory as its pieces are appended: its records
// twice (a vector appended to grows up to twice what it holds) plus its strings.
// record_bytes is O(repeats) and string_bytes O(records), so the controller counts a
// result arriving in pieces as the strings of each piece once plus the records of the
// whole so far, before appending the next piece.

#include <cstddef>
#include <cstdint>

#include "rocelab/common/result.hpp"
#include "rocelab/controller/trial_queue.hpp"
#include "rocelab/protocol/messages.hpp"

namespace rocelab::controller {

// ~13 days: longer than any run, far below where int64 sums of a run's times overflow.
inline constexpr std::int64_t max_result_time_ns = std::int64_t{1} << 50;

[[nodiscard]] status check_trial_result(const protocol::trial_result& r, const trial_work& expected);

[[nodiscard]] std::size_t held_bytes(const protocol::trial_result& r);
[[nodiscard]] std::size_t record_bytes(const protocol::trial_result& r);
[[nodiscard]] std::size_t string_bytes(const protocol::trial_result& r);

}  // namespace rocelab::controller

#pragma once
// The clock a run maps its agents through, chosen once when its jobs start and used for
// the whole run (the start instants sent and the reports mapped back use the same
// offsets, so a later probe cannot move a start that already happened).
//
// Host clocks: when the controller's host and every agent's host report a synchronised
// clock (PTP or chrony/ntpd, agents/clock/clock_source.hpp), each agent's offset is the
// difference of the two hosts' realtime-minus-monotonic (host_offset.offset_ns) and its
// uncertainty the agent's reported error bound. (The controller's own error moves every
// agent's mapping by the same amount: it shifts T0, not the senders' spread.) A host
// offset that disagrees with the probes' estimate beyond both bounds and the controller's
// is not trusted: those hosts keep different timescales. Nor are host clocks whose
// largest bound is looser than the estimate's largest uncertainty (an ntp host's maxerror
// of milliseconds against probes good to tens of microseconds): the run takes the
// tighter of the two.
// Otherwise: rocelab's own estimate (clock_offset.hpp) for every agent, its uncertainty
// the estimate's bound (half the best probe's round trip plus the drift since); `reason`
// says why host clocks were not used.
// The run's uncertainty is the largest agent's.
// Pure: inputs in, choice out.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/protocol/clock_offset.hpp"

namespace rocelab::protocol {

// An agent's offset from the two hosts' synchronised realtime clocks.
struct host_offset {
  std::string source;              // the agent host's: "ptp" | "ntp" | "none"
  double offset_ns = 0;            // agent - controller
  double error_bound_ns = 0;       // the agent host's
  std::string detail;
};

struct agent_clock_inputs {
  std::string agent;
  std::optional<clock_estimate> estimate;
  std::optional<host_offset> host;  // none: the agent reported no host clock
};

struct controller_host_clock {
  bool synchronised = false;
  double error_bound_ns = 0;
  std::string detail;
};

struct agent_clock_map {
  std::string agent;
  double offset_ns = 0;  // agent - controller
  double uncertainty_ns = 0;
  [[nodiscard]] std::int64_t to_agent(std::int64_t controller_ns) const;
  [[nodiscard]] std::int64_t to_controller(std::int64_t agent_ns) const;
};

struct run_clock {
  std::string source;        // "ptp", "ntp", "ntp+ptp" (hosts with either) or "estimate"
  double uncertainty_ns = 0;  // the largest agent's
  std::vector<agent_clock_map> agents;  // in the order of the inputs
  std::string reason;        // estimate: why host clocks were not used
};

// Errors: an agent without a clock estimate (unavailable), which the host clocks'
// consistency check needs.
[[nodiscard]] result<run_clock> choose_run_clock(const std::vector<agent_clock_inputs>& agents,
                                                 const controller_host_clock& controller);

}  // namespace rocelab::protocol

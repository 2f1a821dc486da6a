#pragma once
// A soft job: the soft RoCEv2 NIC (`rocelab nic-run`, traffic/soft_nic/nic_process.hpp)
// of this agent's host, run as the agent's child in the host's namespace. The agent
// relays its lines and nothing else: command lines from the controller (nic_command) go
// to the NIC's stdin, event lines from its stdout go back (nic_event), in order. The
// controller's nic_fleet drives the NIC as it drives a local one.
//
// The NIC's times are CLOCK_MONOTONIC; lines go back in the agent's clock (its offset
// added), which the controller maps onto its own timeline.
//
// End: when the NIC exits (after the controller's stop line, a cancel, the job's timeout
// or the dead-man switch) the job sends its final report: done, and an error when the
// NIC did not end cleanly. If the agent itself dies, the NIC reads EOF and stops.
// Private to agents/src/agent.

#include "job_runner.hpp"

namespace rocelab::agents::agent {

[[nodiscard]] result<std::shared_ptr<agent::job>> make_soft_job(const protocol::start_job& spec, job_context context);

}  // namespace rocelab::agents::agent

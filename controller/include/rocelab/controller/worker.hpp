#pragma once
// A worker (`rocelab worker --controller ADDR --token-file F`): a peer of the agents on the
// control plane that runs sweep trials on the twin. It connects over TLS-PSK, registers
// (register_worker: its name, host, capabilities and, under Slurm, its job, array task and
// node), then runs each trial_assignment and answers with a trial_result carrying the
// runs' records. Trials run one at a time on a thread of their own, so heartbeats keep
// going while a trial runs.
//
// A received spec carries data: one that names a file is refused (spec_files.hpp), as the
// controller refuses a client's. It runs on the twin only (the core backends).
//
// The session ends when the controller closes it (the sweep is over: success), when
// nothing came from the controller for the dead-man time it gave (an error: its trial, if
// any, is the controller's to re-queue), or when `stop_requested` answers true.
//
// Blocking; runs its own io_context on the calling thread.

#include <chrono>
#include <functional>
#include <string>

#include "rocelab/common/result.hpp"
#include "rocelab/protocol/messages.hpp"

namespace rocelab::controller {

struct worker_options {
  std::string controller;  // host:port
  std::string token;
  protocol::register_worker identity;  // worker_identity()
  std::chrono::milliseconds connect_timeout{10000};
  std::function<bool()> stop_requested;  // polled every 100 ms
  std::function<void(const std::string&)> log;
};

// This process as a worker: host name, pid, "<host>-<pid>" (or "<host>-<job>_<task>"
// under Slurm) as its name, the twin as capability, and SLURM_ARRAY_JOB_ID (or
// SLURM_JOB_ID), SLURM_ARRAY_TASK_ID and SLURMD_NODENAME from the environment.
[[nodiscard]] protocol::register_worker worker_identity();

// The trial's runs on the twin, as a trial_result (errors in its `error`). `cancel`
// answering true ends the run where it is (the session is over; nobody reads it).
[[nodiscard]] protocol::trial_result run_assigned_trial(const protocol::trial_assignment& a,
                                                        const std::function<bool()>& cancel = {});

// Serves the controller until the session ends (see above).
[[nodiscard]] status run_worker(const worker_options& options);

}  // namespace rocelab::controller

#pragma once
// A client of a running controller (`rocelab run SPEC --controller ADDR`, Python's
// rocelab.connect later): connects over TLS-PSK, says hello as a client, submits a spec
// and waits for the run to finish, heartbeating meanwhile.
//
// Submission is idempotent (protocol/messages.hpp, submit_run): the spec goes with a submission id
// drawn once. A connection lost while waiting (the controller died or restarted) is not
// the run's outcome: the client connects again and retries with the same id for up to
// reconnect_window, and the controller answers with the run's stored outcome (or attaches
// the client to it while it still runs). When it does not come back, the store at
// store_path (if given and readable) is asked by the id.
//
// Blocking; runs its own io_context on the calling thread.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/tuning/tuning_trials.hpp"
#include "rocelab/protocol/messages.hpp"

namespace rocelab::controller {

struct submit_options {
  std::string controller;  // host:port
  std::string token;
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds run_timeout{std::chrono::hours(24)};
  // Polled on the calling thread every `cancel_poll` while waiting (Ctrl-C in the CLI or
  // in Python). True closes the connection, which the controller takes as "cancel this
  // run": it stops the run and stores it interrupted with what it measured so far.
  // submit_spec then returns error_code::cancelled.
  std::function<bool()> cancel_requested;
  std::chrono::milliseconds cancel_poll{50};
  std::chrono::milliseconds reconnect_window{60000};  // from the loss of the first connection
  std::chrono::milliseconds reconnect_interval{250};
  std::string store_path;  // the controller's store, when this host can read it
  std::string submission;  // empty: submit_spec draws one (new_submission_id)
};

// 32 random hex digits prefixed "s-".
[[nodiscard]] std::string new_submission_id();

// The controller's answer; a run that failed is a run_finished with status "failed", an
// unreachable or refusing controller an error.
[[nodiscard]] result<protocol::run_finished> submit_spec(const submit_options& options, const std::string& spec_yaml,
                                               const std::string& source_name, const std::vector<std::string>& sets);

// A sweep's trial_runner (experiments/tuning/tuning_trials.hpp) over a running
// controller: each trial's spec goes as `rocelab run SPEC --controller` sends it, files
// inlined (the controller opens no path a client names); the controller runs it (on its
// workers or its lab) and stores it, and the trial is scored from the summary it returns
// (trial_runs::run_id: the run in the controller's store). A run that did not complete
// is an error naming it; options.cancel_requested answering true is error_code::cancelled.
// Safe from several threads at once (each call submits on its own connection).
[[nodiscard]] experiments::trial_runner remote_trial_runner(submit_options options);

}  // namespace rocelab::controller

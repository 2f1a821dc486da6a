#pragma once
// Executors: where a sweep's trials run (`--executor local|slurm --workers N`). Both run
// each trial on workers (`rocelab worker`, controller/worker.hpp) behind a controller;
// its trial queue re-queues a lost worker's trial (controller/trial_queue.hpp). The
// controller is either
//   embedded  started in this process, listening on `listen`, with a fresh token in a
//             file only this user reads, ended with the sweep (which lets the workers
//             exit and their jobs complete); or
//   attached  a running `rocelab controller` (`controller`, `token_file`: its token, in a
//             file the workers read too): each trial is submitted to it as a run, it hands
//             the run to a registered worker (in-process while none is) and stores it in
//             its store; the sweep's workers are cancelled when it ends.
//   local  N worker processes on this host (loopback).
//   slurm  one sbatch job array of N tasks, each `srun rocelab worker --controller ADDR
//          --token-file F`, with --slurm-opt K=V passed to sbatch as --K=V; tracked with
//          squeue, cancelled with scancel when the sweep fails or is interrupted (a sweep
//          that ends normally lets its workers finish, so the jobs complete).
// runner() is the experiments' trial_runner (tuning_trials.hpp), so the sweep does not
// know where its trials run. A stop (the caller's flag) or a failure (no worker left, the
// Slurm job gone, no worker reached the controller) ends the trials in flight with
// error_code::cancelled, which the sweep takes as "stopped here", not as failed trials.
//
// Thread-safety: runner()'s function is called from several threads at once; the rest
// from the thread that made the executor.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/cli/slurm.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/experiments/tuning/tuning_trials.hpp"

namespace rocelab::cli {

enum class executor_kind : std::uint8_t { threads, local, slurm };
[[nodiscard]] result<executor_kind> parse_executor(std::string_view text);

struct executor_options {
  executor_kind kind = executor_kind::local;
  std::uint32_t workers = 2;
  std::vector<std::string> slurm_opts;  // "partition=debug", "time=00:10:00"
  std::string listen;                   // embedded controller: empty: 127.0.0.1:0
  std::string controller;               // attached: a running controller's address
  std::string token_file;               // attached: its token file (read by the workers too)
  std::string db;                       // the controller's store (the sweep's); empty: one in work_dir
  std::string rocelab_binary;           // empty: this program
  // Token, worker logs and (without db) the controller's store; empty: .rocelab/sweeps/<pid>
  // in the current directory, removed when the workers end well (kept after a failure or
  // an interruption, for their logs; the token is removed always). A sweep killed outright
  // (kill -9) leaves its token: the next executor started here removes the directories of
  // such sweeps whose process is gone (cli/src/killed_sweeps.hpp). On a shared filesystem
  // for Slurm workers.
  std::string work_dir;
  std::string slurm_prefix;             // where sbatch & co. are; empty: PATH
  std::chrono::milliseconds worker_start_timeout{60000};
  std::function<bool()> stop_requested;  // polled: true stops the trials in flight (SIGINT)
  std::function<void(const std::string&)> log;
};

class sweep_executor {
 public:
  // Starts the controller and the workers (local: waits until they registered; slurm:
  // returns once sbatch took the job). Errors: the listen address, sbatch missing or
  // refusing, workers that do not start.
  [[nodiscard]] static result<std::unique_ptr<sweep_executor>> start(executor_options options);
  ~sweep_executor();
  sweep_executor(const sweep_executor&) = delete;
  sweep_executor& operator=(const sweep_executor&) = delete;

  [[nodiscard]] experiments::trial_runner runner();
  // "workers 2 running, 0 pending" (slurm: from squeue) for progress lines.
  [[nodiscard]] std::string progress() const;
  // Why the workers cannot go on; empty while they can.
  [[nodiscard]] std::string failure() const;
  // Ends the workers: `interrupted` (or a failure) cancels them at once, otherwise they
  // are let go and exit as the controller closes. Returns the Slurm job's final task
  // states (empty for local) as "41_0 COMPLETED on node1" lines.
  [[nodiscard]] std::vector<std::string> finish(bool interrupted);
  [[nodiscard]] const std::string& slurm_job() const noexcept;
  [[nodiscard]] std::string controller_address() const;

  class impl;

 private:
  explicit sweep_executor(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace rocelab::cli

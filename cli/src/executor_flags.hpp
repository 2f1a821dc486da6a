#pragma once
// The --executor flags of the commands whose twin runs can go to workers (tune, buffers,
// compare), and starting the workers buffers and compare ask for (cli/sweep_executor.hpp;
// tune starts its own: its executor also sets the trials in flight and answers in its JSON).

#include <CLI/CLI.hpp>

#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rocelab/cli/sweep_executor.hpp"
#include "stop_signal.hpp"

namespace rocelab::cli {

struct executor_flags {
  std::string executor;
  std::uint32_t workers = 2;
  std::vector<std::string> slurm_opts;
  std::string listen;
  std::string controller;  // a running controller the workers attach to
  std::string token_file;  // its token file
};

// `attach`: --controller and --token-file too, for commands that need only each run's
// summary (tune); compare and buffers read every run's records, which an attached
// controller keeps in its own store.
inline void add_executor_flags(CLI::App& app, executor_flags& f, const std::string& workers_help, bool attach = false) {
  app.add_option("--executor", f.executor,
                 "run the twin runs on workers: local (N worker processes here) or slurm (a job array of N workers)");
  app.add_option("--workers", f.workers, workers_help)->check(CLI::Range(1, 4096));
  app.add_option("--slurm-opt", f.slurm_opts, "--executor slurm: an sbatch option KEY=VALUE; repeatable")
      ->allow_extra_args(false);
  app.add_option("--listen", f.listen,
                 "--executor: the address the workers reach this command's controller on (default 127.0.0.1:0)");
  if (!attach) return;
  app.add_option("--controller", f.controller,
                 "--executor: a running controller (rocelab controller) to attach the workers to, instead of one in "
                 "this command; it runs and stores the runs");
  app.add_option("--token-file", f.token_file, "--controller: its token file (the workers read it too)");
}

// The executor options `f` asks for, or a usage error naming the flag.
[[nodiscard]] inline result<executor_options> executor_options_from(const executor_flags& f) {
  if (f.executor.empty()) {
    if (!f.slurm_opts.empty() || !f.listen.empty() || !f.controller.empty() || !f.token_file.empty())
      return status(error_code::invalid_argument, "--slurm-opt, --listen, --controller and --token-file need --executor");
    return status(error_code::not_found, "no executor");
  }
  auto kind = parse_executor(f.executor);
  if (!kind.ok() || *kind == executor_kind::threads)
    return status(error_code::invalid_argument, "--executor " + f.executor + ": expected local or slurm");
  executor_options eo;
  eo.kind = *kind;
  eo.workers = f.workers;
  eo.slurm_opts = f.slurm_opts;
  eo.listen = f.listen;
  eo.controller = f.controller;
  eo.token_file = f.token_file;
  return eo;
}

// The workers `f` asks for, started with `stop` installed (it is emplaced here); nullptr
// without --executor. On a bad flag or a failed start it says why on stderr as `command`
// and sets `exit_code` (2: usage, 1: the start failed). `db`: the executor controller's
// store (empty: its work directory's).
inline std::unique_ptr<sweep_executor> start_executor(const executor_flags& f, const std::string& command,
                                                      const std::string& db, std::optional<stop_signal>& stop,
                                                      int& exit_code) {
  exit_code = 0;
  auto options = executor_options_from(f);
  if (!options.ok()) {
    if (options.error().code() != error_code::not_found) {
      std::cerr << command << ": " << options.error().message() << "\n";
      exit_code = 2;
    }
    return nullptr;
  }
  stop.emplace();
  executor_options eo = std::move(*options);
  eo.db = db;
  eo.stop_requested = [&stop] { return stop->requested(); };
  eo.log = [command](const std::string& line) { std::cerr << command << ": " << line << "\n"; };
  auto started = sweep_executor::start(std::move(eo));
  if (!started.ok()) {
    std::cerr << command << ": " << started.error().message() << "\n";
    exit_code = started.error().code() == error_code::invalid_argument ? 2 : 1;
    return nullptr;
  }
  return std::move(*started);
}

// Ends the workers start_executor started (`run_failed`: the command's result failed, so
// they are told to stop rather than finish), each Slurm task's last state on stderr unless
// `quiet`, and resets `workers`; nothing without workers. The exit status when the workers failed (1, saying why) or
// `stop` was requested (stop_signal::exit_status, saying `interrupted`); none otherwise.
[[nodiscard]] inline std::optional<int> end_executor(std::unique_ptr<sweep_executor>& workers, bool run_failed,
                                                     const std::string& command,
                                                     const std::optional<stop_signal>& stop, bool quiet,
                                                     const std::string& interrupted) {
  if (!workers) return std::nullopt;
  const std::string failed = workers->failure();
  const bool stopped = stop && stop->requested();
  for (const auto& line : workers->finish(run_failed))
    if (!quiet) std::cerr << command << ": Slurm task " << line << "\n";
  workers.reset();
  if (!failed.empty()) {
    std::cerr << command << ": the workers failed: " << failed << "\n";
    return 1;
  }
  if (stopped) {
    std::cerr << command << ": " << interrupted << "\n";
    return stop_signal::exit_status;
  }
  return std::nullopt;
}

}  // namespace rocelab::cli

#pragma once
// The Slurm commands a sweep uses (sbatch, squeue, scancel, scontrol), run as programs
// through common/spawn.hpp with their output parsed here. Parsers are pure functions of
// the commands' text, tested on recorded output; the runner adds the errors a user needs:
// no Slurm on PATH, a job sbatch refused (its own message), a command that hangs.
//
// Output formats asked for (stable across Slurm 20-24):
//   sbatch --parsable            "<job id>[;<cluster>]"
//   squeue -h -o '%i|%T|%N|%r'   one line per job or array task: id|state|nodes|reason
//   scontrol -o show job <id>    one line per job or array task: Key=Value ...
//
// Thread-safety: slurm_commands is immutable after construction; its calls may run from
// several threads.

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/result.hpp"

namespace rocelab::cli {

// One job, or one task of a job array ("41_0"), as squeue or scontrol show it.
struct slurm_task {
  std::string id;      // "41_0", or "41" for a plain job, "41_[2-3]" for pending tasks
  std::string state;   // PENDING, RUNNING, COMPLETING, COMPLETED, CANCELLED, FAILED, ...
  std::string node;    // where it runs or ran ("(null)" / "" while pending)
  std::string reason;  // why it waits ("Resources", "None")
  int exit_code = 0;   // scontrol: ExitCode's first number
};

// "41", "41;cluster" -> "41"; an error naming the text for anything else.
[[nodiscard]] result<std::string> parse_sbatch_parsable(std::string_view out);
// squeue -h -o '%i|%T|%N|%r' lines; malformed lines are skipped.
[[nodiscard]] std::vector<slurm_task> parse_squeue(std::string_view out);
// scontrol -o show job lines (JobId, ArrayJobId, ArrayTaskId, JobState, NodeList, Reason, ExitCode).
[[nodiscard]] std::vector<slurm_task> parse_scontrol_jobs(std::string_view out);
// Counts of pending and running (RUNNING, COMPLETING, CONFIGURING) tasks; a pending
// array range "41_[2-5]" counts as its tasks.
struct slurm_counts {
  std::uint32_t pending = 0, running = 0;
};
[[nodiscard]] slurm_counts count_tasks(const std::vector<slurm_task>& tasks);

// A command's outcome.
struct program_output {
  int exit_status = 0;  // the exit code; 128 + signal when killed
  std::string out, err;
};

// Runs argv (argv[0] looked up on PATH) with `input` on its stdin, waits at most `timeout`
// (then kills it: an error). Errors: not on PATH (not_found), spawn and pipe failures.
[[nodiscard]] result<program_output> run_program(const std::vector<std::string>& argv, const std::string& input,
                                                 std::chrono::milliseconds timeout);

class slurm_commands {
 public:
  // `prefix`: a directory holding the commands; empty: PATH.
  explicit slurm_commands(std::string prefix = "") : prefix_(std::move(prefix)) {}

  // sbatch --parsable <args...> with the batch script on stdin; the job id.
  [[nodiscard]] result<std::string> submit(const std::vector<std::string>& args, const std::string& script) const;
  // squeue for one job (all its array tasks); empty once it left the queue.
  [[nodiscard]] result<std::vector<slurm_task>> queue(const std::string& job) const;
  // scontrol -o show job: the tasks' final states while slurmctld still remembers them.
  [[nodiscard]] result<std::vector<slurm_task>> show(const std::string& job) const;
  // scancel <job> (every array task); scancel <job>_<task> for one.
  [[nodiscard]] status cancel(const std::string& job) const;

 private:
  [[nodiscard]] result<program_output> run(const std::string& command, std::vector<std::string> args,
                                           const std::string& input = "") const;
  std::string prefix_;
};

}  // namespace rocelab::cli

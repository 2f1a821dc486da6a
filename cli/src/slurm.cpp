#include "rocelab/cli/slurm.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>

#include "rocelab/common/spawn.hpp"
#include "rocelab/common/unique_fd.hpp"

namespace rocelab::cli {
namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return std::string(s);
}

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> out;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);)
    if (auto t = trim(line); !t.empty()) out.push_back(t);
  return out;
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Tasks in a pending array range "41_[2-5,7]" (1 for anything else).
std::uint32_t tasks_in(std::string_view id) {
  const auto open = id.find("_[");
  if (open == std::string_view::npos) return 1;
  std::string_view list = id.substr(open + 2);
  if (const auto close = list.find(']'); close != std::string_view::npos) list = list.substr(0, close);
  if (const auto pct = list.find('%'); pct != std::string_view::npos) list = list.substr(0, pct);  // "[0-9%2]" throttle
  std::uint32_t n = 0;
  std::istringstream in{std::string(list)};
  for (std::string part; std::getline(in, part, ',');) {
    const auto dash = part.find('-');
    try {
      if (dash == std::string::npos) {
        (void)std::stoul(part);
        ++n;
      } else {
        const auto a = std::stoul(part.substr(0, dash)), b = std::stoul(part.substr(dash + 1));
        if (b >= a) n += static_cast<std::uint32_t>(b - a + 1);
      }
    } catch (const std::exception&) {
      return std::max<std::uint32_t>(n, 1);
    }
  }
  return std::max<std::uint32_t>(n, 1);
}

}  // namespace

result<std::string> parse_sbatch_parsable(std::string_view out) {
  const auto lines = lines_of(out);
  // sbatch may print warnings first; the id is the last line.
  const std::string last = lines.empty() ? "" : lines.back();
  const std::string id = last.substr(0, last.find(';'));
  if (!all_digits(id)) return status(error_code::malformed_input, "sbatch printed no job id: '" + trim(out) + "'");
  return id;
}

std::vector<slurm_task> parse_squeue(std::string_view out) {
  std::vector<slurm_task> tasks;
  for (const std::string& line : lines_of(out)) {
    std::vector<std::string> f;
    std::istringstream in(line);
    for (std::string part; std::getline(in, part, '|');) f.push_back(trim(part));
    if (f.size() < 2 || f[0].empty() || f[1].empty()) continue;
    slurm_task t;
    t.id = f[0];
    t.state = f[1];
    if (f.size() > 2 && f[2] != "(null)") t.node = f[2];
    if (f.size() > 3) t.reason = f[3];
    tasks.push_back(std::move(t));
  }
  return tasks;
}

std::vector<slurm_task> parse_scontrol_jobs(std::string_view out) {
  std::vector<slurm_task> tasks;
  for (const std::string& line : lines_of(out)) {
    std::map<std::string, std::string> kv;
    std::istringstream in(line);
    for (std::string word; in >> word;) {
      const auto eq = word.find('=');
      if (eq != std::string::npos) kv[word.substr(0, eq)] = word.substr(eq + 1);
    }
    if (!kv.contains("JobId") || !kv.contains("JobState")) continue;
    slurm_task t;
    t.id = kv["JobId"];
    if (kv.contains("ArrayJobId") && kv.contains("ArrayTaskId")) t.id = kv["ArrayJobId"] + "_" + kv["ArrayTaskId"];
    t.state = kv["JobState"];
    t.node = kv["NodeList"] == "(null)" ? "" : kv["NodeList"];
    t.reason = kv["Reason"];
    if (kv.contains("ExitCode")) {
      try {
        t.exit_code = std::stoi(kv["ExitCode"].substr(0, kv["ExitCode"].find(':')));
      } catch (const std::exception&) {
        t.exit_code = -1;
      }
    }
    tasks.push_back(std::move(t));
  }
  return tasks;
}

slurm_counts count_tasks(const std::vector<slurm_task>& tasks) {
  slurm_counts c;
  for (const slurm_task& t : tasks) {
    if (t.state == "PENDING" || t.state == "REQUEUED" || t.state == "CONFIGURING")
      c.pending += tasks_in(t.id);
    else if (t.state == "RUNNING" || t.state == "COMPLETING")
      c.running += 1;
  }
  return c;
}

result<program_output> run_program(const std::vector<std::string>& argv, const std::string& input,
                                   std::chrono::milliseconds timeout) {
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) return status(error_code::io_error, "pipe: " + std::string(std::strerror(errno)), errno);
  unique_fd in_r(in_pipe[0]), in_w(in_pipe[1]);
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return status(error_code::io_error, "pipe: " + std::string(std::strerror(errno)), errno);
  unique_fd out_r(out_pipe[0]), out_w(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) return status(error_code::io_error, "pipe: " + std::string(std::strerror(errno)), errno);
  unique_fd err_r(err_pipe[0]), err_w(err_pipe[1]);
  spawn_options so;
  so.argv = argv;
  so.search_path = argv.front().find('/') == std::string::npos;
  so.stdin_fd = in_r.get();
  so.stdout_fd = out_w.get();
  so.stderr_fd = err_w.get();
  auto pid = spawn(so);
  if (!pid) return pid.error();
  in_r.reset();
  out_w.reset();
  err_w.reset();
  // Small inputs (a batch script) fit the pipe; write it all, then close.
  for (std::size_t done = 0; done < input.size();) {
    const ssize_t n = ::write(in_w.get(), input.data() + done, input.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  in_w.reset();
  program_output o;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  std::array<pollfd, 2> fds{pollfd{out_r.get(), POLLIN, 0}, pollfd{err_r.get(), POLLIN, 0}};
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    if (::poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        fds[i].fd = -1;
      } else {
        (i == 0 ? o.out : o.err).append(buf, static_cast<std::size_t>(n));
      }
    }
  }
  if (timed_out) ::kill(*pid, SIGKILL);
  int st = 0;
  while (::waitpid(*pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    return status(error_code::cancelled,
                  argv.front() + " did not finish within " + std::to_string(timeout.count() / 1000) + " s");
  o.exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  return o;
}

result<program_output> slurm_commands::run(const std::string& command, std::vector<std::string> args,
                                           const std::string& input) const {
  args.insert(args.begin(), prefix_.empty() ? command : prefix_ + "/" + command);
  auto r = run_program(args, input, std::chrono::seconds(30));
  if (!r && r.error().code() == error_code::not_found)
    return status(error_code::not_found, "Slurm's " + command + " is not " +
                                             (prefix_.empty() ? "on PATH" : "in " + prefix_) +
                                             ": install slurm-client on this host (or try scripts/slurm-local up)");
  return r;
}

result<std::string> slurm_commands::submit(const std::vector<std::string>& args, const std::string& script) const {
  std::vector<std::string> a{"--parsable"};
  a.insert(a.end(), args.begin(), args.end());
  auto r = run("sbatch", a, script);
  if (!r) return r.error();
  if (r->exit_status != 0)
    return status(error_code::invalid_argument, "sbatch refused the job: " + trim(r->err.empty() ? r->out : r->err));
  return parse_sbatch_parsable(r->out);
}

result<std::vector<slurm_task>> slurm_commands::queue(const std::string& job) const {
  auto r = run("squeue", {"-h", "-j", job, "-o", "%i|%T|%N|%r"});
  if (!r) return r.error();
  // A job that already left the queue is an error for some versions: no tasks.
  if (r->exit_status != 0) {
    if (r->err.find("Invalid job id") != std::string::npos) return std::vector<slurm_task>{};
    return status(error_code::io_error, "squeue -j " + job + ": " + trim(r->err));
  }
  return parse_squeue(r->out);
}

result<std::vector<slurm_task>> slurm_commands::show(const std::string& job) const {
  auto r = run("scontrol", {"-o", "show", "job", job});
  if (!r) return r.error();
  if (r->exit_status != 0) return status(error_code::not_found, "scontrol show job " + job + ": " + trim(r->err));
  return parse_scontrol_jobs(r->out);
}

status slurm_commands::cancel(const std::string& job) const {
  auto r = run("scancel", {job});
  if (!r) return r.error();
  if (r->exit_status != 0) return status(error_code::io_error, "scancel " + job + ": " + trim(r->err));
  return status::success();
}

}  // namespace rocelab::cli

// spawn(): the child's steps and how they are reported. The child tells the parent what
// failed over a pipe that is O_CLOEXEC: a successful exec closes it, so end-of-file with
// nothing read means the program runs. A detached spawn's intermediate process sends the
// program's pid over the same pipe before it exits.

#include "rocelab/common/spawn.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "rocelab/common/unique_fd.hpp"

namespace rocelab {
namespace {

enum class step : std::int32_t {
  program_pid = 0,  // not a failure: a detached program's pid
  new_session,
  fork_detached,
  death_signal,
  parent_gone,
  join_netns,
  redirect_stdin,
  redirect_stdout,
  redirect_stderr,
  keep_fd,
  close_fds,
  exec,
};

// One report, written whole (far below PIPE_BUF, so never interleaved).
struct report {
  std::int32_t what = 0;
  std::int32_t value = 0;  // the errno, or the pid for program_pid
};

// Everything the child needs, prepared before fork: after it only async-signal-safe calls.
struct child_plan {
  const spawn_options* options = nullptr;
  std::vector<char*> argv;
  std::vector<int> keep;  // sorted, all > 2, the report pipe among them
  int report_fd = -1;
  int netns_fd = -1;
  pid_t parent = 0;
  int open_max = 1024;
};

void send_report(int fd, step s, std::int32_t value) noexcept {
  const report r{static_cast<std::int32_t>(s), value};
  (void)!::write(fd, &r, sizeof r);
}

[[noreturn]] void fail(const child_plan& p, step s) noexcept {
  send_report(p.report_fd, s, errno);
  ::_exit(s == step::join_netns ? 126 : 127);
}

// Puts `from` on descriptor `to`; a descriptor already there loses its O_CLOEXEC.
bool put_on(int from, int to) noexcept {
  if (from < 0) return true;
  if (from == to) return ::fcntl(to, F_SETFD, 0) == 0;
  return ::dup2(from, to) == to;
}

// Closes every descriptor above 2 except `keep` (sorted). close_range where the kernel
// has it, close() one by one where it does not.
bool close_all_but(const child_plan& p) noexcept {
  unsigned low = 3;
  auto close_span = [&](unsigned first, unsigned last) {
    if (::close_range(first, last, 0) == 0) return true;
    if (errno != ENOSYS && errno != EPERM) return false;
    const unsigned end = std::min(last, static_cast<unsigned>(p.open_max));
    for (unsigned fd = first; fd <= end; ++fd) (void)::close(static_cast<int>(fd));
    return true;
  };
  for (const int fd : p.keep) {
    const auto k = static_cast<unsigned>(fd);
    if (k > low && !close_span(low, k - 1)) return false;
    low = k + 1;
  }
  return close_span(low, ~0U);
}

[[noreturn]] void run_child(const child_plan& p) noexcept {
  const spawn_options& o = *p.options;
  if (o.detach) {
    if (::setsid() < 0) fail(p, step::new_session);
    const pid_t program = ::fork();
    if (program < 0) fail(p, step::fork_detached);
    if (program > 0) {
      send_report(p.report_fd, step::program_pid, program);
      ::_exit(0);
    }
  }
  if (o.death_signal != 0) {
    if (::prctl(PR_SET_PDEATHSIG, o.death_signal) != 0) fail(p, step::death_signal);
    // The caller may have ended between fork and prctl: then no signal would ever come.
    if (::getppid() != p.parent) {
      errno = ESRCH;
      fail(p, step::parent_gone);
    }
  }
  if (p.netns_fd >= 0 && ::setns(p.netns_fd, CLONE_NEWNET) != 0) fail(p, step::join_netns);
  if (!put_on(o.stdin_fd, STDIN_FILENO)) fail(p, step::redirect_stdin);
  if (!put_on(o.stdout_fd, STDOUT_FILENO)) fail(p, step::redirect_stdout);
  if (!put_on(o.stderr_fd, STDERR_FILENO)) fail(p, step::redirect_stderr);
  for (const int fd : o.keep_fds)
    if (fd > STDERR_FILENO && ::fcntl(fd, F_SETFD, 0) != 0) fail(p, step::keep_fd);
  if (!close_all_but(p)) fail(p, step::close_fds);
  if (o.search_path)
    ::execvp(p.argv[0], p.argv.data());
  else
    ::execv(p.argv[0], p.argv.data());
  fail(p, step::exec);
}

std::string describe(step s, const spawn_options& o) {
  switch (s) {
    case step::program_pid: return "reporting the program's pid";
    case step::new_session: return "starting a session (setsid)";
    case step::fork_detached: return "forking the detached program";
    case step::death_signal: return "setting the parent-death signal (PR_SET_PDEATHSIG)";
    case step::parent_gone: return "checking the parent is alive";
    case step::join_netns:
      return "joining network namespace " + o.netns + " (" + netns_directory + "/" + o.netns + ")";
    case step::redirect_stdin: return "putting descriptor " + std::to_string(o.stdin_fd) + " on stdin";
    case step::redirect_stdout: return "putting descriptor " + std::to_string(o.stdout_fd) + " on stdout";
    case step::redirect_stderr: return "putting descriptor " + std::to_string(o.stderr_fd) + " on stderr";
    case step::keep_fd: return "keeping the descriptors asked for";
    case step::close_fds: return "closing inherited descriptors";
    case step::exec: return std::string(o.search_path ? "execvp" : "execv") + " " + o.argv[0];
  }
  return "an unknown step";
}

void reap(pid_t pid) {
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

result<pid_t> spawn(const spawn_options& o) {
  if (o.argv.empty() || o.argv[0].empty()) return status(error_code::invalid_argument, "spawn: no program given");
  const std::string context = "starting " + o.argv[0];
  if (o.detach && o.death_signal != 0)
    return status(error_code::invalid_argument, context + ": a detached program has no parent-death signal");

  child_plan plan;
  plan.options = &o;
  unique_fd netns;
  if (!o.netns.empty()) {
    const std::string path = std::string(netns_directory) + "/" + o.netns;
    netns = unique_fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!netns.valid()) return status::from_errno(context + ": opening network namespace " + path);
    plan.netns_fd = netns.get();
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return status::from_errno(context + ": pipe");
  unique_fd report_rd(fds[0]), report_wr(fds[1]);
  if (report_wr.get() <= STDERR_FILENO) {  // the caller runs without a std descriptor: keep clear of 0..2
    report_wr = unique_fd(::fcntl(report_wr.get(), F_DUPFD_CLOEXEC, STDERR_FILENO + 1));
    if (!report_wr.valid()) return status::from_errno(context + ": pipe");
  }
  plan.report_fd = report_wr.get();

  std::vector<std::string> args = o.argv;  // execv takes char* const[]
  for (auto& a : args) plan.argv.push_back(a.data());
  plan.argv.push_back(nullptr);
  for (const int fd : o.keep_fds)
    if (fd > STDERR_FILENO) plan.keep.push_back(fd);
  plan.keep.push_back(plan.report_fd);
  std::sort(plan.keep.begin(), plan.keep.end());
  plan.keep.erase(std::unique(plan.keep.begin(), plan.keep.end()), plan.keep.end());
  const long open_max = ::sysconf(_SC_OPEN_MAX);
  plan.open_max = open_max > 0 ? static_cast<int>(std::min<long>(open_max, 1 << 20)) : 1024;
  plan.parent = ::getpid();

  const pid_t child = ::fork();
  if (child < 0) return status::from_errno(context + ": fork");
  if (child == 0) run_child(plan);
  report_wr.reset();

  pid_t program = o.detach ? -1 : child;
  bool failed = false;
  report failure;
  for (;;) {
    report r;
    const ssize_t n = ::read(report_rd.get(), &r, sizeof r);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof r)) break;
    if (r.what == static_cast<std::int32_t>(step::program_pid)) {
      program = static_cast<pid_t>(r.value);
    } else if (!failed) {
      failed = true;
      failure = r;
    }
  }
  // Without detach a failed child is reaped here; with detach the intermediate process
  // always is (a failed program's process is init's to reap).
  if (o.detach || failed) reap(child);
  if (failed) {
    const auto s = static_cast<step>(failure.what);
    const int e = failure.value;
    return status(s == step::exec ? error_code::not_found : error_code::io_error,
                  context + ": " + describe(s, o) + ": " + std::strerror(e), e);
  }
  if (program <= 0) return status(error_code::io_error, context + ": the detached program's pid never came");
  return program;
}

}  // namespace rocelab

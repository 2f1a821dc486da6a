#include "rocelab/fabric/drivers/process_runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "rocelab/common/spawn.hpp"
#include "rocelab/common/unique_fd.hpp"

namespace rocelab::fabric::drivers {
namespace {

status make_pipe(unique_fd& read_end, unique_fd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return status::from_errno("pipe");
  read_end.reset(fds[0]);
  write_end.reset(fds[1]);
  return status::success();
}

std::string describe(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

}  // namespace

result<process_output> run_process(const std::vector<std::string>& argv, const std::string& input,
                                   std::chrono::milliseconds timeout, std::size_t max_output_bytes) {
  if (argv.empty()) return status(error_code::invalid_argument, "run_process: empty argv");
  unique_fd in_r, in_w, out_r, out_w, err_r, err_w;
  // stdin is a socket pair, not a pipe: send(MSG_NOSIGNAL) to a child that exits without
  // reading gives EPIPE instead of a process-wide SIGPIPE.
  {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return status::from_errno("socketpair");
    in_r.reset(sv[0]);
    in_w.reset(sv[1]);
  }
  ROCELAB_RETURN_IF_ERROR(make_pipe(out_r, out_w));
  ROCELAB_RETURN_IF_ERROR(make_pipe(err_r, err_w));
  spawn_options child;
  child.argv = argv;
  child.search_path = true;
  child.stdin_fd = in_r.get();
  child.stdout_fd = out_w.get();
  child.stderr_fd = err_w.get();
  auto spawned = spawn(child);
  if (!spawned) {
    if (spawned.error().code() == error_code::not_found)
      return status(error_code::not_found, "cannot run " + argv[0] + " (not on PATH?)", spawned.error().sys_errno());
    return spawned.error();
  }
  const pid_t pid = *spawned;
  in_r.reset();
  out_w.reset();
  err_w.reset();
  ::fcntl(in_w.get(), F_SETFL, O_NONBLOCK);

  process_output result_out;
  std::size_t written = 0;
  if (input.empty()) in_w.reset();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  while (out_r.valid() || err_r.valid()) {
    pollfd fds[3];
    nfds_t n = 0;
    if (out_r.valid()) fds[n++] = {out_r.get(), POLLIN, 0};
    if (err_r.valid()) fds[n++] = {err_r.get(), POLLIN, 0};
    if (in_w.valid()) fds[n++] = {in_w.get(), POLLOUT, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    const int rc = ::poll(fds, n, static_cast<int>(std::min<std::int64_t>(left.count(), 1000)));
    if (rc < 0 && errno != EINTR) break;
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (in_w.valid() && fds[i].fd == in_w.get()) {
        const ssize_t w = ::send(in_w.get(), input.data() + written, input.size() - written, MSG_NOSIGNAL);
        if (w > 0) written += static_cast<std::size_t>(w);
        if (w < 0 && errno != EAGAIN && errno != EINTR) in_w.reset();
        else if (written == input.size()) in_w.reset();
        continue;
      }
      unique_fd& src = out_r.valid() && fds[i].fd == out_r.get() ? out_r : err_r;
      std::string& dst = &src == &out_r ? result_out.out : result_out.err;
      char buf[65536];
      const ssize_t r = ::read(src.get(), buf, sizeof buf);
      if (r > 0) {
        if (dst.size() + static_cast<std::size_t>(r) > max_output_bytes) {
          ::kill(pid, SIGKILL);
          ::waitpid(pid, nullptr, 0);
          return status(error_code::resource_exhausted,
                        describe(argv) + ": output beyond " + std::to_string(max_output_bytes) + " bytes");
        }
        dst.append(buf, static_cast<std::size_t>(r));
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        src.reset();
      }
    }
  }
  // Timed out, or poll itself failed: the child must not outlive the call.
  if (timed_out || out_r.valid() || err_r.valid()) ::kill(pid, SIGKILL);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    return status(error_code::cancelled, describe(argv) + ": no answer within " + std::to_string(timeout.count()) + " ms");
  result_out.exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  return result_out;
}

}  // namespace rocelab::fabric::drivers

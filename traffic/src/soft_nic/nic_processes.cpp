// The child-process carrier of a fleet's NICs (nic_links.hpp): fork + setns + exec of
// `rocelab nic-run` (common/spawn.hpp), lines over pipes.

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>

#include "rocelab/fabric/soft_switch/realtime_clock.hpp"
#include "rocelab/traffic/soft_nic/nic_channel.hpp"
#include "rocelab/traffic/soft_nic/nic_fleet.hpp"
#include "rocelab/common/spawn.hpp"

namespace rocelab::traffic::soft_nic {

namespace ss = fabric::soft_switch;

bool write_line(int fd, const std::string& s) {
  std::size_t off = 0;
  int spins = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN && ++spins < 2000) {
        pollfd p{fd, POLLOUT, 0};
        (void)::poll(&p, 1, 5);
        continue;
      }
      return false;
    }
    off += static_cast<std::size_t>(n);
  }
  return true;
}

result<nic_child> spawn_nic_process(const std::string& rocelab_binary, const std::string& netns,
                                    const std::string& log_path) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return status::from_errno("pipe");
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return status::from_errno("pipe");
  }
  nic_child c;
  c.to_child = unique_fd(in[1]);
  c.from_child = unique_fd(out[0]);
  unique_fd child_in(in[0]), child_out(out[1]);
  const std::string log = log_path.empty() ? "/dev/null" : log_path;
  unique_fd log_fd(::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  spawn_options child;
  child.argv = {rocelab_binary, "nic-run"};
  child.netns = netns;
  child.stdin_fd = child_in.get();
  child.stdout_fd = child_out.get();
  child.stderr_fd = log_fd.get();  // -1 (the log could not be opened): ours
  auto spawned = spawn(child);
  if (!spawned) return spawned.error();
  const pid_t pid = *spawned;
  c.pid = pid;
  const int fl = ::fcntl(c.from_child.get(), F_GETFL);
  (void)::fcntl(c.from_child.get(), F_SETFL, fl | O_NONBLOCK);
  return c;
}

std::string reap_nic_process(pid_t pid, std::chrono::milliseconds grace) {
  int st = 0;
  pid_t r = ::waitpid(pid, &st, WNOHANG);
  const std::int64_t deadline = ss::monotonic_ns() + grace.count() * 1'000'000;
  while (r == 0 && ss::monotonic_ns() < deadline) {
    ::usleep(20'000);
    r = ::waitpid(pid, &st, WNOHANG);
  }
  if (r == 0) {
    ::kill(pid, SIGKILL);
    (void)::waitpid(pid, &st, 0);
    return "killed after " + std::to_string(grace.count()) + " ms";
  }
  if (r < 0) return "not a child";
  if (WIFEXITED(st)) return "exit " + std::to_string(WEXITSTATUS(st));
  if (WIFSIGNALED(st)) return "signal " + std::to_string(WTERMSIG(st));
  return "ended";
}

namespace {

class process_links final : public nic_links {
 public:
  struct child {
    std::string host;
    nic_child proc;
    std::string buffer;
    bool closed = false;
    std::string why;
  };
  std::vector<child> children;

  ~process_links() override { stop({}); }

  bool send(std::uint32_t host, const std::string& line) override {
    auto& c = children.at(host);
    if (c.closed || !c.proc.to_child.valid()) return false;
    return write_line(c.proc.to_child.get(), line + "\n");
  }

  void receive(int wait_ms, const nic_line_fn& on_line) override {
    std::vector<pollfd> fds;
    for (auto& c : children) fds.push_back({c.closed ? -1 : c.proc.from_child.get(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), wait_ms) <= 0) return;
    for (std::uint32_t i = 0; i < children.size(); ++i) {
      auto& c = children[i];
      if (c.closed || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      char buf[16384];
      for (;;) {
        const ssize_t n = ::read(c.proc.from_child.get(), buf, sizeof buf);
        if (n > 0) {
          c.buffer.append(buf, static_cast<std::size_t>(n));
          continue;
        }
        if (n == 0) c.closed = true;
        break;
      }
      std::size_t nl;
      while ((nl = c.buffer.find('\n')) != std::string::npos) {
        const std::string line = c.buffer.substr(0, nl);
        c.buffer.erase(0, nl + 1);
        if (on_line) on_line(i, line);
      }
      if (c.closed && c.proc.pid > 0) {
        c.why = "its NIC process ended (" + reap_nic_process(c.proc.pid, std::chrono::milliseconds(500)) +
                "; see nic-" + c.host + ".log)";
        c.proc.pid = -1;
      }
    }
  }

  [[nodiscard]] std::string lost(std::uint32_t host) const override {
    const auto& c = children.at(host);
    return c.closed ? (c.why.empty() ? "its NIC process ended" : c.why) : std::string();
  }

  void stop(const nic_line_fn& on_line) override {
    for (auto& c : children)
      if (!c.closed && c.proc.to_child.valid())
        (void)write_line(c.proc.to_child.get(), encode_line(nic_command{stop_command{}}) + "\n");
    const std::int64_t deadline = ss::monotonic_ns() + 3'000'000'000;
    auto all_closed = [&] {
      for (const auto& c : children)
        if (!c.closed) return false;
      return true;
    };
    while (!all_closed() && ss::monotonic_ns() < deadline) receive(50, on_line);
    for (auto& c : children) {
      if (c.proc.pid <= 0) continue;
      const std::string how = reap_nic_process(c.proc.pid, std::chrono::seconds(2));
      if (how.starts_with("killed"))
        std::cerr << "rocelab: NIC of " << c.host << " (pid " << c.proc.pid << ") did not stop; " << how << "\n";
      c.proc.pid = -1;
      c.closed = true;
    }
  }
};

}  // namespace

std::vector<int> this_process_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

result<std::unique_ptr<nic_links>> start_nic_processes(const std::vector<fleet_host>& hosts,
                                                       const std::vector<nic_process_config>& configs,
                                                       const fleet_options& options) {
  if (options.rocelab_binary.empty()) return status(error_code::invalid_argument, "no rocelab binary");
  auto links = std::make_unique<process_links>();
  for (std::uint32_t i = 0; i < hosts.size(); ++i) {
    const std::string log = options.log_dir.empty() ? "" : options.log_dir + "/nic-" + hosts[i].name + ".log";
    auto p = spawn_nic_process(options.rocelab_binary, hosts[i].netns, log);
    if (!p) return p.error().with_context("starting the NIC of " + hosts[i].name);
    links->children.push_back({hosts[i].name, std::move(*p), {}, false, {}});
    if (!write_line(links->children.back().proc.to_child.get(), to_json(configs[i]).dump() + "\n"))
      return status(error_code::io_error, "sending the config to the NIC of " + hosts[i].name);
  }
  return std::unique_ptr<nic_links>(std::move(links));
}

}  // namespace rocelab::traffic::soft_nic

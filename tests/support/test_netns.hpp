#pragma once
// Test support for `lab` tests (root): a throwaway network namespace holding a veth pair,
// a way to run code and programs inside it, and a raw sender socket.
//
// Network rule: everything happens inside a namespace the test made, addressed from
// 198.18.0.0/15 (RFC 2544 benchmarking space), so nothing reaches the host's networks.
// Namespaces are named rl-t-<pid>-<n>; the destructor deletes the namespace, which
// destroys the veth pair with it, and never throws. iproute2 is run by fork/exec with an
// argv (no shell), and the names are ours.

#include <fcntl.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/common/unique_fd.hpp"

namespace rocelab::test {

using rocelab::unique_fd;

namespace detail {

inline std::vector<char*> to_argv(std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return argv;
}

// Waits for `pid` up to `timeout`; the exit status, or nullopt if it is still running.
inline std::optional<int> wait_for(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int wstatus = 0;
    const pid_t r = ::waitpid(pid, &wstatus, WNOHANG);
    if (r == pid) {
      if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
      if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
      return -1;
    }
    if (r < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace detail

// Runs a program (execvp, no shell) and waits for it, at most `timeout`, after which it is
// killed. Its output goes to the test's own stderr.
inline status run_program(std::vector<std::string> args,
                          std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  std::string shown;
  for (const auto& a : args) shown += (shown.empty() ? "" : " ") + a;
  auto argv = detail::to_argv(args);
  const pid_t pid = ::fork();
  if (pid < 0) return status::from_errno("fork for " + shown);
  if (pid == 0) {
    ::dup2(STDERR_FILENO, STDOUT_FILENO);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  const auto rc = detail::wait_for(pid, timeout);
  if (!rc) {
    ::kill(pid, SIGKILL);
    (void)detail::wait_for(pid, std::chrono::seconds(5));
    return {error_code::io_error, shown + ": timed out"};
  }
  if (*rc != 0) return {error_code::io_error, shown + ": exit status " + std::to_string(*rc)};
  return status::success();
}

// A child process whose stdout and stderr arrive on one pipe, read line by line with
// deadlines. The destructor stops it (SIGTERM, then SIGKILL) and reaps it.
class child_process {
 public:
  // Runs `args` (argv[0] is a path or a name on PATH) inside the network namespace
  // `netns` (a name under /run/netns, or empty for the current one). The child joins the
  // namespace with setns(2) between fork and exec, so only async-signal-safe calls run
  // there.
  static result<child_process> spawn(std::vector<std::string> args, const std::string& netns) {
    std::string shown;
    for (const auto& a : args) shown += (shown.empty() ? "" : " ") + a;
    unique_fd ns_fd;
    if (!netns.empty()) {
      ns_fd = unique_fd(::open(("/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC));
      if (!ns_fd.valid()) return status::from_errno("opening namespace " + netns);
    }
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return status::from_errno("pipe");
    unique_fd read_end(fds[0]), write_end(fds[1]);
    auto argv = detail::to_argv(args);
    const pid_t pid = ::fork();
    if (pid < 0) return status::from_errno("fork for " + shown);
    if (pid == 0) {
      if (ns_fd.valid() && ::setns(ns_fd.get(), CLONE_NEWNET) != 0) ::_exit(126);
      ::dup2(write_end.get(), STDOUT_FILENO);
      ::dup2(write_end.get(), STDERR_FILENO);
      ::execvp(argv[0], argv.data());
      ::_exit(127);
    }
    write_end.reset();
    ::fcntl(read_end.get(), F_SETFL, O_NONBLOCK);
    return child_process(pid, std::move(read_end));
  }

  child_process(child_process&& other) noexcept
      : pid_(std::exchange(other.pid_, -1)),
        out_(std::move(other.out_)),
        output_(std::move(other.output_)),
        exit_status_(other.exit_status_) {}
  child_process& operator=(child_process&&) = delete;
  ~child_process() {
    if (pid_ > 0 && !exit_status_) stop(std::chrono::seconds(5));
  }

  // Reads output until a line containing `needle` arrived (true), the child closed its
  // output, or the timeout ended (false).
  bool wait_for_output(const std::string& needle, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (output_.find(needle) != std::string::npos) return true;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !read_some(left)) return output_.find(needle) != std::string::npos;
    }
  }

  // Waits for the child to exit by itself; nullopt if it has not within `timeout`.
  std::optional<int> wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!exit_status_) {
      exit_status_ = detail::wait_for(pid_, std::chrono::milliseconds(20));
      (void)read_some(std::chrono::milliseconds(0));
      if (std::chrono::steady_clock::now() >= deadline) break;
    }
    if (exit_status_) drain();
    return exit_status_;
  }

  // SIGTERM, then SIGKILL after `grace`; returns the exit status.
  int stop(std::chrono::milliseconds grace) {
    if (exit_status_) return *exit_status_;
    ::kill(pid_, SIGTERM);
    if (auto rc = wait(grace)) return *rc;
    ::kill(pid_, SIGKILL);
    exit_status_ = detail::wait_for(pid_, std::chrono::seconds(10)).value_or(-1);
    drain();
    return *exit_status_;
  }

  [[nodiscard]] const std::string& output() const { return output_; }
  [[nodiscard]] pid_t pid() const { return pid_; }

 private:
  child_process(pid_t pid, unique_fd out) : pid_(pid), out_(std::move(out)) {}

  // Appends what is readable within `timeout`; false when the pipe is closed.
  bool read_some(std::chrono::milliseconds timeout) {
    if (!out_.valid()) return false;
    pollfd pfd{out_.get(), POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(timeout.count())) <= 0) return true;
    std::array<char, 4096> buf{};
    const ssize_t n = ::read(out_.get(), buf.data(), buf.size());
    if (n == 0) {
      out_.reset();
      return false;
    }
    if (n > 0) output_.append(buf.data(), static_cast<std::size_t>(n));
    return true;
  }
  void drain() {
    for (int i = 0; i < 1000 && read_some(std::chrono::milliseconds(50));) ++i;
  }

  pid_t pid_ = -1;
  unique_fd out_;
  std::string output_;
  std::optional<int> exit_status_;
};

// A namespace with a veth pair inside: `veth_a` (198.18.100.1/24) and `veth_b`
// (198.18.100.2/24), both up, IPv6 off so the kernel sends nothing of its own on them.
class test_netns {
 public:
  static constexpr const char* veth_a = "rl-a";
  static constexpr const char* veth_b = "rl-b";
  static constexpr const char* address_a = "198.18.100.1/24";
  static constexpr const char* address_b = "198.18.100.2/24";

  static result<test_netns> create() {
    static std::atomic<unsigned> counter{0};
    test_netns ns("rl-t-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    ROCELAB_RETURN_IF_ERROR(run_program({"ip", "netns", "add", ns.name_}));
    ns.created_ = true;
    // Router solicitations, DAD and MLD would otherwise land in captures and break
    // exact packet counts.
    ROCELAB_RETURN_IF_ERROR(ns.run_inside([] {
      for (const char* path : {"/proc/sys/net/ipv6/conf/all/disable_ipv6",
                               "/proc/sys/net/ipv6/conf/default/disable_ipv6"}) {
        std::ofstream out(path);
        if (out) out << "1\n";
      }
      return status::success();
    }));
    const auto ip = [&](std::vector<std::string> args) {
      args.insert(args.begin(), {"ip", "-n", ns.name_});
      return run_program(std::move(args));
    };
    ROCELAB_RETURN_IF_ERROR(
        ip({"link", "add", veth_a, "type", "veth", "peer", "name", veth_b}));
    ROCELAB_RETURN_IF_ERROR(ip({"addr", "add", address_a, "dev", veth_a}));
    ROCELAB_RETURN_IF_ERROR(ip({"addr", "add", address_b, "dev", veth_b}));
    ROCELAB_RETURN_IF_ERROR(ip({"link", "set", veth_a, "up"}));
    ROCELAB_RETURN_IF_ERROR(ip({"link", "set", veth_b, "up"}));
    ROCELAB_RETURN_IF_ERROR(ip({"link", "set", "lo", "up"}));
    return ns;
  }

  test_netns(test_netns&& other) noexcept
      : name_(std::move(other.name_)), created_(std::exchange(other.created_, false)) {}
  test_netns& operator=(test_netns&&) = delete;
  ~test_netns() {
    if (!created_) return;
    if (const status st = run_program({"ip", "netns", "del", name_}); !st.ok())
      std::cerr << "test_netns: deleting " << name_ << ": " << st.message() << '\n';
  }

  [[nodiscard]] const std::string& name() const { return name_; }

  // Runs `fn` on a thread that joined the namespace and returns its result. Sockets made
  // there stay in the namespace after the thread ends. `fn` returns a status or result.
  template <typename F>
  auto run_inside(F&& fn) -> decltype(fn()) {
    using R = decltype(fn());
    std::optional<R> out;
    std::thread worker([&] {
      const unique_fd ns_fd(::open(("/run/netns/" + name_).c_str(), O_RDONLY | O_CLOEXEC));
      if (!ns_fd.valid()) {
        out.emplace(status::from_errno("opening namespace " + name_));
        return;
      }
      if (::setns(ns_fd.get(), CLONE_NEWNET) != 0) {
        out.emplace(status::from_errno("setns into " + name_));
        return;
      }
      out.emplace(fn());
    });
    worker.join();
    return std::move(*out);
  }

 private:
  explicit test_netns(std::string name) : name_(std::move(name)) {}

  std::string name_;
  bool created_ = false;
};

// An AF_PACKET raw socket bound for sending on one interface of a namespace.
class raw_sender {
 public:
  static result<raw_sender> open(test_netns& ns, const std::string& interface) {
    return ns.run_inside([&]() -> result<raw_sender> {
      // Protocol 0: this socket only sends, so the kernel queues nothing for it.
      unique_fd fd(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
      if (!fd.valid()) return status::from_errno("socket(AF_PACKET)");
      const unsigned index = ::if_nametoindex(interface.c_str());
      if (index == 0) return status::from_errno("if_nametoindex(" + interface + ")");
      return raw_sender(std::move(fd), static_cast<int>(index));
    });
  }

  // Sends one complete Ethernet frame (destination MAC first).
  status send(std::span<const std::uint8_t> frame) {
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_ifindex = ifindex_;
    to.sll_halen = 6;
    std::memcpy(to.sll_addr, frame.data(), 6);
    for (int attempt = 0; attempt < 100; ++attempt) {
      const ssize_t n = ::sendto(fd_.get(), frame.data(), frame.size(), 0,
                                 reinterpret_cast<const sockaddr*>(&to), sizeof to);
      if (n == static_cast<ssize_t>(frame.size())) return status::success();
      if (n < 0 && errno != ENOBUFS && errno != EAGAIN && errno != EINTR)
        return status::from_errno("sendto");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // queue full: back off
    }
    return {error_code::resource_exhausted, "sendto kept failing with a full queue"};
  }

 private:
  raw_sender(unique_fd fd, int ifindex) : fd_(std::move(fd)), ifindex_(ifindex) {}
  unique_fd fd_;
  int ifindex_;
};

}  // namespace rocelab::test

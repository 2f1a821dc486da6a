#pragma once
// How a fleet's soft NICs are reached: the command lines of nic_process.hpp go out to
// each host's NIC and its event lines come back, whatever carries them. Two carriers:
//   - child processes of the orchestrator, one `rocelab nic-run` per host namespace
//     (start_nic_processes below; a run without agents);
//   - the lab's agents, each running its host's NIC and relaying the lines over the
//     controller protocol (controller/agent_nic_links.hpp; a run through the controller).
// nic_fleet drives either one the same way, so a run's records do not depend on which.
//
// Times in event lines are on the orchestrator's CLOCK_MONOTONIC: a carrier whose NICs
// run on another clock maps them before it hands the lines on.
//
// Threading: one thread (the fleet's) calls every member.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <sys/types.h>

#include "rocelab/common/result.hpp"
#include "rocelab/common/unique_fd.hpp"

namespace rocelab::traffic::soft_nic {

using nic_line_fn = std::function<void(std::uint32_t host, const std::string& line)>;

class nic_links {
 public:
  virtual ~nic_links() = default;
  // Queues one command line (no newline) for `host`'s NIC; false: it takes no more.
  virtual bool send(std::uint32_t host, const std::string& line) = 0;
  // Waits at most wait_ms for event lines and hands every one received to on_line, in
  // the order each host sent them.
  virtual void receive(int wait_ms, const nic_line_fn& on_line) = 0;
  // Why `host`'s NIC is gone (its process exited, its agent was lost); empty while it runs.
  [[nodiscard]] virtual std::string lost(std::uint32_t host) const = 0;
  // Sends every NIC still running the stop command, hands on the lines they send before
  // they end (their final counters), and ends them: at most a few seconds in all.
  virtual void stop(const nic_line_fn& on_line) = 0;
};

// One `rocelab nic-run` process, spawned by fork + setns + exec: its stdin and stdout are
// pipes to the caller (stdout non-blocking), its stderr the log file.
struct nic_child {
  pid_t pid = -1;
  unique_fd to_child;    // its stdin
  unique_fd from_child;  // its stdout
};

// `netns` names a namespace under /run/netns to run it in; empty: the caller's own.
[[nodiscard]] result<nic_child> spawn_nic_process(const std::string& rocelab_binary, const std::string& netns,
                                                  const std::string& log_path);
// Waits up to `grace` for the child to exit (after its stop command or EOF), then kills
// it; returns a description of how it ended ("exit 0", "killed after 2000 ms", ...).
std::string reap_nic_process(pid_t pid, std::chrono::milliseconds grace);
// Writes all of `s` to a pipe, waiting for room (bounded); false when the reader is gone.
[[nodiscard]] bool write_line(int fd, const std::string& s);

}  // namespace rocelab::traffic::soft_nic

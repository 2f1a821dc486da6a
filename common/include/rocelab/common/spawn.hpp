#pragma once
// Starting a program as a child process, the one place rocelab forks: fork, optionally
// join a named network namespace, put the given descriptors on stdin, stdout and stderr,
// close every other inherited descriptor except those asked for, optionally ask for a
// signal when the spawning thread ends, then exec.
//
// Why every descriptor is closed: sockets and pipes that libraries opened without
// O_CLOEXEC (Boost.Asio's TCP sockets among them) would otherwise live on in every program
// rocelab starts: a capture or a soft NIC started by a controller would hold its clients'
// and agents' connections open after the controller died, and nobody would see the
// connection close.
//
// Contract:
// - Between fork and exec the child makes only async-signal-safe calls, so spawn() may be
//   called from any thread of a multi-threaded process.
// - spawn() returns once the program runs (its exec succeeded) or a step failed. A failed
//   step is an error naming the program, the step and the errno ("starting rocelab:
//   joining network namespace rl-a (/run/netns/rl-a): Operation not permitted"); that
//   child has then been reaped. An exec that fails is error_code::not_found (the program
//   could not be run), every other step error_code::io_error.
// - The environment is the caller's. argv[0] is a path, or a name looked up on PATH when
//   search_path is set.
// - Without detach, the returned pid is the caller's child: the caller reaps it (waitpid).
//   With detach, the program runs in a session of its own, reparented to init by a double
//   fork; spawn() reaps the intermediate process and returns the program's pid, and there
//   is nothing left for the caller to reap.

#include <sys/types.h>

#include <string>
#include <vector>

#include "rocelab/common/result.hpp"

namespace rocelab {

// Where `ip netns add <name>` puts a named network namespace.
inline constexpr const char* netns_directory = "/run/netns";

struct spawn_options {
  std::vector<std::string> argv{};  // argv[0]: the program
  bool search_path = false;       // execvp (PATH lookup) instead of execv
  std::string netns{};            // named network namespace to run in; empty: the caller's
  // Put on descriptor 0, 1 and 2 in the child (-1: the caller's stays). They may be
  // O_CLOEXEC in the caller; the child's 0, 1 and 2 are not.
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  // Further descriptors that stay open in the program, at the same numbers (their
  // O_CLOEXEC is cleared in the child). Every descriptor above 2 not listed is closed.
  std::vector<int> keep_fds{};
  // PR_SET_PDEATHSIG: the signal the program gets when the thread that spawned it ends
  // (0: none). If the caller is already gone when the child sets it, the child exits
  // without running the program. Not with detach.
  int death_signal = 0;
  bool detach = false;  // own session, double fork (see the contract above)
};

[[nodiscard]] result<pid_t> spawn(const spawn_options& options);

}  // namespace rocelab

#pragma once
// The work directories a sweep leaves when its process is killed (kill -9): an executor
// started without --work-dir keeps its token (the embedded controller's secret), worker
// logs and controller store in .rocelab/sweeps/<pid>, and a killed sweep never removes them.

#include <filesystem>
#include <functional>
#include <string>

namespace rocelab::cli {

// This host's name, as an executor writes it into its directory's `host` file.
[[nodiscard]] std::string sweep_host_name();

// Removes each directory `sweeps`/<pid> that still holds a token and whose process is
// gone, when it has the shape an executor gives it: a directory (not a symlink) owned by
// this user, named by a pid, holding only regular files named token, host, controller.db
// (and its -wal, -shm, -journal) and worker-*.log; with a `host` file, only when it names
// this host (a sweep of another host sharing the directory has pids of its own). A directory whose token is gone is one a
// sweep ended itself and kept for its logs; it stays. Anything else is left as it is.
// `log` hears each directory removed and each that could not be. Never throws.
void remove_killed_sweeps(const std::filesystem::path& sweeps, const std::function<void(const std::string&)>& log);

}  // namespace rocelab::cli

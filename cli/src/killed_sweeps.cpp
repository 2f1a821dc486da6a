#include "killed_sweeps.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <fstream>

namespace rocelab::cli {
namespace {

namespace fs = std::filesystem;

bool is_pid_name(const std::string& name, pid_t& pid) {
  if (name.empty() || name.size() > 10 || name[0] == '0') return false;
  long long v = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), v);
  if (ec != std::errc{} || end != name.data() + name.size() || v <= 0 || v > INT_MAX) return false;
  pid = static_cast<pid_t>(v);
  return true;
}

// Gone: no process has the pid. A pid the kernel has reused keeps the directory (a live
// process may be a sweep), which leaves a token behind but never removes a live one.
bool process_gone(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

bool executor_file(const std::string& name) {
  if (name == "token" || name == "host" || name == "controller.db" || name == "controller.db-wal" || name == "controller.db-shm" ||
      name == "controller.db-journal")
    return true;
  return name.starts_with("worker-") && name.ends_with(".log");
}

// The directory holds only regular files an executor writes, and a token among them.
bool executor_shaped(const fs::path& dir) {
  std::error_code ec;
  bool token = false;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::file_status st = it->symlink_status(ec);
    if (ec || !fs::is_regular_file(st)) return false;
    const std::string name = it->path().filename().string();
    if (!executor_file(name)) return false;
    token = token || name == "token";
  }
  return !ec && token;
}

// A sweep on another host that shares this directory (NFS) has pids of its own: only
// directories of this host's sweeps (or of ones that did not say) are judged here.
bool this_hosts(const fs::path& dir) {
  std::ifstream in(dir / "host");
  if (!in) return true;
  std::string host;
  std::getline(in, host);
  return host == sweep_host_name();
}

}  // namespace

std::string sweep_host_name() {
  char h[256] = {};
  if (::gethostname(h, sizeof h - 1) != 0) return "localhost";
  return h;
}

void remove_killed_sweeps(const fs::path& sweeps, const std::function<void(const std::string&)>& log) {
  std::error_code ec;
  struct stat root {};
  if (::lstat(sweeps.c_str(), &root) != 0 || !S_ISDIR(root.st_mode)) return;
  for (fs::directory_iterator it(sweeps, ec), end; !ec && it != end; it.increment(ec)) {
    pid_t pid = 0;
    if (!is_pid_name(it->path().filename().string(), pid) || pid == ::getpid()) continue;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) continue;
    if (!executor_shaped(it->path()) || !this_hosts(it->path()) || !process_gone(pid)) continue;
    std::error_code removed;
    fs::remove_all(it->path(), removed);
    if (log)
      log(removed ? "could not remove " + it->path().string() + " of killed sweep " + std::to_string(pid) + ": " +
                        removed.message()
                  : "removed " + it->path().string() + " (token and logs of sweep process " + std::to_string(pid) +
                        ", which is gone)");
  }
}

}  // namespace rocelab::cli

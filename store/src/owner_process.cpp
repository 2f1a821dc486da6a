#include "owner_process.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <fstream>
#include <sstream>

namespace rocelab::store {

std::string this_host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof name) != 0) return "localhost";
  name[HOST_NAME_MAX] = '\0';
  return name;
}

namespace {

struct proc_stat {
  char state = '?';
  std::int64_t start_ticks = 0;
};

proc_stat read_proc_stat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!in || !std::getline(in, text)) return {};
  // Field 2 (comm) is in parentheses and may hold spaces; count fields after its last ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream fields(text.substr(close + 1));
  proc_stat out;
  std::string field;
  for (int i = 3; i <= 22; ++i) {
    if (!(fields >> field)) return {};
    if (i == 3) out.state = field.empty() ? '?' : field[0];
    if (i == 22) out.start_ticks = std::stoll(field);
  }
  return out;
}

}  // namespace

std::int64_t process_start_ticks(pid_t pid) { return read_proc_stat(pid).start_ticks; }

owner_process owner_process::self() {
  const pid_t pid = ::getpid();
  return {this_host_name(), pid, process_start_ticks(pid)};
}

bool owner_process::alive_on_this_host() const {
  if (host != this_host_name()) return true;
  if (pid <= 0 || pid > INT_MAX) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
  const proc_stat now = read_proc_stat(static_cast<pid_t>(pid));
  // A killed owner that its parent has not reaped yet is a zombie: it will write no more.
  if (now.state == 'Z' || now.state == 'X') return false;
  // A process in another pid namespace may hide /proc; then trust kill().
  if (now.start_ticks == 0 || start_ticks == 0) return true;
  return now.start_ticks == start_ticks;
}

}  // namespace rocelab::store

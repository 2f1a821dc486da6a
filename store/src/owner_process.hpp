#pragma once
// Who owns a running run: host name, pid and the process's start time, so that a pid the
// kernel has since reused for another process is not mistaken for the owner.

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace rocelab::store {

struct owner_process {
  std::string host;
  std::int64_t pid = 0;
  std::int64_t start_ticks = 0;  // /proc/<pid>/stat field 22 (clock ticks after boot); 0 unknown

  [[nodiscard]] static owner_process self();
  // False only when this host can tell the process is gone: no such pid, or a pid with
  // a different start time. A run owned by another host is never judged here.
  [[nodiscard]] bool alive_on_this_host() const;
};

[[nodiscard]] std::string this_host_name();
[[nodiscard]] std::int64_t process_start_ticks(pid_t pid);  // 0 when unreadable

}  // namespace rocelab::store

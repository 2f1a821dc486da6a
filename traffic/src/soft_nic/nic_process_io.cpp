#include "nic_process_io.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace rocelab::traffic::soft_nic {

bool line_reader::fill() {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n > 0) {
      pending_.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return false;
    return errno == EAGAIN || errno == EINTR;
  }
}

bool line_reader::next(std::string& line) {
  const auto nl = pending_.find('\n');
  if (nl == std::string::npos) return false;
  line = pending_.substr(0, nl);
  pending_.erase(0, nl + 1);
  return true;
}

void write_event(int fd, const nic_event& e) {
  std::string s = encode_line(e);
  s.push_back('\n');
  std::string_view rest = s;
  while (!rest.empty()) {
    const ssize_t n = ::write(fd, rest.data(), rest.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        pollfd p{fd, POLLOUT, 0};
        (void)::poll(&p, 1, 100);
        continue;
      }
      return;
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace rocelab::traffic::soft_nic

#include "rocelab/protocol/stamped_udp.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>

#include "rocelab/common/monotonic_clock.hpp"
#include "rocelab/common/realtime_read.hpp"

namespace rocelab::protocol {

status enable_receive_timestamps(int fd) {
  const int on = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on) != 0)
    return status(error_code::io_error, std::string("setsockopt(SO_TIMESTAMPNS): ") + std::strerror(errno), errno);
  return {};
}

result<std::optional<stamped_datagram>> receive_stamped(int fd, std::span<std::uint8_t> buffer) {
  stamped_datagram d;
  iovec iov{buffer.data(), buffer.size()};
  alignas(cmsghdr) std::uint8_t control[CMSG_SPACE(sizeof(timespec))];
  msghdr msg{};
  msg.msg_name = &d.from;
  msg.msg_namelen = sizeof d.from;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = 0;
  do {
    n = ::recvmsg(fd, &msg, MSG_DONTWAIT | MSG_TRUNC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return std::optional<stamped_datagram>{};
    return status(error_code::io_error, std::string("recvmsg: ") + std::strerror(errno), errno);
  }
  d.bytes = static_cast<std::size_t>(n);
  d.from_bytes = msg.msg_namelen;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS && c->cmsg_len >= CMSG_LEN(sizeof(timespec))) {
      timespec ts{};
      std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
      d.kernel_realtime_ns = static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
      d.stamped = true;
    }
  }
  return std::optional<stamped_datagram>{d};
}

std::int64_t received_monotonic_ns(const stamped_datagram& d) noexcept {
  const std::int64_t now = monotonic_ns();
  return d.stamped ? std::min(now, monotonic_no_earlier_than(d.kernel_realtime_ns)) : now;
}

}  // namespace rocelab::protocol

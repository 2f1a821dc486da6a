#pragma once
// Kernel receive timestamps on a UDP socket (adapter): SO_TIMESTAMPNS makes the kernel
// stamp each datagram with CLOCK_REALTIME when it arrives, before any thread gets to it;
// receive_stamped() reads one datagram with its stamp. The clock exchange
// (clock_datagram.hpp) uses them so neither side's scheduling enters its round trip.
// received_monotonic_ns() maps the realtime stamp onto CLOCK_MONOTONIC, on which the
// exchange is timed (common/realtime_read.hpp): both clocks tick at the same rate in
// between, short of a step of the realtime clock (which the exchange's consistency checks
// then refuse).
//
// Threading: plain system calls on a descriptor the caller owns.

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <span>

#include "rocelab/common/result.hpp"

namespace rocelab::protocol {

// Errors: io_error with errno, naming the option.
[[nodiscard]] status enable_receive_timestamps(int fd);

struct stamped_datagram {
  std::size_t bytes = 0;  // the datagram's real size (larger than the buffer when truncated)
  sockaddr_storage from{};
  socklen_t from_bytes = 0;
  bool stamped = false;  // false: the kernel attached no timestamp
  std::int64_t kernel_realtime_ns = 0;
};

// One waiting datagram, without blocking; nullopt when none waits. Errors: io_error.
[[nodiscard]] result<std::optional<stamped_datagram>> receive_stamped(int fd, std::span<std::uint8_t> buffer);

// When the datagram arrived on CLOCK_MONOTONIC, never earlier than the truth: its kernel
// stamp mapped (monotonic_no_earlier_than), or now when it has none or the mapping would
// lie ahead of now.
[[nodiscard]] std::int64_t received_monotonic_ns(const stamped_datagram& d) noexcept;

}  // namespace rocelab::protocol

#pragma once
// The clock controllers and agents timestamp with: CLOCK_MONOTONIC in nanoseconds. It
// never steps (NTP slews or steps CLOCK_REALTIME), it is the clock the soft NIC and the
// soft switch stamp with (one timeline for every namespace of a machine), and across
// machines the estimated offset (clock_offset.hpp) maps it onto the controller's.
// `offset_ns` lets tests give an agent a deliberately wrong clock without touching the
// machine's time.

#include <time.h>

#include <cstdint>

namespace rocelab::protocol {

[[nodiscard]] inline std::int64_t monotonic_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct clock_source {
  std::int64_t offset_ns = 0;
  [[nodiscard]] std::int64_t now_ns() const noexcept { return monotonic_ns() + offset_ns; }
};

}  // namespace rocelab::protocol

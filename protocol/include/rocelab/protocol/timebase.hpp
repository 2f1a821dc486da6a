#pragma once
// The clock controllers and agents timestamp with: CLOCK_MONOTONIC in nanoseconds. It
// never steps (NTP slews or steps CLOCK_REALTIME), it is the clock the soft NIC and the
// soft switch stamp with (one timeline for every namespace of a machine), and across
// machines the estimated offset (clock_offset.hpp) maps it onto the controller's.
// `offset_ns` lets tests give an agent a deliberately wrong clock without touching the
// machine's time.

#include <cstdint>

#include "rocelab/common/monotonic_clock.hpp"

namespace rocelab::protocol {

using rocelab::monotonic_ns;

struct clock_source {
  std::int64_t offset_ns = 0;
  [[nodiscard]] std::int64_t now_ns() const noexcept { return monotonic_ns() + offset_ns; }
};

}  // namespace rocelab::protocol

#pragma once
// CLOCK_MONOTONIC in nanoseconds: the clock for deadlines, intervals and the virtual
// lab's shared timeline.
//
// Why not CLOCK_REALTIME: time differences become line-rate serialization, pause expiry
// and timeouts, so an NTP step or slew of the wall clock would stretch or cut them;
// CLOCK_MONOTONIC never steps. It is also one timeline for every process on the machine:
// network namespaces do not virtualise it (only time namespaces would, and rocelab makes
// none), so the soft switch and the soft NICs in their namespaces stamp on the same axis.
// Reading it cannot fail for this clock id; it is async-signal-safe and thread-safe.

#include <time.h>

#include <cstdint>

namespace rocelab {

[[nodiscard]] inline std::int64_t monotonic_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace rocelab

#include "rocelab/fabric/soft_switch/realtime_clock.hpp"

#include <time.h>

namespace rocelab::fabric::soft_switch {
namespace {
std::int64_t read(clockid_t id) noexcept {
  timespec ts{};
  ::clock_gettime(id, &ts);  // cannot fail for these clock ids
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

std::int64_t realtime_offset_ns() noexcept {
  // Bracket the realtime read with two monotonic reads and take the midpoint.
  const std::int64_t a = read(CLOCK_MONOTONIC);
  const std::int64_t r = read(CLOCK_REALTIME);
  const std::int64_t b = read(CLOCK_MONOTONIC);
  return r - (a + (b - a) / 2);
}

realtime_clock::realtime_clock() : timers_(monotonic_ns()) { timers_.reserve(1024); }

}  // namespace rocelab::fabric::soft_switch

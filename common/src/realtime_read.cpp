#include "rocelab/common/realtime_read.hpp"

#include <time.h>

#include <algorithm>

#include "rocelab/common/monotonic_clock.hpp"

namespace rocelab {

realtime_read tightest_realtime_read(int tries, std::int64_t good_enough_span_ns) noexcept {
  realtime_read best;
  std::int64_t best_span = INT64_MAX;
  for (int i = 0; i < std::max(tries, 1); ++i) {
    timespec rt{};
    realtime_read r;
    r.monotonic_before_ns = monotonic_ns();
    ::clock_gettime(CLOCK_REALTIME, &rt);
    r.monotonic_after_ns = monotonic_ns();
    r.realtime_ns = static_cast<std::int64_t>(rt.tv_sec) * 1'000'000'000 + rt.tv_nsec;
    const std::int64_t span = r.monotonic_after_ns - r.monotonic_before_ns;
    if (span < best_span) {
      best_span = span;
      best = r;
    }
    if (best_span <= good_enough_span_ns) break;
  }
  return best;
}

std::int64_t monotonic_no_earlier_than(std::int64_t realtime_ns) noexcept {
  const realtime_read r = tightest_realtime_read(8, 100);
  return realtime_ns - (r.realtime_ns - r.monotonic_after_ns);
}

}  // namespace rocelab

#include "rocelab/common/realtime_read.hpp"

#include <gtest/gtest.h>

#include <time.h>

#include "rocelab/common/monotonic_clock.hpp"

namespace rocelab {
namespace {

std::int64_t realtime_now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

TEST(realtime_read, the_realtime_clock_is_read_between_its_two_monotonic_reads) {
  const realtime_read r = tightest_realtime_read(4, 0);
  EXPECT_LE(r.monotonic_before_ns, r.monotonic_after_ns);
  EXPECT_GT(r.realtime_ns, r.monotonic_after_ns) << "the realtime clock counts from 1970";
}

// A realtime stamp maps to no earlier than the monotonic time it was taken at, and to no
// later than a monotonic read after the mapping.
TEST(realtime_read, a_realtime_stamp_maps_onto_the_monotonic_clock_never_early) {
  for (int i = 0; i < 100; ++i) {
    const std::int64_t before = monotonic_ns();
    const std::int64_t stamp = realtime_now_ns();
    const std::int64_t mapped = monotonic_no_earlier_than(stamp);
    const std::int64_t after = monotonic_ns();
    EXPECT_GE(mapped, before) << "try " << i;
    EXPECT_LE(mapped, after) << "try " << i;
  }
}

}  // namespace
}  // namespace rocelab

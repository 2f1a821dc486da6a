#pragma once
// How this host's CLOCK_REALTIME (what kernel timestamps and synchronised hosts speak)
// stands against its CLOCK_MONOTONIC (what rocelab schedules on): the realtime clock read
// between two monotonic reads. A read that a preemption split is read again; the
// tightest pair of a few tries is kept.
//
// Both clocks are slewed alike, so the difference holds between steps of the realtime
// clock; a step in between is for the caller's consistency checks to catch.
// Threading: plain clock reads, safe from any thread.

#include <cstdint>

namespace rocelab {

struct realtime_read {
  std::int64_t realtime_ns = 0;
  std::int64_t monotonic_before_ns = 0;  // read just before the realtime clock
  std::int64_t monotonic_after_ns = 0;   // and just after
};

// Up to `tries` reads (at least one); stops at the first whose monotonic reads are at
// most good_enough_span_ns apart, else returns the tightest.
[[nodiscard]] realtime_read tightest_realtime_read(int tries, std::int64_t good_enough_span_ns) noexcept;

// The CLOCK_MONOTONIC time of a CLOCK_REALTIME timestamp taken on this host (a kernel
// receive stamp), never earlier than the truth: mapped through the later monotonic read of
// the tightest of up to 8 reads, so it is late by at most that read's span (tens of
// nanoseconds). A clock exchange built on it keeps its error bound (half the round trip)
// exact.
[[nodiscard]] std::int64_t monotonic_no_earlier_than(std::int64_t realtime_ns) noexcept;

}  // namespace rocelab

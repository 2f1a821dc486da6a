#pragma once
// fabric::clock in real time, for the soft switch and the soft NICs.
//
// now_ns() reads CLOCK_MONOTONIC (common/monotonic_clock.hpp says why that clock).
// realtime_offset_ns() maps it onto wall-clock time for records (capture timestamps are
// CLOCK_REALTIME).
//
// Timers live in a heap (the virtual clock's, which is tested and allocation-free in
// steady state) and fire only when the owner's event loop calls run_due(); they never
// fire from a signal or another thread. A timer fires with its due time as `now_ns`
// (never later than the real time at the call), so periodic work such as PFC refresh
// keeps its schedule even when the loop wakes late.
// Threading: one thread, the event loop's.

#include <cstdint>

#include "rocelab/common/monotonic_clock.hpp"
#include "rocelab/fabric/clock.hpp"

namespace rocelab::fabric::soft_switch {

// CLOCK_MONOTONIC in nanoseconds (common/monotonic_clock.hpp).
using rocelab::monotonic_ns;
// CLOCK_REALTIME - CLOCK_MONOTONIC now, in nanoseconds.
[[nodiscard]] std::int64_t realtime_offset_ns() noexcept;

class realtime_clock final : public clock {
 public:
  realtime_clock();
  [[nodiscard]] std::int64_t now_ns() const override { return monotonic_ns(); }
  timer_id schedule(std::int64_t at_ns, timer_client& client, std::uint64_t cookie) override {
    return timers_.schedule(at_ns, client, cookie);
  }
  bool cancel(timer_id id) override { return timers_.cancel(id); }

  // Fires every timer due at or before `now_ns` (in due-time order, ties in scheduling
  // order); returns how many fired.
  std::size_t run_due(std::int64_t now_ns) { return timers_.run_until(now_ns); }
  // Due time of the earliest pending timer, or never_ns.
  [[nodiscard]] std::int64_t next_due_ns() { return timers_.next_event_ns(); }
  [[nodiscard]] std::size_t pending() const { return timers_.pending(); }

 private:
  virtual_clock timers_;  // its time only advances through run_due
};

}  // namespace rocelab::fabric::soft_switch

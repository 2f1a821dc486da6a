#pragma once
// A port's packet-rate shaper: at most rate_pps departures per second, the packets-per-
// second meter a switch scheduler can have beside its bits-per-second one (SAI
// SAI_SCHEDULER_ATTR_METER_TYPE = PACKETS). The soft switch uses it to declare the frame
// rate its forwarder sustains, so that above that rate frames wait in the shared buffer
// and the MMU decides (drop, or PFC for a lossless priority) instead of a ring overflow.
//
// Timing follows the switch's bit shaper: a departure that is late by at most
// max_catchup_ns is counted from the previous slot, so the long-run rate is rate_pps even
// when the loop wakes late; after a longer gap the next slot starts at the departure (no
// burst credit saved up). Slot times are kept in picoseconds so that rates that do not
// divide a second evenly do not drift.
//
// Pure: time comes in as arguments. rate_pps == 0 is no limit.

#include <algorithm>
#include <cstdint>

namespace rocelab::fabric::soft_switch {

class packet_pacer {
 public:
  packet_pacer() = default;
  packet_pacer(std::int64_t rate_pps, std::int64_t max_catchup_ns)
      : interval_ps_(rate_pps > 0 ? 1'000'000'000'000 / rate_pps : 0), max_catchup_ps_(max_catchup_ns * 1000) {}

  [[nodiscard]] bool limited() const noexcept { return interval_ps_ > 0; }
  [[nodiscard]] std::int64_t interval_ps() const noexcept { return interval_ps_; }
  // The earliest time (ns, rounded up) the next departure may happen.
  [[nodiscard]] std::int64_t next_ns() const noexcept { return (next_ps_ + 999) / 1000; }
  [[nodiscard]] bool ready(std::int64_t now_ns) const noexcept { return now_ns * 1000 >= next_ps_; }
  // A departure at now_ns (which must be ready(now_ns)).
  void on_departure(std::int64_t now_ns) noexcept { on_departure(now_ns, 0); }
  // The same after the switch's loop was away for stall_ns (> 0): the slots since
  // now_ns - stall_ns were the port's, so the catch-up window widens to stall_ns and a
  // departure later than that is scheduled from now_ns - stall_ns rather than from now.
  void on_departure(std::int64_t now_ns, std::int64_t stall_ns) noexcept {
    if (interval_ps_ == 0) return;
    const std::int64_t now_ps = now_ns * 1000, stall_ps = stall_ns * 1000;
    const bool on_time = next_ps_ > 0 && now_ps - next_ps_ <= std::max(max_catchup_ps_, stall_ps);
    next_ps_ = (on_time ? next_ps_ : stall_ps > 0 ? std::max(next_ps_, now_ps - stall_ps) : now_ps) + interval_ps_;
  }

 private:
  std::int64_t interval_ps_ = 0, max_catchup_ps_ = 0;
  std::int64_t next_ps_ = 0;
};

}  // namespace rocelab::fabric::soft_switch

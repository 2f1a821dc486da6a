#pragma once
// NIC receive timestamps onto CLOCK_REALTIME, as a pure component (no DPDK, no clock
// reads: the caller hands in every sample and "now").
//
// Two kinds of timestamp reach a capture:
// - Already wall-clock nanoseconds: mlx5 with REAL_TIME_CLOCK_ENABLE stamps packets from
//   its real-time clock while rte_eth_read_clock still returns the free-running counter,
//   so mapping one onto the other would be wrong by decades. A timestamp within
//   realtime_window_ns of the wall clock when it is read is such a stamp. That clock is
//   the PHC, which runs TAI when ptp4l disciplines it (PTP's timescale; phc2sys -O gives
//   the TAI - UTC offset, 37 s since 2017): given the host's TAI - UTC offset
//   (set_tai_utc_offset_s, from adjtimex's tai field), a stamp more than half that offset
//   ahead of the wall clock is TAI and is brought back to UTC; one near the wall clock is
//   UTC already (a PHC kept on UTC) and is taken as it is. Without the offset a TAI stamp
//   stays as it is, and looks_like_tai() tells the caller so it can say the times are off.
// - A free-running counter: mapped by a least-squares line through (counter,
//   CLOCK_REALTIME) samples the capture takes as it runs (sample()), the latest
//   `window` of them. A line through two reads 50 ms apart carries their read latency
//   into the rate (tens of microseconds per second of drift); a fit over seconds of
//   samples averages it out and follows the oscillator as it wanders.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

namespace rocelab::captures {

class nic_clock_map {
 public:
  static constexpr std::int64_t realtime_window_ns = 24LL * 3600 * 1'000'000'000;

  explicit nic_clock_map(std::size_t window = 64);

  // One simultaneous reading of the NIC counter and CLOCK_REALTIME. A sample whose
  // counter or time goes backwards restarts the fit (the counter was reset).
  void sample(std::uint64_t ticks, std::int64_t realtime_ns);

  // Whether counter timestamps can be mapped (two samples with the counter moving).
  [[nodiscard]] bool calibrated() const noexcept { return calibrated_; }

  // Whether `timestamp` is already wall-clock nanoseconds (UTC or TAI), read at
  // `now_realtime_ns`.
  [[nodiscard]] static bool is_realtime(std::uint64_t timestamp, std::int64_t now_realtime_ns) noexcept;
  // Whether a real-time `timestamp` is ahead of the wall clock by more than
  // max_realtime_lead_ns when read at `now_realtime_ns`: a packet already received cannot
  // carry a UTC time from the future, so the stamp is the NIC's TAI.
  static constexpr std::int64_t max_realtime_lead_ns = 1'000'000'000;
  [[nodiscard]] static bool looks_like_tai(std::uint64_t timestamp, std::int64_t now_realtime_ns) noexcept;

  // The host's TAI - UTC offset in whole seconds (adjtimex's tai field, or ptp4l's
  // currentUtcOffset); 0: not known (a kernel nobody told keeps 0), no conversion.
  // Negative offsets are taken as 0.
  void set_tai_utc_offset_s(std::int32_t seconds) noexcept { tai_utc_offset_s_ = seconds > 0 ? seconds : 0; }
  [[nodiscard]] std::int32_t tai_utc_offset_s() const noexcept { return tai_utc_offset_s_; }

  // Wall-clock (UTC) nanoseconds of a packet timestamp read at `now_realtime_ns`: in
  // real-time mode the timestamp itself, less the TAI - UTC offset when it is TAI; the
  // fitted line otherwise; none before calibration.
  [[nodiscard]] std::optional<std::int64_t> to_realtime_ns(std::uint64_t timestamp,
                                                           std::int64_t now_realtime_ns) const noexcept;

  // The fitted rate (ns per tick); 0 before calibration.
  [[nodiscard]] double ns_per_tick() const noexcept { return calibrated_ ? slope_ : 0.0; }

 private:
  void fit();

  struct point {
    std::uint64_t ticks;
    std::int64_t ns;
  };
  std::size_t window_;
  std::int32_t tai_utc_offset_s_ = 0;
  std::deque<point> points_;
  bool calibrated_ = false;
  // ns = base_ns_ + slope_ * (ticks - base_ticks_), around the samples' mean.
  std::uint64_t base_ticks_ = 0;
  double base_ns_ = 0;
  std::int64_t base_ns_whole_ = 0;
  double slope_ = 1.0;
};

}  // namespace rocelab::captures

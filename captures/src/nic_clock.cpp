#include "rocelab/captures/nic_clock.hpp"

#include <algorithm>
#include <cmath>

namespace rocelab::captures {

nic_clock_map::nic_clock_map(std::size_t window) : window_(std::max<std::size_t>(window, 2)) {}

void nic_clock_map::sample(std::uint64_t ticks, std::int64_t realtime_ns) {
  if (!points_.empty() && (ticks <= points_.back().ticks || realtime_ns <= points_.back().ns)) {
    points_.clear();
    calibrated_ = false;
  }
  points_.push_back({ticks, realtime_ns});
  while (points_.size() > window_) points_.pop_front();
  fit();
}

void nic_clock_map::fit() {
  if (points_.size() < 2) return;
  // Offsets from the first sample keep the sums in double's exact range.
  const point origin = points_.front();
  double mean_t = 0, mean_n = 0;
  for (const point& p : points_) {
    mean_t += static_cast<double>(p.ticks - origin.ticks);
    mean_n += static_cast<double>(p.ns - origin.ns);
  }
  const double n = static_cast<double>(points_.size());
  mean_t /= n;
  mean_n /= n;
  double stt = 0, stn = 0;
  for (const point& p : points_) {
    const double dt = static_cast<double>(p.ticks - origin.ticks) - mean_t;
    const double dn = static_cast<double>(p.ns - origin.ns) - mean_n;
    stt += dt * dt;
    stn += dt * dn;
  }
  if (!(stt > 0)) return;
  slope_ = stn / stt;
  // The line's point at the mean, expressed against the origin sample.
  base_ticks_ = origin.ticks + static_cast<std::uint64_t>(std::llround(mean_t));
  base_ns_whole_ = origin.ns;
  base_ns_ = mean_n + slope_ * (static_cast<double>(base_ticks_ - origin.ticks) - mean_t);
  calibrated_ = true;
}

bool nic_clock_map::is_realtime(std::uint64_t timestamp, std::int64_t now_realtime_ns) noexcept {
  const auto ts = static_cast<std::int64_t>(timestamp);
  if (ts < 0) return false;
  const std::int64_t gap = ts > now_realtime_ns ? ts - now_realtime_ns : now_realtime_ns - ts;
  return gap < realtime_window_ns;
}

bool nic_clock_map::looks_like_tai(std::uint64_t timestamp, std::int64_t now_realtime_ns) noexcept {
  return is_realtime(timestamp, now_realtime_ns) &&
         static_cast<std::int64_t>(timestamp) - now_realtime_ns > max_realtime_lead_ns;
}

std::optional<std::int64_t> nic_clock_map::to_realtime_ns(std::uint64_t timestamp,
                                                           std::int64_t now_realtime_ns) const noexcept {
  if (is_realtime(timestamp, now_realtime_ns)) {
    const auto ts = static_cast<std::int64_t>(timestamp);
    const std::int64_t offset_ns = std::int64_t{tai_utc_offset_s_} * 1'000'000'000;
    // Halfway between UTC and TAI decides: a packet is read milliseconds after its stamp,
    // and a PHC kept on UTC is never seconds ahead.
    if (offset_ns > 0 && ts - now_realtime_ns > offset_ns / 2) return ts - offset_ns;
    return ts;
  }
  if (!calibrated_) return std::nullopt;
  // Signed: a packet stamped before the line's base point is earlier.
  const auto delta = static_cast<std::int64_t>(timestamp - base_ticks_);
  return base_ns_whole_ + std::llround(base_ns_ + slope_ * static_cast<double>(delta));
}

}  // namespace rocelab::captures

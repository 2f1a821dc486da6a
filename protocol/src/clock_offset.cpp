#include "rocelab/protocol/clock_offset.hpp"

#include <algorithm>
#include <cmath>

namespace rocelab::protocol {

bool clock_offset_estimator::add(std::int64_t t1, std::int64_t t2, std::int64_t t3, std::int64_t t4) {
  // Halve each difference before adding: the offsets of wall clocks are ~1.7e18 apart at
  // most, and the sum of two such differences could overflow.
  return push((t2 - t1) / 2 + (t3 - t4) / 2, t4 - t1, t3 - t2, t4);
}

bool clock_offset_estimator::add_agent_initiated(std::int64_t t1, std::int64_t t2, std::int64_t t3, std::int64_t t4) {
  return push((t1 - t2) / 2 + (t4 - t3) / 2, t4 - t1, t3 - t2, t3);
}

bool clock_offset_estimator::push(std::int64_t offset_ns, std::int64_t round_trip_ns, std::int64_t hold_ns,
                                  std::int64_t at_ns) {
  if (hold_ns < 0 || round_trip_ns < 0 || round_trip_ns < hold_ns) return false;
  samples_.push_back(clock_sample{offset_ns, round_trip_ns - hold_ns, at_ns});
  while (samples_.size() > window_) samples_.pop_front();
  return true;
}

std::optional<clock_estimate> clock_offset_estimator::estimate(std::optional<std::int64_t> use_at_ns) const {
  if (samples_.empty()) return std::nullopt;
  std::int64_t reference = samples_.front().at_ns;
  for (const clock_sample& s : samples_) reference = std::max(reference, s.at_ns);
  if (use_at_ns) reference = std::max(reference, *use_at_ns);
  const auto bound = [reference](const clock_sample& s) {
    return static_cast<double>(s.delay_ns) / 2.0 + static_cast<double>(reference - s.at_ns) * max_frequency_error;
  };
  const auto best = std::min_element(samples_.begin(), samples_.end(),
                                     [&](const clock_sample& a, const clock_sample& b) { return bound(a) < bound(b); });
  return clock_estimate{static_cast<double>(best->offset_ns), bound(*best), samples_.size()};
}

std::int64_t clock_offset_estimator::to_controller(std::int64_t agent_ns) const {
  const auto e = estimate();
  return e ? agent_ns - static_cast<std::int64_t>(std::llround(e->offset_ns)) : agent_ns;
}

std::int64_t clock_offset_estimator::to_agent(std::int64_t controller_ns) const {
  const auto e = estimate();
  return e ? controller_ns + static_cast<std::int64_t>(std::llround(e->offset_ns)) : controller_ns;
}

}  // namespace rocelab::protocol

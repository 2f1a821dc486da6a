#pragma once
// Per-agent clock offset, estimated the NTP way (RFC 5905 section 8): each probe gives the
// four timestamps t1 (controller sends), t2 (agent receives), t3 (agent replies), t4
// (controller receives), from which
//     offset = ((t2 - t1) + (t3 - t4)) / 2     (agent clock minus controller clock)
//     delay  = (t4 - t1) - (t3 - t2)           (round trip without the agent's hold time)
// A sample's error is at most delay / 2 (the path asymmetry it cannot see) when it is
// taken; after that the two clocks drift apart, by at most max_frequency_error per
// nanosecond of its age. The estimator keeps a window of recent samples and reports the
// one whose bound, delay / 2 + age * max_frequency_error, is the smallest (NTP's clock
// filter: minimum delay, aged); its uncertainty is that bound. The age is counted to the
// instant the caller will use the estimate at (the run's start), else to the newest
// sample.
//
// Mapping: controller_ns = agent_ns - offset; agent_ns = controller_ns + offset.
// Pure: timestamps come in as arguments. Not thread-safe (one per agent session).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

namespace rocelab::protocol {

// How fast two hosts' unsynchronised clocks can drift apart: two free-running server
// crystal oscillators of +-25 ppm each. (Synchronised hosts use their own clocks instead,
// run_clock.hpp.)
inline constexpr double max_frequency_error = 50e-6;

struct clock_sample {
  std::int64_t offset_ns = 0;
  std::int64_t delay_ns = 0;
  std::int64_t at_ns = 0;  // t4, controller clock
};

struct clock_estimate {
  double offset_ns = 0;       // agent - controller
  double uncertainty_ns = 0;  // half the chosen sample's round-trip delay
  std::size_t samples = 0;
};

class clock_offset_estimator {
 public:
  explicit clock_offset_estimator(std::size_t window = 8) : window_(window == 0 ? 1 : window) {}

  // Adds one probe. A sample whose timestamps are inconsistent (negative delay: t3 < t2 or
  // t4 < t1) is refused and false returned.
  bool add(std::int64_t t1, std::int64_t t2, std::int64_t t3, std::int64_t t4);
  // Adds one exchange the agent started (clock_datagram.hpp): t1 agent sends, t2
  // controller receives, t3 controller answers, t4 agent receives, so
  //     offset = ((t1 - t2) + (t4 - t3)) / 2,  delay = (t4 - t1) - (t3 - t2).
  // Refused (false) like add().
  bool add_agent_initiated(std::int64_t t1, std::int64_t t2, std::int64_t t3, std::int64_t t4);

  // Aged to the newest sample, or to `use_at_ns` (controller clock) when that is later.
  [[nodiscard]] std::optional<clock_estimate> estimate(std::optional<std::int64_t> use_at_ns = std::nullopt) const;
  [[nodiscard]] std::size_t size() const noexcept { return samples_.size(); }
  [[nodiscard]] std::int64_t to_controller(std::int64_t agent_ns) const;
  [[nodiscard]] std::int64_t to_agent(std::int64_t controller_ns) const;

 private:
  // Refuses (false) a sample whose hold is negative or longer than its round trip.
  bool push(std::int64_t offset_ns, std::int64_t round_trip_ns, std::int64_t hold_ns, std::int64_t at_ns);

  std::size_t window_;
  std::deque<clock_sample> samples_;
};

}  // namespace rocelab::protocol

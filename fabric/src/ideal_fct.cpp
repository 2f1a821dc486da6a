#include "rocelab/fabric/ideal_fct.hpp"

#include <array>
#include <cassert>
#include <limits>

#include "rocelab/fabric/twin/frames.hpp"

namespace rocelab::fabric {
namespace {

constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// A frame's time on a hop, in ps: rounded up (the switch model's serialization_ps), or
// whole ns truncated (HPCC ns-3).
std::int64_t frame_ps(std::int64_t frame_bytes, std::int64_t rate_bps, const ideal_frames& f) {
  const std::int64_t bits = (frame_bytes + f.wire_overhead_bytes) * 8;
  if (f.truncate_to_ns) return bits * 1'000'000'000 / rate_bps * 1000;
  return ceil_div(bits * 1'000'000'000'000, rate_bps);
}

}  // namespace

std::int64_t ideal_fct_ns(std::span<const ideal_hop> path, std::uint64_t bytes, const ideal_frames& frames) {
  const std::size_t L = path.size();
  assert(L >= 1 && L <= ideal_max_hops);
  const auto npkts = static_cast<std::uint32_t>(twin::packets_of(bytes, frames.mtu_bytes));
  const auto last_payload =
      static_cast<std::int64_t>(bytes - static_cast<std::uint64_t>(npkts - 1) * frames.mtu_bytes);
  std::array<std::int64_t, ideal_max_hops> busy{};
  busy.fill(std::numeric_limits<std::int64_t>::min() / 2);
  // Every frame but the first and the last is a full one: its time per hop once.
  std::array<std::int64_t, ideal_max_hops> full_ps{};
  for (std::size_t j = 0; j < L; ++j)
    full_ps[j] = frame_ps(frames.mtu_bytes + frames.data_overhead_bytes, path[j].rate_bps, frames);
  std::int64_t last_arrival_ns = 0;
  std::array<std::int64_t, ideal_max_hops> prev_busy{};
  for (std::uint32_t i = 0; i < npkts; ++i) {
    bool full = i > 0 && i + 1 < npkts;
    if (full && i >= 3) {
      // Steady state: when the last full frame moved every hop's end by the same whole
      // number of ns, every further full frame does too (a full frame's step is a
      // function of `busy` that commutes with adding whole ns once busy[0] > -1 ns), so
      // the rest of the full frames are skipped in one step. Exact; a 30 MB flow is
      // 30,000 frames otherwise.
      const std::int64_t d = busy[0] - prev_busy[0];
      bool steady = d > 0 && d % 1000 == 0;
      for (std::size_t j = 1; j < L && steady; ++j) steady = busy[j] - prev_busy[j] == d;
      if (steady) {
        const std::uint32_t skip = npkts - 1 - i;  // full frames i .. npkts - 2
        for (std::size_t j = 0; j < L; ++j) busy[j] += static_cast<std::int64_t>(skip) * d;
        i = npkts - 1;
        full = false;
      }
    }
    prev_busy = busy;
    const std::int64_t frame = (i + 1 < npkts ? frames.mtu_bytes : last_payload) + frames.data_overhead_bytes +
                               (i == 0 ? frames.first_extra_bytes : 0);
    std::int64_t ready_ps = 0;  // relative to the start
    for (std::size_t j = 0; j < L; ++j) {
      // A hop starts a frame when it arrives, or back to back at the exact end of the
      // previous one when that ended less than 1 ns before (as the twin's NIC and switch
      // ports continue a busy link).
      const std::int64_t s = ready_ps - busy[j] >= 1000 ? ready_ps : busy[j];
      const std::int64_t end = s + (full ? full_ps[j] : frame_ps(frame, path[j].rate_bps, frames));
      busy[j] = end;
      ready_ps = (ceil_div(end, 1000) + path[j].delay_ns) * 1000;
    }
    last_arrival_ns = ready_ps / 1000;
  }
  std::int64_t t_ps = last_arrival_ns * 1000;
  for (std::size_t j = L; j-- > 0;) {
    const std::int64_t end = t_ps + frame_ps(frames.ack_bytes, path[j].rate_bps, frames);
    t_ps = (ceil_div(end, 1000) + path[j].delay_ns) * 1000;
  }
  return t_ps / 1000;
}

}  // namespace rocelab::fabric

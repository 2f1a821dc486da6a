#pragma once
// DCQCN parameters for the virtual lab's time scale.
//
// The mlx5 defaults (fabric::dcqcn_config::mlx5) are tuned for hardware: a base RTT of a
// few microseconds and 25-100 Gb/s links, where a congested flow sees a CNP every few
// microseconds. In the virtual lab the feedback loop is software (two AF_PACKET hops and
// two event loops each way) and the links run at a fraction of a gigabit, so a flow of an
// 8-to-1 incast at 0.5 Gb/s receives one packet -- and at most one CNP -- every ~0.5 ms.
// With the firmware's 1 us alpha period alpha decays by (1019/1024)^500 ~ 0.08 between
// two CNPs, every cut is a few percent, and the 300 us increase timer undoes it before
// the next CNP arrives: DCQCN does not hold the queue and PFC does the work.
//
// lab_dcqcn keeps the firmware's algorithm and ratios and moves its clock:
// - times (alpha period, rate-reduce monitor period, increase timer, CNP spacing) are
//   the firmware's multiplied by time_scale = feedback_interval_ns / hardware's, the
//   ratio of how often a congested flow can be told so: in hardware every
//   min_time_between_cnps (4 us), in the lab once per packet it gets through the
//   bottleneck (an 8-to-1 incast at 0.5 Gb/s with 4 KiB frames: every ~0.5-1 ms). The
//   alpha period then stays a quarter of the CNP interval, as in the firmware, so alpha
//   tracks congestion instead of decaying to nothing between CNPs;
// - rates (additive and hyper increase, minimum rate) are the firmware's multiplied by
//   line_rate / 100 Gb/s, the reference speed of the defaults, so an increase step is the
//   same fraction of the link (floored at 1 Mb/s, the knobs' unit);
// - the byte counter is kept in bytes: at the lab's rate it expires about as often,
//   relative to the scaled timer, as the firmware's does at 100 Gb/s;
// - clamp_tgt_rate is on (below).
// Measured with tests/virtual_lab/lab_soft_nic.cpp (8-to-1, 2 MiB flows, 8 MiB buffer):
// with the mlx5 defaults ECN+DCQCN sent about as many PFC frames as PFC alone (and more
// in 2 of 6 runs); with lab_dcqcn none.
// Pure; no errors (inputs are clamped).

#include <algorithm>
#include <cstdint>

#include "rocelab/fabric/dcqcn.hpp"

namespace rocelab::traffic::soft_nic {

// The firmware's CNP spacing per flow, to which its timer defaults are matched.
inline constexpr std::int64_t hardware_feedback_interval_ns = 5'000;
// How often a flow of the lab's incasts can receive a CNP (one per packet through the
// bottleneck), rounded up.
inline constexpr std::int64_t lab_feedback_interval_ns = 1'250'000;
// The link speed the mlx5 rate defaults refer to.
inline constexpr std::int64_t reference_rate_bps = 100'000'000'000;

[[nodiscard]] inline fabric::dcqcn_config lab_dcqcn(std::int64_t line_rate_bps,
                                                    std::int64_t feedback_interval_ns = lab_feedback_interval_ns) {
  fabric::dcqcn_config c = fabric::dcqcn_config::mlx5();
  const std::int64_t s = std::max<std::int64_t>(1, feedback_interval_ns / hardware_feedback_interval_ns);
  c.dce_tcp_rtt_us *= s;
  c.rate_reduce_monitor_period_us *= s;
  c.rpg_time_reset_us *= s;
  c.min_time_between_cnps_us *= s;
  const double r = static_cast<double>(std::max<std::int64_t>(1, line_rate_bps)) / reference_rate_bps;
  auto scaled = [r](std::int64_t mbps) { return std::max<std::int64_t>(1, static_cast<std::int64_t>(mbps * r)); };
  c.rpg_ai_rate_mbps = scaled(c.rpg_ai_rate_mbps);
  c.rpg_hai_rate_mbps = scaled(c.rpg_hai_rate_mbps);
  c.rpg_min_rate_mbps = scaled(c.rpg_min_rate_mbps);
  // Every cut sets the target to the rate before the cut (the paper's Algorithm 1;
  // mlx5 clamp_tgt_rate=1). With the firmware default the target stays at the line rate
  // until a timer increase has happened, and a timer increase is rare here (the scaled
  // rpg_time_reset is tens of milliseconds) while the byte counter expires every 8 frames,
  // so each fast-recovery step lifted the rate back half way to the line rate: 250
  // cuts per flow in an incast left the senders near 250 Mb/s of a 0.5 Gb/s link.
  c.clamp_tgt_rate = true;
  return c;
}

}  // namespace rocelab::traffic::soft_nic

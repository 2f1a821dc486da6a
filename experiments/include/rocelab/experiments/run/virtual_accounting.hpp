#pragma once
// A virtual run's own numbers from the soft switch's counters and its capture.
//
// - Counters: the switch keeps counting across runs on a kept lab (or a lab with agents),
//   so a run's counts are the switch's counters at its end minus a snapshot taken at its
//   start (counts_since); a counter lower at the end than at the start means the switch
//   was restarted or reset mid-run, and is an error naming it.
// - Degraded: the PFC headroom is sized for the switch reacting within its response
//   budget (lab_headroom_bytes). A frame that waited in a port's receive ring longer than
//   that budget arrived while the switch was off the CPU longer than the headroom covers:
//   drops and late pauses of that run are the host's scheduling, not the fabric's
//   behaviour, and the run is marked degraded with the reason (degraded_reasons).
// - Capture loss: the switch counts the copies it mirrored to the capture port (and those
//   it failed to send); every one of them missing from the capture file is lost, and the
//   capture's own drop counters can only add to that (account_capture). Never 0 when
//   frames are missing.
// Pure: JSON in, numbers and text out.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "rocelab/common/result.hpp"

namespace rocelab::experiments {

// One switch port as the soft switch's {"op":"counters"} reports it.
struct switch_port_counts {
  std::uint64_t rx_packets = 0, tx_packets = 0, pfc_tx_frames = 0, pfc_rx_frames = 0;
  std::uint64_t ingress_limit_drops = 0, egress_limit_drops = 0, headroom_drops = 0, pool_drops = 0, ring_drops = 0;
  std::uint64_t ecn_marked = 0;             // over the port's queues
  std::uint64_t ring_wait_over_budget = 0;  // frames that waited longer than the response budget
  std::int64_t ring_wait_max_ns = 0;        // a maximum since the last reset, not a count

  [[nodiscard]] std::uint64_t drops() const noexcept {
    return ingress_limit_drops + egress_limit_drops + headroom_drops + pool_drops + ring_drops;
  }
};

struct switch_counts {
  std::vector<switch_port_counts> ports;
  std::uint64_t mirror_frames = 0, mirror_pfc_frames = 0, mirror_errors = 0;
  std::uint64_t mirror_arrival_frames = 0;  // of mirror_frames: arrival copies
};

// Fails when `counters` is not a counters response (no "ports" array).
[[nodiscard]] result<switch_counts> parse_switch_counts(const nlohmann::json& counters);

// end - start, counter by counter; maxima (ring_wait_max_ns) are the end's.
[[nodiscard]] result<switch_counts> counts_since(const switch_counts& start, const switch_counts& end);

// Why the run's switch results are not the fabric's behaviour: one reason per port whose
// ring waits overran `response_budget_ns` (the budget the headroom was sized for), with
// the frames, the longest wait and the port's drops. Empty: not degraded.
[[nodiscard]] std::vector<std::string> degraded_reasons(const switch_counts& run, std::int64_t response_budget_ns);

// The soft NICs' share of the CPUs they ran on (`nic_cpus`), from each NIC's CPU time
// (`cpu_ns`, its counters line) over `span_ns` (T0 to the last flow's end); nullopt when
// a NIC did not report or the span or CPUs are 0.
[[nodiscard]] std::optional<double> nic_cpu_busy(std::span<const std::int64_t> cpu_ns, std::int64_t span_ns,
                                                 std::size_t nic_cpus);

// Why the NICs' results are not hardware's: they kept their CPUs at least
// nic_cpu_busy_limit busy, so a NIC answered a frame or picked up a post only when the
// others let it, and short flows took the hosts' queueing for the CPU besides the
// fabric's (bench/README.md, "The soft NICs' CPU under the victims rung"). Empty below it.
inline constexpr double nic_cpu_busy_limit = 0.8;
[[nodiscard]] std::string nic_cpu_degraded_reason(double busy, std::size_t nic_cpus, std::size_t nics);

struct capture_accounting {
  std::uint64_t expected = 0;  // copies the switch mirrored or tried to (mirrored + send errors)
  std::uint64_t captured = 0;  // frames in the capture file
  std::uint64_t loss = 0;      // expected but not captured, at least what the capture reported dropped
  std::uint64_t extra = 0;     // captured beyond expected (frames not from the mirror)
};

[[nodiscard]] capture_accounting account_capture(std::uint64_t mirrored, std::uint64_t mirror_errors,
                                                 std::uint64_t captured, std::uint64_t reported_drops);

}  // namespace rocelab::experiments

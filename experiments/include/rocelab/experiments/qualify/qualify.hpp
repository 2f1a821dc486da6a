#pragma once
// Switch qualification (`rocelab qualify`): does this switch do what its configuration
// says? In the manner of SONiC's QoS tests (sonic-mgmt tests/qos, sai_qos_tests.py), but
// through `switch_under_test`, so the same procedures qualify the twin's switch model,
// the virtual lab's soft switch, or a real switch with hosts around it.
//
// The moves are the ones those tests make: hold a port's egress (here the peer sends PFC
// XOFF, which every lossless switch must honour, where SONiC's tests disable the port's
// transmitter), fill it from a source port with frames that ignore the switch's pauses,
// read the switch's counters after every step, and let packets go a few at a time.
//
// Checks, each with measured and expected values and a tolerance of one frame (the
// granularity of the measurement) unless said otherwise:
// - pfc.xoff_threshold: PG occupancy (reserve + shared) when XOFF is sent; expected from
//   the PG's reserve and its static or dynamic limit (alpha x free ingress pool, solved
//   for a single filling PG: alpha / (1 + alpha) x pool).
// - pfc.headroom: bytes absorbed after XOFF before the first drop; expected the PG's
//   headroom (SONiC xoff).
// - pfc.xon_threshold: PG occupancy when XON is sent while draining; expected the XOFF
//   limit minus xon_offset (or the fixed xon).
// - buffer.shared_limit.queueN: bytes a lossy priority takes before its first drop;
//   expected the tighter of its ingress PG and egress queue limits.
// - ecn.curve: marking probability against queue depth, `ecn_samples` repeated fills per
//   depth (a non-ECT fill to the depth, then one ECT probe: at enqueue it sees the fill
//   ahead, at dequeue it goes first and sees the fill behind). Each point passes when the
//   configured probability lies in the 99.9% Wilson interval of the measured one.
// - pfc_watchdog.*: a PFC storm (the peer pauses without end) on a port with queued
//   packets: detection within [detection, detection + poll] of the packets queueing,
//   the action (drops for drop, transmissions for forward), a flow through another port
//   unaffected, and restoration within [restoration, restoration + poll] of the last
//   XOFF. Restoration is timed on the switch's clock where the target reports the
//   watchdog's timestamps (as SONiC's timer test reads them from its syslog); otherwise,
//   like detection, by reading counters: each read is bracketed by the clock, and the
//   check fails only when the bracket lies wholly outside the window.
//   Buffer and ECN checks run with the watchdog off (a long hold would look like a
//   storm to it), as SONiC's QoS tests do.
// NIC counters against the capture are a property of a run, not of a switch:
// nic_capture_checks() compares them for a run that had a capture.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/fabric/switch_config.hpp"

namespace rocelab::experiments {

// Counters of the ingress PG (src port, priority) and egress queue (dst port, priority)
// a procedure watches.
struct probe_counters {
  std::uint64_t pg_xoff_sent = 0, pg_xon_sent = 0, pg_dropped = 0;
  std::int64_t pg_used_bytes = 0;      // reserve + shared + headroom in use now
  std::int64_t pg_headroom_bytes = 0;  // headroom in use now
  std::uint64_t queue_dropped = 0, queue_ecn_marked = 0, queue_tx_packets = 0;
  std::int64_t queue_depth_bytes = 0;
  std::uint64_t wd_storms_detected = 0, wd_storms_restored = 0, wd_dropped = 0;
  bool wd_stormed = false;
  // The watchdog's own timestamps, on the switch's clock, where the target reports them
  // (-1 where not): the last XOFF it received for the queue and its last restoration.
  // Restoration is promised relative to that XOFF, which only the switch sees arrive.
  std::int64_t wd_last_xoff_rx_ns = -1, wd_last_restored_ns = -1;
};

// Frames that arrive at the switch on `src` for `dst` with `priority`, `bytes` each as
// the switch counts them (L2 with FCS), ECN-capable or not. They ignore the switch's
// pauses (the generator of SONiC's tests, PTF, does too).
struct probe_frames {
  std::uint16_t src = 0, dst = 1;
  std::uint8_t priority = 3;
  std::uint32_t count = 1;
  std::uint32_t bytes = 1102;
  bool ect = false;
};

class switch_under_test {
 public:
  virtual ~switch_under_test() = default;
  [[nodiscard]] virtual std::string describe() const = 0;
  [[nodiscard]] virtual std::int64_t now_ns() const = 0;
  // Puts `cfg` in force (the first call snapshots what it replaces) with empty queues and
  // zeroed counters. Ports are the first cfg.ports.size() ports of the target.
  [[nodiscard]] virtual status configure(const fabric::switch_config& cfg) = 0;
  // The peer on `port` pauses `priority` (XOFF, refreshed) until resume(): held packets queue.
  [[nodiscard]] virtual status hold(std::uint16_t port, std::uint8_t priority) = 0;
  // XON; returns once the queue has drained (or says why not).
  [[nodiscard]] virtual status resume(std::uint16_t port, std::uint8_t priority) = 0;
  // While held: lets about `packets` leave (exactly, where the target can); how many left.
  [[nodiscard]] virtual result<std::uint32_t> release(std::uint16_t port, std::uint8_t priority,
                                                      std::uint32_t packets) = 0;
  // How many of the frames the switch received (its ingress counters moved by).
  [[nodiscard]] virtual result<std::uint32_t> send(const probe_frames& frames) = 0;
  [[nodiscard]] virtual result<probe_counters> read(std::uint16_t src, std::uint16_t dst, std::uint8_t priority) = 0;
  // A PFC storm from the peer on `port`: XOFF without end (on) or no more (off).
  [[nodiscard]] virtual status storm(std::uint16_t port, std::uint8_t priority, bool on) = 0;
  // Lets `ns` pass (virtual time, or real time in a lab).
  [[nodiscard]] virtual status wait(std::int64_t ns) = 0;
  // Puts back what the first configure() replaced.
  [[nodiscard]] virtual status restore() = 0;
};

struct qualify_plan {
  std::uint16_t src = 0, dst = 1, other = 2;  // source, held destination, and a bystander port
  std::uint8_t lossless_priority = 3;
  std::vector<std::uint8_t> lossy_priorities{0};
  std::uint32_t frame_bytes = 1102;  // a full RoCEv2 WRITE at MTU 1024 (fabric::twin::roce_max_frame_bytes)
  std::uint32_t ecn_samples = 200;   // per depth point (the issue asks at least 200)
  std::uint32_t ecn_points = 7;      // one below Kmin, five between, one above Kmax
  bool watchdog = true;              // run the storm checks
  std::function<bool()> cancel_requested;
  // Told as each procedure starts: (1-based step, steps in all, what it measures), for
  // progress output.
  std::function<void(std::size_t, std::size_t, const std::string&)> on_step;
};

struct qualify_check {
  std::string name;      // "pfc.xoff_threshold"
  std::string what;      // one line for the table
  std::string unit;      // "bytes", "ns", "packets", "probability", "" (a yes/no check)
  double measured = 0, expected = 0, tolerance = 0;
  bool pass = false;
  std::string note;      // why it failed, or how it was measured
};

struct ecn_point {
  std::int64_t depth_bytes = 0;
  std::uint32_t samples = 0, marked = 0;
  double measured = 0, expected = 0, ci_low = 0, ci_high = 0;  // 99.9% Wilson interval
  bool pass = false;
  std::string note;  // e.g. the fill could not be held
};

struct qualify_result {
  std::string target;
  std::vector<qualify_check> checks;
  std::vector<ecn_point> ecn_curve;
  fabric::ecn_config ecn;  // the queue's configured marking (for the plot)
  bool ecn_on_dequeue = false;
  [[nodiscard]] bool passed() const;
};

// Runs every check of `plan` on `target` against `cfg` (the configuration that must hold),
// then restores the target. Errors: the target failed to act (the checks so far are lost
// only then), a plan that does not fit the config (ports, priorities), or cancellation.
[[nodiscard]] result<qualify_result> qualify_switch(switch_under_test& target, const fabric::switch_config& cfg,
                                                    const qualify_plan& plan);

// Expected values from a configuration, in bytes (cells x cell size), for one PG or queue
// filling alone; exposed for tests and for the report.
struct expected_thresholds {
  std::int64_t xoff_bytes = 0;      // PG occupancy when XOFF is sent
  std::int64_t headroom_bytes = 0;
  std::int64_t xon_bytes = 0;       // PG occupancy when XON is sent
  std::int64_t ingress_limit_bytes = 0, egress_limit_bytes = 0;  // reserve + shared limit
};
[[nodiscard]] expected_thresholds expected_for(const fabric::switch_config& cfg, std::uint16_t src,
                                               std::uint16_t dst, std::uint8_t priority);
// The configured marking probability at a queue depth (RED on the instantaneous depth).
[[nodiscard]] double expected_marking(const fabric::ecn_config& ecn, std::int64_t depth_bytes);
// Wilson score interval for k successes out of n at z (3.29: 99.9%).
[[nodiscard]] std::pair<double, double> wilson_interval(std::uint32_t k, std::uint32_t n, double z = 3.29);

// NIC counters against what the capture saw, for a run with a capture (the virtual lab's
// mirror, or a real lab's): CNPs sent (np_cnp_sent) and handled (rp_cnp_handled) against
// captured CNPs, CE-marked packets received (np_ecn_marked_roce_packets) against captured
// CE packets, PFC frames received by the NICs (rx_prioN_pause) against the switch's PFC
// frames captured. Tolerance: what the capture says it lost. nullopt without a capture.
[[nodiscard]] std::optional<std::vector<qualify_check>> nic_capture_checks(const run_records& run);

// A check's value in its unit as the reports print it: ns as a readable duration
// ("12.5 ms"), bytes with four significant digits in B/KiB/MiB ("1102 B", "48.50 KiB").
[[nodiscard]] std::string qualify_value_text(double v, const std::string& unit);
// The table (text), JSON and a self-contained HTML page with the ECN curve.
[[nodiscard]] std::string qualify_table(const qualify_result& r);
[[nodiscard]] std::string qualify_json(const qualify_result& r);
[[nodiscard]] std::string qualify_html(const qualify_result& r);

}  // namespace rocelab::experiments

#pragma once
// `rocelab calibrate` on the virtual lab: brings up the spec's lab (its hosts, link rate,
// MTU and switch, through lab_options_for and the virtual backend's run_virtual, as a run
// of the spec would), sends calibration_measure.hpp's plan through the soft NICs and
// reads what the NICs and the switch stamped:
//   - base RTT per pair and send processing per host: each message's post, first and last
//     data packet out and last ACK, from the NIC's sent lines (nic_fleet's message_wire);
//   - receive processing per host: the NIC's own histogram (its counters line,
//     rx_processing: the kernel's receive stamp of a message's last data frame to its
//     ACK out);
//   - forwarding latency per switch port: the switch's histogram (counters,
//     forwarding_latency), reset at the start of the run and read at its end;
//   - achieved line rate per host: its line-rate flow's wire bytes over its first to last
//     packet;
//   - the CNP loop (3 hosts or more; options.cnp_loop): a second run with ECN marking at
//     16 KiB to 128 KiB and DCQCN on, a 2:1 incast, captured with libpcap on the switch's
//     egress mirror (the kernel stamps each copy as the switch sends it; DPDK's af_packet
//     PMD stamps a burst when it polls it), paired by cnp_loop_samples.
//   - with options.under_load, a last run of the spec's own workload (its seed) on the
//     same lab: the send and receive processing and the pacing lateness are taken again
//     from its stamps (take_delays_under_load), so the twin models the hosts as they
//     answer beside the others' traffic rather than alone.
// The lab named options.lab_name is used when it is up and fits the spec (hosts, link
// rate); otherwise one is brought up and, unless keep_lab, taken down afterwards (also on
// failure). A lab that is up and does not fit is refused, naming it.
//
// Backends: `virtual` only. `twin` is refused (a twin is what a calibration is for);
// `lab` is refused naming what a hardware lab's agents do not report
// (calibration_measure.hpp's calibration_refusal).
// Needs root. Errors name the step.

#include <cstdint>
#include <functional>
#include <string>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/calibration/calibration.hpp"
#include "rocelab/experiments/calibration/calibration_measure.hpp"
#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::experiments {

struct calibrate_options {
  std::uint32_t pings = 200;            // per pair and direction
  std::string lab_name = "cal";
  std::string state_root;               // empty: agents::lab::default_state_root
  std::string rocelab_binary;           // the switch, `nic-run` and `capture`; empty: this executable
  bool keep_lab = false;
  std::string log_dir;                  // NIC logs; empty: none
  bool cnp_loop = true;                 // false: the CNP loop is left not measured (samples 0)
  // Each incast sender's message. DCQCN's first cuts drain the queue, and its recovery
  // (dilated) is slower than 2 x 1 MiB lasts: that gave 2 samples, or none; 2 x 4 MiB
  // gave 61-112 with the same median (240 us), 2 x 8 MiB ~300 at a lower one (170 us),
  // marks denser than the notification point answers.
  std::uint64_t incast_bytes = 4u << 20;
  bool under_load = false;                // host and port delays under the spec's workload
  // Told each step as it starts ("base RTT and line rate: 4 pairs x 200 pings, 3 flows").
  std::function<void(const std::string&)> on_step;
};

// The calibration of the spec's virtual lab, its header filled: lab "virtual", taken_at
// now (UTC), the spec's name, link rate and RoCE MTU.
[[nodiscard]] result<calibration> calibrate_lab(const experiment_spec& spec, const calibrate_options& options);

}  // namespace rocelab::experiments

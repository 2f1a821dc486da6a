#pragma once
// The `virtual` backend: the spec runs on the virtual lab (agents/lab: host
// namespaces, veths, the soft switch) with one soft RoCEv2 NIC process per host
// (traffic/soft_nic), the twin's workloads driven unchanged through nic_fleet.
//
// Lab: the lab named `lab_name` is used when it is up with enough hosts at the spec's
// link rate; otherwise one sized for the spec (topology.hosts, topology.link_gbps,
// switch.buffer_bytes, PFC/ECN on or off) is brought up and, unless keep_lab, taken
// down afterwards (also when the run fails).
//
// Spec keys as the twin reads them, with these limits of the virtual lab:
// - topology.type single_switch only; topology.link_gbps at most 2 (the soft switch
//   sustains ~150-200k frames/s on a small VM; run it at 0.5-1 Gb/s);
// - nic.data_priority 3 (the lab switch's DSCP_TO_TC_MAP puts DSCP 26 on 3);
// - switch.ecn kmin/kmax/pmax and pfc.headroom_bytes are applied to the switch through
//   its control API; dynamic_th, cell size and cable length keep the lab's defaults;
// - the headroom is at least 8 ms of the link rate and the retransmit timeout at least
//   twice the time to drain the whole buffer: the software path between the switch's
//   XOFF and the NIC's reaction is milliseconds on a loaded VM, not the 100 us of a
//   hardware NIC, and queueing delays of tens of ms are normal at these link rates.
// Records: flows (sender's view, CE marks from the receiver), the NICs' and the switch's
// counters as counter_samples (device "sw" for the switch; the capture's as device
// "capture": frames, RoCE data/ACK/CNP, CE, PFC frames, DPDK drop counters, mirrored and
// loss), pause intervals found in the capture (source capture) on the hop each paused
// (capture_pauses.hpp; the switch mirrors its own PFC frames too, mirror pfc_tx), totals
// of PFC frames, paused time, drops, CE marks and CNPs, the switch's egress queue depths
// (sampled by the switch every max(twin.queue_sample_interval_ns, 1 ms)), and the
// capture (run_records::capture: file, mirrored, captured, loss).
// Every switch count is this run's own: the switch's counters are reset at the start and
// the run's are its end minus a snapshot taken then (virtual_accounting.hpp), on a lab the
// run brought up, a kept lab and a lab whose NICs run on agents alike. A switch whose
// receive rings held frames longer than the reaction budget its PFC headroom is sized for
// makes the run degraded (run_records::degraded, with the reason).
//
// Needs root. Errors name the step (lab up, switch settings, NIC start).

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/experiments/run/backend.hpp"
#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::agents::lab {
struct lab_state;  // rocelab/agents/lab/virtual_lab.hpp
struct lab_options;
}  // namespace rocelab::agents::lab

namespace rocelab::fabric::drivers {
class soft_switch_driver;  // rocelab/fabric/drivers/soft_switch_driver.hpp
}  // namespace rocelab::fabric::drivers

namespace rocelab::captures {
struct capture_file_analysis;  // rocelab/captures/analyze_capture.hpp
}  // namespace rocelab::captures

namespace rocelab::fabric::twin {
class workload;  // rocelab/fabric/twin/twin.hpp
}  // namespace rocelab::fabric::twin

namespace rocelab::traffic::soft_nic {
struct fleet_host;          // rocelab/traffic/soft_nic/nic_fleet.hpp
struct fleet_result;        // rocelab/traffic/soft_nic/nic_fleet.hpp
struct nic_process_config;  // rocelab/traffic/soft_nic/nic_process.hpp
class nic_links;            // rocelab/traffic/soft_nic/nic_links.hpp
}  // namespace rocelab::traffic::soft_nic

namespace rocelab::experiments {

struct virtual_backend_options {
  std::string lab_name = "run";
  std::string state_root;       // empty: agents::lab::default_state_root
  std::string rocelab_binary;   // runs the switch and `nic-run`; empty: /proc/self/exe
  bool keep_lab = false;
  std::string log_dir;          // NIC logs; empty: none
  // Capture: the switch mirrors every frame it sends (egress, plain copies) to the
  // capture namespace, where `rocelab capture --dpdk` (af_packet vdev on the capture
  // veth) writes capture_file; the run then analyses it with the captures library.
  bool capture = true;
  std::string capture_file;     // kept there (`rocelab run`: capture.pcapng in the run
                                // directory); empty: a file in /tmp, removed after the analysis
  bool capture_dpdk = true;     // false: `rocelab capture --iface` (libpcap) instead
  // Polled while the NICs run (at least every 20 ms): true stops the workload; the run
  // still collects the counters and the capture of what ran, and takes its lab down.
  // Flows not finished have end_ns -1. (Ctrl-C from the CLI and from Python.)
  std::function<bool()> cancel_requested;
  // Told as the NICs run (at most every 20 ms): messages acknowledged, messages posted,
  // and the PFC frames the switch has sent since the run started (polled on its control
  // socket every 250 ms by a thread of its own while this is set).
  std::function<void(const run_progress&)> on_progress;
  // Where the soft NICs run (nic_fleet's fleet_options::links): empty, child processes of
  // this one; the controller passes its agents' soft jobs. A NIC lost mid-run makes the
  // records' lost_hosts (the run partial) instead of failing the run.
  std::function<result<std::unique_ptr<traffic::soft_nic::nic_links>>(
      const std::vector<traffic::soft_nic::fleet_host>&, const std::vector<traffic::soft_nic::nic_process_config>&)>
      nic_links;
  // A measurement that drives the lab with traffic of its own (rocelab calibrate): this
  // workload instead of the spec's (not owned; the seed is then unused), and what the run
  // saw beyond its records: the fleet's result (each message's wire stamps, the NICs'
  // final counters lines) once the NICs stopped, and the capture's analysis with the
  // run's T0 on CLOCK_REALTIME (the capture's clock) once it is analysed.
  fabric::twin::workload* workload = nullptr;
  std::function<void(const traffic::soft_nic::fleet_result&)> on_fleet_result;
  std::function<void(const captures::capture_file_analysis&, std::int64_t t0_realtime_ns)> on_capture;
};

// The lab a spec runs on: its hosts, link rate, buffer, an interface MTU for its RoCE
// MTU, and the switch without PFC or ECN when the spec has them off. `rocelab_binary`
// runs the switch (empty: this process's executable).
// The spec as the virtual lab runs it, for the twin to predict a lab run: the NICs'
// retransmit timeout raised to twice the buffer's drain time and the lossless headroom to
// what the software path's reaction budget needs, as run_virtual sets them, and one RC QP
// per peer (nic.qp_per_peer), as its NIC fleet connects the hosts.
[[nodiscard]] experiment_spec as_the_virtual_lab_runs_it(const experiment_spec& spec);

[[nodiscard]] agents::lab::lab_options lab_options_for(const experiment_spec& spec, const std::string& lab_name,
                                                       const std::string& state_root,
                                                       const std::string& rocelab_binary);

// Puts the spec's switch settings (PFC headroom, ECN per queue, marking point, PFC
// watchdog) on a lab's soft switch through its control API and zeroes its counters.
// With `snapshot`, the previous values are kept there for its restore().
[[nodiscard]] status configure_lab_switch(const agents::lab::lab_state& lab, const experiment_spec& spec,
                                          fabric::drivers::soft_switch_driver* snapshot = nullptr);

// How long a virtual run's workload may take in real time: the twin's stop time, but never
// under 30 s (real time is slow here). Flows not finished by then stay unfinished.
[[nodiscard]] std::chrono::milliseconds virtual_run_limit(const experiment_spec& spec);

[[nodiscard]] result<run_records> run_virtual(const experiment_spec& spec, std::uint64_t seed,
                                              const virtual_backend_options& options);

}  // namespace rocelab::experiments

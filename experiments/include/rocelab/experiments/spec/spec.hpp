#pragma once
// The experiment spec: what `rocelab run` reads from YAML and `--set` changes, and what
// every backend (twin now; the namespace lab and real labs later) runs.
//
// experiment_spec is plain data. Every field has a dotted path ("switch.ecn.kmin_bytes")
// in one field table, which is the only place that parses or prints a field: YAML
// loading, `--set path=value`, the resolved spec.yaml of a run and (later) the Python API
// all go through field_table()/set_field()/get_field(), so a new field is one table row.
//
// Values are text with units (units.hpp): sizes "20KiB", durations "10us", rates "100Gbps"
// (a plain number in a *_gbps field is Gb/s), probabilities 0..1, booleans true/false,
// host lists "0,3,5-8" or a YAML sequence. DCQCN knobs take the mlx5 name and unit
// (nic.dcqcn.rpg_time_reset: 300 is 300 us; "300us" works too).
//
// Errors name where the value came from: "spec.yaml:12: switch.ecn.kmin_bytes: ..." for
// a file, "--set switch.ecn.pmax=2: ..." for an override, and "(default)" otherwise. An
// unknown key names the nearest valid key.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/dcqcn.hpp"

namespace rocelab::experiments {

struct topology_spec {
  std::string type = "single_switch";  // single_switch | leaf_spine | fat_tree | rail_optimized
  std::uint32_t hosts = 16;
  double link_gbps = 100;
  std::int64_t link_delay_ns = 1000;
  // Bytes each frame holds a link for beyond itself: Ethernet's preamble and SFD (8) and
  // inter-frame gap (12). 0 for a reference that counts none (htsim, HPCC ns-3). The twin
  // only: a lab's Ethernet always sends both.
  std::int64_t frame_overhead_bytes = 20;
  std::uint32_t leaves = 0;  // leaf_spine
  std::uint32_t spines = 0;
  std::uint32_t k = 0;         // fat_tree: ports per switch (fabric/twin/fabric_graph.hpp)
  // rail_optimized: hosts counts NICs, nics_per_host of them a server (rails); leaves is a
  // rail's leaves. The local link joins a server's NICs (fabric/twin/twin.hpp).
  std::uint32_t nics_per_host = 1;
  double local_link_gbps = 3600;
  std::int64_t local_link_delay_ns = 1000;
  double spine_link_gbps = 0;  // 0: derived from oversubscription
  double oversubscription = 1.0;
};

// Defaults follow SONiC's lossless RoCE profile: sonic-buildimage
// files/build_templates/qos_config.j2 puts PFC on priorities 3 and 4 and the WRED profile
// AZURE_LOSSLESS (ecn_all, green_min_threshold 1048576, green_max_threshold 2097152,
// green_drop_probability 5) on queues 3 and 4; here one lossless class, 3, as the RoCE
// deployment guides use. CNPs on priority 6 (dcqcn_config::mlx5). Buffer profiles:
// lossless PGs dynamic_th 0 (alpha 1) and lossy ones dynamic_th 3 (alpha 8) are the values
// commonly found in SONiC buffer templates; they vary by SKU, so check the target
// switch's BUFFER_PROFILE before comparing with a lab. 256-byte cells (Broadcom XGS).
// SONiC pfcwd on the lossless queues (fabric::pfc_watchdog_config).
struct pfc_watchdog_spec {
  bool enabled = false;
  std::int64_t detection_ns = 200'000'000;
  std::int64_t restoration_ns = 200'000'000;
  std::string action = "drop";  // drop | forward | alert
};

struct pfc_spec {
  bool enabled = true;
  std::vector<std::uint32_t> priorities{3};   // lossless priorities (SONiC pfc_enable "3,4"; here 3)
  std::uint32_t pause_quanta = 0xffff;
  std::int64_t headroom_bytes = 0;            // 0: computed (headroom_calculator) from speed, cable, MTU
  std::int64_t xon_offset_bytes = 2 * 1024;   // XON = XOFF threshold - this (SONiC xon_offset); two RoCE frames
  double cable_m = 5;                          // SONiC's default cable length for headroom (5m)
  pfc_watchdog_spec watchdog;
};

struct ecn_spec {
  bool enabled = true;
  std::int64_t kmin_bytes = 1048576;
  std::int64_t kmax_bytes = 2097152;
  double pmax = 0.05;
  std::vector<std::uint32_t> queues{3};  // egress queues the WRED/ECN profile is on
};

struct switch_spec {
  std::int64_t buffer_bytes = 32 * 1024 * 1024;
  std::int64_t cell_bytes = 256;
  std::int32_t dynamic_th = 0;        // lossless PGs: alpha = 2^dynamic_th
  std::int32_t lossy_dynamic_th = 3;  // lossy PGs and queues
  bool ecn_mark_on_dequeue = false;
  // 0: egress queues as above (lossy ones under lossy_dynamic_th, lossless ones unlimited).
  // Otherwise every egress queue holds at most this many bytes, counted in cells like every
  // threshold, and drops (or trims) beyond: a static threshold (SONiC static_th on the
  // egress queue profiles) in place of the dynamic one, the fixed queue of ns-3 and htsim.
  std::int64_t queue_limit_bytes = 0;
  pfc_spec pfc;
  ecn_spec ecn;
};

struct nic_spec {
  std::uint32_t mtu_bytes = 1024;
  std::uint32_t data_priority = 3;
  bool dcqcn_enabled = true;
  fabric::dcqcn_config dcqcn = fabric::dcqcn_config::mlx5();
  std::int64_t retransmit_timeout_ns = 4'000'000;
  std::uint32_t ack_every_packets = 1;
  std::uint32_t data_dscp = 26;  // DSCP of RoCE data (fabric/lossless_class.hpp)
  // One RC QP per peer, messages to a peer in post order (fabric::twin::nic_config::
  // one_qp_per_peer); false: a QP per message, as HPCC's ns-3 and htsim run flows. The
  // twin only: the labs always connect one QP per peer, and the spec a lab run records
  // (backend::as_run_here) says so, so the twin's replay of it models their QPs.
  bool qp_per_peer = false;
};

// A workload section is on when the spec has it (or a --set names one of its fields)
// unless it says enabled: false.
struct incast_spec {
  bool enabled = false;
  std::uint32_t receiver = 0;
  std::uint32_t senders = 16;
  std::vector<std::uint32_t> sender_hosts;  // explicit senders; overrides `senders`
  std::int64_t flow_bytes = 64 * 1024;
  std::uint32_t rounds = 1;
  std::int64_t round_gap_ns = 0;
  std::int64_t start_ns = 0;
  std::int64_t start_jitter_ns = 0;
  std::int32_t priority = -1;
};

struct allreduce_spec {
  bool enabled = false;
  std::string algorithm = "ring";  // ring | halving_doubling | hierarchical_ring | tree | hierarchical_tree
  std::uint32_t slices = 1;        // NCCL-style pipelining (traffic/allreduce.hpp)
  std::uint32_t ranks = 8;
  std::vector<std::uint32_t> rank_hosts;
  std::int64_t bytes = 64 * 1024 * 1024;
  std::uint32_t iterations = 1;
  std::int64_t start_ns = 0;
  std::int64_t iteration_gap_ns = 0;
  std::int32_t priority = -1;
};

struct background_spec {
  bool enabled = false;
  std::string cdf = "websearch";  // websearch | hadoop | a CDF file (relative to the spec)
  double load = 0.5;
  std::vector<std::uint32_t> hosts;
  std::int64_t start_ns = 0;
  std::int64_t duration_ns = 10'000'000;
  std::uint64_t max_flows = 0;
  std::int32_t priority = -1;
};

// Victim flows (traffic/victim.hpp): from the incast's senders to hosts whose ports the
// incast does not congest, while the incast runs, on its priority by default.
struct victim_spec {
  bool enabled = false;
  std::vector<std::uint32_t> hosts;      // senders; empty: the incast's senders
  std::vector<std::uint32_t> receivers;  // empty: hosts that are neither the incast's receiver nor its senders
  std::int64_t flow_bytes = 64 * 1024;
  std::uint32_t flows_per_sender = 1;
  std::int64_t start_ns = 0;
  std::int64_t gap_ns = 0;
  std::int32_t priority = -1;
};

struct workload_spec {
  incast_spec incast;
  allreduce_spec allreduce;
  background_spec background;
  victim_spec victim;
  // Flows from a file (traffic/flow_list.hpp: CSV, an htsim connection matrix or HPCC
  // ns-3's flow.txt, told apart by content), relative to the spec's folder, or the file's
  // text itself (a value with a line break; spec_files.hpp). Empty: none.
  std::string flow_list;
};

// The fabric the twin models: RoCEv2 (PFC, ECN, DCQCN: the switch and nic
// sections) or InfiniBand (credits per VL, IB headers, IB congestion control when
// nic.dcqcn.enabled), with ECMP or adaptive routing. The labs are RoCEv2 with ECMP.
// fabric.link uec only: the Ultra Ethernet transport and switch options
// (fabric::uec_config); setting one on another fabric is an error naming it.
struct uec_spec {
  std::string profile = "rocelab";       // rocelab | htsim (fabric::uec_profile)
  std::string load_balancing = "reps";  // ecmp | oblivious | reps
  bool nscc = true;
  bool rccc = false;
  bool trimming = true;
  std::int64_t trim_threshold_bytes = 0;   // 0: trim where the queue would drop
  std::int64_t rccc_budget_bytes = 0;      // 0: one BDP
  std::int64_t nscc_target_qdelay_ns = 0;  // 0: NSCC's default
  std::int64_t retransmit_timeout_ns = 0;  // 0: derived from the fabric's RTT
  bool credit_flow_control = false;        // CBFC on every link instead of trimming/drops
  double link_frame_loss_rate = 0;        // per frame and link, from the run's seed
  bool link_level_retry = false;           // links replay lost frames (UEC LLR)
};

struct fabric_spec {
  std::string link = "roce";      // roce | infiniband | uec
  std::string routing = "ecmp";   // ecmp | adaptive
  std::int64_t switch_latency_ns = 0;   // port to port, added per switch hop
  std::int64_t ib_vl_buffer_bytes = 0;  // per port and VL; 0: the switch buffer split evenly
  uec_spec uec;
};

// Settings only the twin backend reads.
struct twin_spec {
  std::int64_t stop_ns = 10'000'000'000;
  std::int64_t queue_sample_interval_ns = 0;
  // Per-flow transmit timelines (experiments/run/flow_timeline.hpp): the twin samples
  // them every interval, the virtual lab bins its capture by it (1 ms when 0); 0: the twin
  // records none.
  std::int64_t flow_timeline_interval_ns = 0;
  bool hpcc_ns3_compat = false;
  std::uint64_t max_events = 0;  // congestion events (marks, CNPs, ...) kept per run; 0: none
  // A lab's calibration (`rocelab calibrate`) the twin models: a file relative to the
  // spec's folder, or its YAML inline (spec_files.hpp); empty: ideal NICs and switch.
  // The twin only: the labs are what it measured.
  std::string calibration;
};

// Real-time runs (virtual lab, hardware): how far apart the senders may start.
struct timing_spec {
  // Start skew plus clock uncertainty beyond which the run is marked degraded; 0: no limit.
  std::int64_t max_start_skew_ns = 0;
};

// A fabric run slower than the hardware it stands for (the virtual lab: 0.5 Gb/s links
// standing for 100 Gb/s). With hardware_gbps set, k = hardware_gbps / topology.link_gbps
// and DCQCN runs dilated k times: every time k times longer and every rate k times lower
// (dcqcn_config::time_scale), exactly. The DCQCN knobs and every byte threshold (buffer,
// ECN, headroom, byte counter) keep the hardware's values, as queues in bytes do under
// dilation, so the knobs export as they are. Delays (topology.link_delay_ns,
// fabric.switch_latency_ns, the retransmit timeout) are the fabric's as it runs: on the
// lab, what its calibration measures. Never reaches hardware: backend lab refuses it.
struct scaling_spec {
  double hardware_gbps = 0;  // 0: no scaling (the spec is its own hardware)
};

struct experiment_spec {
  std::string name;
  std::string backend = "twin";  // twin | virtual | lab
  std::uint64_t seed = 1;
  std::uint32_t repeats = 1;
  topology_spec topology;
  switch_spec sw;  // "switch" in the file
  nic_spec nic;
  workload_spec workload;
  fabric_spec fabric;
  twin_spec twin;
  timing_spec timing;
  scaling_spec scaling;

  // Where values came from: path -> "file:line" or "--set ...". Sections too.
  std::map<std::string, std::string> origins;
  std::string source_file;  // the YAML file, for messages
  std::string base_dir;     // relative paths in the spec (a CDF file) start here
};

enum class field_type : std::uint8_t { boolean, integer, size, duration, rate_gbps, real, text, choice, host_list };

struct field_info {
  std::string path;
  field_type type;
  std::string help;
  std::vector<std::string> choices;  // choice fields
  std::function<status(experiment_spec&, std::string_view)> set;
  std::function<std::string(const experiment_spec&)> get;
};

// Every field, in the order the resolved spec is written.
[[nodiscard]] const std::vector<field_info>& field_table();
[[nodiscard]] const field_info* find_field(std::string_view path);
// Whether `path` is a section ("switch.ecn") that has fields under it.
[[nodiscard]] bool is_section(std::string_view path);
// The valid path nearest to an unknown one, or "" when nothing is close.
[[nodiscard]] std::string nearest_path(std::string_view path);

// Sets a field from text and records `origin` for it. Errors: unknown path (with the
// nearest one), bad value, value out of range; not prefixed with the origin (the caller
// knows how to name it).
[[nodiscard]] status set_field(experiment_spec& spec, std::string_view path, std::string_view value,
                               const std::string& origin);
[[nodiscard]] result<std::string> get_field(const experiment_spec& spec, std::string_view path);

// Applies "path=value" from the command line.
[[nodiscard]] status apply_override(experiment_spec& spec, std::string_view assignment);

// Cross-field checks (kmin <= kmax, a workload present, the workloads fit the topology,
// switch and DCQCN configs valid), each error naming the origin of the field at fault.
[[nodiscard]] status validate(const experiment_spec& spec);

// k of scaling_spec: hardware_gbps / topology.link_gbps, or 1 without scaling.
[[nodiscard]] double time_scale(const experiment_spec& spec);

// YAML. load_spec_file also sets source_file and base_dir; errors name file:line.
[[nodiscard]] result<experiment_spec> load_spec(std::string_view yaml_text, const std::string& source_name);
[[nodiscard]] result<experiment_spec> load_spec_file(const std::string& path);
// The resolved spec: every field with its value, loadable by load_spec.
[[nodiscard]] std::string to_yaml(const experiment_spec& spec);

}  // namespace rocelab::experiments

#pragma once
// The digital twin: a packet-level discrete-event simulation of a RoCEv2 fabric that
// drives the fabric model (switch_model, DCQCN reaction/notification points, PFC) in
// virtual time. It yields the same records as a lab run (common/records.hpp).
//
// Contract between the twin engine (fabric/twin/) and the workloads (traffic/): a
// workload posts messages through twin_context and is told when each completes, so
// dependent traffic (an all-reduce step waiting for the previous chunk) is expressed in
// the workload, not in the engine. Deterministic: the same config, workload and seed give
// the same records, bit for bit.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/fabric/dcqcn.hpp"
#include "rocelab/fabric/delay_quantiles.hpp"
#include "rocelab/fabric/fabric_profile.hpp"
#include "rocelab/fabric/switch_config.hpp"

namespace rocelab::fabric::twin {

// The fabric's shape; fabric_graph.hpp lays out its switches, ports and device order.
struct topology_config {
  enum class kind : std::uint8_t { single_switch, leaf_spine, fat_tree, graph, rail_optimized };
  kind type = kind::single_switch;
  std::uint32_t hosts = 16;            // in all; leaf-spine: hosts / leaves per leaf; fat-tree: k^3/4
  double link_gbps = 100;              // host <-> switch links
  std::int64_t link_delay_ns = 1000;   // propagation delay of every link
  // Bytes every frame holds its link for beyond itself, on every link, in the ideal FCT
  // and in a PFC headroom the twin sizes: Ethernet's preamble and SFD (8) and inter-frame
  // gap (12). 0..64; 0 for a reference that counts none (htsim). It replaces the switch
  // template's wire_overhead_bytes; InfiniBand links use IB framing instead and the HPCC
  // ns-3 compatibility mode 0, and both refuse another value.
  std::uint32_t frame_overhead_bytes = 20;
  // Leaf-spine only.
  std::uint32_t leaves = 0;
  std::uint32_t spines = 0;
  // Fat-tree only: the switches' port count (even, 2..62): k pods of k/2 edge and k/2
  // aggregation switches, (k/2)^2 cores, k^3/4 hosts.
  std::uint32_t k = 0;
  // Rail-optimized only (the layout of NVIDIA's DGX SuperPOD and of most AI-training
  // clusters): servers of nics_per_host NICs each; every NIC is a host of the twin (h1..hN,
  // server s holds hosts s x nics_per_host .. + nics_per_host - 1, NIC i of it host
  // s x nics_per_host + i). NIC i of every server hangs off rail i's leaves (`leaves` of
  // them per rail, the servers split evenly over them), and `spines` spines join every
  // leaf of every rail. Two NICs of one server reach each other over the server's own
  // fast local link (NVLink through NVSwitch), never through the fabric: each NIC has a
  // local port of local_link_gbps each way, which carries one message at a time per
  // direction in post order and adds local_link_delay_ns (fabric_graph::local_transfer_ns).
  // Defaults: an H100 SXM's NVLink 4, 18 links of 25 GB/s each way = 3,600 Gb/s.
  std::uint32_t nics_per_host = 1;
  double local_link_gbps = 3600;
  std::int64_t local_link_delay_ns = 1000;
  // Switch-to-switch link speed; 0 derives it from oversubscription: the host bandwidth of
  // a leaf (edge) divided by (oversubscription x its uplinks). Leaf-spine: hosts per leaf x
  // link_gbps / (oversubscription x spines). Fat-tree: link_gbps / oversubscription, on
  // every edge-aggregation and aggregation-core link, so the edge is oversubscribed by
  // that ratio (slower uplinks, not fewer) and the tiers above it are not. Rail-optimized:
  // as leaf-spine, NICs per rail leaf x link_gbps / (oversubscription x spines).
  double spine_link_gbps = 0;
  double oversubscription = 1.0;
  // The switches' ECMP hash (routing.hpp). twin: a 64-bit mix of the RoCEv2 5-tuple, the
  // run's seed and the switch. hpcc_ns3: that simulator's SwitchNode::EcmpHash (MurmurHash3
  // of sip, dip and sport | dport << 16, seeded with the switch's ns-3 node id,
  // ecmp_seeds), so a compat run sends every flow over the path ns-3 sends it over.
  enum class ecmp_kind : std::uint8_t { twin, hpcc_ns3 };
  ecmp_kind ecmp = ecmp_kind::twin;
  std::vector<std::uint32_t> ecmp_seeds;  // hpcc_ns3: per switch device (leaves, then spines)
  // Graph only: any fabric of hosts and switches, as HPCC ns-3's topo.txt describes one.
  // Nodes 0..hosts-1 are the hosts, hosts..hosts+switches-1 the switches (in device
  // order, named sw0, sw1, ...); every link joins two nodes at its own speed and delay,
  // and every host has exactly one link, to a switch. A node numbers its ports in link
  // order. link_gbps and link_delay_ns are not used.
  struct graph_link {
    std::uint32_t a = 0, b = 0;
    double gbps = 0;
    std::int64_t delay_ns = 0;
  };
  std::uint32_t switches = 0;
  std::vector<graph_link> links;
};

// The RoCEv2 NIC of every host.
struct nic_config {
  std::uint32_t mtu_bytes = 1024;      // RoCE MTU: payload bytes per packet (256..4096)
  bool dcqcn_enabled = true;
  dcqcn_config dcqcn = dcqcn_config::mlx5();
  std::uint8_t data_priority = 3;      // 802.1p of data (and of ACKs unless ack_priority set)
  std::int16_t ack_priority = -1;      // -1: same as data
  // CNPs go on dcqcn.cnp_802p_prio.
  // The NIC sends its control packets (ACK, NAK, CNP) ahead of data. The priority whose
  // PFC pause holds them back; -1: each packet's own. The HPCC ns-3 simulator with
  // ACK_HIGH_PRIO checks ACKs against the pause of queue 0 (never paused) while its
  // switches queue them with the data (RdmaEgressQueue::ack_q_idx vs SwitchNode).
  std::int16_t control_pause_priority = -1;
  bool pfc_enabled = true;             // honour PFC frames for our priorities
  std::int64_t retransmit_timeout_ns = 4'000'000;  // go-back-N when no ACK progress
  std::uint32_t ack_every_packets = 1; // the responder ACKs every Nth packet (and the last)
  // One RC QP per peer, as both labs connect their hosts (the soft NIC fleet and the
  // verbs agents: one QP per ordered host pair): a message posted to a peer while an
  // earlier one to it (same priority) still has packets to send waits behind it (its
  // record's start stays the post), starts right after that one's last packet at the QP's
  // pacing, and shares the QP's reaction and notification points (a cut rate carries over
  // to the next message, as on a real NIC) and its UDP source port (one ECMP path).
  // false: every message its own QP, as HPCC's ns-3 runs flows. Never applied to UEC or
  // in hpcc_ns3_compat.
  bool one_qp_per_peer = false;
};

// What a calibration of a lab measured of one of its hosts (experiments/calibration): the
// twin draws these per message and per response so that it models that lab's NICs
// rather than ideal ones.
struct host_timing {
  // A message's post (or start time) to its first frame on the wire: the first frame
  // leaves no earlier than start + a draw (later when the NIC is busy).
  delay_quantiles send_processing;
  // A data frame fully received to the response it causes (ACK, NAK, CNP; on UEC its
  // ACK, NACK or grant) queued for sending: one draw per response. The NIC takes up a
  // message's last ACK the same way: on RoCE and InfiniBand the message completes a draw
  // after that ACK arrived (the lab's NIC stamps the completion when it processed it).
  delay_quantiles receive_processing;
  // A ceiling on the rate the NIC sends at, in bytes on the wire (each frame with its
  // preamble and inter-frame gap, as `rocelab calibrate` measures it and as the links
  // serialize): applies when > 0 and below the link rate. DCQCN's rate limits below it.
  double achieved_gbps = 0;
  // How late the NIC's pacing wake-ups come, as the lab's soft NIC measures it
  // (traffic/soft_nic rc_nic::tx_lateness). A data frame that was not yet due when the
  // NIC last sent (it needs a wake-up of its own) leaves at its due instant plus a draw;
  // the next due instant counts from the due instant, not from the late send, except
  // that a send later than one frame time catches up by one frame only (the soft NIC's
  // pacing rule). So lateness below a frame time is jitter, and above it costs rate: the
  // NIC sends pairs of frames a wake-up apart. A message's first frame draws
  // send_processing instead. Not applied to UEC flows or in hpcc_ns3_compat.
  delay_quantiles pacing_lateness;
};

// The lab's timing the twin models (twin_config::lab); empty: ideal hosts and a switch
// that adds only fabric.switch_latency_ns, exactly the twin without it. Draws come from
// streams keyed by the run's seed (one per host and direction, one per switch port), so
// a run repeats bit for bit.
struct lab_timing {
  std::vector<host_timing> hosts;  // by host index: empty, or one per host
  // A frame's time in a switch beyond store and forward, per hop, on top of
  // fabric.switch_latency_ns: a draw per frame from its egress port's distribution.
  // Single switch: forwarding_by_port[port] (port == host index) where present and not
  // empty; every other port (and every port of a leaf-spine) draws from `forwarding`.
  // A frame never overtakes an earlier one out of the same port.
  std::vector<delay_quantiles> forwarding_by_port;
  delay_quantiles forwarding;

  [[nodiscard]] bool empty() const noexcept;
};

// ECN thresholds for ports of one speed. Deployments scale Kmin/Kmax with port speed, and
// the HPCC ns-3 simulator's KMIN_MAP/KMAX_MAP/PMAX_MAP key them by link rate.
struct ecn_for_rate {
  double gbps = 0;
  ecn_config ecn;
};

// Switches of the topology are built from `switch_template`: its global settings
// (buffer, cells, PFC, ECN mode, lossless priorities ...) and ports[0] as the template of
// every port (rate_bps is replaced by the topology's link speed, wire_overhead_bytes by
// topology.frame_overhead_bytes).
struct twin_config {
  topology_config topology;
  switch_config switch_template;
  // Per-speed ECN overrides of the template's queue ECN settings, for every queue of a
  // port whose speed matches; empty: every port uses the template's.
  std::vector<ecn_for_rate> ecn_by_rate;
  nic_config nic;
  // RoCEv2 (PFC, Ethernet/IP/UDP headers, DCQCN) or InfiniBand (credits per VL, IB
  // headers, IB CC); routing ECMP or adaptive; the switches' port-to-port latency. On
  // InfiniBand the switch template's buffer is split into VL buffers
  // (fabric::infiniband_switch_config) and its PFC and ECN settings do not apply.
  fabric::fabric_mode fabric;
  std::uint64_t seed = 1;
  // 0: no samples. Otherwise every interval from t = 0: a queue_sample per switch queue
  // (port x priority) that is non-empty or was non-empty at the previous sample (absent
  // means 0 bytes), and a counter_sample "tx_bytes" per host NIC whose count moved.
  std::int64_t queue_sample_interval_ns = 0;
  // 0: none. Otherwise every interval from t = 0, per-flow transmit timelines as the
  // lab's capture gives them (experiments/run/flow_timeline.hpp): a counter_sample
  // "flow_tx_bytes" (device: the sender's host device; port: the flow's index in
  // run_records::flows; value: payload bytes of its data packets, retransmissions
  // included, that the last switch had sent toward the receiver by t_ns) for each flow
  // that has sent, preceded by a 0 one interval before its first and closed by one at the
  // run's end or once the flow completed.
  std::int64_t flow_timeline_interval_ns = 0;
  // 0: no run_records::events. Otherwise at most this many congestion_event records, in
  // time order: CE marks where a switch set them (device, egress port), CNPs where the
  // sender received them (its host device; in compat mode the congestion flag on an
  // ACK), retransmitted data packets at their sender, drops at the switch (the egress
  // port for egress-limit drops, else the ingress port). Later ones are not recorded.
  std::size_t max_events = 0;
  std::int64_t stop_ns = 10'000'000'000;      // virtual-time limit: flows not done are incomplete
  // Reproduce the HPCC ns-3 simulator's modelling shortcuts (see
  // shared/scenarios/hpcc-ns3/README.md) for line-by-line comparison with it.
  bool hpcc_ns3_compat = false;
  // The lab's NIC and switch timing, from its calibration; empty: none.
  lab_timing lab;
  // Polled every few thousand events (from the thread running the twin); when it returns
  // true the run ends there as at stop_ns: flows not done are incomplete, records so far
  // are returned. The caller that asked knows the run was cut short (Python's Ctrl-C).
  std::function<bool()> cancel_requested;
};

// One message from src to dst (host indexes), sent as an RDMA WRITE on its own QP.
struct message {
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
  std::uint64_t bytes = 0;
  std::int64_t start_ns = 0;     // not before this virtual time
  workload_kind kind = workload_kind::other;
  std::int16_t priority = -1;    // -1: nic.data_priority
  std::uint64_t tag = 0;         // the workload's own reference; copied into flow_record::tag
  // UDP ports of the flow's packets as the ECMP hash sees them; 0: the twin's own (source
  // port from the QP number, destination 4791). HPCC ns-3 scenarios bring theirs.
  std::uint16_t udp_sport = 0, udp_dport = 0;
};

class twin_context {
 public:
  [[nodiscard]] virtual std::int64_t now_ns() const = 0;
  [[nodiscard]] virtual std::uint32_t hosts() const = 0;
  [[nodiscard]] virtual double link_gbps() const = 0;
  // Queues a message; it starts at max(now, m.start_ns). Returns its id.
  virtual std::uint64_t post(const message& m) = 0;
  virtual void report_allreduce(const allreduce_result& result) = 0;

 protected:
  ~twin_context() = default;
};

class workload {
 public:
  virtual ~workload() = default;
  virtual void start(twin_context& ctx) = 0;
  // Called when message `id` (posted with `m`) completed, at ctx.now_ns() == record.end_ns.
  virtual void on_message_complete(std::uint64_t id, const message& m, const flow_record& record,
                                   twin_context& ctx) {
    (void)id, (void)m, (void)record, (void)ctx;
  }
};

// Runs the workload to completion (or config.stop_ns) and returns the records; flows are
// in the order the messages were posted (message id order), each with its tag.
// Fails only on an invalid config (naming the field).
result<run_records> run_twin(const twin_config& config, workload& load);

[[nodiscard]] status validate(const twin_config& config);

// Switch `index`'s configuration as the twin builds it for `config` (its ports and their
// speeds, headroom sized per link, the HPCC compatibility settings applied): what a
// qualification of that switch expects. 0 is the single switch, or the first leaf.
[[nodiscard]] result<switch_config> switch_config_of(const twin_config& config, std::uint32_t index = 0);

}  // namespace rocelab::fabric::twin

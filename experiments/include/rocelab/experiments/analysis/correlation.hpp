#pragma once
// Correlation: a run's pause intervals, queue samples, congestion events and counters
// joined with its flow records on the run's one timeline (records.hpp), per flow and per
// hop of the flow's path.
//
// The model of a path: a flow's data crosses a list of transmitters, the sender's NIC
// (its host device, port 0) and then each switch's egress port towards the destination.
// PFC stops a transmitter for one priority, so a pause_interval on (device, port,
// priority) stalls exactly the flows whose path holds that transmitter at that priority
// while the interval lasts. A flow's "pause exposure" at a hop is the overlap of the
// flow's lifetime [start_ns, end_ns] with that hop's pause intervals (sources merged);
// its exposure over the path is the length of the union of its hops' overlaps (two hops
// paused at once stall it once).
//
// Pure functions: no I/O, no clock. Units are in the names (ns, bytes, gbps).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::experiments {

// One transmitter on a flow's path. For a switch, `ingress_port` is where the flow
// enters (its priority group there is what sends PFC upstream); for the sender's NIC it
// is 0.
struct path_hop {
  std::uint32_t device = 0;  // run_records::devices index
  std::uint32_t ingress_port = 0;
  std::uint32_t egress_port = 0;
  bool is_switch = false;
  friend bool operator==(const path_hop&, const path_hop&) = default;
};

// Resolves a flow's path, hops in the order its data crosses them (sender NIC first, the
// switch port facing the destination last). An empty path means "unknown": the flow gets
// no per-hop figures.
using path_fn = std::function<std::vector<path_hop>(const flow_record&)>;

// Paths of a twin run: the sender's NIC, then the switches the twin's routing
// (fabric/twin/routing.hpp: the same functions the engine forwards with, ECMP included)
// sends the flow through. `seed` is the run's twin_config::seed. Builds the fabric's routes
// once; an empty function when the topology cannot be built. A message between two NICs
// of one server (rail_optimized) took their local link: an empty path.
[[nodiscard]] path_fn twin_paths(const fabric::twin::topology_config& topology, std::uint64_t seed);

// Paths of a lab with one switch (the virtual lab; a real lab of one ToR): host i's NIC is
// device `host_device[i]` and sits on switch port `host_port[i]`.
struct single_switch_layout {
  std::uint32_t switch_device = 0;
  std::vector<std::uint32_t> host_device;
  std::vector<std::uint32_t> host_port;
};
[[nodiscard]] path_fn single_switch_paths(single_switch_layout layout);

// The layout of a single-switch run from its device names: the one device named "sw" or
// "sw0" is the switch; host i is the device named as run_records::hosts[i] (the virtual
// lab names NIC counters by host index when there is no such device) and is on port i
// (the virtual lab wires host i to switch port i). Fails when there is no switch device
// or several.
[[nodiscard]] result<single_switch_layout> infer_single_switch_layout(const run_records& records);

// ---------------------------------------------------------------- pause intervals

// Pause counters sampled over time, turned into intervals. Names as mlx5 ethtool and
// SONiC/SAI count them per port and priority N:
//   rx_prioN_pause           PFC frames received (this port's transmitter was paused)
//   rx_prioN_pause_duration  time this port's transmitter was paused (duration_unit_ns)
//   tx_prioN_pause           PFC frames sent (the link partner was paused)
//   tx_prioN_pause_duration  time the link partner was asked to pause
// Counters are cumulative. Between two samples t0 < t1 of one (device, port, N):
// - a duration counter that grew by d gives one interval of length min(d, t1 - t0); where
//   in (t0, t1] it lay is unknown, so it is placed ending at t1 (the sample interval is
//   the placement's uncertainty, reported as `resolution_ns`);
// - a frame counter that grew, with no duration counter for that port and priority,
//   gives the whole (t0, t1] (an upper bound: the pause lasted at most that long).
// rx_* counters pause (device, port) itself; tx_* counters pause its link partner, which
// `peer` names (no interval when it returns nothing). Adjacent intervals are merged.
struct counter_pause_options {
  double duration_unit_ns = 1000.0;  // mlx5 and SAI count pause duration in microseconds
  std::function<std::optional<std::pair<std::uint32_t, std::uint32_t>>(std::uint32_t device, std::uint32_t port)>
      peer;
};

struct counter_pause_result {
  std::vector<pause_interval> intervals;  // source = counter
  std::int64_t resolution_ns = 0;         // the longest sample interval used
  std::uint64_t frames = 0;               // pause frames the counters saw
};

[[nodiscard]] counter_pause_result pause_intervals_from_counters(std::span<const counter_sample> counters,
                                                                 const counter_pause_options& options = {});

// Pause intervals indexed by (device, port, priority), every source merged into one
// sorted list of disjoint intervals per key, so overlap with any time window costs a
// binary search.
class pause_index {
 public:
  explicit pause_index(std::span<const pause_interval> pauses);

  struct key {
    std::uint32_t device = 0;
    std::uint32_t port = 0;
    std::uint8_t priority = 0;
    friend auto operator<=>(const key&, const key&) = default;
  };
  struct span_ns {
    std::int64_t start_ns = 0, end_ns = 0;
  };

  // Paused time of `k` within [from_ns, to_ns].
  [[nodiscard]] std::int64_t overlap_ns(const key& k, std::int64_t from_ns, std::int64_t to_ns) const;
  // The merged intervals of `k` clipped to [from_ns, to_ns], appended to `out`.
  void clipped(const key& k, std::int64_t from_ns, std::int64_t to_ns, std::vector<span_ns>& out) const;
  // Merged intervals per key (sources merged).
  [[nodiscard]] const std::map<key, std::vector<span_ns>>& merged() const { return merged_; }

 private:
  std::map<key, std::vector<span_ns>> merged_;
  std::map<key, std::vector<std::int64_t>> prefix_;  // prefix sums of lengths, per key
};

// Length of the union of spans (sorted or not).
[[nodiscard]] std::int64_t union_length_ns(std::vector<pause_index::span_ns> spans);

// ---------------------------------------------------------------- queue depth

// Queue samples indexed by (device, port, queue) as step functions: a sample's depth holds
// until the next sample of that queue; before the first it is 0. (The twin writes a 0
// sample when a queue empties, so its sparse samples are an exact step function at the
// sampling resolution.)
class queue_index {
 public:
  explicit queue_index(std::span<const queue_sample> samples);

  using key = pause_index::key;  // priority = the queue
  struct stats {
    double mean_bytes = 0;       // time-weighted over the window
    std::uint64_t max_bytes = 0;
  };
  [[nodiscard]] bool empty() const { return samples_.empty(); }
  [[nodiscard]] bool has(const key& k) const { return samples_.count(k) != 0; }
  [[nodiscard]] stats window(const key& k, std::int64_t from_ns, std::int64_t to_ns) const;
  [[nodiscard]] const std::map<key, std::vector<std::pair<std::int64_t, std::uint64_t>>>& series() const {
    return samples_;
  }

 private:
  std::map<key, std::vector<std::pair<std::int64_t, std::uint64_t>>> samples_;  // (t_ns, bytes), sorted
};

// ---------------------------------------------------------------- per flow

struct correlation_options {
  // Payload bytes per data packet (the RoCE MTU), for the CE-marked fraction.
  std::uint32_t mtu_bytes = 1024;
  // Drain rate of a switch egress port, for queueing delay = depth / rate; nullptr: every
  // port drains at default_port_gbps.
  std::function<double(std::uint32_t device, std::uint32_t port)> port_gbps;
  double default_port_gbps = 100;
};

struct hop_exposure {
  path_hop hop;
  std::int64_t paused_ns = 0;                 // overlap of the flow's lifetime with this hop's pauses
  std::optional<double> queue_mean_bytes;     // switch hops with queue samples for the flow's priority
  std::optional<std::uint64_t> queue_max_bytes;
  std::optional<double> queueing_ns;          // mean depth / port rate: one packet's wait here
  bool victim = false;                        // see victims.hpp
};

struct flow_correlation {
  std::size_t flow = 0;  // index into run_records::flows
  std::vector<hop_exposure> hops;
  std::int64_t paused_ns = 0;            // union over the path
  std::uint64_t packets = 0;             // ceil(bytes / mtu)
  double ce_fraction = 0;                // ce_marked / packets
  // Empty: not measured (a hardware NIC counts neither per flow: flow_record's *_measured).
  std::optional<std::uint64_t> cnps, retransmits;
  std::optional<double> queueing_ns;     // sum over switch hops with samples
  double slowdown = 0;                   // 0 when not completed
};

// Per-flow correlation, in the order of records.flows. Incomplete flows are included
// with their lifetime cut at the end of the run (the latest time any record mentions).
[[nodiscard]] std::vector<flow_correlation> correlate_flows(const run_records& records, const path_fn& paths,
                                                            const correlation_options& options = {});

// The time the run's records span: the latest end or sample time in them.
[[nodiscard]] std::int64_t run_end_ns(const run_records& records);

}  // namespace rocelab::experiments

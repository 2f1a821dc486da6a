#pragma once
// The records every backend yields (twin, virtual lab, real lab), so analysis, tuning,
// reports, the store and Python never ask which backend ran. See shared/DESIGN.md.
//
// All times are int64 nanoseconds on the run's one timeline (the twin's virtual time;
// in a lab, the controller's clock after mapping agents by their estimated offsets).
// Hosts and devices are indexes into run_records::hosts / devices, so a run of millions
// of flows carries no strings per record.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rocelab {

// Values are stored (run store, controller protocol): a kind keeps its number. victim:
// flows that share the incast's senders but go to hosts whose ports are not congested
// (traffic/victim.hpp). flow_list: flows read from a file (traffic/flow_list.hpp) that
// name no other class.
enum class workload_kind : std::uint8_t {
  incast = 0,
  allreduce = 1,
  background = 2,
  other = 3,
  victim = 4,
  flow_list = 5
};

[[nodiscard]] constexpr const char* to_string(workload_kind k) noexcept {
  switch (k) {
    case workload_kind::incast: return "incast";
    case workload_kind::allreduce: return "allreduce";
    case workload_kind::background: return "background";
    case workload_kind::other: return "other";
    case workload_kind::victim: return "victim";
    case workload_kind::flow_list: return "flow_list";
  }
  return "other";
}

// One message (an RDMA WRITE or SEND of `bytes`) from start to its last ACK.
struct flow_record {
  std::uint32_t src = 0;  // host index
  std::uint32_t dst = 0;
  std::uint32_t qp = 0;
  std::uint8_t priority = 0;
  workload_kind kind = workload_kind::other;
  std::uint64_t bytes = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = -1;       // -1: did not complete
  std::int64_t fct_ns = -1;
  std::int64_t ideal_fct_ns = 0;  // alone on an idle path: propagation + serialization
  std::uint64_t retransmits = 0;  // packets sent again (go-back-N)
  std::uint64_t ce_marked = 0;    // data packets that arrived CE-marked
  std::uint64_t cnps = 0;         // CNPs the sender received
  std::uint64_t tag = 0;          // the workload's reference for the message (twin: message::tag)
  // Whether the backend counted retransmits and cnps for this flow. A hardware RDMA NIC
  // keeps no per-QP count of either: its flows carry false with the count at 0, which
  // means "not measured" (never "none"); analysis, reports and objectives say so.
  bool retransmits_measured = true;
  bool cnps_measured = true;
  // The run's repeat this record belongs to (0-based; a stored run of `repeats: 3` holds
  // 0, 1 and 2). Backends yield one repeat's records with 0; the run layer sets it.
  std::uint32_t repeat = 0;

  [[nodiscard]] bool completed() const noexcept { return end_ns >= 0; }
  [[nodiscard]] double slowdown() const noexcept {
    return completed() && ideal_fct_ns > 0 ? static_cast<double>(fct_ns) / static_cast<double>(ideal_fct_ns) : 0.0;
  }
};

// Where a pause interval came from: a PFC frame in the capture, a sampled pause counter,
// or the twin's model.
enum class pause_source : std::uint8_t { capture = 0, counter = 1, model = 2 };

[[nodiscard]] constexpr const char* to_string(pause_source s) noexcept {
  switch (s) {
    case pause_source::capture: return "capture";
    case pause_source::counter: return "counter";
    case pause_source::model: return "model";
  }
  return "model";
}

// A (device, port, priority) was paused: it could not transmit on that priority.
struct pause_interval {
  std::uint32_t device = 0;  // index into run_records::devices
  std::uint32_t port = 0;
  std::uint8_t priority = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  pause_source source = pause_source::model;
  std::uint32_t repeat = 0;  // the run's repeat (0-based), as on flow_record
};

// A named counter's value at t_ns (NIC hw_counters, ethtool pause counters, switch queue
// and PFC counters).
struct counter_sample {
  std::uint32_t device = 0;
  std::uint32_t port = 0;
  std::string name;
  std::int64_t t_ns = 0;
  std::uint64_t value = 0;
  std::uint32_t repeat = 0;  // the run's repeat (0-based), as on flow_record
};

struct queue_sample {
  std::uint32_t device = 0;
  std::uint32_t port = 0;
  std::uint8_t queue = 0;
  std::int64_t t_ns = 0;
  std::uint64_t bytes = 0;
  std::uint32_t repeat = 0;  // the run's repeat (0-based), as on flow_record
};

// One congestion event at a point in time, where per-flow counts are not enough (marks and
// CNPs over time, retransmission bursts, drops). Backends may keep them bounded or leave
// them out (the twin records them when asked); flows carry the per-flow counts regardless.
enum class event_kind : std::uint8_t { ce_mark = 0, cnp = 1, retransmit = 2, drop = 3 };

[[nodiscard]] constexpr const char* to_string(event_kind k) noexcept {
  switch (k) {
    case event_kind::ce_mark: return "ce_mark";
    case event_kind::cnp: return "cnp";
    case event_kind::retransmit: return "retransmit";
    case event_kind::drop: return "drop";
  }
  return "ce_mark";
}

struct congestion_event {
  event_kind kind = event_kind::ce_mark;
  std::uint32_t device = 0;  // where it was seen (switch for marks and drops, host for CNPs)
  std::uint32_t port = 0;
  std::uint8_t priority = 0;
  std::int64_t t_ns = 0;
  std::uint32_t src = 0;  // the flow it belongs to (host indexes, QP)
  std::uint32_t dst = 0;
  std::uint32_t qp = 0;
  pause_source source = pause_source::model;  // capture, counter or model, as for pauses
  std::uint32_t repeat = 0;  // the run's repeat (0-based), as on flow_record
};

// nccl-tests definitions: algbw = bytes / time; busbw = algbw x 2 (ranks - 1) / ranks for
// all-reduce.
struct allreduce_result {
  std::string algorithm;  // "ring", "halving_doubling"
  std::uint32_t ranks = 0;
  std::uint64_t bytes = 0;  // per rank
  std::int64_t time_ns = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::uint32_t repeat = 0;  // the run's repeat (0-based), as on flow_record
};

// Totals a backend counts that are not per flow.
struct run_totals {
  std::uint64_t pfc_pause_frames = 0;  // XOFF frames sent (refreshes included)
  std::uint64_t pfc_resume_frames = 0;
  std::int64_t paused_ns = 0;          // sum of pause interval lengths
  std::uint64_t ce_marked = 0;         // packets marked by switches
  std::uint64_t cnps = 0;              // CNPs sent by notification points
  std::uint64_t drops = 0;
  std::uint64_t retransmits = 0;
  std::uint64_t packets_forwarded = 0; // packet-hops through switches
  std::uint64_t trims = 0;             // packets switches cut to their header (UEC trimming)
  // False when nothing in the run counted them (a real lab whose NICs keep no such port
  // counter): the total is 0 and means "not measured".
  bool retransmits_measured = true;
  bool cnps_measured = true;
  std::uint64_t link_replays = 0;      // frames links sent again (UEC link-level retry)
};

struct run_records {
  std::string backend;                 // "twin", "virtual", "lab"
  std::vector<std::string> hosts;      // host index -> name ("h1", ...)
  std::vector<std::string> devices;    // device index -> name ("sw0", "leaf1", "h3", ...)
  std::vector<flow_record> flows;
  std::vector<pause_interval> pauses;
  std::vector<counter_sample> counters;
  std::vector<queue_sample> queues;
  std::vector<allreduce_result> allreduce;
  std::vector<congestion_event> events;
  run_totals totals;
  std::int64_t simulated_ns = 0;       // twin: virtual time at the end
  // Hosts whose NIC or agent was lost mid-run, each with why ("h3: agent h3 lost: ...");
  // their flows stay unfinished. Non-empty: the run is partial.
  std::vector<std::string> lost_hosts;
  // Why this run's results are not the fabric's behaviour (a soft switch that overran its
  // reaction budget, ...). Non-empty: the run is degraded.
  std::vector<std::string> degraded;
  // The capture taken beside the run (virtual lab): its file (empty: not kept), the
  // frames the switch mirrored to it and the frames it holds. loss: mirrored but not
  // captured (at least what the capture reported dropped); never 0 when frames are missing.
  struct capture_info {
    std::string file;
    std::uint64_t mirrored = 0, captured = 0, loss = 0;
  };
  std::optional<capture_info> capture;
  // Armed starts: per sending host, how late its first message started against the
  // workload's schedule (actual - scheduled, ns), and what measured it ("nic": the
  // sender's NIC; "capture": the mirror's first data packet of the sender). Empty on the
  // twin, whose messages start exactly on schedule.
  std::map<std::string, std::int64_t> start_offsets_ns;
  std::string start_source;
  // The clock the senders' starts were agreed and measured on, across hosts (a lab run's
  // agents, protocol/run_clock.hpp): "ptp", "ntp" (chrony or ntpd), "ntp+ptp", or
  // "estimate" (rocelab's own probes); empty where one host's clock serves everyone. Its
  // uncertainty is what the start skew may be off by (the largest agent's bound).
  std::string start_clock;
  std::int64_t start_clock_uncertainty_ns = 0;
};

// Marks every record of one repeat's records as repeat `repeat` (the run layer does, before
// the store keeps them).
inline void set_repeat(run_records& records, std::uint32_t repeat) noexcept {
  for (auto& r : records.flows) r.repeat = repeat;
  for (auto& r : records.pauses) r.repeat = repeat;
  for (auto& r : records.counters) r.repeat = repeat;
  for (auto& r : records.queues) r.repeat = repeat;
  for (auto& r : records.allreduce) r.repeat = repeat;
  for (auto& r : records.events) r.repeat = repeat;
}

}  // namespace rocelab

#pragma once
// Per-flow transmit timelines: how a bottleneck's bandwidth was shared over time. Every
// backend records them in one shape, cumulative counter samples:
//
//   counter_sample{device = the sender's host device, port = the flow's index in
//                  run_records::flows, name = "flow_tx_bytes", t_ns, value}
//
// value: the payload bytes of the flow's data packets (retransmissions included) that the
// switch had sent toward the receiver by t_ns, on the run's timeline. A flow's samples are
// in time order, the first 0 (the instant before its first byte); a rate is the
// difference of two samples over their interval. The virtual lab bins its capture (the
// switch's egress copies) every `bin_ns` from T0; the twin samples the same count at its
// last switch's egress every twin.flow_timeline_interval_ns
// (fabric/twin/twin.hpp: flow_timeline_interval_ns).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"

namespace rocelab::experiments {

inline constexpr std::string_view flow_tx_bytes_counter = "flow_tx_bytes";
// The virtual lab's bin when the spec names none (twin.flow_timeline_interval_ns 0).
inline constexpr std::int64_t default_flow_timeline_bin_ns = 1'000'000;

// One data packet of flows[flow], seen at t_ns on the run's timeline.
struct flow_packet {
  std::uint32_t flow = 0;
  std::int64_t t_ns = 0;
  std::uint64_t payload_bytes = 0;
  std::uint32_t port = 0;        // the switch port it left by (its destination host's)
  std::uint64_t wire_bytes = 0;  // on that link: frame, FCS, preamble and gap
};

// Puts capture stamps on a timeline the switch's ports could have kept. A capture stamps
// a copy when it reads it, never before the switch sent it, and DPDK's af_packet PMD
// stamps a whole burst when it polls: a capture starved of CPU on a loaded lab reads
// milliseconds of a port's frames at once, stamped as if the port had sent them faster
// than its rate. Per port, in capture order (the order the port sent them), each packet
// gets the latest time that is no later than its own stamp and leaves its successor on
// that port one wire time at `port_rate_bps` (> 0); so the stamp stays an upper bound,
// and a burst read late is spread back over the time the port needed to send it.
void fit_to_port_rate(std::vector<flow_packet>& packets, double port_rate_bps);

// The timelines of `packets` binned every bin_ns (> 0) from t = 0: per flow that has a
// packet, a 0 sample at the start of its first bin, then its cumulative bytes at the end
// of every bin up to the one of its last packet. Packets before 0 count in the first bin;
// packets of a flow index past `flows` are left out. Host h is device first_host_device + h.
[[nodiscard]] std::vector<counter_sample> flow_timeline_samples(const std::vector<flow_record>& flows,
                                                                std::span<const flow_packet> packets,
                                                                std::int64_t bin_ns,
                                                                std::uint32_t first_host_device);

// The data packets (RoCEv2, neither ACK, NAK nor CNP) of a virtual lab's capture file,
// as the switch's plain egress copies hold them (ERSPAN copies, the arrival witnesses, are
// not the flows' packets), on the run's timeline (capture time - t0_realtime_ns). A packet
// goes to host h's address `host_ipv4[h]` as destination; its message is found by PSN: each
// (source, destination) pair is one RC QP whose messages begin with a FIRST or ONLY opcode
// in PSN order, and the n-th message of a pair is the n-th of `flows` from that source to
// that destination in start order. Packets of no host or no known message are left out.
// With port_rate_bps > 0 their times are then fitted to it (fit_to_port_rate).
[[nodiscard]] result<std::vector<flow_packet>> capture_flow_packets(const std::string& capture_file,
                                                                   const std::vector<flow_record>& flows,
                                                                   const std::vector<std::string>& host_ipv4,
                                                                   std::int64_t t0_realtime_ns,
                                                                   double port_rate_bps = 0);

// A timeline read back from records: the flow's rate over each interval between samples.
struct flow_rate_point {
  std::int64_t from_ns = 0, to_ns = 0;
  double rate_bps = 0;
};
struct flow_timeline {
  std::uint32_t repeat = 0;  // 0 for the first of a run's repeats (see flow_timelines_of)
  std::uint32_t device = 0;  // the sender's device
  std::uint32_t flow = 0;    // index into run_records::flows
  std::uint64_t bytes = 0;   // the last sample's count
  std::vector<flow_rate_point> points;
};

// Every flow's timeline among `counters` (samples named flow_tx_bytes_counter), ordered by
// repeat, then flow index. A run's repeats are stored one after the other with flow
// indexes counted in each, so a flow's sample earlier than the one before it begins that
// flow's timeline in the next repeat. Intervals of no length (two samples at one instant)
// are left out.
[[nodiscard]] std::vector<flow_timeline> flow_timelines_of(const std::vector<counter_sample>& counters);

// The samples as compact JSON, [[device, flow, t_ns, value], ...] (a stored run's
// parameter: the twin's replayed timelines beside a lab run's), and back; errors name the
// entry that is not of that shape.
[[nodiscard]] std::string flow_timeline_json(const std::vector<counter_sample>& counters);
[[nodiscard]] result<std::vector<counter_sample>> parse_flow_timeline_json(std::string_view text);

}  // namespace rocelab::experiments

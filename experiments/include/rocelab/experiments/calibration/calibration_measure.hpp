#pragma once
// What `rocelab calibrate` sends and the arithmetic that turns what the lab stamped into a
// calibration (calibration.hpp). Pure: the plan, the workload that carries it out and the
// arithmetic read no clock and do no I/O; calibrate_lab.hpp runs them on the virtual lab.
//
// The plan, on n hosts with host 0 the fixed receiver (pairs to one receiver, not all
// n(n-1): the base RTT of a pair on one switch is the two NICs' and the two ports', so
// each host appears in both directions):
//   1. base RTT: for each host i != 0, `pings` 64-byte RC WRITEs i -> 0, then `pings`
//      0 -> i, one at a time (each posted when the previous one's ACK completed it), as
//      ib_write_lat measures latency;
//   2. line rate: one flow from each host in turn (host 0 to host 1, the others to host
//      0), alone on the fabric, of line_rate_flow_bytes(link);
// every message of both is also a sample of its sender's send processing. The CNP loop
// runs apart (it needs ECN and a capture): a 2:1 incast, hosts 1 and 2 into host 0.

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "rocelab/experiments/calibration/calibration.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/fabric/latency_histogram.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::experiments {

// Why a spec's backend cannot be calibrated: `twin` (a twin is what a calibration is
// for) and `lab` (a hardware lab's agents report none of the stamps; the message names
// them); success for `virtual`.
[[nodiscard]] status calibration_refusal(const experiment_spec& spec);

enum class calibration_purpose : std::uint8_t { ping, line_rate, incast };

struct calibration_plan {
  std::uint32_t hosts = 0;
  std::uint32_t receiver = 0;
  std::uint32_t pings = 0;
  // In the order they are sent; message i has tag i.
  std::vector<fabric::twin::message> messages;
  std::vector<calibration_purpose> purposes;  // per message
};

inline constexpr std::uint64_t calibration_ping_bytes = 64;

// A line-rate flow's size at `link_gbps`: at least 2 MiB and at least 30 ms on the link,
// so the pacing of its first and last packets is a small part of what is measured.
[[nodiscard]] std::uint64_t line_rate_flow_bytes(double link_gbps);

// Steps 1 and 2 above for `hosts` >= 2 hosts.
[[nodiscard]] calibration_plan make_calibration_plan(std::uint32_t hosts, std::uint32_t pings, double link_gbps);
// The CNP loop's incast: hosts 1 and 2 into host 0 at once, `bytes` each (hosts >= 3).
[[nodiscard]] calibration_plan make_incast_plan(std::uint32_t hosts, std::uint64_t bytes);

// Carries a plan out: the incast's messages all at the start; the others one after
// another, each posted when the previous one completed.
class calibration_workload final : public fabric::twin::workload {
 public:
  explicit calibration_workload(const calibration_plan& plan) : plan_(plan) {}
  void start(fabric::twin::twin_context& ctx) override;
  void on_message_complete(std::uint64_t id, const fabric::twin::message& m, const flow_record& record,
                           fabric::twin::twin_context& ctx) override;

 private:
  void post(std::size_t i, fabric::twin::twin_context& ctx);
  const calibration_plan& plan_;
  std::size_t next_ = 0;
};

// A message's packets on its sender's wire, as its NIC stamped them (first and last data
// packets handed to the port; wire bytes of all its packets and of the last).
struct wire_span {
  std::int64_t first_tx_ns = 0, last_tx_ns = 0;
  std::int64_t wire_bytes = 0, last_wire_bytes = 0;
};

// The rate the message went out at: the bytes on the wire before its last packet over the
// time from its first packet to its last, in Gb/s; 0 when that is not measurable (one
// packet, or stamps out of order).
[[nodiscard]] double achieved_gbps(const wire_span& w);

// One message as the lab recorded it, on one timeline.
struct measured_message {
  std::int64_t start_ns = 0;  // posted (the NIC's start)
  std::int64_t end_ns = -1;   // its last ACK; -1: never completed
  bool wire_reported = false;
  wire_span wire;
  std::uint32_t src = 0, dst = 0, qp = 0;  // the QP it went on (numbered per host pair)
  std::uint64_t cnps = 0;                   // CNPs its flow received (its rate was cut)
};

// A frame of the CNP loop's capture: a CE-marked RoCE data packet or a CNP, as the
// switch's egress mirror copied it, stamped by the capture; addresses IPv4-mapped.
struct loop_frame {
  std::int64_t t_ns = 0;
  bool cnp = false;
  std::array<std::uint8_t, 16> ip_src{}, ip_dst{};
  std::uint32_t wire_bytes = 0;  // the frame on the wire (with FCS), for its serialization
};

// The CNP loop samples: each CNP (receiver -> sender) paired with the CE-marked data
// packet of its flow (sender -> receiver) that set it off: the latest one whose last bit
// could have reached the receiver and whose CNP could have come back in whole by the
// time the CNP went out ((data + CNP serialization at link_bps) before it), not paired
// before. Data packets before that one and unpaired were not answered (the notification
// point's min_time_between_cnps). Frames in capture order.
[[nodiscard]] std::vector<std::int64_t> cnp_loop_samples(std::span<const loop_frame> frames, std::int64_t link_bps);

// Everything the lab stamped for a plan.
struct calibration_stamps {
  std::vector<std::string> hosts;                          // names, by host index
  std::vector<measured_message> messages;                  // per plan message
  std::vector<fabric::latency_histogram> rx_processing;    // per host; empty: not measured
  std::vector<fabric::latency_histogram> tx_lateness;      // per host (pacing); empty: not measured
  std::vector<fabric::latency_histogram> forwarding;       // per switch port
  std::vector<std::int64_t> cnp_loop_ns;
};

// The calibration of a plan's stamps (its header fields, lab .. mtu_bytes, are the
// caller's): per pair the RTTs of its pings that completed; per host its messages' send
// processing (first packet out - post), its receive processing and its line-rate flow's
// achieved rate; per port its forwarding latency; the CNP loop.
[[nodiscard]] calibration measure_calibration(const calibration_plan& plan, const calibration_stamps& stamps);

// The calibration's host delays taken again from `loaded`, the stamps of a run of the
// spec's own workload (its `load` becomes calibration_load_workload): per host the send
// processing of the messages it posted onto an idle QP (a message posted behind another on
// its QP waits for that one, which is the transport's doing, not processing), its
// receive processing and its pacing lateness (how late its wake-ups for due packets came
// while the other NICs held the CPU). A delay with fewer than min_samples_under_load
// samples there keeps its idle value. The achieved rate stays the idle one: what a
// loaded soft NIC loses of its line rate comes from those late wake-ups (it sends a
// pair of frames per wake-up once late by a frame time), which the twin draws per
// packet; a rate measured per message and applied as a cap on the whole NIC for the
// whole run overstated the loss for the NICs that ran while the others were idle. The
// switch's forwarding stays idle: the soft switch has a CPU of its own, its queueing is
// the twin's to model, and under load the frames that find their port idle and empty
// (the only ones forwarding latency is measured on) are the ones behind a stall of its
// loop. Base RTTs and the CNP loop are kept.
inline constexpr std::uint64_t min_samples_under_load = 20;
void take_delays_under_load(calibration& c, const calibration_stamps& loaded);

}  // namespace rocelab::experiments

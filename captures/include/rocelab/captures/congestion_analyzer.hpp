#pragma once
// Turns captured packets into the counts and events every experiment uses: RoCEv2
// traffic by kind and ECN codepoint, PFC and 802.3x PAUSE frames, ERSPAN mirror packets,
// per-flow records (with CE marks and retransmissions) and PFC pause intervals.
//
// Pure: packets in, a capture_analysis out; no I/O, no clock. One analyzer per capture;
// add() is the hot path (no allocation except when a new flow or pause key appears).
//
// Definitions (the field names are those of `rocelab analyze --json`):
// - RoCEv2 is UDP destination port 4791 with a complete BTH. Frames mirrored in ERSPAN
//   count as if captured directly (their bytes are the inner frame's).
// - ack/nak: opcode 0x11 (ACKNOWLEDGE) by AETH syndrome (NAK and RNR NAK are naks);
//   cnp: opcode 0x81; data: every other RoCE packet.
// - pfc.by_priority[p] counts PFC frames whose class-enable bit p is set: xoff when that
//   priority's quanta is non-zero, xon when zero, quanta their sum.
// - A flow is (source IP, destination IP, destination QP). retransmits counts data
//   packets whose PSN is not ahead of the highest PSN already seen in that flow (24-bit
//   serial arithmetic); psn_rewinds counts the times the PSN went backwards. ACK PSNs are
//   ignored: ACKs are coalesced, so their gaps are not losses.
// - pauses: per (port, priority), the intervals during which the link was paused: from an
//   XOFF to the XON or to the quanta's expiry (quanta x 512 bit times at link_gbps),
//   refreshes merged. The port is the capture interface when the capture has several, or
//   the PFC frame's source MAC when it has one; intervals name it by index into `ports`,
//   so a storm of millions of intervals carries no strings.
// - pause_summary and longest_pause_intervals are kept as intervals close, so a reader
//   who wants only those (analyzer_options::keep_pause_intervals = false) gets them
//   without the list of every interval: they equal summarize_pauses() and
//   longest_pauses() (capture_summary.hpp) of the full list.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rocelab/captures/dissect.hpp"
#include "rocelab/captures/packet.hpp"

namespace rocelab::captures {

struct ecn_counts {
  std::uint64_t not_ect = 0, ect0 = 0, ect1 = 0, ce = 0;
};

struct roce_counts {
  std::uint64_t packets = 0, data = 0, ack = 0, nak = 0, rnr_nak = 0, cnp = 0, bytes = 0;
  ecn_counts ecn;
};

struct pfc_priority_counts {
  std::uint64_t frames = 0, xoff = 0, xon = 0, quanta = 0;
};

struct pfc_counts {
  std::uint64_t frames = 0;
  std::array<pfc_priority_counts, 8> by_priority{};
};

struct pause_counts {
  std::uint64_t frames = 0, quanta = 0;
};

struct roce_flow {
  std::array<std::uint8_t, 16> src{};  // IPv4-mapped for IPv4
  std::array<std::uint8_t, 16> dst{};
  std::uint32_t dest_qp = 0;
  std::uint64_t packets = 0, bytes = 0;
  std::int64_t first_ns = 0, last_ns = 0;
  std::uint64_t ce = 0, cnp = 0, retransmits = 0, psn_rewinds = 0;
};

// The mirror session on which a switch sends an ingress copy of each RoCEv2 packet that
// begins a message (ERSPAN type III, stamped on arrival): an ACL-triggered ingress mirror,
// as SONiC's MIRROR_INGRESS_ACTION gives and the soft switch's mirror "arrivals" sends
// (fabric/soft_switch/mirror.hpp). Its copies witness when each sender's messages reached
// the switch; they are not packets of the flows.
inline constexpr std::uint16_t arrivals_session = 1023;

// The earliest arrival the arrivals session witnessed for one flow.
struct message_arrival {
  std::array<std::uint8_t, 16> src{};  // IPv4-mapped for IPv4
  std::array<std::uint8_t, 16> dst{};
  std::uint32_t dest_qp = 0;
  // At the switch's ingress, since the Unix epoch: the copy's ERSPAN timestamp where its
  // granularity is 100 ns (placed by the capture's own timestamp, which comes later), else
  // the capture's timestamp.
  std::int64_t first_ns = 0;
  std::uint64_t copies = 0;
};

struct pause_interval {
  std::uint32_t port = 0;  // index into capture_analysis::ports
  std::uint8_t priority = 0;
  std::int64_t start_ns = 0, end_ns = 0;
  std::uint32_t frames = 0;  // XOFF frames (first and refreshes) merged into the interval
};

// Pause time of one (port, priority), over all its intervals.
struct port_priority_pauses {
  std::uint32_t port = 0;  // index into capture_analysis::ports
  std::uint8_t priority = 0;
  std::uint64_t intervals = 0;
  std::uint64_t frames = 0;     // XOFF frames merged into those intervals
  std::int64_t paused_ns = 0;   // sum of the intervals' lengths
  std::int64_t longest_ns = 0;
};

struct capture_analysis {
  std::uint64_t frames = 0;
  std::uint64_t malformed = 0;
  std::uint64_t truncated = 0;         // cut by the snap length inside a header we read
  std::uint64_t unsupported_link = 0;  // packets on link types we do not dissect
  roce_counts roce;
  pfc_counts pfc;
  pause_counts pause;
  std::uint64_t erspan_packets = 0;
  // Copies on analyzer_options::arrivals_session: counted in frames and erspan_packets,
  // and in arrivals, nowhere else.
  std::uint64_t arrival_copies = 0;
  std::vector<message_arrival> arrivals;  // ordered by first_ns, then key
  std::vector<roce_flow> flows;        // ordered by first_ns, then key
  std::vector<std::string> ports;      // the ports pauses were seen on, sorted by name
  std::vector<pause_interval> pauses;  // ordered by start_ns, then port, priority; empty
                                       //   unless analyzer_options::keep_pause_intervals
  std::uint64_t pause_interval_count = 0;
  // One entry per (port, priority) with at least one interval, ordered by port, priority.
  std::vector<port_priority_pauses> pause_summary;
  // The longest intervals, longest first (ties by start_ns, port, priority), at most
  // analyzer_options::longest_pauses_kept.
  std::vector<pause_interval> longest_pause_intervals;
  double link_gbps = 100;
};

struct analyzer_options {
  double link_gbps = 100;  // converts pause quanta to time: one quantum = 512 bit times
  // Every pause interval in capture_analysis::pauses. Off, a pause storm costs a few
  // counters per (port, priority) instead of a list of millions to store and sort.
  bool keep_pause_intervals = true;
  std::size_t longest_pauses_kept = 10;
  // ERSPAN type III ingress copies on this session are arrival witnesses (arrivals_session
  // above); 0: none, every copy is a packet.
  std::uint16_t arrivals_session = captures::arrivals_session;
};

class congestion_analyzer {
 public:
  explicit congestion_analyzer(analyzer_options options = {});
  congestion_analyzer(congestion_analyzer&&) noexcept;
  congestion_analyzer& operator=(congestion_analyzer&&) noexcept;
  ~congestion_analyzer();

  // Tells the analyzer about a capture interface (name, link type). Packets on an
  // interface never declared are read as Ethernet. With more than one interface, pause
  // intervals are keyed by interface instead of source MAC.
  void set_interfaces(const std::vector<interface_info>& interfaces);

  void add(const packet_view& packet);
  // Same, when the caller already dissected the packet.
  void add(const packet_view& packet, const dissected_frame& frame);

  // Closes open pause intervals at their expiry and returns everything counted.
  [[nodiscard]] capture_analysis finish();

 private:
  struct state;
  std::unique_ptr<state> state_;
};

// The name of the port an interval is on ("02:00:00:00:00:aa", "eth3").
[[nodiscard]] inline const std::string& port_name(const capture_analysis& a, const pause_interval& p) {
  return a.ports.at(p.port);
}

// "198.18.0.1" for IPv4-mapped addresses, RFC 5952 text for IPv6.
std::string format_ip(const std::array<std::uint8_t, 16>& address);
std::string format_mac(const std::array<std::uint8_t, 6>& mac);

}  // namespace rocelab::captures

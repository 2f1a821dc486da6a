#pragma once
// The soft RoCEv2 NIC's transport: reliable-connection queue pairs carried in
// real RoCEv2 frames (Ethernet, IPv4 with DSCP and ECT(0), UDP 4791, BTH, RETH, payload,
// ICRC; IBTA vol. 1 annex A17), RDMA WRITE and SEND, PSNs, ACK/NAK in the AETH, go-back-N
// retransmission on a PSN-sequence-error NAK and on timeout (IBTA 9.7), the DCQCN
// reaction and notification points of rocelab::fabric (CNPs on the wire, A17.9), pacing
// of every QP to its DCQCN rate and of the port to its line rate, and honouring of
// 802.1Qbb PFC frames for the priorities it sends on.
//
// Pure: no I/O and no clock reads. Frames leave through `frame_sink`; received frames come
// in through on_frame(); time comes in as arguments and the RTO and DCQCN timers go
// through the fabric::clock given (virtual in the unit tests, realtime_clock in
// `rocelab nic-run`). The driver calls poll_transmit(now) whenever it wakes; it returns
// the next time the NIC wants to send, so a real-time driver can sleep until then.
//
// What it does not do (not needed by the lab's workloads): RDMA READ and atomics, RNR,
// memory registration (payload bytes are zeros and land nowhere; the responder counts
// them), more than one outstanding request list per QP, IPv6.
//
// Threading: single-threaded, with the clock. Ownership: the NIC owns its QPs; QPs
// register timers with the clock, so the NIC is neither copyable nor movable.

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/clock.hpp"
#include "rocelab/fabric/dcqcn.hpp"
#include "rocelab/fabric/latency_histogram.hpp"
#include "rocelab/fabric/link_flow_control.hpp"

namespace rocelab::traffic::soft_nic {

using mac_address = std::array<std::uint8_t, 6>;
using ipv4_address = std::array<std::uint8_t, 4>;

struct endpoint {
  mac_address mac{};
  ipv4_address ip{};
};

// Where frames go. send() returning false means the frame was lost (a full kernel queue);
// the transport recovers it like a drop on the wire.
class frame_sink {
 public:
  virtual bool send(std::span<const std::uint8_t> frame) = 0;

 protected:
  ~frame_sink() = default;
};

struct nic_config {
  endpoint local;
  std::int64_t line_rate_bps = 1'000'000'000;
  std::uint32_t mtu_bytes = 1024;     // RoCE path MTU: payload bytes per packet (256..4096)
  std::uint8_t data_dscp = 26;        // classified to priority 3 by the lab switch (DSCP_TO_TC_MAP)
  std::uint8_t data_priority = 3;     // the 802.1p class the data and ACKs are paused on
  bool dcqcn_enabled = true;
  fabric::dcqcn_config dcqcn = fabric::dcqcn_config::mlx5();
  bool pfc_enabled = true;
  std::int64_t retransmit_timeout_ns = 4'000'000;
  std::uint32_t ack_every_packets = 1;
  std::uint32_t max_outstanding_packets = 1024;  // go-back-N window (PSNs in flight per QP)
};

// One side of an RC connection, set up out of band (as perftest exchanges QPN and PSN).
struct qp_connection {
  std::uint32_t local_qpn = 0;   // 24 bits, unique on this NIC
  std::uint32_t remote_qpn = 0;
  endpoint remote;
  std::uint32_t send_psn = 0;    // first PSN this side sends
  std::uint32_t recv_psn = 0;    // first PSN the peer sends
  std::uint16_t udp_src_port = 0xC000;
  std::uint32_t peer = 0;        // the peer's host index, copied into records
};

enum class verb : std::uint8_t { rdma_write, send };

// A message finished on the requester side (its last PSN acknowledged).
struct send_completion {
  std::uint64_t id = 0;
  std::uint32_t local_qpn = 0;
  std::uint32_t peer = 0;
  std::uint64_t bytes = 0;
  std::uint64_t tag = 0;
  std::int64_t start_ns = 0;    // posted (an armed post: its start_ns)
  // The driver's time when the message's first data packet went to the frame sink (the
  // `now_ns` of that poll_transmit): the instant the sender put the message on its wire.
  std::int64_t first_tx_ns = 0;
  // The same for its last data packet's first transmission; with the wire bytes
  // (wire_bytes()) of its data packets' first transmissions, and of the last one alone:
  // the rate it went out at is (wire_bytes - last_wire_bytes) over last_tx - first_tx.
  std::int64_t last_tx_ns = 0;
  std::int64_t wire_bytes = 0;
  std::int64_t last_wire_bytes = 0;
  std::int64_t end_ns = 0;      // last ACK received
  std::uint64_t retransmits = 0;  // packets of this message sent again
  std::uint64_t cnps = 0;         // CNPs the QP received while the message was outstanding
};

// A message finished on the responder side (its last packet accepted in order).
struct receive_completion {
  std::uint32_t local_qpn = 0;
  std::uint32_t peer = 0;
  std::uint64_t msn = 0;        // messages completed on this QP before it (0-based)
  std::uint64_t bytes = 0;
  std::uint64_t ce_marked = 0;  // its packets that arrived CE-marked
  std::int64_t end_ns = 0;
};

struct nic_counters {
  std::uint64_t tx_frames = 0, tx_bytes = 0, tx_data_packets = 0, tx_lost = 0;
  std::uint64_t tx_acks = 0, tx_naks = 0, tx_cnps = 0;
  std::uint64_t rx_frames = 0, rx_data_packets = 0, rx_acks = 0, rx_naks = 0, rx_cnps = 0, rx_pfc = 0;
  std::uint64_t rx_icrc_errors = 0, rx_ignored = 0, rx_out_of_sequence = 0, rx_duplicates = 0;
  std::uint64_t rx_ce_marked = 0;
  std::uint64_t retransmitted_packets = 0, timeouts = 0;
  std::int64_t paused_ns = 0;  // time the data priority had something to send but was paused
};

struct message_state;  // private to the implementation

class rc_nic {
 public:
  using send_callback = std::function<void(const send_completion&)>;
  using receive_callback = std::function<void(const receive_completion&)>;

  // Fails when the config is out of range (naming the field).
  [[nodiscard]] static result<std::unique_ptr<rc_nic>> create(const nic_config& cfg, fabric::clock& clk,
                                                              frame_sink& out);
  rc_nic(const rc_nic&) = delete;
  rc_nic& operator=(const rc_nic&) = delete;
  ~rc_nic();

  void on_send_complete(send_callback cb) { on_send_ = std::move(cb); }
  void on_receive_complete(receive_callback cb) { on_receive_ = std::move(cb); }

  // Adds a connected QP; fails on a duplicate local QPN.
  [[nodiscard]] status connect(const qp_connection& c);
  // Queues a message on QP local_qpn; it is sent after the QP's earlier messages. Returns
  // its id (increasing from 1), or an error for an unknown QP or zero bytes.
  [[nodiscard]] result<std::uint64_t> post(std::uint32_t local_qpn, verb v, std::uint64_t bytes, std::uint64_t tag,
                                           std::int64_t now_ns);
  // An armed start: queues a message that starts at start_ns (its start_ns in the
  // completion) on a QP with nothing outstanding, and builds its first data packet now,
  // so that the poll_transmit that sends it at or after start_ns hands a ready frame to
  // the sink instead of building one (the frame is the one poll_transmit would build;
  // if anything is sent in between, it is built again). Nothing of the message leaves
  // before start_ns. Fails like post, and with `unavailable` when the QP still has
  // packets outstanding (the caller then posts at start_ns instead).
  [[nodiscard]] result<std::uint64_t> post_armed(std::uint32_t local_qpn, verb v, std::uint64_t bytes,
                                                 std::uint64_t tag, std::int64_t start_ns);

  // A frame received at now_ns (without FCS). Anything that is not for this NIC, not a
  // valid RoCEv2 RC packet or PFC frame, or fails the ICRC is counted and ignored.
  void on_frame(std::span<const std::uint8_t> frame, std::int64_t now_ns);
  // Sends what pacing, PFC and the windows allow at now_ns, at most `budget` frames.
  // Returns the earliest time it may send more (never_ns when idle; a time <= now_ns
  // when the budget ran out).
  std::int64_t poll_transmit(std::int64_t now_ns, std::size_t budget = 64);

  // Messages posted and not yet acknowledged, over all QPs.
  [[nodiscard]] std::size_t outstanding_messages() const;
  [[nodiscard]] const nic_counters& counters() const { return counters_; }
  [[nodiscard]] const nic_config& config() const { return cfg_; }
  // The QP's current DCQCN rate (the line rate when DCQCN is off); 0 for an unknown QP.
  [[nodiscard]] double rate_bps(std::uint32_t local_qpn) const;
  // The DCQCN reaction points' counters summed over the QPs (zeros when DCQCN is off).
  [[nodiscard]] fabric::reaction_point_counters dcqcn_counters() const;
  // How late data packets left against their due time (the later of the port's and the
  // QP's pacing instant): the first data packet of each poll_transmit, when it was not
  // yet due at the poll before. The NIC had to wake for it, and this is how late the
  // wake-up came (a timer slept past, or the CPU held by another NIC). Packets after it
  // in the same poll (the one-packet catch-up, other QPs due by then), packets held by
  // PFC or a window, and a message's first packet (its send processing) are not
  // counted. The twin draws the same lateness for the same packets (fabric/twin:
  // host_timing::pacing_lateness).
  [[nodiscard]] const fabric::latency_histogram& tx_lateness() const { return tx_lateness_; }

  struct queue_pair;  // private to the implementation

 private:
  rc_nic(const nic_config& cfg, fabric::clock& clk, frame_sink& out);
  queue_pair* find(std::uint32_t qpn);
  const queue_pair* find(std::uint32_t qpn) const;
  void send_control(std::vector<std::uint8_t> frame, std::uint8_t priority, std::int64_t now_ns);
  void on_data(queue_pair& qp, std::uint8_t opcode, std::uint32_t psn, bool ack_req, std::uint32_t payload_bytes,
               bool ce, std::int64_t now_ns);
  void on_acknowledge(queue_pair& qp, std::uint32_t psn, std::uint8_t syndrome, std::int64_t now_ns);
  void on_cnp(queue_pair& qp, std::int64_t now_ns);
  void on_retransmit_timeout(queue_pair& qp, std::int64_t now_ns);
  void send_ack(queue_pair& qp, bool nak, std::int64_t now_ns);
  void send_data_packet(queue_pair& qp, std::int64_t now_ns);
  [[nodiscard]] result<std::uint64_t> enqueue(queue_pair& q, verb v, std::uint64_t bytes, std::uint64_t tag,
                                              std::int64_t start_ns);
  // The data frame of packet `seq` of QP q (message m) with IPv4 identification ip_id,
  // into buf; its length.
  std::size_t build_data_frame(const queue_pair& q, const message_state& m, std::uint64_t seq,
                               std::uint16_t ip_id, std::vector<std::uint8_t>& buf) const;

  nic_config cfg_;
  fabric::clock& clock_;
  frame_sink& out_;
  fabric::pfc_pause_state pause_;
  std::vector<std::unique_ptr<queue_pair>> qps_;
  std::size_t rr_next_ = 0;           // round robin among QPs
  std::int64_t port_next_ns_ = 0;     // line-rate pacing of the port
  std::int64_t previous_poll_ns_ = fabric::never_ns;  // the poll_transmit before this one
  bool poll_sent_data_ = false;                       // this poll_transmit sent a data packet
  fabric::latency_histogram tx_lateness_;
  std::int64_t paused_since_ns_ = -1;
  std::uint64_t next_message_id_ = 1;
  nic_counters counters_;
  send_callback on_send_;
  receive_callback on_receive_;
  std::vector<std::uint8_t> frame_buf_;
  struct queued_control {
    std::vector<std::uint8_t> frame;
    std::uint8_t priority;
  };
  std::deque<queued_control> control_queue_;  // ACK/NAK/CNP waiting on PFC
  std::uint16_t ip_id_ = 0;
  // A data frame built ahead by post_armed: packet `seq` of `qp` with IPv4 identification
  // `ip_id`; used by send_data_packet when it sends exactly that (qp null: none).
  struct staged_frame {
    const queue_pair* qp = nullptr;
    std::uint64_t seq = 0;
    std::uint16_t ip_id = 0;
    std::size_t bytes = 0;
    std::vector<std::uint8_t> buf;
  } staged_;
};

// Wire bytes a frame of `frame_bytes` (without FCS) occupies on the link: preamble and
// SFD (8), FCS (4), inter-frame gap (12); frames are padded to 60 bytes first.
[[nodiscard]] constexpr std::int64_t wire_bytes(std::size_t frame_bytes) noexcept {
  return static_cast<std::int64_t>(frame_bytes < 60 ? 60 : frame_bytes) + 24;
}

}  // namespace rocelab::traffic::soft_nic

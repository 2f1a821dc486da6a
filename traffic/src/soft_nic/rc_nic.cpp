#include "rocelab/traffic/soft_nic/rc_nic.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "rocelab/captures/dissect.hpp"
#include "rocelab/captures/frame_builder.hpp"
#include "rocelab/captures/icrc.hpp"

namespace rocelab::traffic::soft_nic {

namespace wire = captures::wire;
namespace op = wire::roce_opcode;

namespace {

constexpr std::uint32_t psn_mask = 0xFFFFFF;
constexpr std::uint32_t rkey = 0x1000;  // one remote region per QP; the responder does not check it

// PSNs are 24-bit and wrap (IBTA 9.7.1). Internally every QP counts packets from 0 in 64
// bits; a wire PSN is mapped to the sequence number nearest to `reference` (within half
// the PSN space), which is how the responder's and requester's validity windows are
// defined (9.7.5.1.1: the window is half the PSN space).
std::uint64_t to_sequence(std::uint32_t wire_psn, std::uint32_t initial_psn, std::uint64_t reference) {
  const std::uint32_t ref_psn = static_cast<std::uint32_t>((initial_psn + reference) & psn_mask);
  std::int32_t delta = static_cast<std::int32_t>((wire_psn - ref_psn) & psn_mask);
  if (delta & 0x800000) delta -= 0x1000000;
  const auto s = static_cast<std::int64_t>(reference) + delta;
  return s < 0 ? 0 : static_cast<std::uint64_t>(s);
}
std::uint32_t to_wire(std::uint32_t initial_psn, std::uint64_t seq) {
  return static_cast<std::uint32_t>((initial_psn + seq) & psn_mask);
}

bool is_last(std::uint8_t o) {
  return o == op::rc_send_last || o == op::rc_send_last_with_immediate || o == op::rc_send_only ||
         o == op::rc_send_only_with_immediate || o == op::rc_rdma_write_last ||
         o == op::rc_rdma_write_last_with_immediate || o == op::rc_rdma_write_only ||
         o == op::rc_rdma_write_only_with_immediate;
}
bool is_request_data(std::uint8_t o) { return o <= op::rc_rdma_write_only_with_immediate; }

const std::array<std::uint8_t, 4096> zero_payload{};

}  // namespace

struct message_state {
  std::uint64_t id = 0;
  verb v = verb::rdma_write;
  std::uint64_t bytes = 0;
  std::uint64_t tag = 0;
  std::int64_t start_ns = 0;
  std::int64_t first_tx_ns = -1;  // its first data packet's first transmission; -1 until then
  std::int64_t last_tx_ns = -1;   // its last data packet's first transmission; -1 until then
  std::int64_t wire_bytes = 0;     // its data packets' first transmissions, on the wire
  std::int64_t last_wire_bytes = 0;  // of those, the last packet's
  std::uint64_t first_seq = 0;
  std::uint64_t packets = 0;
  std::uint64_t retransmits = 0;
  std::uint64_t cnps = 0;
};

struct rc_nic::queue_pair final : private fabric::timer_client {
  queue_pair(rc_nic& n, const qp_connection& c) : nic(n), conn(c), np(n.cfg_.dcqcn) {
    if (n.cfg_.dcqcn_enabled)
      rp = std::make_unique<fabric::reaction_point>(n.cfg_.dcqcn, n.cfg_.line_rate_bps, n.clock_);
  }
  queue_pair(const queue_pair&) = delete;
  queue_pair& operator=(const queue_pair&) = delete;
  ~queue_pair() {
    if (rto != fabric::no_timer) nic.clock_.cancel(rto);
  }

  void on_timer(std::int64_t now_ns, std::uint64_t) override {
    rto = fabric::no_timer;
    nic.on_retransmit_timeout(*this, now_ns);
  }
  void arm_rto(std::int64_t now_ns) {
    if (rto != fabric::no_timer) nic.clock_.cancel(rto);
    rto = nic.clock_.schedule(now_ns + nic.cfg_.retransmit_timeout_ns, *this, 0);
  }
  [[nodiscard]] double rate() const { return rp ? rp->rate_bps() : static_cast<double>(nic.cfg_.line_rate_bps); }
  // When the QP may send its next packet: one gap of the previous packet's wire bytes at
  // the rate DCQCN gives now, after that packet's due time. Evaluated at the current rate,
  // not fixed at the rate the previous packet left with, as a hardware rate limiter
  // applies a new rate at once: a QP cut deep and then raised by the rate timer sends at
  // the raised rate, instead of waiting out one packet time at the cut rate (at the
  // dilated 5 kb/s floor, 6.7 s for one 4 KiB frame).
  [[nodiscard]] std::int64_t due_ns() const {
    if (paced_wire_bytes == 0) return paced_from_ns;
    return paced_from_ns + static_cast<std::int64_t>(std::ceil(static_cast<double>(paced_wire_bytes) * 8e9 / rate()));
  }
  [[nodiscard]] bool can_send() const {
    return snd_nxt < posted_end && snd_nxt - snd_una < nic.cfg_.max_outstanding_packets;
  }
  message_state* message_of(std::uint64_t seq) {
    for (auto& m : sq)
      if (seq >= m.first_seq && seq < m.first_seq + m.packets) return &m;
    return nullptr;
  }

  rc_nic& nic;
  qp_connection conn;
  std::unique_ptr<fabric::reaction_point> rp;  // null when DCQCN is off
  fabric::notification_point np;
  // Requester (IBTA 9.7.4): sequence numbers counted from conn.send_psn.
  std::deque<message_state> sq;  // posted, not yet acknowledged, in PSN order
  std::uint64_t posted_end = 0;  // one past the last posted packet
  std::uint64_t snd_nxt = 0;     // next packet to send (rewound by go-back-N)
  std::uint64_t snd_una = 0;     // oldest unacknowledged packet
  std::uint64_t sent_end = 0;    // one past the highest packet ever sent
  // DCQCN pacing (due_ns): the due time of the last packet sent and its wire bytes; 0
  // bytes: the QP may send from paced_from_ns on.
  std::int64_t paced_from_ns = 0;
  std::int64_t paced_wire_bytes = 0;
  fabric::timer_id rto = fabric::no_timer;
  // Responder (IBTA 9.7.5): sequence numbers counted from conn.recv_psn.
  std::uint64_t epsn = 0;
  std::uint64_t msn = 0;
  bool nak_outstanding = false;  // one NAK per sequence error (9.7.5.2.1)
  std::uint32_t since_ack = 0;
  std::uint64_t rx_message_bytes = 0, rx_message_ce = 0;
};

// The Ethernet/IP/UDP part of every frame to a QP's peer, data and ACKs alike.
template <typename Config, typename QueuePair, typename IpId>
captures::roce_frame_spec frame_to(const Config& cfg_, const QueuePair& q, IpId ip_id) {
  captures::roce_frame_spec s;
  s.eth.src_mac = cfg_.local.mac;
  s.eth.dst_mac = q.conn.remote.mac;
  s.ip.src = captures::ipv4_mapped(cfg_.local.ip[0], cfg_.local.ip[1], cfg_.local.ip[2], cfg_.local.ip[3]);
  s.ip.dst =
      captures::ipv4_mapped(q.conn.remote.ip[0], q.conn.remote.ip[1], q.conn.remote.ip[2], q.conn.remote.ip[3]);
  s.ip.dscp = cfg_.data_dscp;
  // A17.9.1: RoCEv2 packets are ECN-capable so that switches mark CE instead of dropping;
  // mlx5 sends ECT(0), ACKs included.
  s.ip.ecn = wire::ecn_codepoint::ect0;
  s.ip.ipv4_identification = ip_id;
  s.udp_src_port = q.conn.udp_src_port;
  return s;
}

rc_nic::rc_nic(const nic_config& cfg, fabric::clock& clk, frame_sink& out)
    : cfg_(cfg), clock_(clk), out_(out), pause_(cfg.line_rate_bps, false) {
  frame_buf_.resize(cfg.mtu_bytes + 256);
}

rc_nic::~rc_nic() = default;

result<std::unique_ptr<rc_nic>> rc_nic::create(const nic_config& cfg, fabric::clock& clk, frame_sink& out) {
  if (cfg.mtu_bytes < 256 || cfg.mtu_bytes > 4096 || (cfg.mtu_bytes & (cfg.mtu_bytes - 1)) != 0)
    return status(error_code::invalid_argument, "mtu_bytes: must be 256, 512, 1024, 2048 or 4096 (IBTA 9.7.4.1.2)");
  if (cfg.line_rate_bps <= 0) return status(error_code::invalid_argument, "line_rate_bps: must be positive");
  if (cfg.retransmit_timeout_ns <= 0)
    return status(error_code::invalid_argument, "retransmit_timeout_ns: must be positive");
  if (cfg.ack_every_packets == 0) return status(error_code::invalid_argument, "ack_every_packets: must be >= 1");
  if (cfg.max_outstanding_packets == 0 || cfg.max_outstanding_packets >= 0x800000)
    return status(error_code::invalid_argument, "max_outstanding_packets: must be 1 .. 2^23-1 (half the PSN space)");
  if (cfg.data_priority > 7) return status(error_code::invalid_argument, "data_priority: must be 0..7");
  if (cfg.dcqcn_enabled) ROCELAB_RETURN_IF_ERROR(cfg.dcqcn.validate());
  return std::unique_ptr<rc_nic>(new rc_nic(cfg, clk, out));
}

rc_nic::queue_pair* rc_nic::find(std::uint32_t qpn) {
  for (auto& q : qps_)
    if (q->conn.local_qpn == qpn) return q.get();
  return nullptr;
}
const rc_nic::queue_pair* rc_nic::find(std::uint32_t qpn) const {
  for (const auto& q : qps_)
    if (q->conn.local_qpn == qpn) return q.get();
  return nullptr;
}

status rc_nic::connect(const qp_connection& c) {
  if (c.local_qpn == 0 || c.local_qpn > psn_mask || c.remote_qpn > psn_mask)
    return status(error_code::invalid_argument, "QPN must be 1 .. 2^24-1");
  if (find(c.local_qpn) != nullptr)
    return status(error_code::invalid_argument, "QP " + std::to_string(c.local_qpn) + " is already connected");
  auto q = std::make_unique<queue_pair>(*this, c);
  q->conn.send_psn &= psn_mask;
  q->conn.recv_psn &= psn_mask;
  qps_.push_back(std::move(q));
  return status::success();
}

result<std::uint64_t> rc_nic::post(std::uint32_t local_qpn, verb v, std::uint64_t bytes, std::uint64_t tag,
                                   std::int64_t now_ns) {
  queue_pair* q = find(local_qpn);
  if (q == nullptr) return status(error_code::not_found, "no QP " + std::to_string(local_qpn));
  return enqueue(*q, v, bytes, tag, now_ns);
}

result<std::uint64_t> rc_nic::post_armed(std::uint32_t local_qpn, verb v, std::uint64_t bytes, std::uint64_t tag,
                                         std::int64_t start_ns) {
  queue_pair* q = find(local_qpn);
  if (q == nullptr) return status(error_code::not_found, "no QP " + std::to_string(local_qpn));
  if (q->snd_una != q->posted_end)
    return status(error_code::unavailable, "QP " + std::to_string(local_qpn) + " has packets outstanding");
  auto id = enqueue(*q, v, bytes, tag, start_ns);
  if (!id) return id.error();
  // The QP's pacing holds the message until start_ns; the QP is idle, so nothing else of
  // it waits behind that. The port's pacing counts from start_ns too: the message is
  // due from its instant, so a send later than that catches up at most one packet time
  // from there, instead of the idle port's whole past (which would put a second frame
  // right behind the first at the instant).
  if (q->due_ns() < start_ns) {
    q->paced_from_ns = start_ns;
    q->paced_wire_bytes = 0;
  }
  port_next_ns_ = std::max(port_next_ns_, start_ns);
  const message_state& m = q->sq.back();
  staged_.qp = q;
  staged_.seq = m.first_seq;
  staged_.ip_id = ip_id_;
  staged_.bytes = build_data_frame(*q, m, m.first_seq, ip_id_, staged_.buf);
  return id;
}

result<std::uint64_t> rc_nic::enqueue(queue_pair& q, verb v, std::uint64_t bytes, std::uint64_t tag,
                                      std::int64_t start_ns) {
  if (bytes == 0) return status(error_code::invalid_argument, "a message of 0 bytes");
  if (bytes > 0x80000000ull) return status(error_code::invalid_argument, "a message over 2 GiB (IBTA 9.4.1)");
  message_state m;
  m.id = next_message_id_++;
  m.v = v;
  m.bytes = bytes;
  m.tag = tag;
  m.start_ns = start_ns;
  m.first_seq = q.posted_end;
  m.packets = (bytes + cfg_.mtu_bytes - 1) / cfg_.mtu_bytes;
  q.posted_end += m.packets;
  q.sq.push_back(m);
  return m.id;
}

std::size_t rc_nic::outstanding_messages() const {
  std::size_t n = 0;
  for (const auto& q : qps_) n += q->sq.size();
  return n;
}

fabric::reaction_point_counters rc_nic::dcqcn_counters() const {
  fabric::reaction_point_counters t;
  for (const auto& q : qps_) {
    if (!q->rp) continue;
    const auto& c = q->rp->counters();
    t.cnps += c.cnps;
    t.rate_decreases += c.rate_decreases;
    t.fast_recovery += c.fast_recovery;
    t.additive_increase += c.additive_increase;
    t.hyper_increase += c.hyper_increase;
  }
  return t;
}

double rc_nic::rate_bps(std::uint32_t local_qpn) const {
  const queue_pair* q = find(local_qpn);
  return q == nullptr ? 0.0 : q->rate();
}

// ---------------------------------------------------------------- receive

void rc_nic::on_frame(std::span<const std::uint8_t> frame, std::int64_t now_ns) {
  ++counters_.rx_frames;
  captures::dissected_frame d;
  captures::dissect(captures::link_type::ethernet, frame, d);
  if (d.truncated || d.malformed || !d.has_ethernet) {
    ++counters_.rx_ignored;
    return;
  }
  if (d.is_mac_control) {
    // 802.1Qbb 36.1.3: the class-enable vector's low 8 bits select the priorities whose
    // time fields apply. Only PFC is honoured; an 802.3x PAUSE would stop every priority
    // and the lab switch does not send it.
    if (d.mac_control_opcode == wire::mac_control_opcode::pfc) {
      ++counters_.rx_pfc;
      if (cfg_.pfc_enabled)
        pause_.on_frame(static_cast<std::uint8_t>(d.pfc_class_enable & 0xFF), d.pfc_quanta, now_ns);
    } else {
      ++counters_.rx_ignored;
    }
    return;
  }
  if (d.dst_mac != cfg_.local.mac || !d.is_roce || d.ip_version != 4) {
    ++counters_.rx_ignored;
    return;
  }
  // A17.3.3: the ICRC covers the invariant fields; a packet that fails it is dropped
  // silently, as a HCA does, and recovered by the requester's go-back-N.
  if (captures::verify_icrc(frame, d.ip_offset) != captures::icrc_check::valid) {
    ++counters_.rx_icrc_errors;
    return;
  }
  queue_pair* q = find(d.dest_qp);
  if (q == nullptr) {
    ++counters_.rx_ignored;
    return;
  }
  if (d.bth_opcode == op::cnp) {
    on_cnp(*q, now_ns);
  } else if (d.bth_opcode == op::rc_acknowledge && d.has_aeth) {
    on_acknowledge(*q, d.psn, d.aeth_syndrome, now_ns);
  } else if (is_request_data(d.bth_opcode)) {
    on_data(*q, d.bth_opcode, d.psn, d.ack_req, d.roce_payload_length, d.ecn == 3, now_ns);
  } else {
    ++counters_.rx_ignored;
  }
}

void rc_nic::on_cnp(queue_pair& q, std::int64_t now_ns) {
  ++counters_.rx_cnps;
  if (!q.sq.empty()) ++q.sq.front().cnps;
  if (q.rp) q.rp->on_cnp(now_ns);
}

// Responder side, IBTA 9.7.5.1 (validating the PSN) and 9.7.5.2 (generating responses).
void rc_nic::on_data(queue_pair& q, std::uint8_t opcode, std::uint32_t psn, bool ack_req,
                     std::uint32_t payload_bytes, bool ce, std::int64_t now_ns) {
  ++counters_.rx_data_packets;
  if (ce) ++counters_.rx_ce_marked;
  // A17.9.3: the notification point reacts to every CE-marked packet it receives, paced
  // by min_time_between_cnps per flow.
  if (q.np.on_packet(now_ns, ce)) {
    captures::cnp_frame_spec c;
    c.eth.src_mac = cfg_.local.mac;
    c.eth.dst_mac = q.conn.remote.mac;
    c.ip.src = captures::ipv4_mapped(cfg_.local.ip[0], cfg_.local.ip[1], cfg_.local.ip[2], cfg_.local.ip[3]);
    c.ip.dst = captures::ipv4_mapped(q.conn.remote.ip[0], q.conn.remote.ip[1], q.conn.remote.ip[2],
                                     q.conn.remote.ip[3]);
    c.ip.dscp = q.np.cnp_dscp();
    c.ip.ipv4_identification = ip_id_++;
    c.dest_qp = q.conn.remote_qpn;
    std::vector<std::uint8_t> f;
    if (captures::append_cnp_frame(c, f) != 0) {
      ++counters_.tx_cnps;
      send_control(std::move(f), q.np.cnp_802p_prio(), now_ns);
    }
  }
  const std::uint64_t seq = to_sequence(psn, q.conn.recv_psn, q.epsn);
  if (seq == q.epsn) {
    ++q.epsn;
    q.nak_outstanding = false;
    q.rx_message_bytes += payload_bytes;
    if (ce) ++q.rx_message_ce;
    const bool last = is_last(opcode);
    if (last) {
      receive_completion rc;
      rc.local_qpn = q.conn.local_qpn;
      rc.peer = q.conn.peer;
      rc.msn = q.msn++;
      rc.bytes = q.rx_message_bytes;
      rc.ce_marked = q.rx_message_ce;
      rc.end_ns = now_ns;
      q.rx_message_bytes = 0;
      q.rx_message_ce = 0;
      if (on_receive_) on_receive_(rc);
    }
    if (ack_req || last || ++q.since_ack >= cfg_.ack_every_packets) {
      q.since_ack = 0;
      send_ack(q, false, now_ns);
    }
  } else if (seq < q.epsn) {
    // 9.7.5.1.2 duplicate request: acknowledge again (the earlier ACK may have been lost),
    // only where the requester asked for one so a go-back-N burst is not answered per packet.
    ++counters_.rx_duplicates;
    if (ack_req) send_ack(q, false, now_ns);
  } else {
    // 9.7.5.1.3 out of sequence: NAK (PSN sequence error) with the expected PSN once,
    // then drop silently until the expected PSN arrives.
    ++counters_.rx_out_of_sequence;
    if (!q.nak_outstanding) {
      q.nak_outstanding = true;
      send_ack(q, true, now_ns);
    }
  }
}

void rc_nic::send_ack(queue_pair& q, bool nak, std::int64_t now_ns) {
  captures::roce_frame_spec s = frame_to(cfg_, q, ip_id_++);
  s.opcode = op::rc_acknowledge;
  s.dest_qp = q.conn.remote_qpn;
  wire::aeth a;
  if (nak) {
    // 9.7.5.2.4: the NAK carries the PSN the responder expected.
    a.set(wire::aeth_kind::nak, static_cast<std::uint8_t>(wire::nak_code::psn_sequence_error));
    s.psn = to_wire(q.conn.recv_psn, q.epsn);
    ++counters_.tx_naks;
  } else {
    // 9.7.5.2.1: an ACK carries the PSN of the last request it acknowledges (coalesced);
    // credits are not used (end-to-end flow control off), so the count says invalid.
    a.set(wire::aeth_kind::ack, wire::aeth::credit_count_invalid);
    s.psn = to_wire(q.conn.recv_psn, q.epsn - 1);
    ++counters_.tx_acks;
  }
  s.aeth_syndrome = a.syndrome();
  s.aeth_msn = static_cast<std::uint32_t>(q.msn & psn_mask);
  std::vector<std::uint8_t> f;
  if (captures::append_roce_frame(s, f) != 0) send_control(std::move(f), cfg_.data_priority, now_ns);
}

// Requester side, IBTA 9.7.5.3 (response validation) and 9.7.5.1.3 / 9.7.6 (go-back-N).
void rc_nic::on_acknowledge(queue_pair& q, std::uint32_t psn, std::uint8_t syndrome, std::int64_t now_ns) {
  const wire::aeth_kind kind = wire::aeth_kind_of(syndrome);
  const std::uint64_t seq = to_sequence(psn, q.conn.send_psn, q.snd_una);
  std::uint64_t new_una = q.snd_una;
  bool rewind = false;
  if (kind == wire::aeth_kind::ack) {
    ++counters_.rx_acks;
    if (seq + 1 > q.sent_end) return;  // acknowledges something never sent: ignore (9.7.5.3.1)
    new_una = std::max(q.snd_una, seq + 1);
  } else {
    // A NAK implicitly acknowledges everything before the PSN it carries (9.7.5.2.4); the
    // requester then resends from that PSN. RNR and other NAK codes are not generated by
    // the soft NIC's responder; they are treated the same way.
    ++counters_.rx_naks;
    if (seq > q.sent_end) return;
    new_una = std::max(q.snd_una, seq);
    rewind = true;
  }
  q.snd_una = new_una;
  while (!q.sq.empty() && q.sq.front().first_seq + q.sq.front().packets <= q.snd_una) {
    const message_state m = q.sq.front();
    q.sq.pop_front();
    send_completion c;
    c.id = m.id;
    c.local_qpn = q.conn.local_qpn;
    c.peer = q.conn.peer;
    c.bytes = m.bytes;
    c.tag = m.tag;
    c.start_ns = m.start_ns;
    c.first_tx_ns = m.first_tx_ns;
    c.last_tx_ns = m.last_tx_ns;
    c.wire_bytes = m.wire_bytes;
    c.last_wire_bytes = m.last_wire_bytes;
    c.end_ns = now_ns;
    c.retransmits = m.retransmits;
    c.cnps = m.cnps;
    if (on_send_) on_send_(c);
  }
  if (rewind) q.snd_nxt = q.snd_una;
  q.snd_nxt = std::max(q.snd_nxt, q.snd_una);
  if (q.snd_una < q.sent_end) {
    q.arm_rto(now_ns);  // progress (or a NAK) restarts the transport timer (9.7.6.1.3)
  } else if (q.rto != fabric::no_timer) {
    clock_.cancel(q.rto);
    q.rto = fabric::no_timer;
  }
}

void rc_nic::on_retransmit_timeout(queue_pair& q, std::int64_t now_ns) {
  if (q.snd_una >= q.sent_end) return;
  // 9.7.6.1.3: no response within the timeout: resend from the oldest unacknowledged
  // request. The soft NIC retries forever (no retry_cnt): a lab run has its own deadline.
  ++counters_.timeouts;
  q.snd_nxt = q.snd_una;
  q.arm_rto(now_ns);
}

// ---------------------------------------------------------------- transmit

void rc_nic::send_control(std::vector<std::uint8_t> frame, std::uint8_t priority, std::int64_t now_ns) {
  if (control_queue_.empty() && !(cfg_.pfc_enabled && pause_.paused(priority, now_ns))) {
    if (!out_.send(frame)) ++counters_.tx_lost;
    ++counters_.tx_frames;
    counters_.tx_bytes += frame.size();
    return;
  }
  control_queue_.push_back({std::move(frame), priority});
}

void rc_nic::send_data_packet(queue_pair& q, std::int64_t now_ns) {
  const std::uint64_t seq = q.snd_nxt;
  message_state* m = q.message_of(seq);
  if (m == nullptr) {  // cannot happen: posted_end bounds snd_nxt
    q.snd_nxt = q.posted_end;
    return;
  }
  const bool first = seq == m->first_seq;
  std::span<const std::uint8_t> frame;
  if (staged_.qp == &q && staged_.seq == seq && staged_.ip_id == ip_id_) {
    frame = std::span<const std::uint8_t>(staged_.buf.data(), staged_.bytes);
  } else {
    frame = std::span<const std::uint8_t>(frame_buf_.data(), build_data_frame(q, *m, seq, ip_id_, frame_buf_));
  }
  staged_.qp = nullptr;  // used, or outdated by the frame sent instead
  ++ip_id_;
  const std::size_t n = frame.size();
  ++q.snd_nxt;
  if (seq < q.sent_end) {
    ++m->retransmits;
    ++counters_.retransmitted_packets;
  } else {
    q.sent_end = seq + 1;
    m->wire_bytes += wire_bytes(frame.size());
    if (seq + 1 == m->first_seq + m->packets) {
      m->last_tx_ns = now_ns;
      m->last_wire_bytes = wire_bytes(frame.size());
    }
  }
  const bool message_start = first && m->first_tx_ns < 0;  // its send processing, not pacing
  if (message_start) m->first_tx_ns = now_ns;
  ++counters_.tx_data_packets;
  ++counters_.tx_frames;
  counters_.tx_bytes += n;
  if (!out_.send(frame)) ++counters_.tx_lost;
  if (q.rto == fabric::no_timer) q.arm_rto(now_ns);
  // Pacing: the QP at its DCQCN rate, the port at line rate, both in wire bytes, each
  // packet accounted at its due time rather than the time the loop woke. A wake-up that
  // comes late may catch up by at most one packet time (a real NIC's rate limiter keeps a
  // burst of about one MTU), so a slow loop does not lose rate.
  const auto wb = wire_bytes(n);
  const std::int64_t due_ns = std::max(q.due_ns(), port_next_ns_);
  if (!poll_sent_data_ && due_ns > previous_poll_ns_ && !message_start) tx_lateness_.record(now_ns - due_ns);
  poll_sent_data_ = true;
  const auto qp_gap = static_cast<std::int64_t>(std::ceil(static_cast<double>(wb) * 8e9 / q.rate()));
  const auto port_gap = wb * 8'000'000'000 / cfg_.line_rate_bps;
  q.paced_from_ns = std::max(q.due_ns(), now_ns - qp_gap);
  q.paced_wire_bytes = static_cast<std::int64_t>(wb);
  port_next_ns_ = std::max(port_next_ns_, now_ns - port_gap) + port_gap;
  if (q.rp) q.rp->on_bytes_sent(now_ns, static_cast<std::uint64_t>(n));
}

std::size_t rc_nic::build_data_frame(const queue_pair& q, const message_state& m, std::uint64_t seq,
                                     std::uint16_t ip_id, std::vector<std::uint8_t>& buf) const {
  const std::uint64_t k = seq - m.first_seq;
  const std::uint64_t offset = k * cfg_.mtu_bytes;
  const auto len = static_cast<std::size_t>(std::min<std::uint64_t>(cfg_.mtu_bytes, m.bytes - offset));
  const bool first = k == 0, last = k + 1 == m.packets;
  captures::roce_frame_spec s = frame_to(cfg_, q, ip_id);
  if (m.v == verb::rdma_write) {
    s.opcode = m.packets == 1 ? op::rc_rdma_write_only
               : first        ? op::rc_rdma_write_first
               : last         ? op::rc_rdma_write_last
                              : op::rc_rdma_write_middle;
    // 9.3.3: the RETH, on the first (or only) packet, names the whole transfer.
    s.reth_va = 0x10000000ull + (m.id << 32);
    s.reth_rkey = rkey;
    s.reth_dma_length = static_cast<std::uint32_t>(m.bytes);
  } else {
    s.opcode = m.packets == 1 ? op::rc_send_only
               : first        ? op::rc_send_first
               : last         ? op::rc_send_last
                              : op::rc_send_middle;
  }
  s.dest_qp = q.conn.remote_qpn;
  s.psn = to_wire(q.conn.send_psn, seq);
  s.ack_req = last || ((seq + 1) % cfg_.ack_every_packets) == 0;
  s.payload = std::span<const std::uint8_t>(zero_payload.data(), len);
  if (buf.size() < cfg_.mtu_bytes + 256) buf.resize(cfg_.mtu_bytes + 256);
  return captures::build_roce_frame(s, buf);
}

std::int64_t rc_nic::poll_transmit(std::int64_t now_ns, std::size_t budget) {
  std::size_t sent = 0;
  // send_data_packet judges lateness against the poll before this one; a packet due at or
  // before it waited for something else (PFC, the window, the catch-up's own frame).
  struct previous_poll {
    std::int64_t& at;
    std::int64_t now;
    ~previous_poll() { at = now; }
  } remember{previous_poll_ns_, now_ns};
  poll_sent_data_ = false;
  while (!control_queue_.empty() && sent < budget) {
    auto& c = control_queue_.front();
    if (cfg_.pfc_enabled && pause_.paused(c.priority, now_ns)) break;
    if (!out_.send(c.frame)) ++counters_.tx_lost;
    ++counters_.tx_frames;
    counters_.tx_bytes += c.frame.size();
    control_queue_.pop_front();
    ++sent;
  }
  std::int64_t wake = fabric::never_ns;
  if (!control_queue_.empty()) wake = std::max(now_ns, pause_.resume_ns(control_queue_.front().priority));

  bool has_data = false;
  for (const auto& q : qps_) has_data = has_data || q->can_send();
  if (!has_data) return wake;
  if (cfg_.pfc_enabled && pause_.paused(cfg_.data_priority, now_ns)) {
    if (paused_since_ns_ < 0) paused_since_ns_ = now_ns;
    const std::int64_t r = pause_.resume_ns(cfg_.data_priority);
    // A pause held until XON has no end; the driver wakes on the next received frame.
    return std::min(wake, r == fabric::never_ns ? fabric::never_ns : std::max(r, now_ns));
  }
  if (paused_since_ns_ >= 0) {
    counters_.paused_ns += now_ns - paused_since_ns_;
    paused_since_ns_ = -1;
  }
  while (sent < budget) {
    if (port_next_ns_ > now_ns) return std::min(wake, port_next_ns_);
    queue_pair* pick = nullptr;
    std::int64_t earliest = fabric::never_ns;
    for (std::size_t i = 0; i < qps_.size(); ++i) {
      queue_pair& q = *qps_[(rr_next_ + i) % qps_.size()];
      if (!q.can_send()) continue;
      const std::int64_t due = q.due_ns();
      if (due <= now_ns) {
        pick = &q;
        rr_next_ = (rr_next_ + i + 1) % qps_.size();
        break;
      }
      earliest = std::min(earliest, due);
    }
    if (pick == nullptr) return std::min(wake, earliest);
    send_data_packet(*pick, now_ns);
    ++sent;
  }
  return std::min(wake, now_ns);
}

}  // namespace rocelab::traffic::soft_nic

// The twin engine's internal contract, shared by the files that implement it: the
// packet cookie, the event kinds, the per-link, per-switch, per-host and per-flow
// state, and the engine class that owns them all. Not a public header: the engine is
// reached through twin.hpp (run_twin, switch_config_of, validate). One engine runs on
// one thread; nothing here is thread-safe.
//
// The implementation, one concern a file:
//   topology.cpp        construction, switches and hosts from the fabric graph, ideal FCT
//   timers.cpp          the clock the fabric objects see (timer slots)
//   links.cpp           links, switch ports, PFC and InfiniBand credits
//   host_transport.cpp  the host NIC and its RC transport (requester and responder)
//   lab_timing.cpp      a calibrated lab's NIC processing, switch forwarding and NIC rates
//   run_loop.cpp        event dispatch, queue sampling, the run and its totals
//
// Model, in the order a packet meets it:
// - Sender NIC (one port, the host's link rate): a high-priority FIFO of control
//   packets (ACK, NAK, CNP), served first (as the HPCC ns-3 RdmaEgressQueue and mlx5
//   do), then round robin over the QPs that have data to send, each paced by its DCQCN
//   reaction point (next start = last start + frame bits / current rate, re-evaluated
//   with the current rate, as ns-3 ChangeRate does). PFC frames from the ToR stop the
//   priorities they name (fabric::pfc_pause_state).
// - Links: propagation delay; a link is a FIFO of frames in flight with their arrival
//   times (frames never overtake on a wire), and only its head is in the event queue.
// - Switches: fabric::switch_model (admission, PFC, ECN, scheduling, serialization);
//   routes from fabric_routes' tables (routing.hpp): the packet's path code picks among
//   equal-cost ports, or adaptive routing by the candidates' queues.
// - Receiver NIC (IBTA RC responder, go-back-N): in-order packets advance the expected
//   PSN and are ACKed every ack_every_packets and on the last; the first out-of-order
//   packet of a gap gets one NAK (PSN sequence error, IBTA 9.7.5.2.2), later ones are
//   dropped silently until the expected PSN arrives; duplicates are re-ACKed (9.7.5.1.3).
//   A CE-marked packet goes to the flow's notification point, which may send a CNP.
// - Requester: an ACK advances snd_una; a NAK goes back to its PSN; a retransmit timer
//   (lazy: one pending event per QP, re-armed from the last progress when it fires) goes
//   back to snd_una when no ACK progress was seen for retransmit_timeout_ns.
//
// Speed: events are 16-byte records in a timing wheel of 1 ns buckets with a 4-ary heap
// for far events (event_queue.hpp); packets are the 24-byte
// fabric::packet descriptors with everything the twin needs in `cookie` (PSN, type, the
// ECMP choice, the destination host), so no per-packet allocation or pool; flows are in
// flat vectors; reaction points exist only for flows that saw a CNP.

#pragma once

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rocelab/fabric/adaptive_routing.hpp"
#include "rocelab/fabric/credit_flow_control.hpp"
#include "rocelab/fabric/fifo_ring.hpp"
#include "rocelab/fabric/headroom.hpp"
#include "rocelab/fabric/ib_congestion_control.hpp"
#include "rocelab/fabric/link_flow_control.hpp"
#include "rocelab/fabric/switch_model.hpp"
#include "rocelab/fabric/uec_congestion_control.hpp"
#include "rocelab/fabric/uec_load_balancing.hpp"
#include "rocelab/fabric/twin/event_queue.hpp"
#include "rocelab/fabric/twin/flow_ideal.hpp"
#include "rocelab/fabric/twin/frames.hpp"
#include "rocelab/fabric/twin/routing.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::fabric::twin::engine_impl {

// ---- packet cookie: psn 0..31 | type 32..35 | flag 36 | ecmp 38..47 | dst host 48..63 ----
// ecmp: the rest of the packet's path code (fabric_routes::egress_port takes a digit per
// switch with a choice; fabric_routes::max_path_codes values).
// uec_*: the Ultra Ethernet transport (uec_transport.cpp): a selective ACK of one PSN
// (flag: the data arrived CE-marked), a NACK of a trimmed PSN, an RCCC request (psn:
// payload bytes wanted; flag: bytes the sender lost and asks again) and an RCCC grant
// (psn: payload bytes of credit).
enum class pkt_type : std::uint8_t {
  data = 0, ack = 1, nak = 2, cnp = 3, pfc = 4, credit = 5,
  uec_ack = 6, uec_nack = 7, uec_request = 8, uec_grant = 9
};

constexpr std::uint64_t ecmp_mask = 0x3ffull << 38;
static_assert(fabric_routes::max_path_codes == 1024, "the path code takes cookie bits 38..47");
constexpr std::uint64_t make_cookie(std::uint32_t psn, pkt_type t, bool flag, std::uint32_t ecmp, std::uint32_t dst) {
  return static_cast<std::uint64_t>(psn) | (static_cast<std::uint64_t>(t) << 32) |
         (static_cast<std::uint64_t>(flag ? 1 : 0) << 36) | ((static_cast<std::uint64_t>(ecmp) << 38) & ecmp_mask) |
         (static_cast<std::uint64_t>(dst) << 48);
}
constexpr std::uint32_t psn_of(std::uint64_t c) { return static_cast<std::uint32_t>(c); }
constexpr pkt_type type_of(std::uint64_t c) { return static_cast<pkt_type>((c >> 32) & 0xf); }
constexpr bool flag_of(std::uint64_t c) { return ((c >> 36) & 1u) != 0; }
constexpr std::uint32_t ecmp_of(std::uint64_t c) { return static_cast<std::uint32_t>((c & ecmp_mask) >> 38); }
constexpr std::uint64_t with_ecmp(std::uint64_t c, std::uint32_t ecmp) {
  return (c & ~ecmp_mask) | ((static_cast<std::uint64_t>(ecmp) << 38) & ecmp_mask);
}
constexpr std::uint32_t dst_of(std::uint64_t c) { return static_cast<std::uint32_t>(c >> 48); }
// Bit 37: the packet was CE-marked before it joined its current switch queue (upstream
// or at that enqueue), so a CE at dequeue is a mark of that switch only without it.
constexpr std::uint64_t ce_before_queue_bit = 1ull << 37;

enum event_kind : std::uint32_t {
  ev_channel = 0,  // head frame of a link arrives
  ev_port = 1,     // a switch port may start its next frame
  ev_nic = 2,      // a host NIC may start its next frame
  ev_timer = 3,    // a fabric object's timer (clock interface)
  ev_rto = 4,      // a QP's retransmit timer
  ev_start = 5,    // a message's start time
  ev_sample = 6,   // queue-depth sampling
  ev_response = 7, // a flow's oldest response has been processed (lab timing): to its NIC
  ev_completion = 8,  // a flow's last ACK has been processed by its requester (lab timing)
};

constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Serialization of a frame, in ps, rounded up: the switch model's formula
// (switch_model::serialization_ps), so NIC and switch agree to the picosecond.
constexpr std::int64_t ser_ps(std::int64_t frame_bytes, std::int64_t overhead, std::int64_t rate_bps) {
  return ceil_div((frame_bytes + overhead) * 8 * 1'000'000'000'000, rate_bps);
}

using routing_detail::mix64;

inline std::int64_t rate_of(double gbps) { return static_cast<std::int64_t>(std::llround(gbps * 1e9)); }

struct inflight {
  std::int64_t at_ns;
  packet pkt;
};

class engine;

// twin_config::lab against the topology (lab_timing.cpp); errors name the field.
[[nodiscard]] status validate_lab(const twin_config& c);

// The clock the fabric objects see: timers land in the engine's queue. A host's clock
// also lets the engine re-evaluate that host's NIC after a DCQCN timer changed a rate.
class node_clock final : public clock {
 public:
  node_clock(engine& e, std::int32_t host) : e_(e), host_(host) {}
  [[nodiscard]] std::int64_t now_ns() const override;
  timer_id schedule(std::int64_t at_ns, timer_client& client, std::uint64_t cookie) override;
  bool cancel(timer_id id) override;

 private:
  engine& e_;
  std::int32_t host_;
};

// InfiniBand: a switch's flow-control packets (credit_flow_control) onto its links.
class switch_credit_link final : public credit_link {
 public:
  switch_credit_link(engine& e, std::uint32_t sw) : e_(e), sw_(sw) {}
  void send_credit_update(std::uint16_t port, std::uint8_t vl, std::int64_t fccl, std::int64_t now_ns) override;

 private:
  engine& e_;
  std::uint32_t sw_;
};

class switch_sink final : public pfc_frame_sink {
 public:
  switch_sink(engine& e, std::uint32_t sw) : e_(e), sw_(sw) {}
  void on_pfc_frame_out(const pfc_frame_out& f) override;
  void on_port_ready(std::uint16_t port, std::int64_t now_ns) override;

 private:
  engine& e_;
  std::uint32_t sw_;
};

// A fabric object's timer. DCQCN re-arms its rate timer on every cut (cancel, then
// schedule later), which with a plain heap leaves one dead entry per cut for up to
// rpg_time_reset (300 us): hundreds per congested flow. So a cancelled slot keeps its
// heap entry; a schedule by the same client and cookie right after the cancel revives it
// with a later due time, and when the entry surfaces before its due time it is pushed
// again for the due time. The heap then holds about one entry per armed timer.
struct timer_slot {
  timer_client* client = nullptr;
  std::uint64_t cookie = 0;
  std::int64_t due_ns = 0;     // when the timer fires
  std::int64_t queued_ns = 0;  // time of its entry in the event queue
  std::uint32_t gen = 1;       // distinguishes timer ids that reuse the slot
  std::int32_t host = -1;
  enum class state : std::uint8_t { free, live, cancelled } st = state::free;
};

// Line-aligned: a vector's 16-byte alignment put most links across two cache lines.
struct alignas(64) channel {
  fifo_ring<inflight> wire;
  std::int64_t delay_ns = 0;
  std::int32_t to_switch = -1;  // -1: to a host
  std::uint32_t to_index = 0;   // switch or host index
  std::uint16_t to_port = 0;    // ingress port on the switch
  std::uint32_t to_device = 0;  // device index (run_records::devices) of the receiver
  std::int64_t last_at_ns = 0;  // arrival of the last frame put on it (frames never overtake)
};
static_assert(sizeof(channel) == 64, "a link's state is read on every frame: one cache line");

// A link's frame loss and link-level retry (fabric.uec.link_frame_loss_rate and
// link_level_retry), apart from channel so that a link's hot state stays one line.
struct link_loss_state {
  std::uint64_t draws = 0;    // frames the loss model has judged: the position in its random stream
  std::uint64_t lost = 0;     // frames lost on the wire (a lost replay counts again)
  std::uint64_t replays = 0;  // frames the link sent again
};

// Draws from one measured delay (lab_timing): the uniform variate of each draw is a hash
// of the run's seed, the stream's key and the draw's position, so streams do not share
// draws and a run repeats exactly.
struct delay_stream {
  const delay_quantiles* q = nullptr;  // null or empty: every draw is 0
  std::uint64_t key = 0;
  std::uint64_t draws = 0;

  [[nodiscard]] bool active() const { return q != nullptr && !q->empty(); }
  std::int64_t next() {
    if (!active()) return 0;
    const double u = static_cast<double>(mix64(key + draws++) >> 11) * 0x1.0p-53;
    return q->draw(u);
  }
};

// A calibrated NIC's pacing wake-ups (host_timing::pacing_lateness), kept as the lab's
// soft NIC keeps its pacing: the port's next due instant, and the data frame held for a
// late wake-up.
struct lab_pacing {
  delay_stream lateness;
  std::int64_t due_ps = 0;          // the port's next due instant
  std::int64_t held_until_ps = -1;  // the NIC's next data frame waits until then; -1: none
  // The start of the last data frame that had a wake-up of its own: a frame due by then
  // goes in the same wake-up (the catch-up), with no draw.
  std::int64_t wake_ps = -1;
  bool catching_up = false;  // the frame being sent is such a frame
};

// A flow's responses (ACK, NAK, CNP) in the responder's receive processing, oldest
// first, and when the newest of them is released to the NIC: a response is released no
// earlier than the one before it, so the responses of a QP never reorder.
struct pending_responses {
  std::deque<packet> queue;
  std::int64_t last_release_ns = 0;
};

struct pause_track {
  bool open = false;
  std::int64_t start_ns = 0, until_ns = 0;
};

struct switch_node {
  std::unique_ptr<node_clock> clk;
  std::unique_ptr<switch_sink> sink;
  std::unique_ptr<switch_credit_link> credit_out;  // InfiniBand only
  std::unique_ptr<switch_model> model;
  credit_flow_control* credits = nullptr;  // model's flow control when InfiniBand
  adaptive_router router;
  std::uint32_t port_base = 0;     // global port id of port 0
  std::uint32_t channel_base = 0;  // channel id of port 0's egress link
};

// What the NIC reads and writes for every frame it sends comes first, with the pause
// state's "nothing paused" test right after it: two cache lines. The InfiniBand credit
// state (about 370 bytes) sat between them and spread a send over six.
struct alignas(64) host_node {
  std::int64_t busy_until_ps = 0;
  std::int64_t pending_ns = never_ns;  // the NIC event in the queue, if any
  std::int64_t ps_per_byte = 0;  // 8e12 / rate_bps when whole (as switch_model's ports)
  std::int64_t rate_bps = 0;
  fifo_ring<packet> control;
  std::vector<std::uint32_t> active;  // QPs with data to send
  std::uint32_t rr = 0;
  std::uint32_t channel = 0;
  std::uint64_t tx_bytes = 0, tx_packets = 0;
  pfc_pause_state pause;
  std::uint64_t sampled_tx_bytes = 0;
  std::unique_ptr<node_clock> clk;
  credit_sender credits;      // InfiniBand: toward the switch's VL buffers
  credit_receiver rx_credits; // InfiniBand: what the HCA advertises (drains at once)
};

// A UEC flow's reliable unordered delivery (UEC 1.0 RUD): every PSN is acknowledged on
// its own, so packets sprayed over many paths may arrive in any order.
enum class uec_psn : std::uint8_t { unsent = 0, in_flight, queued, acked };

struct uec_flow {
  // sender
  std::vector<uec_psn> state;         // per PSN
  std::vector<std::int64_t> sent_ns;  // its last transmission
  std::vector<std::uint16_t> entropy; // the entropy of that transmission
  std::deque<std::uint32_t> rtx;      // PSNs to send again (entries no longer queued are skipped)
  std::uint64_t in_flight_bytes = 0;  // payload sent and neither acknowledged nor declared lost
  std::uint32_t next_new = 0;         // lowest PSN never sent
  std::uint32_t acked = 0;
  std::uint16_t pick_entropy = 0;     // chosen for the packet being built
  std::vector<bool> resent;           // the PSN was sent more than once (its RTT is ambiguous)
  // Retransmission timeout (fabric.uec.retransmit_timeout_ns, else adaptive: RFC 6298's
  // SRTT + 4 RTTVAR from unambiguous samples, never below the fabric's minimum).
  std::int64_t rto_ns = 0;
  double srtt_ns = 0, rttvar_ns = 0;
  std::unique_ptr<uec_sender_cc> cc;  // uec_sender_cc (NSCC window and/or RCCC credit); null: none
  entropy_picker lb;
  // receiver
  std::vector<bool> received;

  explicit uec_flow(entropy_picker picker) : lb(picker) {}
};

struct flow_state {
  std::uint32_t src = 0, dst = 0;
  std::uint8_t prio = 0;
  std::uint16_t fwd_ecmp = 0, rev_ecmp = 0;  // path codes of the data and of the responses
  std::uint32_t npkts = 0, last_payload = 0;
  // requester
  std::uint32_t snd_una = 0, snd_nxt = 0, snd_max = 0;
  std::int64_t last_tx_ps = std::numeric_limits<std::int64_t>::min() / 2;
  std::uint32_t last_bits = 0;
  std::int64_t next_avail_ps = 0;  // compat: earliest next start, fixed when the last frame left
  std::int64_t last_progress_ns = 0;
  bool in_active = false, rto_armed = false, done = false;
  std::unique_ptr<rate_control> rp;  // DCQCN or IB CC (fabric.congestion)
  // responder
  std::uint32_t epsn = 0, since_ack = 0;
  bool nak_sent = false, ce_since_ack = false;
  std::vector<bool> placed;  // adaptive routing: PSNs at or past epsn already placed
  notification_point np;
  std::unique_ptr<uec_flow> uec;  // UEC fabric: the flow's transport state (both ends)
  std::uint32_t peer = no_peer;   // nic_config::one_qp_per_peer: its QP in engine::peers_
  bool on_qp = false;             // posted on that QP (at its start instant)

  static constexpr std::uint32_t no_peer = 0xffffffffu;
  explicit flow_state(const dcqcn_config& c) : np(c) {}
};

// One RC QP of a (sender, receiver, priority) when nic_config::one_qp_per_peer: the
// messages posted on it, one at a time on the wire, and the state a QP keeps across them.
struct peer_qp {
  static constexpr std::uint32_t no_flow = 0xffffffffu;
  std::uint32_t feeding = no_flow;   // the message whose packets are not all sent yet
  std::deque<std::uint32_t> waiting;  // posted behind it, in post order
  std::unique_ptr<rate_control> rp;   // the QP's reaction point (made at its first CNP)
  notification_point np;              // the responder's, for this QP
  std::uint32_t qp = 0;               // flow_record::qp of every message on it

  explicit peer_qp(const dcqcn_config& c) : np(c) {}
};

class engine final : public twin_context {
 public:
  engine(const twin_config& cfg, workload& load);
  status build();
  run_records run();
  // After build(): switch `index`'s configuration as built (nullptr past the last).
  [[nodiscard]] const switch_config* built_switch_config(std::uint32_t index) const {
    return index < switches_.size() ? &switches_[index].model->config() : nullptr;
  }

  // twin_context
  [[nodiscard]] std::int64_t now_ns() const override { return now_; }
  [[nodiscard]] std::uint32_t hosts() const override { return cfg_.topology.hosts; }
  [[nodiscard]] double link_gbps() const override { return cfg_.topology.link_gbps; }
  std::uint64_t post(const message& m) override;
  void report_allreduce(const allreduce_result& r) override { out_.allreduce.push_back(r); }

  // clock plumbing
  timer_id schedule_timer(std::int64_t at_ns, timer_client& client, std::uint64_t cookie, std::int32_t host);
  bool cancel_timer(timer_id id);
  void on_timer_event(std::uint32_t slot);
  void on_switch_pfc(std::uint32_t sw, const pfc_frame_out& f);
  void on_switch_port_ready(std::uint32_t sw, std::uint16_t port) { port_kick(sw, port); }
  void send_credit(std::uint32_t ch, std::uint8_t vl, std::int64_t fccl);
  [[nodiscard]] std::uint32_t switch_channel(std::uint32_t sw, std::uint16_t port) const {
    return switches_[sw].channel_base + port;
  }

 private:
  // topology
  status build_switches();
  switch_config switch_config_for(const std::vector<std::int64_t>& rates) const;
  void path_of(std::uint32_t src, std::uint32_t dst, std::vector<std::pair<std::int64_t, std::int64_t>>& links) const;
  std::int64_t ideal_fct(const flow_state& f, std::uint64_t bytes) const;
  // The largest frame a NIC sends: a message's first packet, full MTU (with RETH).
  [[nodiscard]] std::uint32_t max_frame_bytes() const {
    return cfg_.nic.mtu_bytes + sizes_.data_overhead + sizes_.first_extra;
  }
  // How long a frame of `frame_bytes` holds a link of `rate_bps`, in ps: as the switch
  // model's serialization_ps, so NIC and switch agree (compat: whole ns, truncated).
  [[nodiscard]] std::int64_t frame_ps(std::int64_t frame_bytes, std::int64_t rate_bps) const {
    if (compat_) return (frame_bytes + overhead_) * 8 * 1'000'000'000 / rate_bps * 1000;
    return ser_ps(frame_bytes, overhead_, rate_bps);
  }

  // events
  void dispatch(const event_record& e);
  void push_wire(std::uint32_t ch, std::int64_t at_ns, const packet& p);
  void on_channel(std::uint32_t ch);
  void on_switch_packet(std::uint32_t sw, std::uint16_t in_port, packet p);
  void port_kick(std::uint32_t sw, std::uint16_t port);
  void on_port_event(std::uint32_t gport, std::int64_t at);
  void on_host_packet(std::uint32_t h, const packet& p, std::uint32_t ch);
  void on_pfc_at(std::uint32_t ch, const packet& p);
  void on_credit_at(std::uint32_t ch, const packet& p);
  // Link frame loss: whether the frame at the head of channel ch is lost (one draw of the
  // link's stream), and link-level retry's replay of it.
  [[nodiscard]] bool frame_lost(std::uint32_t ch);
  void replay_head(std::uint32_t ch);
  [[nodiscard]] std::int64_t channel_rate_bps(std::uint32_t ch) const;
  void init_credits();
  void ib_fecn(std::uint32_t sw, packet& p);
  void nic_kick(std::uint32_t h);
  void nic_schedule(std::uint32_t h, std::int64_t at_ns);
  void nic_try(std::uint32_t h);
  void send_control(std::uint32_t h, pkt_type t, std::uint32_t flow, std::uint32_t psn, bool flag, std::uint8_t prio);
  // Lab timing (lab_timing.cpp): the streams and rates from cfg_.lab; a message's start
  // after its send processing; a response through its receive processing; a switch
  // port's frame onto its link after its forwarding draw, behind the frames before it;
  // the earliest a NIC may start its next frame after one of `frame_bytes` started at
  // `start_ps` and holds the link for `wire_ps`.
  void lab_build();
  // Pacing lateness (lab_pacing.cpp): whether the data frame just picked from `fl` (due
  // on its QP at qp_due_ps, 0 when not rate limited) waits for a late wake-up (then
  // wake_ps covers it); after a data frame starts, the port's and the QP's next due
  // instants as the soft NIC keeps them.
  [[nodiscard]] bool lab_pacing_holds(std::uint32_t h, const flow_state& fl, std::int64_t now_ps,
                                      std::int64_t qp_due_ps, std::int64_t& wake_ps);
  void lab_paced_sent(std::uint32_t h, flow_state& fl, std::int64_t qp_due_ps, std::int64_t start_ps,
                      std::int64_t port_gap_ps);
  [[nodiscard]] std::int64_t lab_start_ns(std::uint32_t src, std::int64_t start_ns);
  void lab_respond(std::uint32_t flow, const packet& p);
  // Every packet acknowledged: the message completes once its requester's NIC processed
  // that ACK (a receive-processing draw of the sender's; at once without lab timing).
  void all_acked(std::uint32_t flow);
  void on_response(std::uint32_t flow);
  void lab_push_forwarded(std::uint32_t ch, std::int64_t at_ns, const packet& p);
  // The earliest a frame of `frame_bytes` can arrive over channel ch behind the last one on it.
  [[nodiscard]] std::int64_t lab_behind_ns(std::uint32_t ch, std::uint32_t frame_bytes) const;
  [[nodiscard]] std::int64_t lab_next_start_ps(std::uint32_t h, std::int64_t start_ps, std::int64_t wire_ps,
                                               std::uint32_t frame_bytes) const;
  // A message between two NICs of one server (fabric_graph::same_server): over their
  // local link, after the messages posted on it before from the same NIC and to the same
  // NIC; it completes (ev_completion) when its last byte arrived. No packets, no fabric.
  void local_transfer(std::uint32_t f);
  // A message's start at at_ns (now when that has passed): start_flow then, as ev_start.
  void start_at(std::uint32_t f, std::int64_t at_ns);
  void start_flow(std::uint32_t f);
  // One QP per peer (peer_qps.cpp): the QP of a new message (its flow_record::qp); the
  // message posted on it at its start instant, where it waits behind an earlier one or
  // starts after its send processing; after a message's last packet first left, the next
  // one on its QP starts. rp_of and np_of: the reaction and notification points a flow's
  // packets meet (its QP's, or its own).
  [[nodiscard]] std::uint32_t peer_attach(std::uint32_t f, const message& m);
  void peer_join(std::uint32_t f);
  void peer_fed(std::uint32_t f);
  [[nodiscard]] std::unique_ptr<rate_control>& rp_of(flow_state& f) {
    return f.peer == flow_state::no_peer ? f.rp : peers_[f.peer].rp;
  }
  // The reaction point of host h's flow f, made at its first congestion notification.
  rate_control& rate_control_of(std::uint32_t h, flow_state& f) {
    auto& rp = rp_of(f);
    if (!rp)
      rp = make_rate_control(cc_, dcqcn_, cfg_.fabric.ib_cc, hosts_[h].rate_bps, *hosts_[h].clk,
                             static_cast<std::uint32_t>(overhead_));
    return *rp;
  }
  [[nodiscard]] notification_point& np_of(flow_state& f) {
    return f.peer == flow_state::no_peer ? f.np : peers_[f.peer].np;
  }
  void activate(std::uint32_t f);
  void on_rto(std::uint32_t f);
  void complete(std::uint32_t f);
  // UEC transport (uec_transport.cpp).
  void uec_build();
  void uec_start(std::uint32_t f);
  [[nodiscard]] bool uec_has_data(const flow_state& fl) const;
  [[nodiscard]] bool uec_pick(std::uint32_t f, packet& p);
  void uec_sent(std::uint32_t f, const packet& p);
  void uec_on_packet(std::uint32_t h, const packet& p);
  void uec_on_rto(std::uint32_t f);
  void uec_send_to_receiver(std::uint32_t f, pkt_type t, std::uint32_t value, bool flag);
  void uec_grant(std::uint32_t h);
  [[nodiscard]] std::uint32_t payload_of(const flow_state& fl, std::uint32_t psn) const {
    return psn + 1 < fl.npkts ? cfg_.nic.mtu_bytes : fl.last_payload;
  }
  [[nodiscard]] std::int64_t unloaded_rtt_ns(std::uint32_t src, std::uint32_t dst) const;
  void sample_queues();
  // Per-flow transmit timelines (flow_timeline.cpp; twin_config::flow_timeline_interval_ns).
  void count_flow_egress(const packet& p);
  void sample_flow_bytes();
  void close_pause(std::uint32_t key, std::int64_t end_ns);
  void record_event(rocelab::event_kind kind, std::uint32_t device, std::uint32_t port, std::uint8_t prio, std::uint32_t flow);

  twin_config cfg_;
  workload& load_;
  bool compat_ = false;
  frame_sizes sizes_;
  std::int64_t overhead_ = 20;     // preamble + IFG per frame, bytes
  std::int16_t ack_prio_ = -1;  // -1: each flow's data priority
  std::uint8_t cnp_prio_ = 6;
  // The fabric graph and its routes (routing.hpp, shared with reports), and paths and ideal
  // FCTs on them (flow_ideal.hpp, shared with every backend); set by build().
  std::shared_ptr<const fabric_routes> routes_;
  std::optional<flow_ideal> ideal_;
  std::int64_t host_rate_bps_ = 0;
  dcqcn_config dcqcn_;
  bool ib_ = false;         // fabric.link == infiniband: credits, IB headers, no PFC
  bool adaptive_ = false;   // fabric.routing == adaptive
  congestion_control_kind cc_ = congestion_control_kind::dcqcn;
  std::uint8_t vl_mask_ = 0;
  bool uec_ = false;        // fabric.link == uec: trimming switches, the UEC transport
  // Credit-based link flow control on every link: InfiniBand's, or UEC's CBFC
  // (fabric.uec.credit_flow_control), both with credit_flow_control's machinery.
  bool credits_ = false;
  std::int64_t uec_rto_ns_ = 0, network_rtt_ns_ = 0;
  double frame_loss_rate_ = 0;  // fabric.uec.link_frame_loss_rate
  bool llr_ = false;            // fabric.uec.link_level_retry
  std::vector<link_loss_state> link_loss_;  // per channel when either is set
  std::vector<std::unique_ptr<rccc_receiver>> rccc_rx_;  // per host, RCCC only
  std::vector<std::uint32_t> fecn_eligible_;  // IB CC: eligible packets since the last mark, per switch port
  std::uint64_t fecn_marks_ = 0;

  // Lab timing (cfg_.lab); all empty when it is.
  bool lab_ = false;                              // cfg_.lab is not empty
  std::vector<delay_stream> send_delay_, receive_delay_;  // per host
  std::vector<delay_stream> completion_delay_;    // per host: its ACKs' processing (receive_processing)
  std::vector<delay_stream> forward_delay_;       // per channel out of a switch port; empty: none
  std::vector<std::int64_t> achieved_bps_;        // per host; 0: the link rate; empty: none
  std::vector<pending_responses> responses_;      // per flow while any host's receive processing is drawn
  std::vector<lab_pacing> pacing_;                // per host; empty: no host's pacing lateness is drawn

  event_queue q_{0};  // the smallest wheel until build() sizes it to the fabric
  std::int64_t now_ = 0;
  std::vector<timer_slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  static constexpr std::uint32_t no_slot = 0xffffffffu;
  std::uint32_t last_cancelled_ = no_slot;
  std::vector<switch_node> switches_;
  std::vector<std::int64_t> port_pending_;  // per global switch port: its ev_port time, or never
  std::vector<std::pair<std::uint32_t, std::uint16_t>> port_owner_;  // global port -> (switch, port)
  std::vector<channel> channels_;
  std::vector<pause_track> pauses_;         // channel x 8 priorities (the receiver of PFC is paused)
  std::vector<host_node> hosts_;
  // The local links (local_transfer): when each NIC's sending and receiving side is free.
  std::vector<std::int64_t> local_tx_free_ns_, local_rx_free_ns_;
  std::vector<flow_state> flows_;
  std::vector<message> messages_;
  bool qp_per_peer_ = false;  // nic_config::one_qp_per_peer, where it applies
  std::vector<peer_qp> peers_;
  std::unordered_map<std::uint64_t, std::uint32_t> peer_index_;  // (src, dst, priority) -> peers_
  run_records out_;
  std::uint64_t outstanding_ = 0;
  std::uint64_t forwarded_ = 0, pfc_xoff_ = 0, pfc_xon_ = 0;
  std::vector<std::uint8_t> sampled_nonzero_;  // per switch queue: last sample was > 0
  // Flow timelines, when twin_config::flow_timeline_interval_ns > 0, per flow: payload
  // bytes the last switch sent toward the receiver, and 0 not yet sampled, 1 sampled,
  // 2 closed.
  std::vector<std::uint64_t> flow_egress_bytes_;
  std::vector<std::uint8_t> flow_timeline_state_;
};

}  // namespace rocelab::fabric::twin::engine_impl

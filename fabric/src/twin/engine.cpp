// The twin's engine: hosts with RoCEv2 NICs, links, and switch_model switches in one
// discrete-event loop (see twin.hpp for the contract).
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
//   routes are computed, not looked up: single switch: port = host; leaf: local host or
//   uplink by the ECMP choice; spine: the destination's leaf.
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

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rocelab/fabric/adaptive_routing.hpp"
#include "rocelab/fabric/credit_flow_control.hpp"
#include "rocelab/fabric/fifo_ring.hpp"
#include "rocelab/fabric/headroom.hpp"
#include "rocelab/fabric/ib_congestion_control.hpp"
#include "rocelab/fabric/link_flow_control.hpp"
#include "rocelab/fabric/switch_model.hpp"
#include "rocelab/fabric/twin/event_queue.hpp"
#include "rocelab/fabric/twin/frames.hpp"
#include "rocelab/fabric/twin/routing.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::fabric::twin {
namespace {

// ---- packet cookie: psn 0..31 | type 32..35 | flag 36 | ecmp 40..47 | dst host 48..63 ----
enum class pkt_type : std::uint8_t { data = 0, ack = 1, nak = 2, cnp = 3, pfc = 4, credit = 5 };

constexpr std::uint64_t make_cookie(std::uint32_t psn, pkt_type t, bool flag, std::uint32_t ecmp, std::uint32_t dst) {
  return static_cast<std::uint64_t>(psn) | (static_cast<std::uint64_t>(t) << 32) |
         (static_cast<std::uint64_t>(flag ? 1 : 0) << 36) | (static_cast<std::uint64_t>(ecmp & 0xff) << 40) |
         (static_cast<std::uint64_t>(dst) << 48);
}
constexpr std::uint32_t psn_of(std::uint64_t c) { return static_cast<std::uint32_t>(c); }
constexpr pkt_type type_of(std::uint64_t c) { return static_cast<pkt_type>((c >> 32) & 0xf); }
constexpr bool flag_of(std::uint64_t c) { return ((c >> 36) & 1u) != 0; }
constexpr std::uint32_t ecmp_of(std::uint64_t c) { return static_cast<std::uint32_t>((c >> 40) & 0xff); }
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
};

constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Serialization of a frame, in ps, rounded up: the switch model's formula
// (switch_model::serialization_ps), so NIC and switch agree to the picosecond.
constexpr std::int64_t ser_ps(std::int64_t frame_bytes, std::int64_t overhead, std::int64_t rate_bps) {
  return ceil_div((frame_bytes + overhead) * 8 * 1'000'000'000'000, rate_bps);
}

using routing_detail::mix64;

std::int64_t rate_of(double gbps) { return static_cast<std::int64_t>(std::llround(gbps * 1e9)); }

struct inflight {
  std::int64_t at_ns;
  packet pkt;
};

class engine;

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
  enum class role : std::uint8_t { single, leaf, spine } kind = role::single;
  std::uint32_t index = 0;         // leaf or spine number
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

struct flow_state {
  std::uint32_t src = 0, dst = 0;
  std::uint8_t prio = 0;
  std::uint8_t fwd_ecmp = 0, rev_ecmp = 0;
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

  explicit flow_state(const dcqcn_config& c) : np(c) {}
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
  switch_config switch_config_for(const std::vector<std::int64_t>& rates, bool compat_host_ports_first,
                                  std::uint32_t host_ports) const;
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
  void init_credits();
  void ib_fecn(std::uint32_t sw, packet& p);
  void nic_kick(std::uint32_t h);
  void nic_schedule(std::uint32_t h, std::int64_t at_ns);
  void nic_try(std::uint32_t h);
  void send_control(std::uint32_t h, pkt_type t, std::uint32_t flow, std::uint32_t psn, bool flag, std::uint8_t prio);
  void start_flow(std::uint32_t f);
  void activate(std::uint32_t f);
  void on_rto(std::uint32_t f);
  void complete(std::uint32_t f);
  void sample_queues();
  void close_pause(std::uint32_t key, std::int64_t end_ns);
  void record_event(rocelab::event_kind kind, std::uint32_t device, std::uint32_t port, std::uint8_t prio, std::uint32_t flow);

  twin_config cfg_;
  workload& load_;
  bool compat_ = false;
  frame_sizes sizes_;
  std::int64_t overhead_ = 20;     // preamble + IFG per frame, bytes
  std::int16_t ack_prio_ = -1;  // -1: each flow's data priority
  std::uint8_t cnp_prio_ = 6;
  fabric_layout layout_;  // device indexes and routes (routing.hpp, shared with reports)
  std::uint32_t hosts_per_leaf_ = 0;
  std::int64_t host_rate_bps_ = 0, uplink_rate_bps_ = 0;
  dcqcn_config dcqcn_;
  bool ib_ = false;         // fabric.link == infiniband: credits, IB headers, no PFC
  bool adaptive_ = false;   // fabric.routing == adaptive
  congestion_control_kind cc_ = congestion_control_kind::dcqcn;
  std::uint8_t vl_mask_ = 0;
  std::vector<std::uint32_t> fecn_eligible_;  // IB CC: eligible packets since the last mark, per switch port
  std::uint64_t fecn_marks_ = 0;

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
  std::vector<flow_state> flows_;
  std::vector<message> messages_;
  run_records out_;
  std::uint64_t outstanding_ = 0;
  std::uint64_t forwarded_ = 0, pfc_xoff_ = 0, pfc_xon_ = 0;
  std::vector<std::uint8_t> sampled_nonzero_;  // per switch queue: last sample was > 0
};

std::int64_t node_clock::now_ns() const { return e_.now_ns(); }
timer_id node_clock::schedule(std::int64_t at_ns, timer_client& client, std::uint64_t cookie) {
  return e_.schedule_timer(at_ns, client, cookie, host_);
}
bool node_clock::cancel(timer_id id) { return e_.cancel_timer(id); }
void switch_sink::on_pfc_frame_out(const pfc_frame_out& f) { e_.on_switch_pfc(sw_, f); }
void switch_sink::on_port_ready(std::uint16_t port, std::int64_t) { e_.on_switch_port_ready(sw_, port); }

engine::engine(const twin_config& cfg, workload& load) : cfg_(cfg), load_(load), layout_(cfg.topology) {
  compat_ = cfg.hpcc_ns3_compat;
  sizes_ = frame_sizes_for(compat_);
  dcqcn_ = cfg.nic.dcqcn;
  ib_ = cfg.fabric.link == link_layer::infiniband;
  adaptive_ = cfg.fabric.routing == routing_mode::adaptive;
  cc_ = cfg.nic.dcqcn_enabled ? cfg.fabric.congestion : congestion_control_kind::none;
  cfg_.nic.dcqcn_enabled = cc_ != congestion_control_kind::none;  // data ECT, CNPs/BECNs honoured
  if (ib_) sizes_ = frame_sizes_for_ib(cfg.fabric.ib_grh);
  // IB CC: the destination returns a BECN for every FECN (annex A10.2.2), unspaced.
  if (cc_ == congestion_control_kind::ib_cc) dcqcn_.min_time_between_cnps_us = 0;
  if (compat_) {
    // HPCC ns-3: every marked packet's ACK carries the congestion flag (no CNP spacing
    // at the NP; the RP's rate_reduce_monitor_period still spaces the cuts), and the
    // rate increases by timer only (no byte counter in RdmaHw's *Mlx functions).
    dcqcn_.min_time_between_cnps_us = 0;
    dcqcn_.byte_counter_enabled = false;
    dcqcn_.first_cut_after_monitor_period = true;  // cnp_received_mlx defers the first cut
    cfg_.nic.ack_every_packets = 1;
  }
}

// ------------------------------------------------------------------ topology

switch_config engine::switch_config_for(const std::vector<std::int64_t>& rates, bool /*unused*/,
                                        std::uint32_t /*host_ports*/) const {
  switch_config sc = cfg_.switch_template;
  const port_config tmpl = sc.ports.empty() ? port_config{} : sc.ports.front();
  sc.ports.clear();
  if (compat_) {
    // shared/scenarios/hpcc-ns3/README.md: byte accounting, no preamble/IFG, ECN at
    // dequeue, pause held until resume, ACK queue 0 first, one lossless data class.
    sc.cell_bytes = 1;
    sc.wire_overhead_bytes = 0;
    sc.ecn_mark_on_dequeue = true;
    sc.pfc.pause_until_resume = true;
    sc.pfc.send_xon = true;
    sc.strict_low_index_first = true;
    sc.frame_time_whole_ns = true;
    sc.lossless_priorities = static_cast<std::uint8_t>(1u << cfg_.nic.data_priority);
  }
  const double cable_m = static_cast<double>(cfg_.topology.link_delay_ns) / propagation_ns_per_m;
  const std::int64_t max_frame = max_frame_bytes();
  for (const std::int64_t rate : rates) {
    port_config pc = tmpl;
    pc.rate_bps = rate;
    pc.cable_m = cable_m;
    for (const auto& e : cfg_.ecn_by_rate)
      if (rate_of(e.gbps) == rate)
        for (auto& qc : pc.queues) qc.ecn = e.ecn;
    for (int p = 0; p < num_priorities; ++p) {
      auto& pg = pc.pgs[static_cast<std::size_t>(p)];
      const bool lossless = ((sc.lossless_priorities >> p) & 1u) != 0;
      if (compat_) {
        auto& qc = pc.queues[static_cast<std::size_t>(p)];
        qc.reserve_bytes = 0;
        qc.shared = buffer_threshold::unlimited();  // ns-3: egress queues are unbounded
        qc.dwrr_weight = 0;
        if (lossless) {
          // ns-3 third.cc: headroom = rate x delay / 8 x 3; pfc_a_shift starts at 3
          // (alpha 1/8) and drops by one per doubling of the port rate over the NIC rate.
          // SwitchMmu: reserve 4 KB per queue, resume offset 3 KB.
          pg.headroom_bytes = rate / 8 * cfg_.topology.link_delay_ns / 1'000'000'000 * 3;
          int shift = 3;
          for (std::int64_t r = rate; r > host_rate_bps_ && shift > 0; r /= 2) --shift;
          pg.shared = buffer_threshold::dynamic(-shift);
          pg.reserve_bytes = 4 * 1024;
          pg.xon_bytes = -1;
          pg.xon_offset_bytes = 3 * 1024;
        } else {
          pg.reserve_bytes = 0;
          pg.headroom_bytes = 0;
          pg.shared = buffer_threshold::unlimited();  // ns-3 admits ACK-queue packets unchecked
        }
      } else if (lossless && pg.headroom_bytes == 0) {
        // No headroom given: size it for this link (headroom_calculator: two cable
        // delays, two maximum frames, the PFC frame), in whole cells. ACKs share the
        // lossless class by default and a 66-byte ACK still takes a whole cell, so the
        // in-flight bytes are counted at the worse of the two frame sizes' cell
        // efficiency (a host port receives its host's data and ACKs interleaved).
        headroom_inputs in;
        in.rate_bps = rate;
        in.cable_m = cable_m;
        in.mtu_bytes = max_frame;
        in.wire_overhead_bytes = sc.wire_overhead_bytes;
        std::int64_t cells = headroom_cells(in, sc.cell_bytes);
        in.mtu_bytes = sizes_.ack;
        cells = std::max(cells, headroom_cells(in, sc.cell_bytes));
        pg.headroom_bytes = cells * sc.cell_bytes;
      }
    }
    sc.ports.push_back(pc);
  }
  if (ib_) return infiniband_switch_config(std::move(sc), vl_mask_, cfg_.fabric, ib_framing_bytes);
  return sc;
}

status engine::build_switches() {
  const auto& t = cfg_.topology;
  std::vector<std::vector<std::int64_t>> rates;
  std::vector<switch_node::role> roles;
  if (t.type == topology_config::kind::single_switch) {
    rates.emplace_back(t.hosts, host_rate_bps_);
    roles.push_back(switch_node::role::single);
  } else {
    for (std::uint32_t l = 0; l < t.leaves; ++l) {
      std::vector<std::int64_t> r(hosts_per_leaf_, host_rate_bps_);
      r.insert(r.end(), t.spines, uplink_rate_bps_);
      rates.push_back(std::move(r));
      roles.push_back(switch_node::role::leaf);
    }
    for (std::uint32_t s = 0; s < t.spines; ++s) {
      rates.emplace_back(t.leaves, uplink_rate_bps_);
      roles.push_back(switch_node::role::spine);
    }
  }
  switches_.resize(rates.size());
  std::uint32_t gport = 0;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    switch_node& s = switches_[i];
    s.kind = roles[i];
    s.index = s.kind == switch_node::role::spine ? static_cast<std::uint32_t>(i - t.leaves) : static_cast<std::uint32_t>(i);
    s.clk = std::make_unique<node_clock>(*this, -1);
    s.sink = std::make_unique<switch_sink>(*this, static_cast<std::uint32_t>(i));
    switch_config sc = switch_config_for(rates[i], false, 0);
    sc.ecn_seed = mix64(cfg_.seed ^ (0x5157ull + i));
    std::unique_ptr<link_flow_control> fc;
    if (ib_) {
      s.credit_out = std::make_unique<switch_credit_link>(*this, static_cast<std::uint32_t>(i));
      auto c = credit_flow_control::create(sc, *s.clk, *s.credit_out,
                                           credit_config{max_frame_bytes(), cfg_.fabric.credit_update_interval_ns});
      if (!c.ok()) return c.error().with_context(layout_.device_name(static_cast<std::uint32_t>(i)));
      s.credits = c->get();
      fc = std::move(c).value();
    }
    auto m = switch_model::create(sc, *s.clk, s.sink.get(), std::move(fc));
    if (!m.ok()) return m.error().with_context(layout_.device_name(static_cast<std::uint32_t>(i)));
    s.model = std::move(m).value();
    s.port_base = gport;
    for (std::size_t p = 0; p < rates[i].size(); ++p)
      port_owner_.emplace_back(static_cast<std::uint32_t>(i), static_cast<std::uint16_t>(p));
    gport += static_cast<std::uint32_t>(rates[i].size());
    out_.devices.push_back(layout_.device_name(static_cast<std::uint32_t>(i)));
  }
  port_pending_.assign(gport, never_ns);
  return status::success();
}

status engine::build() {
  ROCELAB_RETURN_IF_ERROR(validate(cfg_).with_context("twin config"));
  const auto& t = cfg_.topology;
  host_rate_bps_ = rate_of(t.link_gbps);
  if (t.type == topology_config::kind::leaf_spine) {
    hosts_per_leaf_ = t.hosts / t.leaves;
    const double up = t.spine_link_gbps > 0
                          ? t.spine_link_gbps
                          : hosts_per_leaf_ * t.link_gbps / (t.oversubscription * t.spines);
    uplink_rate_bps_ = rate_of(up);
  }
  overhead_ = compat_ ? 0 : cfg_.switch_template.wire_overhead_bytes;
  ack_prio_ = cfg_.nic.ack_priority;
  cnp_prio_ = dcqcn_.cnp_802p_prio;
  if (ib_) {
    overhead_ = ib_framing_bytes;
    // VLs in use: data, ACKs, CN packets (SL to VL one to one).
    vl_mask_ = static_cast<std::uint8_t>((1u << cfg_.nic.data_priority) | (1u << cnp_prio_) |
                                         (cfg_.nic.ack_priority >= 0 ? 1u << cfg_.nic.ack_priority : 0u));
  }
  ROCELAB_RETURN_IF_ERROR(build_switches());

  // Channels: every switch port's egress link, then every host's uplink.
  const std::uint32_t nsw = static_cast<std::uint32_t>(switches_.size());
  for (std::uint32_t h = 0; h < t.hosts; ++h) out_.hosts.push_back("h" + std::to_string(h + 1));
  for (std::uint32_t h = 0; h < t.hosts; ++h) out_.devices.push_back(layout_.device_name(layout_.host_device(h)));
  channels_.resize(port_owner_.size() + t.hosts);
  for (std::uint32_t s = 0; s < nsw; ++s) {
    switch_node& sw = switches_[s];
    sw.channel_base = sw.port_base;
    const auto nports = static_cast<std::uint32_t>(sw.model->num_ports());
    for (std::uint32_t p = 0; p < nports; ++p) {
      channel& c = channels_[sw.port_base + p];
      c.delay_ns = t.link_delay_ns + cfg_.fabric.switch_latency_ns;
      if (sw.kind == switch_node::role::single) {
        c.to_switch = -1, c.to_index = p, c.to_device = nsw + p;
      } else if (sw.kind == switch_node::role::leaf) {
        if (p < hosts_per_leaf_) {
          const std::uint32_t h = sw.index * hosts_per_leaf_ + p;
          c.to_switch = -1, c.to_index = h, c.to_device = nsw + h;
        } else {
          const std::uint32_t spine = t.leaves + (p - hosts_per_leaf_);
          c.to_switch = static_cast<std::int32_t>(spine), c.to_index = spine, c.to_device = spine;
          c.to_port = static_cast<std::uint16_t>(sw.index);
        }
      } else {
        c.to_switch = static_cast<std::int32_t>(p), c.to_index = p, c.to_device = p;  // leaf p
        c.to_port = static_cast<std::uint16_t>(hosts_per_leaf_ + sw.index);
      }
    }
  }
  hosts_.resize(t.hosts);
  const bool until_resume = compat_ || cfg_.switch_template.pfc.pause_until_resume;
  for (std::uint32_t h = 0; h < t.hosts; ++h) {
    host_node& hn = hosts_[h];
    hn.rate_bps = host_rate_bps_;
    if (8'000'000'000'000 % hn.rate_bps == 0) hn.ps_per_byte = 8'000'000'000'000 / hn.rate_bps;
    hn.pause = pfc_pause_state(host_rate_bps_, until_resume);
    hn.channel = static_cast<std::uint32_t>(port_owner_.size()) + h;
    hn.clk = std::make_unique<node_clock>(*this, static_cast<std::int32_t>(h));
    channel& c = channels_[hn.channel];
    c.delay_ns = t.link_delay_ns;
    if (t.type == topology_config::kind::single_switch) {
      c.to_switch = 0, c.to_index = 0, c.to_port = static_cast<std::uint16_t>(h), c.to_device = 0;
    } else {
      const std::uint32_t leaf = h / hosts_per_leaf_;
      c.to_switch = static_cast<std::int32_t>(leaf), c.to_index = leaf, c.to_device = leaf;
      c.to_port = static_cast<std::uint16_t>(h % hosts_per_leaf_);
    }
  }
  if (ib_) init_credits();
  pauses_.resize(channels_.size() * num_priorities);
  std::size_t queues = 0;
  for (const auto& s : switches_) queues += s.model->num_ports() * num_priorities;
  sampled_nonzero_.assign(queues, 0);
  // The wheel's horizon (event_queue.hpp): a frame's arrival is pushed at most a link
  // delay plus two frame times ahead (its own, and for a PFC frame the data frame it
  // waits behind); twice that leaves room. Timers, pause expiries and the paced sends of
  // slow flows beyond it go to the heap.
  std::int64_t max_delay_ns = 0, min_rate_bps = host_rate_bps_;
  for (const channel& c : channels_) max_delay_ns = std::max(max_delay_ns, c.delay_ns);
  for (const switch_node& sw : switches_)
    for (const port_config& pc : sw.model->config().ports) min_rate_bps = std::min(min_rate_bps, pc.rate_bps);
  const std::int64_t frame_ns = ceil_div(ser_ps(max_frame_bytes(), overhead_, min_rate_bps), 1000);
  assert(q_.empty());
  q_ = event_queue(2 * (max_delay_ns + 2 * frame_ns));
  q_.reserve(4096);
  out_.backend = "twin";
  return status::success();
}

// Links (rate_bps, delay_ns) from src to dst.
void engine::path_of(std::uint32_t src, std::uint32_t dst,
                     std::vector<std::pair<std::int64_t, std::int64_t>>& links) const {
  links.clear();
  const std::int64_t d = cfg_.topology.link_delay_ns;
  const std::int64_t sw = d + cfg_.fabric.switch_latency_ns;  // links out of a switch
  links.emplace_back(host_rate_bps_, d);
  if (cfg_.topology.type == topology_config::kind::leaf_spine && src / hosts_per_leaf_ != dst / hosts_per_leaf_) {
    links.emplace_back(uplink_rate_bps_, sw);
    links.emplace_back(uplink_rate_bps_, sw);
  }
  links.emplace_back(host_rate_bps_, sw);
}

// Ideal FCT: the message alone on an idle path, from its start to the arrival of the
// last ACK. Computed by replaying the store-and-forward pipeline with the engine's own
// rounding (a frame occupies a link for ser_ps, back-to-back frames continue at the
// exact picosecond, arrivals are rounded up to the ns). For n packets of equal frame
// size s (wire bytes w = s + preamble/IFG) over links j = 1..L of rate r_j and
// propagation d_j, with bottleneck rate r_b, this is
//   ideal = sum_j d_j + n w 8 / r_b + sum_{j != b} w 8 / r_j        (data pipeline)
//         + sum_j (d_j + (ack + overhead) 8 / r_j)                    (the last ACK back)
// i.e. propagation of every hop, serialization of all packets at the bottleneck and the
// store-and-forward of one packet per extra hop; the replay also handles the larger
// first packet (RETH) and the shorter last one exactly.
std::int64_t engine::ideal_fct(const flow_state& f, std::uint64_t /*bytes*/) const {
  std::vector<std::pair<std::int64_t, std::int64_t>> links;
  path_of(f.src, f.dst, links);
  const std::size_t L = links.size();
  assert(L <= 8);
  std::array<std::int64_t, 8> busy{};
  busy.fill(std::numeric_limits<std::int64_t>::min() / 2);
  // Every frame but the first and the last is a full one: its time per link once.
  std::array<std::int64_t, 8> full_ps{};
  for (std::size_t j = 0; j < L; ++j)
    full_ps[j] = frame_ps(cfg_.nic.mtu_bytes + sizes_.data_overhead, links[j].first);
  std::int64_t last_arrival_ns = 0;
  std::array<std::int64_t, 8> prev_busy{};
  for (std::uint32_t i = 0; i < f.npkts; ++i) {
    bool full = i > 0 && i + 1 < f.npkts;
    if (full && i >= 3) {
      // Steady state: when the last full frame moved every link's end by the same whole
      // number of ns, every further full frame does too (a full frame's step is a
      // function of `busy` that commutes with adding whole ns once busy[0] > -1 ns), so
      // the rest of the full frames are skipped in one step. Exact; a 30 MB flow is
      // 30,000 frames otherwise.
      const std::int64_t d = busy[0] - prev_busy[0];
      bool steady = d > 0 && d % 1000 == 0;
      for (std::size_t j = 1; j < L && steady; ++j) steady = busy[j] - prev_busy[j] == d;
      if (steady) {
        const std::uint32_t skip = f.npkts - 1 - i;  // full frames i .. npkts - 2
        for (std::size_t j = 0; j < L; ++j) busy[j] += static_cast<std::int64_t>(skip) * d;
        i = f.npkts - 1;
        full = false;
      }
    }
    prev_busy = busy;
    const std::int64_t frame = (i + 1 < f.npkts ? cfg_.nic.mtu_bytes : f.last_payload) + sizes_.data_overhead +
                               (i == 0 ? sizes_.first_extra : 0);
    std::int64_t ready_ps = 0;  // relative to the start
    for (std::size_t j = 0; j < L; ++j) {
      // A link starts a frame when it arrives, or back to back at the exact end of the
      // previous one when that ended less than 1 ns before (engine: nic_try, dequeue).
      const std::int64_t s = ready_ps - busy[j] >= 1000 ? ready_ps : busy[j];
      const std::int64_t end = s + (full ? full_ps[j] : frame_ps(frame, links[j].first));
      busy[j] = end;
      ready_ps = (ceil_div(end, 1000) + links[j].second) * 1000;
    }
    last_arrival_ns = ready_ps / 1000;
  }
  std::int64_t t_ps = last_arrival_ns * 1000;
  for (std::size_t j = L; j-- > 0;) {
    const std::int64_t end = t_ps + frame_ps(sizes_.ack, links[j].first);
    t_ps = (ceil_div(end, 1000) + links[j].second) * 1000;
  }
  return t_ps / 1000;
}

// ------------------------------------------------------------------ clock plumbing

timer_id engine::schedule_timer(std::int64_t at_ns, timer_client& client, std::uint64_t cookie, std::int32_t host) {
  at_ns = std::max(at_ns, now_);
  std::uint32_t slot;
  if (last_cancelled_ < slots_.size() && slots_[last_cancelled_].st == timer_slot::state::cancelled &&
      slots_[last_cancelled_].client == &client && slots_[last_cancelled_].cookie == cookie &&
      slots_[last_cancelled_].queued_ns <= at_ns) {
    slot = last_cancelled_;  // revive: its queued entry surfaces first and is re-pushed
  } else {
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    slots_[slot].queued_ns = at_ns;
    q_.push(at_ns, ev_timer, slot);
  }
  last_cancelled_ = no_slot;
  timer_slot& s = slots_[slot];
  s.client = &client;
  s.cookie = cookie;
  s.host = host;
  s.due_ns = at_ns;
  s.st = timer_slot::state::live;
  ++s.gen;
  // id: generation in the high half, slot + 1 in the low half (0 stays no_timer).
  return (static_cast<std::uint64_t>(s.gen) << 32) | (slot + 1u);
}

bool engine::cancel_timer(timer_id id) {
  if (id == no_timer) return false;
  const std::uint32_t slot = static_cast<std::uint32_t>(id & 0xffffffffu) - 1u;
  if (slot >= slots_.size()) return false;
  timer_slot& s = slots_[slot];
  if (s.st != timer_slot::state::live || s.gen != static_cast<std::uint32_t>(id >> 32)) return false;
  s.st = timer_slot::state::cancelled;  // freed when its queued entry surfaces
  last_cancelled_ = slot;
  return true;
}

void engine::on_timer_event(std::uint32_t idx) {
  timer_slot& s = slots_[idx];
  if (s.st == timer_slot::state::cancelled) {
    s.st = timer_slot::state::free;
    s.client = nullptr;
    if (last_cancelled_ == idx) last_cancelled_ = no_slot;
    free_slots_.push_back(idx);
    return;
  }
  if (s.due_ns > now_) {  // revived with a later due time
    s.queued_ns = s.due_ns;
    q_.push(s.due_ns, ev_timer, idx);
    return;
  }
  timer_client* client = s.client;
  const std::uint64_t cookie = s.cookie;
  const std::int32_t host = s.host;
  s.st = timer_slot::state::free;
  s.client = nullptr;
  free_slots_.push_back(idx);
  client->on_timer(now_, cookie);
  if (host >= 0) nic_kick(static_cast<std::uint32_t>(host));  // a DCQCN rate may have risen
}

// ------------------------------------------------------------------ workload side

std::uint64_t engine::post(const message& m) {
  const auto id = static_cast<std::uint32_t>(flows_.size());
  messages_.push_back(m);
  flows_.emplace_back(dcqcn_);
  flow_state& f = flows_.back();
  f.src = m.src;
  f.dst = m.dst;
  f.prio = static_cast<std::uint8_t>(m.priority >= 0 ? m.priority : cfg_.nic.data_priority);
  f.npkts = static_cast<std::uint32_t>(packets_of(m.bytes, cfg_.nic.mtu_bytes));
  f.last_payload = static_cast<std::uint32_t>(m.bytes - static_cast<std::uint64_t>(f.npkts - 1) * cfg_.nic.mtu_bytes);
  // The uplink choices of the data and of the ACKs/CNPs (same QP, so same UDP source
  // port, reversed addresses); the switches route by them (routing.hpp).
  f.fwd_ecmp = static_cast<std::uint8_t>(layout_.ecmp_choice(m.src, m.dst, id + 1, cfg_.seed, m.udp_sport, m.udp_dport));
  f.rev_ecmp = static_cast<std::uint8_t>(layout_.ecmp_choice(m.dst, m.src, id + 1, cfg_.seed, m.udp_dport, m.udp_sport));
  flow_record r;
  r.src = m.src;
  r.dst = m.dst;
  r.qp = id + 1;
  r.priority = f.prio;
  r.kind = m.kind;
  r.bytes = m.bytes;
  r.start_ns = std::max(now_, m.start_ns);
  r.tag = m.tag;
  r.ideal_fct_ns = ideal_fct(f, m.bytes);
  out_.flows.push_back(r);
  ++outstanding_;
  if (r.start_ns > now_)
    q_.push(r.start_ns, ev_start, id);
  else
    start_flow(id);
  return id;
}

void engine::start_flow(std::uint32_t f) {
  activate(f);
}

void engine::activate(std::uint32_t f) {
  flow_state& fl = flows_[f];
  if (!fl.in_active) {
    fl.in_active = true;
    hosts_[fl.src].active.push_back(f);
  }
  nic_kick(fl.src);
}

void engine::complete(std::uint32_t f) {
  flow_state& fl = flows_[f];
  fl.done = true;
  fl.rp.reset();  // cancels its timers
  flow_record& r = out_.flows[f];
  r.end_ns = now_;
  r.fct_ns = now_ - r.start_ns;
  --outstanding_;
  const message m = messages_[f];
  const flow_record rec = r;
  load_.on_message_complete(f, m, rec, *this);
}

// ------------------------------------------------------------------ links and switches

void engine::push_wire(std::uint32_t ch, std::int64_t at_ns, const packet& p) {
  channel& c = channels_[ch];
  const bool was_empty = c.wire.empty();
  c.wire.push_back(inflight{at_ns, p});
  c.last_at_ns = at_ns;
  if (was_empty) q_.push(at_ns, ev_channel, ch);
}

void engine::on_channel(std::uint32_t ch) {
  channel& c = channels_[ch];
  const inflight f = c.wire.pop_front();
  if (!c.wire.empty()) q_.push(c.wire.front().at_ns, ev_channel, ch);
  if (type_of(f.pkt.cookie) == pkt_type::pfc) {
    on_pfc_at(ch, f.pkt);
    return;
  }
  if (type_of(f.pkt.cookie) == pkt_type::credit) {
    on_credit_at(ch, f.pkt);
    return;
  }
  if (ib_ && c.to_switch < 0) {
    // The HCA moves the packet to host memory at once and returns its blocks.
    host_node& hn = hosts_[c.to_index];
    const std::int64_t blocks = credit_blocks_of(f.pkt.size_bytes);
    hn.rx_credits.on_received(f.pkt.priority, blocks);
    hn.rx_credits.on_freed(f.pkt.priority, blocks);
    send_credit(hn.channel, f.pkt.priority, hn.rx_credits.fccl(f.pkt.priority));
  }
  if (c.to_switch >= 0)
    on_switch_packet(static_cast<std::uint32_t>(c.to_switch), c.to_port, f.pkt);
  else
    on_host_packet(c.to_index, f.pkt, ch);
}

void engine::on_switch_packet(std::uint32_t sw, std::uint16_t in_port, packet p) {
  p.ingress_port = in_port;
  p.egress_port = layout_.egress_port(sw, dst_of(p.cookie), ecmp_of(p.cookie));
  if (adaptive_ && switches_[sw].kind == switch_node::role::leaf && p.egress_port >= hosts_per_leaf_) {
    // Adaptive routing: this packet takes the uplink with the least queued on its priority.
    const switch_model& m = *switches_[sw].model;
    std::array<std::uint64_t, 256> load{};
    const std::uint32_t n = cfg_.topology.spines;
    for (std::uint32_t u = 0; u < n; ++u)
      load[u] = m.queue(static_cast<std::uint16_t>(hosts_per_leaf_ + u), p.priority).depth_bytes;
    p.egress_port = static_cast<std::uint16_t>(hosts_per_leaf_ + switches_[sw].router.pick({load.data(), n}));
  }
  if (!fecn_eligible_.empty()) ib_fecn(sw, p);
  if (p.ecn == ecn_codepoint::ce)
    p.cookie |= ce_before_queue_bit;
  else
    p.cookie &= ~ce_before_queue_bit;
  const admission a = switches_[sw].model->admit(p, now_);
  if (cfg_.max_events > 0) {
    if (a.ce_marked) record_event(rocelab::event_kind::ce_mark, sw, p.egress_port, p.priority, p.flow_id);
    if (!a.accepted)
      record_event(rocelab::event_kind::drop, sw, a.reason == drop_reason::egress_limit ? p.egress_port : p.ingress_port,
                   p.priority, p.flow_id);
  }
  if (a.accepted) port_kick(sw, p.egress_port);
}

void engine::record_event(rocelab::event_kind kind, std::uint32_t device, std::uint32_t port, std::uint8_t prio,
                          std::uint32_t flow) {
  if (out_.events.size() >= cfg_.max_events || flow >= flows_.size()) return;
  congestion_event e;
  e.kind = kind;
  e.device = device;
  e.port = port;
  e.priority = prio;
  e.t_ns = now_;
  e.src = flows_[flow].src;
  e.dst = flows_[flow].dst;
  e.qp = flow + 1;
  e.source = pause_source::model;
  out_.events.push_back(e);
}

// Starts the port's next frame now if it can; otherwise makes sure an ev_port waits at the
// earliest time it could.
void engine::port_kick(std::uint32_t sw, std::uint16_t port) {
  switch_node& s = switches_[sw];
  for (;;) {
    // A dequeue succeeds exactly when next_dequeue_time_ns would say now, so try it first
    // and ask for the time only when no frame can start.
    const auto d = s.model->dequeue(port, now_);
    if (!d) {
      const std::uint32_t g = s.port_base + port;
      // Usually an ev_port already waits for the end of the frame in progress, and no
      // time next_dequeue_time_ns can give is earlier than that end.
      if (port_pending_[g] <= s.model->next_transmit_time_ns(port)) return;
      const std::int64_t t = s.model->next_dequeue_time_ns(port, now_);
      if (t != never_ns && t > now_ && t < port_pending_[g]) {
        port_pending_[g] = t;
        q_.push(t, ev_port, g);
      }
      return;
    }
    if (d->discarded) {  // the PFC watchdog's drop action; go-back-N recovers it
      if (cfg_.max_events > 0) record_event(rocelab::event_kind::drop, sw, port, d->pkt.priority, d->pkt.flow_id);
      continue;
    }
    ++forwarded_;
    if (cfg_.max_events > 0 && d->pkt.ecn == ecn_codepoint::ce && (d->pkt.cookie & ce_before_queue_bit) == 0 &&
        s.model->config().ecn_mark_on_dequeue)
      record_event(rocelab::event_kind::ce_mark, sw, port, d->pkt.priority, d->pkt.flow_id);
    push_wire(s.channel_base + port, d->tx_end_ns + channels_[s.channel_base + port].delay_ns, d->pkt);
  }
}

void engine::on_port_event(std::uint32_t g, std::int64_t at) {
  if (port_pending_[g] != at) return;  // superseded by an earlier event
  port_pending_[g] = never_ns;
  port_kick(port_owner_[g].first, port_owner_[g].second);
}

void engine::on_switch_pfc(std::uint32_t sw, const pfc_frame_out& f) {
  if (f.quanta == 0)
    ++pfc_xon_;
  else
    ++pfc_xoff_;
  packet p;
  p.cookie = make_cookie(static_cast<std::uint32_t>(f.quanta) | (static_cast<std::uint32_t>(f.priority) << 16),
                         pkt_type::pfc, false, 0, 0);
  p.size_bytes = static_cast<std::uint32_t>(pfc_frame_bytes);
  p.priority = f.priority;
  const std::uint32_t ch = switches_[sw].channel_base + f.port;
  push_wire(ch, f.tx_end_ns + channels_[ch].delay_ns, p);
}

void engine::close_pause(std::uint32_t key, std::int64_t end_ns) {
  pause_track& t = pauses_[key];
  if (!t.open) return;
  t.open = false;
  const std::uint32_t ch = key / num_priorities;
  pause_interval iv;
  iv.device = channels_[ch].to_device;
  iv.port = channels_[ch].to_switch >= 0 ? channels_[ch].to_port : 0;
  iv.priority = static_cast<std::uint8_t>(key % num_priorities);
  iv.start_ns = t.start_ns;
  iv.end_ns = std::max(t.start_ns, end_ns);
  iv.source = pause_source::model;
  out_.totals.paused_ns += iv.end_ns - iv.start_ns;
  out_.pauses.push_back(iv);
}

// A PFC frame fully received by the device at the end of channel ch: that device's port
// stops (or resumes) the priority. Pause intervals are recorded here, at the paused
// transmitter; a refresh that lands before the pause ran out extends the interval.
void engine::on_pfc_at(std::uint32_t ch, const packet& p) {
  const std::uint32_t v = psn_of(p.cookie);
  const auto quanta = static_cast<std::uint16_t>(v & 0xffff);
  const auto prio = static_cast<std::uint8_t>((v >> 16) & 7);
  channel& c = channels_[ch];
  std::array<std::uint16_t, num_priorities> qa{};
  qa[prio] = quanta;
  const auto enable = static_cast<std::uint8_t>(1u << prio);
  const bool honoured = c.to_switch >= 0 || cfg_.nic.pfc_enabled;
  if (!honoured) return;
  const std::uint32_t key = ch * num_priorities + prio;
  pause_track& t = pauses_[key];
  if (quanta == 0) {
    close_pause(key, std::min(now_, t.until_ns));
  } else {
    std::int64_t until = never_ns;
    const bool until_resume = compat_ || cfg_.switch_template.pfc.pause_until_resume;
    if (!until_resume) {
      // Same length the transmitter applies (pfc_pause_state::quanta_ps at its speed).
      const std::int64_t rate = c.to_switch >= 0
                                    ? switches_[static_cast<std::size_t>(c.to_switch)].model->config().ports[c.to_port].rate_bps
                                    : hosts_[c.to_index].rate_bps;
      until = now_ + ceil_div(static_cast<std::int64_t>(quanta) * 512 * 1000, rate / 1'000'000);
    }
    if (t.open && now_ > t.until_ns) close_pause(key, t.until_ns);
    if (!t.open) {
      t.open = true;
      t.start_ns = now_;
    }
    t.until_ns = until;
  }
  if (c.to_switch >= 0) {
    const auto sw = static_cast<std::uint32_t>(c.to_switch);
    switches_[sw].model->on_pfc_frame(c.to_port, enable, qa, now_);
    port_kick(sw, c.to_port);
  } else {
    hosts_[c.to_index].pause.on_frame(enable, qa, now_);
    nic_kick(c.to_index);
  }
}

void switch_credit_link::send_credit_update(std::uint16_t port, std::uint8_t vl, std::int64_t fccl,
                                            std::int64_t /*now_ns*/) {
  e_.send_credit(e_.switch_channel(sw_, port), vl, fccl);
}

// A flow-control packet (IBA 7.9.4.3) on channel ch: it goes between frames, after the
// frame in flight, and its 6 bytes take no link time worth modelling.
void engine::send_credit(std::uint32_t ch, std::uint8_t vl, std::int64_t fccl) {
  channel& c = channels_[ch];
  packet p;
  p.cookie = make_cookie(static_cast<std::uint32_t>(static_cast<std::uint64_t>(fccl) >> 32), pkt_type::credit, false, 0, 0);
  p.flow_id = static_cast<std::uint32_t>(fccl);
  p.size_bytes = ib_flow_control_packet_bytes;
  p.priority = vl;
  push_wire(ch, std::max(now_ + c.delay_ns, c.last_at_ns), p);
}

void engine::on_credit_at(std::uint32_t ch, const packet& p) {
  const std::int64_t fccl =
      static_cast<std::int64_t>((static_cast<std::uint64_t>(psn_of(p.cookie)) << 32) | p.flow_id);
  const channel& c = channels_[ch];
  if (c.to_switch >= 0) {
    // The switch port's peer returned credits: the port's VL may send again.
    const auto sw = static_cast<std::uint32_t>(c.to_switch);
    switches_[sw].credits->on_credit_update(c.to_port, p.priority, fccl, now_);
    port_kick(sw, c.to_port);
  } else {
    hosts_[c.to_index].credits.on_update(p.priority, fccl, now_);
    nic_kick(c.to_index);
  }
}

// Link up (IBA 7.9.4.2): every transmitter starts with the credits its receiver's VL
// buffers advertise; hosts advertise fabric.ib_hca_buffer_bytes per VL.
// IB CC at the switch (annex A10.2.1.1, A10.4.2): a port whose VL queue holds more than
// the threshold marks FECN on one in (Marking_Rate + 1) of the packets that join it, and
// only as the root of the congestion: a port that cannot send for lack of credits is a
// victim of congestion further on (Victim_Mask clear) and marks nothing.
void engine::ib_fecn(std::uint32_t sw, packet& p) {
  if (!is_ect(p.ecn)) return;
  const switch_node& s = switches_[sw];
  if (static_cast<std::int64_t>(s.model->queue(p.egress_port, p.priority).depth_bytes) <=
      cfg_.fabric.ib_cc.marking_threshold_bytes)
    return;
  if (!s.credits->sender(p.egress_port).allowed(p.priority)) return;
  std::uint32_t& n = fecn_eligible_[s.port_base + p.egress_port];
  if (n++ < cfg_.fabric.ib_cc.marking_rate) return;
  n = 0;
  p.ecn = ecn_codepoint::ce;
  ++fecn_marks_;
}

void engine::init_credits() {
  if (cc_ == congestion_control_kind::ib_cc) fecn_eligible_.assign(port_owner_.size(), 0);
  std::array<std::int64_t, num_priorities> hca{};
  for (int v = 0; v < num_priorities; ++v)
    if ((vl_mask_ >> v) & 1u) hca[static_cast<std::size_t>(v)] = cfg_.fabric.ib_hca_buffer_bytes / ib_credit_block_bytes;
  for (auto& hn : hosts_) {
    hn.credits = credit_sender(max_frame_bytes());
    hn.rx_credits = credit_receiver(hca);
  }
  for (std::uint32_t ch = 0; ch < channels_.size(); ++ch) {
    const channel& c = channels_[ch];
    credit_sender& tx = ch < port_owner_.size()
                            ? switches_[port_owner_[ch].first].credits->sender(port_owner_[ch].second)
                            : hosts_[ch - port_owner_.size()].credits;
    for (std::uint8_t v = 0; v < num_priorities; ++v) {
      if (((vl_mask_ >> v) & 1u) == 0) continue;
      const std::int64_t fccl = c.to_switch >= 0
                                    ? switches_[static_cast<std::size_t>(c.to_switch)].credits->advertised_fccl(c.to_port, v)
                                    : hosts_[c.to_index].rx_credits.fccl(v);
      tx.on_update(v, fccl, 0);
    }
  }
}

// ------------------------------------------------------------------ hosts

void engine::send_control(std::uint32_t h, pkt_type t, std::uint32_t flow, std::uint32_t psn, bool flag,
                          std::uint8_t prio) {
  const flow_state& f = flows_[flow];
  packet p;
  p.cookie = make_cookie(psn, t, flag, f.rev_ecmp, f.src);
  p.flow_id = flow;
  p.size_bytes = t == pkt_type::cnp ? sizes_.cnp : sizes_.ack;
  p.priority = prio;
  p.ecn = ecn_codepoint::not_ect;
  hosts_[h].control.push_back(p);
  nic_kick(h);
}

void engine::nic_schedule(std::uint32_t h, std::int64_t at_ns) {
  host_node& hn = hosts_[h];
  if (at_ns < hn.pending_ns) {
    hn.pending_ns = at_ns;
    q_.push(at_ns, ev_nic, h);
  }
}

void engine::nic_kick(std::uint32_t h) {
  host_node& hn = hosts_[h];
  if (hn.pending_ns <= now_) return;  // an event for now is already queued
  if (now_ * 1000 < hn.busy_until_ps) {
    nic_schedule(h, ceil_div(hn.busy_until_ps, 1000));
    return;
  }
  nic_try(h);
}

void engine::nic_try(std::uint32_t h) {
  host_node& hn = hosts_[h];
  const std::int64_t now_ps = now_ * 1000;
  if (now_ps < hn.busy_until_ps) {
    nic_schedule(h, ceil_div(hn.busy_until_ps, 1000));
    return;
  }
  const std::uint8_t allowed = ib_                     ? hn.credits.allowed_mask()
                               : cfg_.nic.pfc_enabled ? hn.pause.allowed_mask(now_)
                                                      : std::uint8_t{0xff};
  packet p{};
  bool have = false;
  std::uint32_t sent_flow = 0;
  std::int64_t wake_ps = never_ns;
  bool pause_blocked = false;
  if (!hn.control.empty()) {
    const std::int16_t cp = cfg_.nic.control_pause_priority;
    if ((allowed >> (cp >= 0 ? static_cast<unsigned>(cp) : hn.control.front().priority)) & 1u) {
      p = hn.control.pop_front();
      have = true;
    } else {
      pause_blocked = true;
    }
  }
  if (!have && !hn.active.empty()) {
    // Drop QPs with nothing left to send (they come back on a NAK or timeout).
    std::erase_if(hn.active, [&](std::uint32_t f) {
      flow_state& fl = flows_[f];
      if (fl.snd_nxt < fl.npkts && !fl.done) return false;
      fl.in_active = false;
      return true;
    });
    const auto n = static_cast<std::uint32_t>(hn.active.size());
    // hn.rr is at most n unless QPs were dropped above; spare the division otherwise.
    const std::uint32_t first = hn.rr < n ? hn.rr : hn.rr == n || n == 0 ? 0 : hn.rr % n;
    for (std::uint32_t k = 0; k < n; ++k) {
      const std::uint32_t idx = first + k < n ? first + k : first + k - n;
      const std::uint32_t f = hn.active[idx];
      flow_state& fl = flows_[f];
      if (((allowed >> fl.prio) & 1u) == 0) {
        pause_blocked = true;
        continue;
      }
      if (compat_) {
        // HPCC ns-3: the gap to the next frame is fixed when a frame leaves, at the rate
        // of that moment (RdmaHw::UpdateNextAvail from PktSent); its DCQCN rate updates
        // (the *Mlx functions) do not call ChangeRate, so a cut or raise applies from
        // the frame after next.
        if (fl.next_avail_ps > now_ps) {
          wake_ps = std::min(wake_ps, fl.next_avail_ps);
          continue;
        }
      } else if (fl.rp) {
        // DCQCN rate limiter: the next frame may start one frame time at the current
        // rate after the previous one started.
        const double rate = fl.rp->rate_bps();
        if (rate < static_cast<double>(hn.rate_bps)) {
          const std::int64_t next = fl.last_tx_ps + static_cast<std::int64_t>(std::ceil(fl.last_bits * 1e12 / rate));
          if (next > now_ps) {
            wake_ps = std::min(wake_ps, next);
            continue;
          }
        }
      }
      hn.rr = idx + 1;
      sent_flow = f;
      const std::uint32_t psn = fl.snd_nxt;
      const std::uint32_t payload = psn + 1 < fl.npkts ? cfg_.nic.mtu_bytes : fl.last_payload;
      p.cookie = make_cookie(psn, pkt_type::data, psn + 1 == fl.npkts, fl.fwd_ecmp, fl.dst);
      p.flow_id = f;
      p.size_bytes = payload + sizes_.data_overhead + (psn == 0 ? sizes_.first_extra : 0);
      p.priority = fl.prio;
      p.ecn = cfg_.nic.dcqcn_enabled ? ecn_codepoint::ect0 : ecn_codepoint::not_ect;
      have = true;
      break;
    }
  }
  if (!have) {
    std::int64_t wake_ns = wake_ps == never_ns ? never_ns : ceil_div(wake_ps, 1000);
    if (pause_blocked) {
      for (int pr = 0; pr < num_priorities; ++pr)
        if (((allowed >> pr) & 1u) == 0) {
          const std::int64_t r = hn.pause.resume_ns(static_cast<std::uint8_t>(pr));
          if (r != never_ns && r > now_) wake_ns = std::min(wake_ns, r);
        }
    }
    if (wake_ns != never_ns) nic_schedule(h, wake_ns);
    return;
  }
  // Back to back: continue from the exact end of the previous frame (as the switch does).
  const std::int64_t start_ps = now_ps - hn.busy_until_ps < 1000 ? hn.busy_until_ps : now_ps;
  std::int64_t frame = hn.ps_per_byte != 0 ? (p.size_bytes + overhead_) * hn.ps_per_byte
                                           : frame_ps(p.size_bytes, hn.rate_bps);
  if (compat_) frame = frame / 1000 * 1000;  // ns-3: whole ns, truncated (frame_ps)
  hn.busy_until_ps = start_ps + frame;
  const std::int64_t end_ns = ceil_div(hn.busy_until_ps, 1000);
  push_wire(hn.channel, end_ns + channels_[hn.channel].delay_ns, p);
  if (ib_) hn.credits.on_transmit(p.priority, p.size_bytes, now_);
  hn.tx_bytes += p.size_bytes;
  ++hn.tx_packets;
  if (type_of(p.cookie) == pkt_type::data) {
    flow_state& fl = flows_[sent_flow];
    if (fl.snd_nxt < fl.snd_max) {
      ++out_.flows[sent_flow].retransmits;
      if (cfg_.max_events > 0) record_event(rocelab::event_kind::retransmit, layout_.host_device(h), 0, p.priority, sent_flow);
    }
    if (fl.snd_una == fl.snd_max) fl.last_progress_ns = now_;  // nothing was outstanding
    ++fl.snd_nxt;
    fl.snd_max = std::max(fl.snd_max, fl.snd_nxt);
    fl.last_tx_ps = start_ps;
    fl.last_bits = (p.size_bytes + static_cast<std::uint32_t>(overhead_)) * 8;
    if (compat_ && fl.rp) {
      // RdmaHw::UpdateNextAvail: Seconds(m_rate.CalculateTxTime(size)), an ns3::Time of
      // whole ns (truncated), at the QP's DataRate (whole bit/s).
      const double rate = std::floor(fl.rp->rate_bps());
      fl.next_avail_ps = start_ps + static_cast<std::int64_t>(static_cast<double>(fl.last_bits) * 1e9 / rate) * 1000;
    }
    if (fl.rp) fl.rp->on_bytes_sent(now_, p.size_bytes);
    if (!fl.rto_armed) {
      fl.rto_armed = true;
      q_.push(now_ + cfg_.nic.retransmit_timeout_ns, ev_rto, sent_flow);
    }
  }
  if (!hn.control.empty() || !hn.active.empty()) nic_schedule(h, end_ns);
}

void engine::on_host_packet(std::uint32_t h, const packet& p, std::uint32_t /*ch*/) {
  const std::uint32_t fid = p.flow_id;
  flow_state& f = flows_[fid];
  const std::uint32_t psn = psn_of(p.cookie);
  // ACKs and NAKs on the configured priority, else on the data's, as RC responders
  // answer in the traffic class of the request.
  const auto ack_prio = static_cast<std::uint8_t>(ack_prio_ >= 0 ? ack_prio_ : f.prio);
  switch (type_of(p.cookie)) {
    case pkt_type::data: {
      const bool ce = p.ecn == ecn_codepoint::ce;
      if (ce) {
        ++out_.flows[fid].ce_marked;
        if (f.np.on_packet(now_, true)) {
          if (compat_)
            f.ce_since_ack = true;  // the flag rides on the ACK below
          else
            send_control(h, pkt_type::cnp, fid, 0, false, cnp_prio_);
        }
      }
      if (psn == f.epsn) {
        ++f.epsn;
        if (!f.placed.empty())
          while (f.epsn < f.npkts && f.placed[f.epsn]) ++f.epsn;  // already placed out of order
        f.nak_sent = false;
        ++f.since_ack;
        if (f.since_ack >= cfg_.nic.ack_every_packets || f.epsn == f.npkts) {
          f.since_ack = 0;
          const bool flag = f.ce_since_ack;
          f.ce_since_ack = false;
          send_control(h, pkt_type::ack, fid, f.epsn, flag, ack_prio);
        }
      } else if (psn > f.epsn && adaptive_) {
        // Adaptive routing reorders packets; the NIC places them by PSN (RDMA WRITE
        // carries its address) and acknowledges once the gap fills.
        if (f.placed.empty()) f.placed.assign(f.npkts, false);
        f.placed[psn] = true;
      } else if (psn > f.epsn) {
        if (!f.nak_sent) {
          f.nak_sent = true;
          send_control(h, pkt_type::nak, fid, f.epsn, false, ack_prio);
        }
      } else {
        send_control(h, pkt_type::ack, fid, f.epsn, false, ack_prio);  // duplicate: re-ACK
      }
      break;
    }
    case pkt_type::ack: {
      if (f.done) break;
      if (flag_of(p.cookie)) {
        ++out_.flows[fid].cnps;
        if (cfg_.max_events > 0) record_event(rocelab::event_kind::cnp, layout_.host_device(h), 0, p.priority, fid);
        if (cfg_.nic.dcqcn_enabled) {
          if (!f.rp)
            f.rp = make_rate_control(cc_, dcqcn_, cfg_.fabric.ib_cc, hosts_[h].rate_bps, *hosts_[h].clk,
                                     static_cast<std::uint32_t>(overhead_));
          f.rp->on_cnp(now_);
        }
      }
      if (psn > f.snd_una) {
        f.snd_una = psn;
        f.last_progress_ns = now_;
        if (f.snd_nxt < f.snd_una) f.snd_nxt = f.snd_una;
        if (f.snd_una >= f.npkts) complete(fid);
      }
      break;
    }
    case pkt_type::nak: {
      if (f.done || psn < f.snd_una) break;
      // IBTA 9.7.5.2.2: a NAK-sequence-error ACKs everything before its PSN and asks for
      // a resend from it (go-back-N).
      f.snd_una = psn;
      f.snd_nxt = psn;
      f.last_progress_ns = now_;
      activate(fid);
      break;
    }
    case pkt_type::cnp: {
      ++out_.flows[fid].cnps;
      if (cfg_.max_events > 0) record_event(rocelab::event_kind::cnp, layout_.host_device(h), 0, p.priority, fid);
      if (f.done || !cfg_.nic.dcqcn_enabled) break;
      if (!f.rp)
        f.rp = make_rate_control(cc_, dcqcn_, cfg_.fabric.ib_cc, hosts_[h].rate_bps, *hosts_[h].clk,
                                 static_cast<std::uint32_t>(overhead_));
      f.rp->on_cnp(now_);
      break;
    }
    case pkt_type::pfc:
    case pkt_type::credit:
      break;
  }
}

void engine::on_rto(std::uint32_t fid) {
  flow_state& f = flows_[fid];
  f.rto_armed = false;
  if (f.done || f.snd_una >= f.snd_max) return;  // nothing outstanding; re-armed on the next send
  const std::int64_t deadline = f.last_progress_ns + cfg_.nic.retransmit_timeout_ns;
  if (now_ < deadline) {
    f.rto_armed = true;
    q_.push(deadline, ev_rto, fid);
    return;
  }
  // Local ACK timeout (IBTA 9.7.6.1.3): resend from the oldest unacknowledged PSN.
  f.snd_nxt = f.snd_una;
  f.last_progress_ns = now_;
  f.rto_armed = true;
  q_.push(now_ + cfg_.nic.retransmit_timeout_ns, ev_rto, fid);
  activate(fid);
}

// ------------------------------------------------------------------ run loop

void engine::sample_queues() {
  // Depth per (switch, port, priority). Queues that are empty and were empty at the
  // previous sample are left out (absent means 0 bytes), which keeps idle ports free.
  std::size_t k = 0;
  for (std::uint32_t s = 0; s < switches_.size(); ++s) {
    const switch_model& m = *switches_[s].model;
    for (std::uint16_t port = 0; port < m.num_ports(); ++port)
      for (std::uint8_t pr = 0; pr < num_priorities; ++pr, ++k) {
        const std::uint64_t bytes = m.queue(port, pr).depth_bytes;
        if (bytes == 0 && sampled_nonzero_[k] == 0) continue;
        sampled_nonzero_[k] = bytes > 0 ? 1 : 0;
        out_.queues.push_back(queue_sample{s, port, pr, now_, bytes});
      }
  }
  // NIC transmit counters (port_xmit_data in a lab run), for rates per host; only hosts
  // whose count moved since the previous sample.
  const auto nsw = static_cast<std::uint32_t>(switches_.size());
  for (std::uint32_t h = 0; h < hosts_.size(); ++h) {
    host_node& hn = hosts_[h];
    if (hn.tx_bytes == hn.sampled_tx_bytes && now_ > 0) continue;
    hn.sampled_tx_bytes = hn.tx_bytes;
    out_.counters.push_back(counter_sample{nsw + h, 0, "tx_bytes", now_, hn.tx_bytes});
  }
}

void engine::dispatch(const event_record& e) {
  const std::uint32_t idx = e.payload & event_index_mask;
  switch (e.payload >> event_index_bits) {
    case ev_channel:
      on_channel(idx);
      break;
    case ev_port:
      on_port_event(idx, e.at_ns);
      break;
    case ev_nic:
      if (hosts_[idx].pending_ns == e.at_ns) {
        hosts_[idx].pending_ns = never_ns;
        nic_try(idx);
      }
      break;
    case ev_timer:
      on_timer_event(idx);
      break;
    case ev_rto:
      on_rto(idx);
      break;
    case ev_start:
      start_flow(idx);
      break;
    case ev_sample:
      sample_queues();
      if (outstanding_ > 0) q_.push(now_ + cfg_.queue_sample_interval_ns, ev_sample, 0);
      break;
    default:
      break;
  }
}

run_records engine::run() {
  load_.start(*this);
  if (cfg_.queue_sample_interval_ns > 0) q_.push(0, ev_sample, 0);
  // Polling the cancel hook costs a call; every 4096 events keeps it off the profile and
  // still answers within milliseconds.
  std::uint32_t until_poll = 4096;
  while (outstanding_ > 0 && !q_.empty()) {
    if (cfg_.cancel_requested && --until_poll == 0) {
      until_poll = 4096;
      if (cfg_.cancel_requested()) break;
    }
    const event_record e = q_.pop();
    if (e.at_ns > cfg_.stop_ns) {
      now_ = cfg_.stop_ns;
      break;
    }
    now_ = e.at_ns;
    dispatch(e);
  }
  out_.simulated_ns = now_;
  for (std::uint32_t k = 0; k < pauses_.size(); ++k) close_pause(k, std::min(now_, pauses_[k].until_ns));
  if (ib_) {
    // Credit stalls are InfiniBand's pauses: a VL of a port could not send for lack of
    // credits (PortXmitWait). Recorded like PFC pauses, at the stalled transmitter.
    auto add = [&](std::uint32_t device, std::uint32_t port, credit_sender& s) {
      s.close_stalls(now_);
      for (const credit_stall& st : s.stalls()) {
        out_.pauses.push_back(pause_interval{device, port, st.vl, st.start_ns, st.end_ns, pause_source::model});
        out_.totals.paused_ns += st.end_ns - st.start_ns;
      }
    };
    for (std::uint32_t s = 0; s < switches_.size(); ++s)
      for (std::uint16_t port = 0; port < switches_[s].model->num_ports(); ++port)
        add(s, port, switches_[s].credits->sender(port));
    for (std::uint32_t h = 0; h < hosts_.size(); ++h)
      add(static_cast<std::uint32_t>(switches_.size()) + h, 0, hosts_[h].credits);
  }
  std::sort(out_.pauses.begin(), out_.pauses.end(), [](const pause_interval& a, const pause_interval& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns
                                    : a.device != b.device ? a.device < b.device
                                                           : a.port != b.port ? a.port < b.port : a.priority < b.priority;
  });

  run_totals& t = out_.totals;
  t.pfc_pause_frames = pfc_xoff_;
  t.pfc_resume_frames = pfc_xon_;
  t.packets_forwarded = forwarded_;
  t.ce_marked += fecn_marks_;
  for (std::uint32_t s = 0; s < switches_.size(); ++s) {
    const switch_model& m = *switches_[s].model;
    for (std::uint16_t port = 0; port < m.num_ports(); ++port) {
      const port_stats& ps = m.port(port);
      std::uint64_t drops = 0, marks = 0;
      for (auto d : ps.dropped_packets) drops += d;
      for (std::uint8_t pr = 0; pr < num_priorities; ++pr) marks += m.queue(port, pr).ecn_marked;
      t.drops += drops;
      t.ce_marked += marks;
      const std::pair<const char*, std::uint64_t> counters[] = {
          {"rx_packets", ps.rx_packets}, {"tx_packets", ps.tx_packets}, {"tx_bytes", ps.tx_bytes},
          {"drops", drops},             {"ecn_marked", marks},        {"pfc_tx_frames", ps.pfc_tx_frames},
          {"pfc_rx_frames", ps.pfc_rx_frames}};
      for (const auto& [name, value] : counters)
        if (value != 0) out_.counters.push_back(counter_sample{s, port, name, now_, value});
      // Drops by reason (ingress drops on the ingress port, egress drops on the egress port).
      constexpr const char* reasons[num_drop_reasons] = {"", "drops_ingress_limit", "drops_egress_limit",
                                                         "drops_headroom_exhausted", "drops_pfc_watchdog"};
      for (int k = 1; k < num_drop_reasons; ++k)
        if (ps.dropped_packets[static_cast<std::size_t>(k)] != 0)
          out_.counters.push_back(
              counter_sample{s, port, reasons[k], now_, ps.dropped_packets[static_cast<std::size_t>(k)]});
    }
  }
  const auto nsw = static_cast<std::uint32_t>(switches_.size());
  for (std::uint32_t h = 0; h < hosts_.size(); ++h) {
    if (hosts_[h].tx_packets == 0) continue;
    out_.counters.push_back(counter_sample{nsw + h, 0, "tx_packets", now_, hosts_[h].tx_packets});
    out_.counters.push_back(counter_sample{nsw + h, 0, "tx_bytes", now_, hosts_[h].tx_bytes});
  }
  for (std::size_t f = 0; f < flows_.size(); ++f) {
    t.cnps += flows_[f].np.cnps_sent();
    t.retransmits += out_.flows[f].retransmits;
  }
  // Tear down reaction points while the engine (their clock) is alive.
  for (auto& f : flows_) f.rp.reset();
  return std::move(out_);
}

}  // namespace

status validate(const twin_config& c) {
  auto bad = [](const std::string& what) { return status(error_code::invalid_argument, what); };
  const auto& t = c.topology;
  if (t.hosts < 2 || t.hosts > 65535) return bad("topology.hosts must be 2..65535");
  if (!(t.link_gbps > 0)) return bad("topology.link_gbps must be > 0");
  if (t.link_delay_ns < 0) return bad("topology.link_delay_ns must be >= 0");
  if (t.type == topology_config::kind::leaf_spine) {
    if (t.leaves < 1) return bad("topology.leaves must be >= 1");
    if (t.spines < 1 || t.spines > 256) return bad("topology.spines must be 1..256");
    if (t.hosts % t.leaves != 0) return bad("topology.hosts must be a multiple of topology.leaves");
    if (t.spine_link_gbps < 0) return bad("topology.spine_link_gbps must be >= 0");
    if (t.spine_link_gbps == 0 && !(t.oversubscription > 0)) return bad("topology.oversubscription must be > 0");
  } else if (t.hosts > 65535) {
    return bad("topology.hosts: a single switch has at most 65535 ports");
  }
  const auto& n = c.nic;
  if (c.hpcc_ns3_compat) {
    if (n.mtu_bytes < 1 || n.mtu_bytes > 9000) return bad("nic.mtu_bytes must be 1..9000");
  } else if (n.mtu_bytes < 256 || n.mtu_bytes > 4096) {
    return bad("nic.mtu_bytes must be 256..4096");
  }
  if (n.data_priority > 7) return bad("nic.data_priority must be 0..7");
  if (n.ack_priority < -1 || n.ack_priority > 7) return bad("nic.ack_priority must be -1..7");
  if (n.control_pause_priority < -1 || n.control_pause_priority > 7)
    return bad("nic.control_pause_priority must be -1..7");
  if (n.retransmit_timeout_ns <= 0) return bad("nic.retransmit_timeout_ns must be > 0");
  if (n.ack_every_packets < 1) return bad("nic.ack_every_packets must be >= 1");
  ROCELAB_RETURN_IF_ERROR(n.dcqcn.validate().with_context("nic.dcqcn"));
  ROCELAB_RETURN_IF_ERROR(c.fabric.validate());
  if (c.fabric.link == link_layer::infiniband) {
    if (c.hpcc_ns3_compat) return bad("fabric.link infiniband: the HPCC ns-3 compatibility mode is RoCE only");
    if (!is_ib_mtu(n.mtu_bytes)) return bad("nic.mtu_bytes: an InfiniBand MTU is 256, 512, 1024, 2048 or 4096");
  }
  if (c.fabric.routing == routing_mode::adaptive && c.topology.spines > 256)
    return bad("fabric.routing adaptive: at most 256 uplinks");
  if (c.queue_sample_interval_ns < 0) return bad("queue_sample_interval_ns must be >= 0");
  if (c.stop_ns <= 0) return bad("stop_ns must be > 0");
  for (const auto& e : c.ecn_by_rate)
    if (!(e.gbps > 0)) return bad("ecn_by_rate: gbps must be > 0");
  switch_config probe = c.switch_template;
  if (probe.ports.empty()) probe.ports.emplace_back();
  probe.ports.resize(1);
  probe.ports[0].rate_bps = std::max<std::int64_t>(1, rate_of(t.link_gbps));
  ROCELAB_RETURN_IF_ERROR(fabric::validate(probe).with_context("switch_template"));
  return status::success();
}

result<run_records> run_twin(const twin_config& config, workload& load) {
  engine e(config, load);
  ROCELAB_RETURN_IF_ERROR(e.build());
  return e.run();
}

result<switch_config> switch_config_of(const twin_config& config, std::uint32_t index) {
  struct no_workload final : workload {
    void start(twin_context&) override {}
  } none;
  engine e(config, none);
  ROCELAB_RETURN_IF_ERROR(e.build());
  const switch_config* c = e.built_switch_config(index);
  if (c == nullptr) return status(error_code::invalid_argument, "the twin's fabric has no switch " + std::to_string(index));
  return *c;
}

}  // namespace rocelab::fabric::twin

#pragma once
// The switch data plane: shared-buffer admission (Broadcom/SONiC MMU), PFC, ECN,
// egress scheduling and line-rate serialization. Written once; driven by the twin in
// virtual time and by the soft switch in real time.
//
// Model:
// - One buffer of buffer_bytes counted in cells. Every packet is counted twice, as in
//   Broadcom XGS/TH MMUs: against its ingress priority group (ingress port x priority) and
//   its egress queue (egress port x priority). Each has a reserve, then a share of a pool
//   capped by a dynamic (alpha x free pool) or static threshold. Lossless PGs also own
//   headroom. Ingress pool = buffer - all PG reserves - all lossless headroom; egress
//   pool = buffer - all queue reserves.
// - Admission (store-and-forward: call admit when the last bit has arrived): the reserve
//   first, then shared if pg_shared + cells <= limit, otherwise headroom for a lossless
//   PG (drop reason headroom_exhausted if it does not fit) or a drop (ingress_limit) for
//   a lossy one; then the egress queue's reserve/shared check (egress_limit). Once a PG
//   uses headroom, its later arrivals go to headroom until it drains, keeping the
//   in-flight data together. On release, headroom is freed first, then shared, then the
//   reserve (ns-3 SwitchMmu::RemoveFromIngressAdmission does the same).
// - PFC through link_flow_control (see link_flow_control.hpp); PFC frames leave through
//   a pfc_frame_sink with the time their last bit leaves the port.
// - ECN on the egress queue at enqueue (depth before the packet joins) or at dequeue
//   (depth after it leaves, as the ns-3 switch does); only ECT packets are marked.
// - Scheduling: strict-priority queues first (order per strict_low_index_first), then
//   DWRR among weighted queues (Shreedhar & Varghese 1995). A port sends one frame at a
//   time at rate_bps; time on the wire is tracked in picoseconds so back-to-back frames
//   keep the exact line rate even when a frame's time is not a whole nanosecond.
//
// Per-packet cost: O(1), no hashing; state is in flat arrays indexed port x 8 + priority.
// Each egress queue keeps its descriptors in its own power-of-two ring, so enqueue and
// dequeue walk memory sequentially (a shared linked node pool made every dequeue a
// cache miss on a node written long before); a ring grows by doubling up to the queue's
// peak depth and never shrinks, so a run allocates only while a queue sets a new peak.
// Threading: one thread, the one that drives the clock.
// Errors: create() validates the config; admit/dequeue expect ports and priorities in
// range (checked by assert in debug builds).

#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/clock.hpp"
#include "rocelab/fabric/fifo_ring.hpp"
#include "rocelab/fabric/link_flow_control.hpp"
#include "rocelab/fabric/packet.hpp"
#include "rocelab/fabric/switch_config.hpp"

namespace rocelab::fabric {

// pfc_watchdog: dropped by the PFC watchdog's drop action (switch_config.hpp).
enum class drop_reason : std::uint8_t { none = 0, ingress_limit, egress_limit, headroom_exhausted, pfc_watchdog };
inline constexpr int num_drop_reasons = 5;

struct admission {
  bool accepted = false;
  drop_reason reason = drop_reason::none;
  bool ce_marked = false;  // marked at enqueue by this switch
  bool trimmed = false;    // cut to its header and queued at trim.priority (accepted tells whether that fit)
};

struct departure {
  packet pkt;                 // ecn is CE if marked here (either mode) or upstream
  std::int64_t tx_start_ns;   // first bit on the wire (rounded down)
  std::int64_t tx_end_ns;     // last bit on the wire (rounded up); the next hop's arrival is this + propagation
  // Dropped by the PFC watchdog (drop action) instead of sent: the driver frees the
  // packet and sends nothing; it took no link time (tx_end_ns == tx_start_ns).
  bool discarded = false;
};

// The PFC watchdog of one egress queue (port x lossless priority).
struct watchdog_stats {
  bool stormed = false;                  // in a storm now (its action applies)
  std::uint64_t storms_detected = 0, storms_restored = 0;
  std::uint64_t tx_dropped = 0;          // queued or arriving packets for this queue dropped
  std::uint64_t rx_dropped = 0;          // packets of this priority arriving on the stormed port dropped
  std::int64_t last_detected_ns = -1, last_restored_ns = -1;
  std::int64_t last_xoff_rx_ns = -1;     // the peer's last XOFF for this priority: restoration counts from it
};

// A PFC frame the switch sends out of `port` toward its peer.
struct pfc_frame_out {
  std::uint16_t port = 0;
  std::uint8_t priority = 0;
  std::uint16_t quanta = 0;  // 0: XON
  bool refresh = false;
  std::int64_t decided_ns = 0;  // when the MMU decided
  std::int64_t tx_end_ns = 0;   // last bit leaves the port (after any frame in progress)
};

class pfc_frame_sink {
 public:
  virtual void on_pfc_frame_out(const pfc_frame_out& frame) = 0;
  // The PFC watchdog overrode a pause on `port` (a storm was detected): queued packets
  // there may leave (or be discarded) now; a driver that waits for next_dequeue_time_ns
  // should look again.
  virtual void on_port_ready(std::uint16_t /*port*/, std::int64_t /*now_ns*/) {}

 protected:
  ~pfc_frame_sink() = default;
};

struct queue_stats {
  std::uint64_t enqueued_packets = 0, enqueued_bytes = 0;
  std::uint64_t dequeued_packets = 0, dequeued_bytes = 0;
  std::array<std::uint64_t, num_drop_reasons> dropped_packets{};  // by drop_reason
  std::uint64_t ecn_marked = 0;
  std::uint64_t trimmed_packets = 0;  // arrivals for this queue cut to their header (sent on trim.priority)
  std::uint64_t depth_packets = 0, depth_bytes = 0;
  std::uint64_t watermark_bytes = 0;
  std::int64_t reserve_cells = 0, shared_cells = 0;
};

struct pg_stats {
  std::uint64_t rx_packets = 0, rx_bytes = 0;
  std::array<std::uint64_t, num_drop_reasons> dropped_packets{};
  std::int64_t reserve_cells = 0, shared_cells = 0, headroom_cells = 0;
  std::int64_t shared_watermark_cells = 0, headroom_watermark_cells = 0;
  bool xoff = false;  // the receive side currently tells the peer to stop
  std::uint64_t xoff_sent = 0, xon_sent = 0, refresh_sent = 0;
};

struct port_stats {
  std::uint64_t rx_packets = 0, rx_bytes = 0;
  std::uint64_t tx_packets = 0, tx_bytes = 0;
  std::array<std::uint64_t, num_drop_reasons> dropped_packets{};  // ingress drops by ingress port, egress by egress port
  std::uint64_t pfc_tx_frames = 0, pfc_rx_frames = 0;
};

struct buffer_stats {
  std::int64_t total_cells = 0, used_cells = 0, watermark_cells = 0;
  std::int64_t ingress_pool_cells = 0, ingress_shared_used_cells = 0;
  std::int64_t egress_pool_cells = 0, egress_shared_used_cells = 0;
  std::uint64_t resident_packets = 0;
};

class switch_model final : private control_frame_port, private timer_client {
 public:
  // `clk` and `sink` (may be null) must outlive the model. The model registers timers
  // (PFC refresh) with `clk`, so it is neither copyable nor movable.
  [[nodiscard]] static result<std::unique_ptr<switch_model>> create(const switch_config& cfg, clock& clk,
                                                                    pfc_frame_sink* sink = nullptr);
  // The same with another link-level flow control than PFC (InfiniBand credits): `fc` is
  // built for this config and clock; the switch then sends no PFC frames.
  [[nodiscard]] static result<std::unique_ptr<switch_model>> create(const switch_config& cfg, clock& clk,
                                                                    pfc_frame_sink* sink,
                                                                    std::unique_ptr<link_flow_control> fc);
  switch_model(const switch_model&) = delete;
  switch_model& operator=(const switch_model&) = delete;
  ~switch_model();

  // A packet fully received on pkt.ingress_port at now_ns, to leave by pkt.egress_port.
  // A trimmable packet may be trimmed instead (queue_config::trim_threshold_bytes); the
  // queued descriptor then has the header's size, trim.priority and packet_flag_trimmed.
  admission admit(const packet& pkt, std::int64_t now_ns) {
    if (trimming_ && (pkt.flags & packet_flag_trimmable) != 0) [[unlikely]]
      return admit_trimmable(pkt, now_ns);
    return admit_untrimmed(pkt, now_ns);
  }
  // Starts sending the next frame on `port` if the link is free, a queue is non-empty and
  // its priority is not paused; nullopt otherwise. Frees the packet's buffer.
  std::optional<departure> dequeue(std::uint16_t port, std::int64_t now_ns) {
    // Inline: a driver asks whenever a frame might start, and the port is often still
    // busy or empty.
    const port_state& ps = ports_[port];
    if (ps.nonempty == 0 || now_ns * 1000 < ps.busy_until_ps) return std::nullopt;
    return dequeue_ready(port, now_ns);
  }
  // A PFC frame from the peer on `port`, fully received at now_ns.
  void on_pfc_frame(std::uint16_t port, std::uint8_t class_enable,
                    const std::array<std::uint16_t, num_priorities>& quanta, std::int64_t now_ns);

  // When the port's link is free (end of the frame in progress), rounded up to ns.
  [[nodiscard]] std::int64_t next_transmit_time_ns(std::uint16_t port) const {
    return (ports_[port].busy_until_ps + 999) / 1000;
  }
  // Earliest time a dequeue on `port` can succeed given link, queues and pauses;
  // never_ns when nothing is queued or everything queued is held until XON. Inline for
  // the usual answers (empty, or the end of the frame in progress); paused queues ask
  // the flow control out of line.
  [[nodiscard]] std::int64_t next_dequeue_time_ns(std::uint16_t port, std::int64_t now_ns) const {
    const port_state& ps = ports_[port];
    if (ps.nonempty == 0) return never_ns;
    const std::int64_t link = std::max(now_ns, next_transmit_time_ns(port));
    if ((ps.nonempty & (transmit_mask(port, now_ns) | ps.wd_override)) != 0) return link;
    return next_resume_ns(port, link);
  }
  // Serialization time of a frame of `bytes` on `port` (plus wire overhead), in ps.
  [[nodiscard]] std::int64_t serialization_ps(std::uint16_t port, std::uint32_t bytes) const;

  [[nodiscard]] queue_stats queue(std::uint16_t port, std::uint8_t prio) const;
  [[nodiscard]] pg_stats priority_group(std::uint16_t port, std::uint8_t prio) const;
  [[nodiscard]] port_stats port(std::uint16_t port) const;
  [[nodiscard]] buffer_stats buffer() const;
  [[nodiscard]] watchdog_stats watchdog(std::uint16_t port, std::uint8_t prio) const;
  [[nodiscard]] std::size_t num_ports() const { return ports_.size(); }
  [[nodiscard]] const switch_config& config() const { return cfg_; }
  [[nodiscard]] link_flow_control& flow_control() { return *fc_; }
  // Limits in force now, in cells (for tests and telemetry).
  [[nodiscard]] std::int64_t pg_shared_limit_cells(std::uint16_t port, std::uint8_t prio) const;
  [[nodiscard]] std::int64_t queue_shared_limit_cells(std::uint16_t port, std::uint8_t prio) const;
  [[nodiscard]] std::int64_t cells_of(std::uint32_t bytes) const {
    // Byte accounting (cell 1) and power-of-two cells shift; others divide. This runs
    // twice per packet, and a 64-bit division costs more than the rest of the arithmetic.
    if (cell_shift_ >= 0) return (static_cast<std::int64_t>(bytes) + cell_bytes_ - 1) >> cell_shift_;
    return (bytes + cell_bytes_ - 1) / cell_bytes_;
  }

 private:
  struct threshold_cells {
    buffer_threshold::kind mode = buffer_threshold::kind::dynamic;
    int alpha_log2 = 0;
    std::int64_t fixed_cells = 0;
  };
  // Per-packet state comes first in each struct, so an admission touches one line of its
  // priority group and two of its queue (measured: the twin spends more time waiting for
  // these lines than computing with them); configuration and counters read only by the
  // stats calls follow.
  struct alignas(64) pg_state {
    // in cells
    std::int64_t reserve = 0;
    std::int64_t min_used = 0, shared_used = 0, hdrm_used = 0;
    std::int64_t limit_fixed = 0;  // the shared threshold: see threshold_cells
    std::uint64_t rx_packets = 0, rx_bytes = 0;
    buffer_threshold::kind limit_mode = buffer_threshold::kind::dynamic;
    std::int8_t limit_alpha_log2 = 0;
    bool lossless = false;
    // PFC only: the flow control's XOFF state as of its last report (it changes only
    // when reported to), so reports that cannot change it are skipped (report_pg_if).
    bool xoff = false;
    // The PFC watchdog drops what arrives on this port at this priority: the port's
    // wd_drop bit, copied here so an admission reads no line of its ingress port.
    bool wd_drop_rx = false;
    // second line
    std::int64_t shared_wm = 0, hdrm_wm = 0;
    std::int64_t headroom = 0, xon_fixed = -1, xon_offset = 0;
    std::array<std::uint64_t, num_drop_reasons> dropped{};

    [[nodiscard]] threshold_cells limit() const { return {limit_mode, limit_alpha_log2, limit_fixed}; }
  };
  struct alignas(64) queue_state {
    // Everything a packet reads or writes on enqueue and dequeue is in this first line;
    // the second is read only past Kmin (marking), at a new high (the watermark), for a
    // static limit, and by the stats calls. Hence cells in use are one number (the
    // reserve fills first and empties last, so the split is derived), the counters are
    // of departures only (arrivals are departures plus what is queued), and the
    // watermark is guarded by a lower bound on its distance from the depth.
    // The queued descriptors: 20 bytes of state whose 4 of tail padding the next
    // fields use (no_unique_address).
    [[no_unique_address]] fifo_ring<packet, 64> ring;
    // The shared limit: alpha_log2 of a dynamic threshold (-7..3), or limit_static or
    // limit_unlimited.
    std::int8_t limit_alpha_log2 = 0;
    bool ecn = false;
    // At most watermark_bytes - depth_bytes, and at most wm_slack_max: an arrival no
    // larger cannot raise the watermark.
    std::uint16_t wm_slack = 0;
    std::int32_t reserve = 0;  // cells (validate: below 2^31)
    std::int32_t kmin = 0;     // bytes (validate: below 2 GiB)
    std::int64_t used = 0;     // cells: min(used, reserve) of the reserve, the rest shared
    std::uint64_t depth_bytes = 0;
    // Departures: sent, or discarded by the PFC watchdog's drop action.
    std::uint64_t left_packets = 0, left_bytes = 0;
    // second line
    std::uint64_t watermark_bytes = 0;
    std::uint64_t discarded_packets = 0, discarded_bytes = 0;
    std::int64_t kmax = 0;
    double pmax = 0.0;
    std::int64_t limit_fixed = 0;
    std::int64_t quantum = 0;  // DWRR bytes per turn; 0 = strict
    std::int64_t deficit = 0;
    // third line: drop counters
    std::uint64_t ecn_marked = 0;
    std::array<std::uint64_t, num_drop_reasons> dropped{};
    std::uint64_t trimmed = 0;

    static constexpr std::uint32_t wm_slack_max = UINT16_MAX;
    static constexpr std::int8_t limit_static = 64, limit_unlimited = 65;
    void set_limit(const threshold_cells& t) {
      limit_alpha_log2 = t.mode == buffer_threshold::kind::unlimited ? limit_unlimited
                         : t.mode == buffer_threshold::kind::fixed   ? limit_static
                                                                     : static_cast<std::int8_t>(t.alpha_log2);
      limit_fixed = t.fixed_cells;
    }
    [[nodiscard]] bool unlimited() const { return limit_alpha_log2 == limit_unlimited; }
    [[nodiscard]] threshold_cells limit() const {
      if (limit_alpha_log2 == limit_unlimited) return {buffer_threshold::kind::unlimited, 0, 0};
      if (limit_alpha_log2 == limit_static) return {buffer_threshold::kind::fixed, 0, limit_fixed};
      return {buffer_threshold::kind::dynamic, limit_alpha_log2, 0};
    }
    [[nodiscard]] std::int64_t reserve_used() const { return used < reserve ? used : reserve; }
    [[nodiscard]] std::int64_t shared_used() const { return used - reserve_used(); }
    [[nodiscard]] std::uint64_t sent_packets() const { return left_packets - discarded_packets; }
  };
  static_assert(offsetof(queue_state, watermark_bytes) == 64, "a packet touches the queue's first line only");
  // PFC watchdog state of one egress queue; `stuck_since_ns` >= 0 while it has been held
  // with packets and without a departure since then.
  struct watchdog_state {
    std::int64_t stuck_since_ns = -1;
    std::uint64_t deq_at_stuck = 0;
    watchdog_stats stats;
  };
  struct alignas(64) port_state {
    std::int64_t rate_bps = 0;
    // 8e12 / rate_bps when that is a whole number (every Ethernet rate from 1 Gb/s to
    // 800 Gb/s), so serialization is a multiply; 0 otherwise (a division per frame).
    std::int64_t ps_per_byte = 0;
    std::int64_t busy_until_ps = 0;
    std::uint8_t nonempty = 0;     // bit p: queue p has packets
    std::uint8_t strict_mask = 0;  // bit p: queue p is strict priority
    std::uint8_t dwrr_current = 0;
    bool dwrr_credited = false;
    // bit p: the watchdog overrides the pause of queue p (stormed with drop or forward);
    // bit p of wd_drop: its packets are dropped rather than sent.
    std::uint8_t wd_override = 0, wd_drop = 0;
    // PFC: a pause frame with nonzero quanta arrived since the flow control last said
    // every priority may send; while clear, nothing is paused and the flow control's
    // state (another cache line) is not consulted.
    mutable bool pause_seen = false;
    port_stats stats;
  };

  switch_model(const switch_config& cfg, clock& clk, pfc_frame_sink* sink);
  admission admit_untrimmed(const packet& pkt, std::int64_t now_ns);
  [[gnu::noinline]] admission admit_trimmable(const packet& pkt, std::int64_t now_ns);
  // dequeue once the port is idle and something is queued.
  std::optional<departure> dequeue_ready(std::uint16_t port, std::int64_t now_ns);
  void send_pfc(std::uint16_t port, std::uint8_t prio, std::uint16_t quanta, bool refresh,
                std::int64_t now_ns) override;
  static std::int64_t limit_of(const threshold_cells& t, std::int64_t free_cells) {
    switch (t.mode) {
      case buffer_threshold::kind::dynamic:
        // Broadcom/SONiC dynamic threshold: alpha x free pool, alpha a power of two.
        free_cells = free_cells > 0 ? free_cells : 0;
        return t.alpha_log2 >= 0 ? free_cells << t.alpha_log2 : free_cells >> -t.alpha_log2;
      case buffer_threshold::kind::fixed:
        return t.fixed_cells;
      case buffer_threshold::kind::unlimited:
        break;
    }
    return unlimited_cells;
  }
  static constexpr std::int64_t unlimited_cells = INT64_MAX / 4;
  // Priorities that may start a frame on `port` now. PFC is the usual flow control and
  // its class is final, so the common case is a direct, inlinable call.
  // Whether the marking decision must be drawn for `pkt` in `q` at this point (`here`:
  // the switch marks at this end of the queue): ECN on, an ECN-capable packet, and a
  // depth over Kmin. One branch rather than four: ACKs (not ECT) and data alternate in a
  // queue, so testing ECT on its own mispredicts about every other packet, while the
  // whole condition is rarely true. ecn_decide repeats the Kmin test, so the random draws
  // are the same ones.
  [[nodiscard]] static bool ecn_eligible(const queue_state& q, const packet& pkt, bool here) {
    return static_cast<bool>(static_cast<unsigned>(q.ecn) & static_cast<unsigned>(here) &
                             static_cast<unsigned>(is_ect(pkt.ecn)) &
                             static_cast<unsigned>(static_cast<std::int64_t>(q.depth_bytes) > q.kmin));
  }
  // next_dequeue_time_ns when every queued priority is paused: the earliest resume, not
  // before `link`.
  [[nodiscard]] std::int64_t next_resume_ns(std::uint16_t port, std::int64_t link) const;
  [[nodiscard]] std::uint8_t transmit_mask(std::uint16_t port, std::int64_t now_ns) const {
    if (pfc_ == nullptr) return fc_->transmit_allowed(port, now_ns);
    const port_state& ps = ports_[port];
    if (!ps.pause_seen) return 0xff;
    const std::uint8_t allowed = pfc_->transmit_allowed(port, now_ns);
    if (allowed == 0xff) ps.pause_seen = false;  // every pause ran out or was resumed
    return allowed;
  }
  void report_pg(std::uint16_t port, std::uint8_t prio, std::int64_t now_ns);
  // report_pg when the report can matter: always for credit flow control (every drain
  // returns credits); for PFC only when the PG is in XOFF (XON may be due) or its
  // occupancy reached the XOFF point or headroom (XOFF may be due), which is exactly
  // when pfc_flow_control::on_ingress_occupancy acts.
  // The test is inline (it runs on every lossless enqueue and dequeue and nearly always
  // says no); the report itself is not. GCC inlines neither on its own (admit and
  // dequeue are large), which measured 50 instructions per call in the twin.
  [[gnu::always_inline]] void report_pg_if_needed(std::uint16_t port, std::uint8_t prio, std::int64_t now_ns) {
    const pg_state& pg = pgs_[static_cast<std::size_t>(port) * num_priorities + prio];
    if (pfc_ != nullptr && !pg.xoff && pg.hdrm_used == 0 &&
        pg.shared_used < limit_of(pg.limit(), ingress_pool_ - ingress_shared_used_))
      return;  // below the XOFF point and not paused: on_ingress_occupancy would do nothing
    report_pg_tracked(port, prio, now_ns);
  }
  [[gnu::noinline]] void report_pg_tracked(std::uint16_t port, std::uint8_t prio, std::int64_t now_ns);
  bool ecn_decide(const queue_state& q, std::uint64_t depth_bytes);
  [[gnu::noinline]] static void raise_watermark(queue_state& q);
  int pick_queue(port_state& ps, std::uint8_t eligible, std::uint16_t port);
  double uniform01();
  void on_timer(std::int64_t now_ns, std::uint64_t cookie) override;  // watchdog poll
  void watchdog_poll(std::int64_t now_ns);
  void arm_watchdog(std::int64_t now_ns);

  switch_config cfg_;
  clock& clock_;
  pfc_frame_sink* sink_;
  std::int64_t cell_bytes_ = 1;
  int cell_shift_ = -1;  // log2(cell_bytes_) when a power of two, else -1
  bool trimming_ = false;  // some queue has a trim threshold
  std::vector<std::int64_t> trim_threshold_;  // port x 8 + priority, bytes; 0: off
  std::int64_t total_cells_ = 0, used_cells_ = 0, used_wm_ = 0;
  std::int64_t ingress_pool_ = 0, ingress_shared_used_ = 0;
  std::int64_t egress_pool_ = 0, egress_shared_used_ = 0;
  std::uint64_t resident_ = 0;
  std::uint64_t rng_state_ = 0;
  std::vector<port_state> ports_;
  std::vector<pg_state> pgs_;        // port x 8 + priority
  std::vector<queue_state> queues_;  // port x 8 + priority
  std::vector<watchdog_state> watchdog_;  // port x 8 + priority; empty when disabled
  std::int64_t wd_poll_ns_ = 0;
  timer_id wd_timer_ = no_timer;
  std::unique_ptr<link_flow_control> fc_;
  pfc_flow_control* pfc_ = nullptr;  // fc_ when it is PFC, for its counters
};

}  // namespace rocelab::fabric

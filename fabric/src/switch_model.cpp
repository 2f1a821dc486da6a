#include "rocelab/fabric/switch_model.hpp"

#include "rocelab/fabric/headroom.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <limits>
#include <string>

namespace rocelab::fabric {
namespace {


std::int64_t cells_up(std::int64_t bytes, std::int64_t cell) { return (std::max<std::int64_t>(bytes, 0) + cell - 1) / cell; }

std::size_t idx(std::uint16_t port, std::uint8_t prio) {
  return static_cast<std::size_t>(port) * num_priorities + prio;
}

status check_threshold(const buffer_threshold& t, const std::string& where) {
  if (t.mode == buffer_threshold::kind::dynamic && (t.alpha_log2 < -7 || t.alpha_log2 > 3))
    return {error_code::invalid_argument, where + ": alpha_log2 " + std::to_string(t.alpha_log2) +
                                              " outside -7..3 (alpha 1/128..8, SONiC dynamic_th)"};
  if (t.mode == buffer_threshold::kind::fixed && t.fixed_bytes < 0)
    return {error_code::invalid_argument, where + ": negative static threshold"};
  return status::success();
}

}  // namespace

status validate(const switch_config& cfg) {
  if (cfg.ports.empty()) return {error_code::invalid_argument, "switch has no ports"};
  if (cfg.ports.size() > 0xffff) return {error_code::invalid_argument, "more than 65535 ports"};
  if (cfg.cell_bytes < 1) return {error_code::invalid_argument, "cell_bytes must be >= 1"};
  if (cfg.buffer_bytes < cfg.cell_bytes) return {error_code::invalid_argument, "buffer smaller than one cell"};
  if (cfg.dwrr_quantum_bytes < 1) return {error_code::invalid_argument, "dwrr_quantum_bytes must be >= 1"};
  if (cfg.wire_overhead_bytes < 0) return {error_code::invalid_argument, "negative wire_overhead_bytes"};
  if (cfg.pfc.pause_quanta == 0) return {error_code::invalid_argument, "pfc pause_quanta must be > 0"};
  if (cfg.trim.priority >= num_priorities) return {error_code::invalid_argument, "trim priority must be 0..7"};
  if (cfg.trim.header_bytes == 0) return {error_code::invalid_argument, "trim header_bytes must be > 0"};
  if (const auto& wd = cfg.pfc.watchdog; wd.enabled) {
    if (wd.detection_ns <= 0 || wd.restoration_ns <= 0)
      return {error_code::invalid_argument, "pfc watchdog: detection and restoration times must be > 0"};
    if (wd.poll_ns < 0) return {error_code::invalid_argument, "pfc watchdog: negative poll interval"};
  }
  const std::int64_t total = cfg.buffer_bytes / cfg.cell_bytes;
  std::int64_t ingress_reserved = 0, egress_reserved = 0;
  for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
    const auto& port = cfg.ports[i];
    const std::string where = "port " + std::to_string(i);
    if (port.rate_bps <= 0) return {error_code::invalid_argument, where + ": rate_bps must be > 0"};
    for (int p = 0; p < num_priorities; ++p) {
      const auto& pg = port.pgs[static_cast<std::size_t>(p)];
      const auto& q = port.queues[static_cast<std::size_t>(p)];
      const std::string pgw = where + " pg " + std::to_string(p);
      const std::string qw = where + " queue " + std::to_string(p);
      ROCELAB_RETURN_IF_ERROR(check_threshold(pg.shared, pgw));
      ROCELAB_RETURN_IF_ERROR(check_threshold(q.shared, qw));
      if (pg.reserve_bytes < 0 || pg.headroom_bytes < 0 || pg.xon_offset_bytes < 0)
        return {error_code::invalid_argument, pgw + ": negative size"};
      if (q.reserve_bytes < 0) return {error_code::invalid_argument, qw + ": negative reserve"};
      if (q.trim_threshold_bytes < 0) return {error_code::invalid_argument, qw + ": negative trim_threshold_bytes"};
      // The queue keeps these in 32 bits, so that a packet touches one line of it.
      if (cells_up(q.reserve_bytes, cfg.cell_bytes) > INT32_MAX)
        return {error_code::invalid_argument, qw + ": reserve of 2^31 cells or more"};
      if (q.ecn.enabled && q.ecn.kmin_bytes > INT32_MAX)
        return {error_code::invalid_argument, qw + ": ECN kmin_bytes of 2 GiB or more"};
      if (q.ecn.enabled && (q.ecn.kmin_bytes < 0 || q.ecn.kmax_bytes < q.ecn.kmin_bytes))
        return {error_code::invalid_argument, qw + ": ECN needs 0 <= kmin_bytes <= kmax_bytes"};
      if (q.ecn.enabled && !(q.ecn.pmax >= 0.0 && q.ecn.pmax <= 1.0))
        return {error_code::invalid_argument, qw + ": ECN pmax outside 0..1"};
      ingress_reserved += cells_up(pg.reserve_bytes, cfg.cell_bytes);
      if ((cfg.lossless_priorities >> p) & 1u) ingress_reserved += cells_up(pg.headroom_bytes, cfg.cell_bytes);
      egress_reserved += cells_up(q.reserve_bytes, cfg.cell_bytes);
    }
  }
  if (ingress_reserved > total)
    return {error_code::invalid_argument, "PG reserves plus lossless headroom (" + std::to_string(ingress_reserved) +
                                              " cells) exceed the buffer (" + std::to_string(total) + " cells)"};
  if (egress_reserved > total)
    return {error_code::invalid_argument, "queue reserves (" + std::to_string(egress_reserved) +
                                              " cells) exceed the buffer (" + std::to_string(total) + " cells)"};
  return status::success();
}

const char* to_string(pfc_watchdog_config::action_kind a) noexcept {
  switch (a) {
    case pfc_watchdog_config::action_kind::drop: return "drop";
    case pfc_watchdog_config::action_kind::forward: return "forward";
    case pfc_watchdog_config::action_kind::alert: return "alert";
  }
  return "drop";
}

std::optional<pfc_watchdog_config::action_kind> parse_watchdog_action(std::string_view text) noexcept {
  if (text == "drop") return pfc_watchdog_config::action_kind::drop;
  if (text == "forward") return pfc_watchdog_config::action_kind::forward;
  if (text == "alert") return pfc_watchdog_config::action_kind::alert;
  return std::nullopt;
}

result<std::unique_ptr<switch_model>> switch_model::create(const switch_config& cfg, clock& clk,
                                                           pfc_frame_sink* sink) {
  if (status st = validate(cfg); !st.ok()) return std::move(st).with_context("switch config");
  return std::unique_ptr<switch_model>(new switch_model(cfg, clk, sink));
}

result<std::unique_ptr<switch_model>> switch_model::create(const switch_config& cfg, clock& clk,
                                                           pfc_frame_sink* sink,
                                                           std::unique_ptr<link_flow_control> fc) {
  if (fc == nullptr) return create(cfg, clk, sink);
  auto m = create(cfg, clk, sink);
  if (!m.ok()) return m;
  auto model = std::move(m).value();
  model->pfc_ = nullptr;  // no PFC counters; the PFC object it replaces had no timers yet
  model->fc_ = std::move(fc);
  return model;
}

switch_model::switch_model(const switch_config& cfg, clock& clk, pfc_frame_sink* sink)
    : cfg_(cfg), clock_(clk), sink_(sink), cell_bytes_(cfg.cell_bytes) {
  total_cells_ = cfg.buffer_bytes / cell_bytes_;
  if (std::has_single_bit(static_cast<std::uint64_t>(cell_bytes_))) cell_shift_ = std::countr_zero(static_cast<std::uint64_t>(cell_bytes_));
  const std::size_t n = cfg.ports.size();
  ports_.resize(n);
  pgs_.resize(n * num_priorities);
  queues_.resize(n * num_priorities);
  std::int64_t ingress_reserved = 0, egress_reserved = 0;
  auto to_cells = [&](const buffer_threshold& t) {
    return threshold_cells{t.mode, t.alpha_log2, t.fixed_bytes / cell_bytes_};
  };
  for (std::size_t i = 0; i < n; ++i) {
    const auto& pc = cfg.ports[i];
    ports_[i].rate_bps = pc.rate_bps;
    if (8'000'000'000'000 % pc.rate_bps == 0) ports_[i].ps_per_byte = 8'000'000'000'000 / pc.rate_bps;
    for (std::uint8_t p = 0; p < num_priorities; ++p) {
      pg_state& pg = pgs_[i * num_priorities + p];
      const pg_config& pgc = pc.pgs[p];
      pg.lossless = ((cfg.lossless_priorities >> p) & 1u) != 0;
      pg.reserve = cells_up(pgc.reserve_bytes, cell_bytes_);
      pg.headroom = pg.lossless ? cells_up(pgc.headroom_bytes, cell_bytes_) : 0;
      pg.xon_fixed = pgc.xon_bytes >= 0 ? pgc.xon_bytes / cell_bytes_ : -1;
      pg.xon_offset = cells_up(pgc.xon_offset_bytes, cell_bytes_);
      const threshold_cells pg_limit = to_cells(pgc.shared);
      pg.limit_mode = pg_limit.mode;
      pg.limit_alpha_log2 = static_cast<std::int8_t>(pg_limit.alpha_log2);
      pg.limit_fixed = pg_limit.fixed_cells;
      ingress_reserved += pg.reserve + pg.headroom;

      queue_state& q = queues_[i * num_priorities + p];
      const queue_config& qc = pc.queues[p];
      q.reserve = static_cast<std::int32_t>(cells_up(qc.reserve_bytes, cell_bytes_));
      q.set_limit(to_cells(qc.shared));
      q.ecn = qc.ecn.enabled;
      q.kmin = qc.ecn.enabled ? static_cast<std::int32_t>(qc.ecn.kmin_bytes) : 0;
      q.kmax = qc.ecn.kmax_bytes;
      q.pmax = qc.ecn.pmax;
      q.quantum = static_cast<std::int64_t>(qc.dwrr_weight) * cfg.dwrr_quantum_bytes;
      if (qc.dwrr_weight == 0) ports_[i].strict_mask |= static_cast<std::uint8_t>(1u << p);
      egress_reserved += q.reserve;
      if (qc.trim_threshold_bytes > 0) {
        if (trim_threshold_.empty()) trim_threshold_.assign(n * num_priorities, 0);
        trim_threshold_[i * num_priorities + p] = qc.trim_threshold_bytes;
        trimming_ = true;
      }
    }
  }
  ingress_pool_ = total_cells_ - ingress_reserved;
  egress_pool_ = total_cells_ - egress_reserved;
  rng_state_ = cfg.ecn_seed;
  if (cfg.pfc.watchdog.enabled) {
    watchdog_.resize(n * num_priorities);
    wd_poll_ns_ = cfg.pfc.watchdog.poll_ns > 0 ? cfg.pfc.watchdog.poll_ns
                                               : std::max<std::int64_t>(1, cfg.pfc.watchdog.detection_ns / 4);
  }
  auto pfc = std::make_unique<pfc_flow_control>(cfg, clk, static_cast<control_frame_port&>(*this));
  pfc_ = pfc.get();
  fc_ = std::move(pfc);
}

switch_model::~switch_model() {
  if (wd_timer_ != no_timer) clock_.cancel(wd_timer_);
}

std::int64_t switch_model::pg_shared_limit_cells(std::uint16_t port, std::uint8_t prio) const {
  return limit_of(pgs_[idx(port, prio)].limit(), ingress_pool_ - ingress_shared_used_);
}

std::int64_t switch_model::queue_shared_limit_cells(std::uint16_t port, std::uint8_t prio) const {
  return limit_of(queues_[idx(port, prio)].limit(), egress_pool_ - egress_shared_used_);
}

double switch_model::uniform01() {
  // splitmix64 (Steele, Lea, Flood 2014): one add, three xor-shift-multiplies; the state
  // is a member seeded from the config, so marks are reproducible per seed.
  std::uint64_t z = (rng_state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

// An arrival larger than the slack: the depth may be a new high.
void switch_model::raise_watermark(queue_state& q) {
  q.watermark_bytes = std::max(q.watermark_bytes, q.depth_bytes);
  q.wm_slack = static_cast<std::uint16_t>(
      std::min<std::uint64_t>(q.watermark_bytes - q.depth_bytes, queue_state::wm_slack_max));
}

bool switch_model::ecn_decide(const queue_state& q, std::uint64_t depth_bytes) {
  const auto depth = static_cast<std::int64_t>(depth_bytes);
  if (depth <= q.kmin) return false;
  if (depth > q.kmax) return true;
  const double p = q.pmax * static_cast<double>(depth - q.kmin) / static_cast<double>(q.kmax - q.kmin);
  return uniform01() < p;
}

void switch_model::report_pg(std::uint16_t port, std::uint8_t prio, std::int64_t now_ns) {
  const pg_state& pg = pgs_[idx(port, prio)];
  pg_occupancy occ;
  occ.shared_cells = pg.shared_used;
  occ.headroom_cells = pg.hdrm_used;
  occ.xoff_cells = limit_of(pg.limit(), ingress_pool_ - ingress_shared_used_);
  occ.xon_cells = pg.xon_fixed >= 0 ? pg.xon_fixed : std::max<std::int64_t>(0, occ.xoff_cells - pg.xon_offset);
  fc_->on_ingress_occupancy(port, prio, occ, now_ns);
}

void switch_model::report_pg_tracked(std::uint16_t port, std::uint8_t prio, std::int64_t now_ns) {
  report_pg(port, prio, now_ns);
  if (pfc_ != nullptr) pgs_[idx(port, prio)].xoff = fc_->ingress_stopped(port, prio);
}

// Trimming (UEC 1.0 packet trimming): the threshold is checked against the queue the
// packet would join; a cut packet is admitted as an ordinary small packet of the trim
// class (its own PG and queue accounting), so release on dequeue needs no special case.
admission switch_model::admit_trimmable(const packet& in, std::int64_t now_ns) {
  const std::size_t qi = idx(in.egress_port, in.priority);
  const std::int64_t threshold = trim_threshold_[qi];
  if (threshold <= 0) return admit_untrimmed(in, now_ns);
  const queue_state& q = queues_[qi];
  if (static_cast<std::int64_t>(q.depth_bytes + in.size_bytes) <= threshold) {
    const admission a = admit_untrimmed(in, now_ns);
    if (a.accepted || a.reason == drop_reason::pfc_watchdog) return a;
    // A buffer drop below the threshold becomes a trim too: take back the arrival and
    // the drop the attempt counted, so the counters show one trimmed packet.
    pg_state& pg = pgs_[idx(in.ingress_port, in.priority)];
    --pg.rx_packets;
    pg.rx_bytes -= in.size_bytes;
    const auto r = static_cast<std::size_t>(a.reason);
    if (a.reason == drop_reason::egress_limit) {
      --ports_[in.egress_port].stats.dropped_packets[r];
      --queues_[qi].dropped[r];
    } else {
      --ports_[in.ingress_port].stats.dropped_packets[r];
      --pg.dropped[r];
    }
  }
  packet cut = in;
  cut.size_bytes = std::min(in.size_bytes, cfg_.trim.header_bytes);
  cut.priority = cfg_.trim.priority;
  cut.flags = static_cast<std::uint8_t>((in.flags & ~packet_flag_trimmable) | packet_flag_trimmed);
  ++queues_[qi].trimmed;
  admission a = admit_untrimmed(cut, now_ns);
  a.trimmed = true;
  return a;
}

admission switch_model::admit_untrimmed(const packet& in, std::int64_t now_ns) {
  assert(in.ingress_port < ports_.size() && in.egress_port < ports_.size() && in.priority < num_priorities);
  const std::int64_t cells = cells_of(in.size_bytes);
  pg_state& pg = pgs_[idx(in.ingress_port, in.priority)];
  queue_state& q = queues_[idx(in.egress_port, in.priority)];
  // The ingress port's own line is left alone on the usual path: its receive counters are
  // the sums of its PGs' (port()), and its watchdog drop bit is mirrored in the PG.
  port_state& inp = ports_[in.ingress_port];
  ++pg.rx_packets;
  pg.rx_bytes += in.size_bytes;

  const auto prio_bit = static_cast<std::uint8_t>(1u << in.priority);
  if ((static_cast<unsigned>(pg.wd_drop_rx) | (ports_[in.egress_port].wd_drop & prio_bit)) != 0) [[unlikely]] {
    // The PFC watchdog's drop action: toward a stormed queue, or in from a stormed port.
    admission res;
    res.reason = drop_reason::pfc_watchdog;
    constexpr auto r = static_cast<std::size_t>(drop_reason::pfc_watchdog);
    if ((ports_[in.egress_port].wd_drop & prio_bit) != 0) {
      ++ports_[in.egress_port].stats.dropped_packets[r];
      ++q.dropped[r];
      ++watchdog_[idx(in.egress_port, in.priority)].stats.tx_dropped;
    } else {
      ++inp.stats.dropped_packets[r];
      ++pg.dropped[r];
      ++watchdog_[idx(in.ingress_port, in.priority)].stats.rx_dropped;
    }
    return res;
  }
  // By value, not by reference to `res`: a captured result lives on the stack, and
  // reading it back as one word after byte stores stalls the return of every admission.
  auto drop = [&q, &pg](drop_reason why, port_state& where) {
    admission res;
    res.reason = why;
    ++where.stats.dropped_packets[static_cast<std::size_t>(why)];
    if (why == drop_reason::egress_limit)
      ++q.dropped[static_cast<std::size_t>(why)];
    else
      ++pg.dropped[static_cast<std::size_t>(why)];
    return res;
  };

  // Ingress: reserve, then shared under the PG's threshold, then headroom (lossless).
  const std::int64_t to_min = std::min(cells, std::max<std::int64_t>(0, pg.reserve - pg.min_used));
  const std::int64_t rest = cells - to_min;
  std::int64_t to_shared = 0, to_hdrm = 0;
  if (rest > 0) {
    bool headroom = pg.lossless && pg.hdrm_used > 0;
    if (!headroom) {
      const std::int64_t limit = limit_of(pg.limit(), ingress_pool_ - ingress_shared_used_);
      if (pg.shared_used + rest <= limit && ingress_shared_used_ + rest <= ingress_pool_)
        to_shared = rest;
      else if (pg.lossless)
        headroom = true;
      else
        return drop(drop_reason::ingress_limit, inp);
    }
    if (headroom) {
      if (pg.hdrm_used + rest > pg.headroom) return drop(drop_reason::headroom_exhausted, inp);
      to_hdrm = rest;
    }
  }
  // Egress: reserve, then shared under the queue's threshold.
  const std::int64_t q_reserve_used = q.reserve_used();
  const std::int64_t q_to_min = std::min<std::int64_t>(cells, q.reserve - q_reserve_used);
  const std::int64_t q_rest = cells - q_to_min;
  if (q_rest > 0 && !q.unlimited()) {
    const std::int64_t limit = limit_of(q.limit(), egress_pool_ - egress_shared_used_);
    if (q.used - q_reserve_used + q_rest > limit || egress_shared_used_ + q_rest > egress_pool_)
      return drop(drop_reason::egress_limit, ports_[in.egress_port]);
  }

  // Commit.
  pg.min_used += to_min;
  pg.shared_used += to_shared;
  pg.hdrm_used += to_hdrm;
  ingress_shared_used_ += to_shared;
  // Watermarks move only when the shared or headroom use grew (their second line).
  if (to_shared > 0) pg.shared_wm = std::max(pg.shared_wm, pg.shared_used);
  if (to_hdrm > 0) pg.hdrm_wm = std::max(pg.hdrm_wm, pg.hdrm_used);
  q.used += cells;
  egress_shared_used_ += q_rest;
  used_cells_ += cells;
  used_wm_ = std::max(used_wm_, used_cells_);
  ++resident_;

  // The descriptor goes straight into its slot: a copy on the stack first, read back
  // whole right after the driver stored its fields one by one, stalls on store-to-load
  // forwarding.
  const bool ce_marked = ecn_eligible(q, in, !cfg_.ecn_mark_on_dequeue) && ecn_decide(q, q.depth_bytes);
  packet& slot = q.ring.append();
  slot = in;
  if (ce_marked) {
    slot.ecn = ecn_codepoint::ce;
    ++q.ecn_marked;
  }
  q.depth_bytes += in.size_bytes;
  if (in.size_bytes <= q.wm_slack) [[likely]]
    q.wm_slack = static_cast<std::uint16_t>(q.wm_slack - in.size_bytes);
  else
    raise_watermark(q);
  ports_[in.egress_port].nonempty |= static_cast<std::uint8_t>(1u << in.priority);

  if (pg.lossless) report_pg_if_needed(in.ingress_port, in.priority, now_ns);
  return admission{true, drop_reason::none, ce_marked};
}

int switch_model::pick_queue(port_state& ps, std::uint8_t eligible, std::uint16_t port) {
  const std::uint8_t strict = eligible & ps.strict_mask;
  if (strict != 0) {
    return cfg_.strict_low_index_first ? std::countr_zero(strict) : 7 - std::countl_zero(strict);
  }
  // Deficit round robin over the weighted queues: each visit credits one quantum; a queue
  // is served while its deficit covers its head packet. Terminates because every visit
  // to an eligible queue adds a positive quantum.
  for (;;) {
    const std::uint8_t p = ps.dwrr_current;
    queue_state& q = queues_[idx(port, p)];
    if ((eligible >> p) & 1u) {
      const std::int64_t head = q.ring.front().size_bytes;
      if (q.deficit >= head) {
        q.deficit -= head;
        return p;
      }
      if (!ps.dwrr_credited) {
        q.deficit += q.quantum;
        ps.dwrr_credited = true;
        continue;
      }
    } else if (q.ring.empty()) {
      q.deficit = 0;  // DRR: an empty queue keeps no credit
    }
    ps.dwrr_current = static_cast<std::uint8_t>((p + 1) % num_priorities);
    ps.dwrr_credited = false;
  }
}

std::optional<departure> switch_model::dequeue_ready(std::uint16_t port, std::int64_t now_ns) {
  assert(port < ports_.size());
  port_state& ps = ports_[port];
  const std::int64_t now_ps = now_ns * 1000;
  const std::uint8_t eligible = ps.nonempty & (transmit_mask(port, now_ns) | ps.wd_override);
  if (eligible == 0) return std::nullopt;
  const int p = pick_queue(ps, eligible, port);
  queue_state& q = queues_[idx(port, static_cast<std::uint8_t>(p))];

  packet pkt = q.ring.pop_front();
  if (q.ring.empty()) ps.nonempty &= static_cast<std::uint8_t>(~(1u << p));
  q.depth_bytes -= pkt.size_bytes;
  q.wm_slack = static_cast<std::uint16_t>(std::min(q.wm_slack + pkt.size_bytes, queue_state::wm_slack_max));
  ++q.left_packets;
  q.left_bytes += pkt.size_bytes;

  // Release: egress shared before reserve; ingress headroom, then shared, then reserve.
  const std::int64_t cells = cells_of(pkt.size_bytes);
  egress_shared_used_ -= std::min(cells, q.shared_used());
  q.used -= cells;
  pg_state& pg = pgs_[idx(pkt.ingress_port, pkt.priority)];
  const std::int64_t from_h = std::min(cells, pg.hdrm_used);
  pg.hdrm_used -= from_h;
  const std::int64_t from_s = std::min(cells - from_h, pg.shared_used);
  pg.shared_used -= from_s;
  ingress_shared_used_ -= from_s;
  pg.min_used -= cells - from_h - from_s;
  used_cells_ -= cells;
  --resident_;
  assert(q.used >= 0 && pg.min_used >= 0);

  if (((ps.wd_drop >> p) & 1u) != 0) [[unlikely]] {
    // A stormed queue under the drop action: freed without using the link.
    constexpr auto r = static_cast<std::size_t>(drop_reason::pfc_watchdog);
    ++q.dropped[r];
    ++q.discarded_packets;
    q.discarded_bytes += pkt.size_bytes;
    ++ps.stats.dropped_packets[r];
    ++watchdog_[idx(port, static_cast<std::uint8_t>(p))].stats.tx_dropped;
    if (pg.lossless) report_pg_if_needed(pkt.ingress_port, pkt.priority, now_ns);
    return departure{pkt, now_ns, now_ns, true};
  }

  if (ecn_eligible(q, pkt, cfg_.ecn_mark_on_dequeue) && ecn_decide(q, q.depth_bytes)) {
    pkt.ecn = ecn_codepoint::ce;
    ++q.ecn_marked;
  }

  // Back to back: a dequeue at the rounded-up end of the previous frame continues from
  // its exact picosecond end, so rounding never stretches the line rate.
  const std::int64_t start_ps = (now_ps - ps.busy_until_ps < 1000) ? ps.busy_until_ps : now_ps;
  ps.busy_until_ps = start_ps + serialization_ps(port, pkt.size_bytes);
  ++ps.stats.tx_packets;
  ps.stats.tx_bytes += pkt.size_bytes;
  if (pfc_ == nullptr) fc_->on_transmit(port, pkt.priority, pkt.size_bytes, now_ns);  // credits; PFC has none
  if (pg.lossless) report_pg_if_needed(pkt.ingress_port, pkt.priority, now_ns);
  return departure{pkt, start_ps / 1000, (ps.busy_until_ps + 999) / 1000};
}

std::int64_t switch_model::serialization_ps(std::uint16_t port, std::uint32_t bytes) const {
  // Fits 64 bits for any frame below 1 MB (8e6 bits x 1e12 < 9.2e18).
  const std::int64_t bits = (static_cast<std::int64_t>(bytes) + cfg_.wire_overhead_bytes) * 8;
  const port_state& ps = ports_[port];
  if (ps.ps_per_byte != 0) {  // exact: 8e12 / rate is whole
    const std::int64_t exact = bits / 8 * ps.ps_per_byte;
    return cfg_.frame_time_whole_ns ? exact / 1000 * 1000 : exact;
  }
  if (cfg_.frame_time_whole_ns) return bits * 1'000'000'000 / ps.rate_bps * 1000;
  return (bits * 1'000'000'000'000 + ps.rate_bps - 1) / ps.rate_bps;
}

void switch_model::send_pfc(std::uint16_t port, std::uint8_t prio, std::uint16_t quanta, bool refresh,
                            std::int64_t now_ns) {
  port_state& ps = ports_[port];
  // A MAC control frame waits for the frame in progress (it cannot preempt it) and goes
  // ahead of queued data; it occupies the link for its own serialization time.
  const std::int64_t start_ps = std::max(now_ns * 1000, ps.busy_until_ps);
  ps.busy_until_ps = start_ps + serialization_ps(port, static_cast<std::uint32_t>(pfc_frame_bytes));
  ++ps.stats.pfc_tx_frames;
  if (sink_ != nullptr) {
    pfc_frame_out f;
    f.port = port;
    f.priority = prio;
    f.quanta = quanta;
    f.refresh = refresh;
    f.decided_ns = now_ns;
    f.tx_end_ns = (ps.busy_until_ps + 999) / 1000;
    sink_->on_pfc_frame_out(f);
  }
}

void switch_model::on_pfc_frame(std::uint16_t port, std::uint8_t class_enable,
                                const std::array<std::uint16_t, num_priorities>& quanta, std::int64_t now_ns) {
  ++ports_[port].stats.pfc_rx_frames;
  ports_[port].pause_seen = true;  // transmit_mask asks the flow control until it is over
  fc_->on_pfc_frame(port, class_enable, quanta, now_ns);
  if (watchdog_.empty()) return;
  bool xoff = false;
  for (std::uint8_t p = 0; p < num_priorities; ++p)
    if (((class_enable >> p) & 1u) != 0 && quanta[p] != 0 && ((cfg_.lossless_priorities >> p) & 1u) != 0) {
      watchdog_[idx(port, p)].stats.last_xoff_rx_ns = now_ns;
      xoff = true;
    }
  if (xoff) arm_watchdog(now_ns);
}

// The watchdog polls only while some lossless queue is held or stormed, so a quiet
// switch schedules nothing (the twin ends when its events run out).
void switch_model::arm_watchdog(std::int64_t now_ns) {
  if (wd_timer_ == no_timer) wd_timer_ = clock_.schedule(now_ns + wd_poll_ns_, *this, 0);
}

void switch_model::on_timer(std::int64_t now_ns, std::uint64_t) {
  wd_timer_ = no_timer;
  watchdog_poll(now_ns);
}

void switch_model::watchdog_poll(std::int64_t now_ns) {
  const auto& wd = cfg_.pfc.watchdog;
  bool active = false;
  // The drop action's state is the port's wd_drop bit (egress: dequeue and admission
  // toward the queue) and its copy in the PG (ingress: admission from the port); they
  // change only here, together.
  auto set_drop = [this](port_state& ps, std::uint16_t port, std::uint8_t p, bool on) {
    const auto bit = static_cast<std::uint8_t>(1u << p);
    ps.wd_drop = static_cast<std::uint8_t>(on ? ps.wd_drop | bit : ps.wd_drop & ~bit);
    pgs_[idx(port, p)].wd_drop_rx = on;
  };
  for (std::uint16_t port = 0; port < ports_.size(); ++port) {
    port_state& ps = ports_[port];
    const std::uint8_t allowed = transmit_mask(port, now_ns);
    for (std::uint8_t p = 0; p < num_priorities; ++p) {
      if (((cfg_.lossless_priorities >> p) & 1u) == 0) continue;
      watchdog_state& w = watchdog_[idx(port, p)];
      const queue_state& q = queues_[idx(port, p)];
      const auto bit = static_cast<std::uint8_t>(1u << p);
      if (w.stats.stormed) {
        if (now_ns - w.stats.last_xoff_rx_ns >= wd.restoration_ns) {
          w.stats.stormed = false;
          ++w.stats.storms_restored;
          w.stats.last_restored_ns = now_ns;
          w.stuck_since_ns = -1;
          ps.wd_override &= static_cast<std::uint8_t>(~bit);
          set_drop(ps, port, p, false);
        } else {
          active = true;
        }
        continue;
      }
      const bool held = (allowed & bit) == 0;
      if (!held || q.ring.empty()) {
        w.stuck_since_ns = -1;
        active = active || held;  // held but empty: watch for packets arriving
        continue;
      }
      active = true;
      if (w.stuck_since_ns < 0 || q.sent_packets() != w.deq_at_stuck) {
        w.stuck_since_ns = now_ns;
        w.deq_at_stuck = q.sent_packets();
      } else if (now_ns - w.stuck_since_ns >= wd.detection_ns) {
        w.stats.stormed = true;
        ++w.stats.storms_detected;
        w.stats.last_detected_ns = now_ns;
        using action = pfc_watchdog_config::action_kind;
        if (wd.action != action::alert) ps.wd_override |= bit;
        if (wd.action == action::drop) set_drop(ps, port, p, true);
        if (wd.action != action::alert && sink_ != nullptr) sink_->on_port_ready(port, now_ns);
      }
    }
  }
  if (active) arm_watchdog(now_ns);
}

watchdog_stats switch_model::watchdog(std::uint16_t port, std::uint8_t prio) const {
  return watchdog_.empty() ? watchdog_stats{} : watchdog_[idx(port, prio)].stats;
}

std::int64_t switch_model::next_resume_ns(std::uint16_t port, std::int64_t link) const {
  const port_state& ps = ports_[port];
  std::int64_t resume = never_ns;
  for (std::uint8_t p = 0; p < num_priorities; ++p)
    if ((ps.nonempty >> p) & 1u) resume = std::min(resume, fc_->resume_ns(port, p));
  return resume == never_ns ? never_ns : std::max(link, resume);
}

// A port's receive counters are kept per priority group only (an admission then touches
// no line of its ingress port); its stats.rx_* stay 0 and are summed here.
port_stats switch_model::port(std::uint16_t port) const {
  port_stats s = ports_[port].stats;
  for (std::uint8_t p = 0; p < num_priorities; ++p) {
    const pg_state& pg = pgs_[idx(port, p)];
    s.rx_packets += pg.rx_packets;
    s.rx_bytes += pg.rx_bytes;
  }
  return s;
}

queue_stats switch_model::queue(std::uint16_t port, std::uint8_t prio) const {
  const queue_state& q = queues_[idx(port, prio)];
  queue_stats s;
  // Arrivals are what left plus what is queued; what was sent is what left less the
  // watchdog's discards.
  s.enqueued_packets = q.left_packets + q.ring.size();
  s.enqueued_bytes = q.left_bytes + q.depth_bytes;
  s.dequeued_packets = q.sent_packets();
  s.dequeued_bytes = q.left_bytes - q.discarded_bytes;
  s.dropped_packets = q.dropped;
  s.ecn_marked = q.ecn_marked;
  s.trimmed_packets = q.trimmed;
  s.depth_packets = q.ring.size();
  s.depth_bytes = q.depth_bytes;
  s.watermark_bytes = q.watermark_bytes;
  s.reserve_cells = q.reserve_used();
  s.shared_cells = q.shared_used();
  return s;
}

pg_stats switch_model::priority_group(std::uint16_t port, std::uint8_t prio) const {
  const pg_state& pg = pgs_[idx(port, prio)];
  pg_stats s;
  s.rx_packets = pg.rx_packets;
  s.rx_bytes = pg.rx_bytes;
  s.dropped_packets = pg.dropped;
  s.reserve_cells = pg.min_used;
  s.shared_cells = pg.shared_used;
  s.headroom_cells = pg.hdrm_used;
  s.shared_watermark_cells = pg.shared_wm;
  s.headroom_watermark_cells = pg.hdrm_wm;
  s.xoff = fc_->ingress_stopped(port, prio);
  if (pfc_ != nullptr) {
    const auto& c = pfc_->counters(port, prio);
    s.xoff_sent = c.xoff_sent;
    s.xon_sent = c.xon_sent;
    s.refresh_sent = c.refresh_sent;
  }
  return s;
}

buffer_stats switch_model::buffer() const {
  buffer_stats s;
  s.total_cells = total_cells_;
  s.used_cells = used_cells_;
  s.watermark_cells = used_wm_;
  s.ingress_pool_cells = ingress_pool_;
  s.ingress_shared_used_cells = ingress_shared_used_;
  s.egress_pool_cells = egress_pool_;
  s.egress_shared_used_cells = egress_shared_used_;
  s.resident_packets = resident_;
  return s;
}

}  // namespace rocelab::fabric

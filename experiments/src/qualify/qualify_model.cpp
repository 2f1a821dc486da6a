#include "rocelab/experiments/qualify/qualify_model.hpp"

#include <algorithm>
#include <array>

namespace rocelab::experiments {
namespace {

constexpr std::array<std::uint16_t, fabric::num_priorities> quanta_of(std::uint16_t q) {
  return {q, q, q, q, q, q, q, q};
}

}  // namespace

model_switch_under_test::model_switch_under_test(std::int64_t refresh_ns) : refresh_ns_(std::max<std::int64_t>(1, refresh_ns)) {}

model_switch_under_test::~model_switch_under_test() {
  model_.reset();  // cancels its timers before the clock goes
  clock_.reset();
}

std::string model_switch_under_test::describe() const {
  return "the fabric switch model (virtual time)" +
         (model_ ? ", " + std::to_string(model_->num_ports()) + " ports" : std::string());
}

std::int64_t model_switch_under_test::now_ns() const { return clock_ ? clock_->now_ns() : start_ns_; }

status model_switch_under_test::configure(const fabric::switch_config& cfg) {
  if (clock_) start_ns_ = clock_->now_ns();
  model_.reset();
  clock_ = std::make_unique<fabric::virtual_clock>(start_ns_);
  auto m = fabric::switch_model::create(cfg, *clock_);
  if (!m) return m.error().with_context("configuring the switch model");
  model_ = std::move(*m);
  const std::size_t n = cfg.ports.size();
  held_.assign(n, 0);
  stormed_.assign(n, 0);
  budget_.assign(n, -1);
  budget_prio_.assign(n, 0);
  next_refresh_ns_ = start_ns_ + refresh_ns_;
  configured_ = true;
  return status::success();
}

status model_switch_under_test::check_port(std::uint16_t port, std::uint8_t priority) const {
  if (!model_) return status(error_code::invalid_argument, "the switch model is not configured");
  if (port >= model_->num_ports())
    return status(error_code::invalid_argument,
                  "port " + std::to_string(port) + " outside the switch's " + std::to_string(model_->num_ports()));
  if (priority >= fabric::num_priorities)
    return status(error_code::invalid_argument, "priority " + std::to_string(priority) + " outside 0..7");
  return status::success();
}

void model_switch_under_test::pause_from_peer(std::uint16_t port, std::uint8_t mask, bool xoff) {
  model_->on_pfc_frame(port, mask, quanta_of(xoff ? 0xffff : 0), clock_->now_ns());
}

void model_switch_under_test::dequeue_due() {
  const std::int64_t now = clock_->now_ns();
  for (std::uint16_t p = 0; p < model_->num_ports(); ++p) {
    while (model_->next_dequeue_time_ns(p, now) <= now) {
      auto d = model_->dequeue(p, now);
      if (!d) break;
      if (budget_[p] > 0 && !d->discarded && d->pkt.priority == budget_prio_[p] && --budget_[p] == 0) {
        // release() let its packets go: the peer pauses again at once.
        pause_from_peer(p, static_cast<std::uint8_t>(1u << budget_prio_[p]), true);
        budget_[p] = -1;
      }
    }
  }
}

void model_switch_under_test::advance_to(std::int64_t t) {
  for (;;) {
    dequeue_due();
    const std::int64_t now = clock_->now_ns();
    if (now >= t) break;
    std::int64_t next = std::min({t, next_refresh_ns_, clock_->next_event_ns()});
    for (std::uint16_t p = 0; p < model_->num_ports(); ++p) next = std::min(next, model_->next_dequeue_time_ns(p, now));
    // Whatever was due now has been done; never stand still.
    clock_->run_until(std::max(next, now + 1));
    if (clock_->now_ns() >= next_refresh_ns_) {
      // Peers that hold or storm repeat their XOFF, well inside one pause.
      // A port inside release() stays open for its priority until its budget is spent.
      for (std::uint16_t p = 0; p < model_->num_ports(); ++p) {
        std::uint8_t mask = held_[p];
        if (budget_[p] > 0) mask &= static_cast<std::uint8_t>(~(1u << budget_prio_[p]));
        mask |= stormed_[p];
        if (mask != 0) pause_from_peer(p, mask, true);
      }
      next_refresh_ns_ = clock_->now_ns() + refresh_ns_;
    }
  }
}

status model_switch_under_test::hold(std::uint16_t port, std::uint8_t priority) {
  ROCELAB_RETURN_IF_ERROR(check_port(port, priority));
  held_[port] |= static_cast<std::uint8_t>(1u << priority);
  pause_from_peer(port, static_cast<std::uint8_t>(1u << priority), true);
  return status::success();
}

status model_switch_under_test::resume(std::uint16_t port, std::uint8_t priority) {
  ROCELAB_RETURN_IF_ERROR(check_port(port, priority));
  const auto bit = static_cast<std::uint8_t>(1u << priority);
  held_[port] &= static_cast<std::uint8_t>(~bit);
  if ((stormed_[port] & bit) == 0) pause_from_peer(port, bit, false);
  // Drain: everything queued leaves at line rate (bounded by the packets resident).
  const std::uint64_t bound = model_->buffer().resident_packets + 2;
  for (std::uint64_t k = 0; k < bound && model_->queue(port, priority).depth_packets > 0; ++k) {
    const std::int64_t t = model_->next_dequeue_time_ns(port, clock_->now_ns());
    if (t == fabric::never_ns) break;
    advance_to(std::max(t, clock_->now_ns()));
  }
  if (model_->queue(port, priority).depth_packets > 0)
    return status(error_code::internal, "port " + std::to_string(port) + " priority " + std::to_string(priority) +
                                            " did not drain after XON");
  return status::success();
}

result<std::uint32_t> model_switch_under_test::release(std::uint16_t port, std::uint8_t priority,
                                                       std::uint32_t packets) {
  ROCELAB_RETURN_IF_ERROR(check_port(port, priority));
  const auto before = model_->queue(port, priority).dequeued_packets;
  if (packets == 0) return 0u;
  budget_[port] = packets;
  budget_prio_[port] = priority;
  pause_from_peer(port, static_cast<std::uint8_t>(1u << priority), false);
  for (std::uint32_t k = 0; k < packets + 2 && budget_[port] > 0; ++k) {
    const std::int64_t t = model_->next_dequeue_time_ns(port, clock_->now_ns());
    if (t == fabric::never_ns) break;
    advance_to(std::max(t, clock_->now_ns()));
  }
  if (budget_[port] > 0) {  // the queue ran dry first
    budget_[port] = -1;
    if ((held_[port] >> priority) & 1u) pause_from_peer(port, static_cast<std::uint8_t>(1u << priority), true);
  }
  return static_cast<std::uint32_t>(model_->queue(port, priority).dequeued_packets - before);
}

result<std::uint32_t> model_switch_under_test::send(const probe_frames& f) {
  ROCELAB_RETURN_IF_ERROR(check_port(f.src, f.priority));
  ROCELAB_RETURN_IF_ERROR(check_port(f.dst, f.priority));
  fabric::packet p;
  p.ingress_port = f.src;
  p.egress_port = f.dst;
  p.priority = f.priority;
  p.size_bytes = f.bytes;
  p.ecn = f.ect ? fabric::ecn_codepoint::ect0 : fabric::ecn_codepoint::not_ect;
  // One frame per serialization time of the source port: the line rate of the sender.
  const std::int64_t gap_ps = model_->serialization_ps(f.src, f.bytes);
  std::int64_t at_ps = clock_->now_ns() * 1000;
  for (std::uint32_t i = 0; i < f.count; ++i) {
    at_ps += gap_ps;
    advance_to((at_ps + 999) / 1000);
    p.flow_id = i;
    (void)model_->admit(p, clock_->now_ns());
  }
  dequeue_due();
  return f.count;  // the model receives every frame it is given
}

result<probe_counters> model_switch_under_test::read(std::uint16_t src, std::uint16_t dst, std::uint8_t priority) {
  ROCELAB_RETURN_IF_ERROR(check_port(src, priority));
  ROCELAB_RETURN_IF_ERROR(check_port(dst, priority));
  const auto cell = model_->config().cell_bytes;
  const fabric::pg_stats pg = model_->priority_group(src, priority);
  const fabric::queue_stats q = model_->queue(dst, priority);
  const fabric::watchdog_stats wd = model_->watchdog(dst, priority);
  probe_counters c;
  c.pg_xoff_sent = pg.xoff_sent;
  c.pg_xon_sent = pg.xon_sent;
  for (auto d : pg.dropped_packets) c.pg_dropped += d;
  c.pg_used_bytes = (pg.reserve_cells + pg.shared_cells + pg.headroom_cells) * cell;
  c.pg_headroom_bytes = pg.headroom_cells * cell;
  for (auto d : q.dropped_packets) c.queue_dropped += d;
  c.queue_ecn_marked = q.ecn_marked;
  c.queue_tx_packets = q.dequeued_packets;  // sent; the watchdog's discards are counted as drops
  c.queue_depth_bytes = static_cast<std::int64_t>(q.depth_bytes);
  c.wd_storms_detected = wd.storms_detected;
  c.wd_storms_restored = wd.storms_restored;
  c.wd_dropped = wd.tx_dropped + wd.rx_dropped;
  c.wd_stormed = wd.stormed;
  c.wd_last_xoff_rx_ns = wd.last_xoff_rx_ns;  // virtual time
  c.wd_last_restored_ns = wd.last_restored_ns;
  return c;
}

status model_switch_under_test::storm(std::uint16_t port, std::uint8_t priority, bool on) {
  ROCELAB_RETURN_IF_ERROR(check_port(port, priority));
  const auto bit = static_cast<std::uint8_t>(1u << priority);
  if (on) {
    stormed_[port] |= bit;
    pause_from_peer(port, bit, true);
  } else {
    stormed_[port] &= static_cast<std::uint8_t>(~bit);  // a storm just stops; its last pause runs out
  }
  return status::success();
}

status model_switch_under_test::wait(std::int64_t ns) {
  if (!model_) return status(error_code::invalid_argument, "the switch model is not configured");
  advance_to(clock_->now_ns() + std::max<std::int64_t>(0, ns));
  return status::success();
}

status model_switch_under_test::restore() {
  // Nothing outside this object was changed; drop the model and its state.
  if (clock_) start_ns_ = clock_->now_ns();
  model_.reset();
  clock_.reset();
  configured_ = false;
  return status::success();
}

}  // namespace rocelab::experiments

// The twin engine's links and switch ports: frames on the wire (FIFO per link, only the
// head in the event queue), switch ingress and routing, port scheduling, PFC frames and
// the pause intervals they cause (802.1Qbb), and InfiniBand link-level credits and FECN
// marking (IBA 7.9.4, annex A10).

#include "engine.hpp"

namespace rocelab::fabric::twin::engine_impl {

void switch_sink::on_pfc_frame_out(const pfc_frame_out& f) { e_.on_switch_pfc(sw_, f); }
void switch_sink::on_port_ready(std::uint16_t port, std::int64_t) { e_.on_switch_port_ready(sw_, port); }

void engine::push_wire(std::uint32_t ch, std::int64_t at_ns, const packet& p) {
  channel& c = channels_[ch];
  const bool was_empty = c.wire.empty();
  c.wire.push_back(inflight{at_ns, p});
  c.last_at_ns = at_ns;
  if (was_empty) q_.push(at_ns, ev_channel, ch);
}

void engine::on_channel(std::uint32_t ch) {
  channel& c = channels_[ch];
  if (frame_loss_rate_ > 0) [[unlikely]] {
    const pkt_type kind = type_of(c.wire.front().pkt.cookie);
    if (kind != pkt_type::pfc && kind != pkt_type::credit && frame_lost(ch)) {
      if (llr_) {
        replay_head(ch);
        return;
      }
      (void)c.wire.pop_front();  // never arrives; the transport finds out by NACK or timeout
      if (!c.wire.empty()) q_.push(c.wire.front().at_ns, ev_channel, ch);
      return;
    }
  }
  const inflight f = c.wire.pop_front();
  if (!c.wire.empty()) {
    if (llr_) [[unlikely]] {
      // Frames sent after a replayed one arrive after it, each a serialization apart
      // (the receiver takes link sequence numbers in order only, so the sender replays
      // from the lost frame on).
      inflight& next = c.wire.front();
      if (next.at_ns < now_) next.at_ns = now_ + ceil_div(frame_ps(next.pkt.size_bytes, channel_rate_bps(ch)), 1000);
    }
    q_.push(c.wire.front().at_ns, ev_channel, ch);
  }
  if (type_of(f.pkt.cookie) == pkt_type::pfc) {
    on_pfc_at(ch, f.pkt);
    return;
  }
  if (type_of(f.pkt.cookie) == pkt_type::credit) {
    on_credit_at(ch, f.pkt);
    return;
  }
  if (credits_ && c.to_switch < 0) {
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

std::int64_t engine::channel_rate_bps(std::uint32_t ch) const {
  if (ch < port_owner_.size())
    return switches_[port_owner_[ch].first].model->config().ports[port_owner_[ch].second].rate_bps;
  return hosts_[ch - port_owner_.size()].rate_bps;
}

// One uniform draw per frame from the link's own stream (the run's seed, the channel and
// the draw's position), so a run repeats exactly and links do not share draws.
bool engine::frame_lost(std::uint32_t ch) {
  link_loss_state& l = link_loss_[ch];
  const std::uint64_t key = mix64(cfg_.seed ^ (0x11a0'0000'0000ull + ch));
  const double u = static_cast<double>(mix64(key + l.draws++) >> 11) * 0x1.0p-53;
  if (u >= frame_loss_rate_) return false;
  ++l.lost;
  return true;
}

// UEC 1.0 link-level retry: the receiver sees the lost frame's gap in the link sequence
// numbers (or its bad FCS) as the frame ends, and NACKs it; the sender replays from that
// sequence number. The replay arrives one link round trip later: the NACK's serialization
// (a minimum 64-byte frame) and propagation back, then the frame's own serialization and
// propagation again. The frame stays at the head of the link, so nothing overtakes it.
void engine::replay_head(std::uint32_t ch) {
  constexpr std::int64_t llr_nack_frame_bytes = 64;
  channel& c = channels_[ch];
  inflight& f = c.wire.front();
  const std::int64_t rate = channel_rate_bps(ch);
  f.at_ns = now_ + 2 * c.delay_ns + ceil_div(frame_ps(llr_nack_frame_bytes, rate) + frame_ps(f.pkt.size_bytes, rate), 1000);
  c.last_at_ns = std::max(c.last_at_ns, f.at_ns);
  ++link_loss_[ch].replays;
  q_.push(f.at_ns, ev_channel, ch);
}

void engine::on_switch_packet(std::uint32_t sw, std::uint16_t in_port, packet p) {
  p.ingress_port = in_port;
  const std::uint32_t dst = dst_of(p.cookie);
  std::uint32_t code = ecmp_of(p.cookie);
  p.egress_port = routes_->egress_port(sw, dst, code);
  p.cookie = with_ecmp(p.cookie, code);
  if (adaptive_) [[unlikely]] {
    const std::span<const std::uint16_t> ports = routes_->next_ports(sw, dst);
    if (ports.size() > 1) {
      // Adaptive routing: this packet takes the equal-cost port with the least queued on
      // its priority.
      const switch_model& m = *switches_[sw].model;
      std::array<std::uint64_t, fabric_routes::max_next_hops> load{};
      const auto n = static_cast<std::uint32_t>(ports.size());
      for (std::uint32_t u = 0; u < n; ++u) load[u] = m.queue(ports[u], p.priority).depth_bytes;
      p.egress_port = ports[switches_[sw].router.pick({load.data(), n})];
    }
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
    const std::uint32_t ch = s.channel_base + port;
    if (cfg_.flow_timeline_interval_ns > 0 && channels_[ch].to_switch < 0) [[unlikely]]
      count_flow_egress(d->pkt);
    if (!forward_delay_.empty()) [[unlikely]]
      lab_push_forwarded(ch, d->tx_end_ns + channels_[ch].delay_ns, d->pkt);
    else
      push_wire(ch, d->tx_end_ns + channels_[ch].delay_ns, d->pkt);
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
  std::int64_t at = f.tx_end_ns + channels_[ch].delay_ns;
  // The MAC makes PFC frames, so they draw no forwarding latency; on the link they still
  // come behind the forwarded frames already on it.
  if (!forward_delay_.empty()) [[unlikely]] at = std::max(at, lab_behind_ns(ch, p.size_bytes));
  push_wire(ch, at, p);
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

}  // namespace rocelab::fabric::twin::engine_impl

// The twin engine's hosts: messages posted by the workload become RC flows; the NIC
// serves its control FIFO first, then its active QPs round robin, each paced by its
// reaction point; the responder ACKs, NAKs (go-back-N) and notifies congestion; the
// requester advances on ACKs, goes back on NAKs and on its retransmit timer (IBTA 9.7).

#include "engine.hpp"

namespace rocelab::fabric::twin::engine_impl {

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
  const bool local = routes_->graph().same_server(m.src, m.dst);
  const std::uint32_t qp = qp_per_peer_ && !local ? peer_attach(id, m) : id + 1;
  // The ECMP paths of the data and of the ACKs/CNPs (same QP, so same UDP source port,
  // reversed addresses); the switches route by them (routing.hpp). A local message has none.
  if (!local) {
    f.fwd_ecmp = static_cast<std::uint16_t>(routes_->path_code({m.src, m.dst, qp, m.udp_sport, m.udp_dport}, cfg_.seed));
    f.rev_ecmp = static_cast<std::uint16_t>(routes_->path_code({m.dst, m.src, qp, m.udp_dport, m.udp_sport}, cfg_.seed));
  }
  flow_record r;
  r.src = m.src;
  r.dst = m.dst;
  r.qp = qp;
  r.priority = f.prio;
  r.kind = m.kind;
  r.bytes = m.bytes;
  r.start_ns = std::max(now_, m.start_ns);
  r.tag = m.tag;
  r.ideal_fct_ns = ideal_fct(f, m.bytes);
  out_.flows.push_back(r);
  ++outstanding_;
  if (local) {
    local_transfer(id);
    return id;
  }
  // The record's start is the post; a calibrated NIC's first frame waits for its send
  // processing besides (lab_timing.cpp). With one QP per peer the message joins its QP at
  // the post instead, and peer_join draws that processing if nothing is ahead of it.
  start_at(id, qp_per_peer_ || !lab_ ? r.start_ns : lab_start_ns(m.src, r.start_ns));
  return id;
}

void engine::local_transfer(std::uint32_t f) {
  const fabric_graph& g = routes_->graph();
  if (local_tx_free_ns_.empty()) {
    local_tx_free_ns_.assign(g.hosts(), 0);
    local_rx_free_ns_.assign(g.hosts(), 0);
  }
  const flow_record& r = out_.flows[f];
  std::int64_t& tx = local_tx_free_ns_[r.src];
  std::int64_t& rx = local_rx_free_ns_[r.dst];
  const std::int64_t begin = std::max({r.start_ns, tx, rx});
  tx = rx = begin + g.local_serialization_ns(r.bytes);
  q_.push(tx + g.local_delay_ns(), ev_completion, f);
}

void engine::start_at(std::uint32_t f, std::int64_t at_ns) {
  if (at_ns > now_)
    q_.push(at_ns, ev_start, f);
  else
    start_flow(f);
}

void engine::start_flow(std::uint32_t f) {
  if (qp_per_peer_ && !flows_[f].on_qp) {
    peer_join(f);
    return;
  }
  if (uec_) uec_start(f);
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
  if (fl.uec) fl.uec->cc.reset();
  flow_record& r = out_.flows[f];
  r.end_ns = now_;
  r.fct_ns = now_ - r.start_ns;
  --outstanding_;
  const message m = messages_[f];
  const flow_record rec = r;
  load_.on_message_complete(f, m, rec, *this);
}

void engine::send_control(std::uint32_t h, pkt_type t, std::uint32_t flow, std::uint32_t psn, bool flag,
                          std::uint8_t prio) {
  const flow_state& f = flows_[flow];
  packet p;
  p.cookie = make_cookie(psn, t, flag, f.rev_ecmp, f.src);
  p.flow_id = flow;
  p.size_bytes = t == pkt_type::cnp ? sizes_.cnp : sizes_.ack;
  p.priority = prio;
  p.ecn = ecn_codepoint::not_ect;
  // h is the flow's responder: every response is sent by the receiver of the data.
  if (!receive_delay_.empty() && receive_delay_[h].active()) [[unlikely]] {
    lab_respond(flow, p);
    return;
  }
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
  const std::uint8_t allowed = credits_                ? hn.credits.allowed_mask()
                               : cfg_.nic.pfc_enabled ? hn.pause.allowed_mask(now_)
                                                      : std::uint8_t{0xff};
  packet p{};
  bool have = false;
  std::uint32_t sent_flow = 0;
  std::int64_t wake_ps = never_ns;
  bool pause_blocked = false;
  std::int64_t qp_due_ps = 0;  // the picked data frame's due instant on its QP; 0: not rate limited
  const std::uint32_t rr_before = hn.rr;
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
      if ((uec_ ? uec_has_data(fl) : fl.snd_nxt < fl.npkts) && !fl.done) return false;
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
      if (uec_) {
        // UEC: its window, credit and load balancer decide (uec_transport.cpp); every
        // flow of a UEC fabric is a UEC flow from its start.
        if (!uec_pick(f, p)) continue;
        hn.rr = idx + 1;
        sent_flow = f;
        have = true;
        break;
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
      } else if (const rate_control* rp = rp_of(fl).get()) {
        // DCQCN rate limiter: the next frame may start one frame time at the current
        // rate after the previous one started.
        const double rate = rp->rate_bps();
        if (rate < static_cast<double>(hn.rate_bps)) {
          const std::int64_t next = fl.last_tx_ps + static_cast<std::int64_t>(std::ceil(fl.last_bits * 1e12 / rate));
          if (next > now_ps) {
            wake_ps = std::min(wake_ps, next);
            continue;
          }
          qp_due_ps = next;
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
    // A calibrated NIC's late pacing wake-up holds every data frame (lab_pacing.cpp).
    if (have && !pacing_.empty() && lab_pacing_holds(h, flows_[sent_flow], now_ps, qp_due_ps, wake_ps)) [[unlikely]] {
      hn.rr = rr_before;
      have = false;
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
  // A calibrated NIC slower than its link: the next frame starts later than this one ends.
  if (!achieved_bps_.empty()) [[unlikely]] hn.busy_until_ps = lab_next_start_ps(h, start_ps, frame, p.size_bytes);
  if (credits_) hn.credits.on_transmit(p.priority, p.size_bytes, now_);
  hn.tx_bytes += p.size_bytes;
  ++hn.tx_packets;
  if (type_of(p.cookie) == pkt_type::data && uec_) {
    uec_sent(sent_flow, p);
  } else if (type_of(p.cookie) == pkt_type::data) {
    flow_state& fl = flows_[sent_flow];
    if (fl.snd_nxt < fl.snd_max) {
      ++out_.flows[sent_flow].retransmits;
      if (cfg_.max_events > 0) record_event(rocelab::event_kind::retransmit, routes_->host_device(h), 0, p.priority, sent_flow);
    }
    if (fl.snd_una == fl.snd_max) fl.last_progress_ns = now_;  // nothing was outstanding
    ++fl.snd_nxt;
    fl.snd_max = std::max(fl.snd_max, fl.snd_nxt);
    fl.last_tx_ps = start_ps;
    fl.last_bits = (p.size_bytes + static_cast<std::uint32_t>(overhead_)) * 8;
    if (!pacing_.empty()) [[unlikely]] lab_paced_sent(h, fl, qp_due_ps, start_ps, hn.busy_until_ps - start_ps);
    rate_control* rp = rp_of(fl).get();
    if (compat_ && rp) {
      // RdmaHw::UpdateNextAvail: Seconds(m_rate.CalculateTxTime(size)), an ns3::Time of
      // whole ns (truncated), at the QP's DataRate (whole bit/s).
      const double rate = std::floor(rp->rate_bps());
      fl.next_avail_ps = start_ps + static_cast<std::int64_t>(static_cast<double>(fl.last_bits) * 1e9 / rate) * 1000;
    }
    if (rp) rp->on_bytes_sent(now_, p.size_bytes);
    if (!fl.rto_armed) {
      fl.rto_armed = true;
      q_.push(now_ + cfg_.nic.retransmit_timeout_ns, ev_rto, sent_flow);
    }
    if (fl.peer != flow_state::no_peer && fl.snd_max == fl.npkts) peer_fed(sent_flow);
  }
  if (!hn.control.empty() || !hn.active.empty()) nic_schedule(h, ceil_div(hn.busy_until_ps, 1000));
}

void engine::on_host_packet(std::uint32_t h, const packet& p, std::uint32_t /*ch*/) {
  if (uec_) {
    uec_on_packet(h, p);
    return;
  }
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
        if (np_of(f).on_packet(now_, true)) {
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
        if (cfg_.max_events > 0) record_event(rocelab::event_kind::cnp, routes_->host_device(h), 0, p.priority, fid);
        if (cfg_.nic.dcqcn_enabled) rate_control_of(h, f).on_cnp(now_);
      }
      if (psn > f.snd_una) {
        f.snd_una = psn;
        f.last_progress_ns = now_;
        if (f.snd_nxt < f.snd_una) f.snd_nxt = f.snd_una;
        if (f.snd_una >= f.npkts) all_acked(fid);
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
      if (cfg_.max_events > 0) record_event(rocelab::event_kind::cnp, routes_->host_device(h), 0, p.priority, fid);
      // A QP outlives its messages: a CNP for a finished one still cuts its QP's rate.
      if ((f.done && f.peer == flow_state::no_peer) || !cfg_.nic.dcqcn_enabled) break;
      rate_control_of(h, f).on_cnp(now_);
      break;
    }
    case pkt_type::pfc:
    case pkt_type::credit:
    case pkt_type::uec_ack:
    case pkt_type::uec_nack:
    case pkt_type::uec_request:
    case pkt_type::uec_grant:
      break;
  }
}

void engine::on_rto(std::uint32_t fid) {
  if (uec_) {
    uec_on_rto(fid);
    return;
  }
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

}  // namespace rocelab::fabric::twin::engine_impl

// The twin engine's Ultra Ethernet transport (UEC 1.0, reliable unordered delivery):
// the sender picks an entropy per packet (uec_load_balancing.hpp), sends within its NSCC
// window and RCCC credit (uec_congestion_control.hpp), and marks every data packet
// trimmable; the receiver acknowledges every PSN on its own (selective ACK, with the ECN
// mark echoed), NACKs a trimmed one at once, and as an RCCC receiver grants credit; the
// sender resends a PSN on its NACK or when no ACK came within the retransmission timeout.
// The switches trim (switch_model, queue_config::trim_threshold_bytes); control packets
// travel in the strict trim class, ahead of data.

#include "engine.hpp"
#include "rocelab/fabric/twin/uec_profile.hpp"

namespace rocelab::fabric::twin::engine_impl {

// Links (rate, delay) src -> dst: one full data frame forward and one ACK back, each
// stored and forwarded at every hop.
std::int64_t engine::unloaded_rtt_ns(std::uint32_t src, std::uint32_t dst) const {
  std::vector<std::pair<std::int64_t, std::int64_t>> links;
  path_of(src, dst, links);
  std::int64_t ps = 0;
  for (const auto& [rate, delay] : links)
    ps += delay * 2000 + frame_ps(cfg_.nic.mtu_bytes + sizes_.data_overhead, rate) + frame_ps(sizes_.ack, rate);
  return ceil_div(ps, 1000);
}

void engine::uec_build() {
  const uec_config& u = cfg_.fabric.uec;
  if (u.profile == uec_profile::htsim) {
    // htsim's own figure (uec_htsim_profile.hpp: the host link speed on every hop).
    network_rtt_ns_ = (derive_uec_htsim_params(htsim_fabric_of(cfg_, *ideal_)).network_rtt_ps + 500) / 1000;
  } else {
    // The fabric's longest unloaded RTT: from host 0 to the first host of the most switch
    // hops away (on a leaf-spine, the first host of leaf 1; on a fat-tree, of pod 1).
    const fabric_graph& g = routes_->graph();
    std::uint32_t far = 1;
    std::size_t most = 0;
    std::vector<hop> path;
    for (std::uint32_t h = 1; h < g.hosts(); ++h) {
      if (h > 1 && g.host(h).sw == g.host(h - 1).sw) continue;  // hosts of one switch: one distance
      routes_->hops(0, h, 0, path);
      if (path.size() > most) most = path.size(), far = h;
    }
    network_rtt_ns_ = unloaded_rtt_ns(0, far);
  }
  // A fixed timeout when the spec gives one; otherwise this is the floor of each flow's
  // adaptive timeout (uec_flow::rto_ns).
  uec_rto_ns_ = u.retransmit_timeout_ns > 0 ? u.retransmit_timeout_ns
                                            : std::max<std::int64_t>(50'000, 4 * network_rtt_ns_);
  if (u.rccc) {
    const auto bdp = static_cast<std::uint64_t>(static_cast<double>(network_rtt_ns_) * 1e-9 *
                                                static_cast<double>(host_rate_bps_) / 8);
    const std::uint64_t budget = u.rccc_budget_bytes > 0 ? static_cast<std::uint64_t>(u.rccc_budget_bytes) : bdp;
    rccc_rx_.resize(cfg_.topology.hosts);
    for (auto& r : rccc_rx_) r = std::make_unique<rccc_receiver>(budget, cfg_.nic.mtu_bytes);
  }
}

void engine::uec_start(std::uint32_t f) {
  flow_state& fl = flows_[f];
  const uec_config& u = cfg_.fabric.uec;
  const message& m = messages_[f];
  const std::uint16_t flow_entropy = m.udp_sport != 0 ? m.udp_sport : udp_source_port(f + 1, cfg_.seed);
  fl.uec = std::make_unique<uec_flow>(entropy_picker(u.balancing, mix64(cfg_.seed ^ (0x7ec0ull + f)), flow_entropy));
  uec_flow& x = *fl.uec;
  x.state.assign(fl.npkts, uec_psn::unsent);
  x.sent_ns.assign(fl.npkts, 0);
  x.entropy.assign(fl.npkts, 0);
  x.received.assign(fl.npkts, false);
  x.resent.assign(fl.npkts, false);
  x.rto_ns = uec_rto_ns_;
  std::unique_ptr<nscc_window> window;
  std::unique_ptr<rccc_credit> credit;
  if (u.nscc) {
    nscc_config nc;
    nc.line_rate_bps = hosts_[fl.src].rate_bps;
    nc.mss_bytes = cfg_.nic.mtu_bytes;
    nc.base_rtt_ns = unloaded_rtt_ns(fl.src, fl.dst);
    nc.network_rtt_ns = network_rtt_ns_;
    if (u.profile == uec_profile::htsim) {
      // htsim (main_uec.cpp initNscc without -enable_accurate_base_rtt): every flow starts
      // at the network's RTT and learns its own from its samples.
      nc.base_rtt_ns = network_rtt_ns_;
      nc.learn_base_rtt = true;
    }
    nc.target_qdelay_ns = u.nscc_target_qdelay_ns;
    nc.trimming = u.trimming;
    window = std::make_unique<nscc_window>(nc);
  }
  if (u.rccc) {
    credit = std::make_unique<rccc_credit>(hosts_[fl.src].rate_bps);
    uec_send_to_receiver(f, pkt_type::uec_request, static_cast<std::uint32_t>(std::min<std::uint64_t>(m.bytes, UINT32_MAX)),
                         false);
  }
  if (window || credit) x.cc = std::make_unique<uec_sender_cc>(std::move(window), std::move(credit));
}

bool engine::uec_has_data(const flow_state& fl) const {
  const uec_flow& x = *fl.uec;
  return x.next_new < fl.npkts || !x.rtx.empty();
}

// The next packet of flow f if its window and credit allow it now: a queued resend
// first, else the lowest PSN never sent. Fills p; uec_sent commits.
bool engine::uec_pick(std::uint32_t f, packet& p) {
  flow_state& fl = flows_[f];
  uec_flow& x = *fl.uec;
  while (!x.rtx.empty() && x.state[x.rtx.front()] != uec_psn::queued) x.rtx.pop_front();
  std::uint32_t psn = 0;
  if (!x.rtx.empty())
    psn = x.rtx.front();
  else if (x.next_new < fl.npkts)
    psn = x.next_new;
  else
    return false;
  const std::uint32_t payload = payload_of(fl, psn);
  if (x.cc) {
    // Below one packet in flight the window never blocks, so a flow always progresses.
    if (x.in_flight_bytes > 0 && x.in_flight_bytes + payload > x.cc->window_bytes()) return false;
    if (payload > x.cc->credit_bytes()) return false;
  }
  x.pick_entropy = x.lb.next();
  // Spraying: the packet's entropy is its UDP source port, hashed at every switch.
  const std::uint32_t path = routes_->path_code({fl.src, fl.dst, f + 1, x.pick_entropy, 0}, cfg_.seed);
  p.cookie = make_cookie(psn, pkt_type::data, psn + 1 == fl.npkts, path, fl.dst);
  p.flow_id = f;
  p.size_bytes = payload + sizes_.data_overhead;
  p.priority = fl.prio;
  p.ecn = cfg_.fabric.uec.nscc ? ecn_codepoint::ect0 : ecn_codepoint::not_ect;
  p.flags = cfg_.fabric.uec.trimming ? packet_flag_trimmable : std::uint8_t{0};
  return true;
}

void engine::uec_sent(std::uint32_t f, const packet& p) {
  flow_state& fl = flows_[f];
  uec_flow& x = *fl.uec;
  const std::uint32_t psn = psn_of(p.cookie);
  if (x.state[psn] == uec_psn::queued) {
    x.rtx.pop_front();
    x.resent[psn] = true;
    ++out_.flows[f].retransmits;
    if (cfg_.max_events > 0) record_event(rocelab::event_kind::retransmit, routes_->host_device(fl.src), 0, p.priority, f);
  } else {
    ++x.next_new;
  }
  const std::uint32_t payload = payload_of(fl, psn);
  x.state[psn] = uec_psn::in_flight;
  x.sent_ns[psn] = now_;
  x.entropy[psn] = x.pick_entropy;
  x.in_flight_bytes += payload;
  if (x.cc) x.cc->on_bytes_sent(now_, payload);
  if (!fl.rto_armed) {
    fl.rto_armed = true;
    q_.push(now_ + x.rto_ns, ev_rto, f);
  }
}

// A control packet of flow f from its sender to its receiver (the reverse of
// send_control), in the trim class.
void engine::uec_send_to_receiver(std::uint32_t f, pkt_type t, std::uint32_t value, bool flag) {
  const flow_state& fl = flows_[f];
  packet p;
  p.cookie = make_cookie(value, t, flag, fl.fwd_ecmp, fl.dst);
  p.flow_id = f;
  p.size_bytes = sizes_.ack;
  p.priority = cfg_.fabric.uec.trim_priority;
  p.ecn = ecn_codepoint::not_ect;
  hosts_[fl.src].control.push_back(p);
  nic_kick(fl.src);
}

void engine::uec_grant(std::uint32_t h) {
  rccc_receiver& rx = *rccc_rx_[h];
  while (auto g = rx.next_grant())
    send_control(h, pkt_type::uec_grant, g->flow, static_cast<std::uint32_t>(g->bytes), false,
                 cfg_.fabric.uec.trim_priority);
}

void engine::uec_on_packet(std::uint32_t h, const packet& p) {
  const std::uint32_t fid = p.flow_id;
  flow_state& fl = flows_[fid];
  if (!fl.uec) return;
  uec_flow& x = *fl.uec;
  const std::uint32_t psn = psn_of(p.cookie);
  const std::uint8_t ctl = cfg_.fabric.uec.trim_priority;
  switch (type_of(p.cookie)) {
    case pkt_type::data: {
      const std::uint32_t payload = payload_of(fl, psn);
      if ((p.flags & packet_flag_trimmed) != 0) {
        // A trimmed header: the payload is gone, ask for it now (one RTT, no timeout).
        send_control(h, pkt_type::uec_nack, fid, psn, false, ctl);
        if (!rccc_rx_.empty()) {
          rccc_rx_[h]->on_arrival(payload);
          rccc_rx_[h]->add_demand(fid, payload);
          uec_grant(h);
        }
        break;
      }
      const bool ce = p.ecn == ecn_codepoint::ce;
      if (ce) ++out_.flows[fid].ce_marked;
      if (!x.received[psn]) x.received[psn] = true;
      send_control(h, pkt_type::uec_ack, fid, psn, ce, ctl);
      if (!rccc_rx_.empty()) {
        rccc_rx_[h]->on_arrival(payload);
        uec_grant(h);
      }
      break;
    }
    case pkt_type::uec_ack: {
      if (fl.done) break;
      const std::uint32_t payload = payload_of(fl, psn);
      const bool ce = flag_of(p.cookie);
      if (x.state[psn] == uec_psn::in_flight) {
        x.in_flight_bytes -= payload;
        const std::int64_t rtt = now_ - x.sent_ns[psn];
        if (x.cc) x.cc->on_ack(now_, payload, ce, rtt);
        if (!x.resent[psn] && cfg_.fabric.uec.retransmit_timeout_ns == 0) {
          // RFC 6298 section 2 (Karn: only packets sent once), with its gains 1/8, 1/4.
          const auto r = static_cast<double>(rtt);
          if (x.srtt_ns == 0) {
            x.srtt_ns = r;
            x.rttvar_ns = r / 2;
          } else {
            x.rttvar_ns = 0.75 * x.rttvar_ns + 0.25 * std::fabs(x.srtt_ns - r);
            x.srtt_ns = 0.875 * x.srtt_ns + 0.125 * r;
          }
          x.rto_ns = std::max(uec_rto_ns_, static_cast<std::int64_t>(x.srtt_ns + 4 * x.rttvar_ns));
        }
        x.lb.on_ack(x.entropy[psn], ce);
      } else if (x.state[psn] != uec_psn::queued) {
        break;  // a duplicate ACK (the PSN was sent twice)
      }
      x.state[psn] = uec_psn::acked;
      ++x.acked;
      fl.last_progress_ns = now_;
      while (fl.snd_una < fl.npkts && x.state[fl.snd_una] == uec_psn::acked) ++fl.snd_una;
      if (x.acked == fl.npkts) {
        complete(fid);
        break;
      }
      activate(fid);
      break;
    }
    case pkt_type::uec_nack: {
      if (fl.done || x.state[psn] != uec_psn::in_flight) break;
      const std::uint32_t payload = payload_of(fl, psn);
      x.in_flight_bytes -= payload;
      x.state[psn] = uec_psn::queued;
      x.rtx.push_back(psn);
      if (x.cc) {
        x.cc->on_rtt_sample(now_ - x.sent_ns[psn]);
        x.cc->on_nack(now_, payload);  // RCCC: the receiver re-granted its credit already
      }
      activate(fid);
      break;
    }
    case pkt_type::uec_request: {
      if (rccc_rx_.empty()) break;
      // psn: bytes wanted; with the flag, bytes the sender lost (their credit is written off).
      if (flag_of(p.cookie)) rccc_rx_[h]->on_arrival(psn);
      rccc_rx_[h]->add_demand(fid, psn);
      uec_grant(h);
      break;
    }
    case pkt_type::uec_grant: {
      if (fl.done || !x.cc) break;
      x.cc->on_credit(now_, psn);
      activate(fid);
      break;
    }
    default:
      break;
  }
}

// The retransmission timer: every PSN in flight longer than the timeout is lost (a drop
// the switch could not trim, or a lost ACK); it is queued again and NSCC told of the
// loss. The timer then waits for the oldest PSN still in flight.
void engine::uec_on_rto(std::uint32_t f) {
  flow_state& fl = flows_[f];
  fl.rto_armed = false;
  if (fl.done) return;
  uec_flow& x = *fl.uec;
  std::int64_t next = never_ns;
  std::uint64_t lost_bytes = 0;
  for (std::uint32_t psn = fl.snd_una; psn < x.next_new; ++psn) {
    if (x.state[psn] != uec_psn::in_flight) continue;
    const std::int64_t deadline = x.sent_ns[psn] + x.rto_ns;
    if (deadline > now_) {
      next = std::min(next, deadline);
      continue;
    }
    const std::uint32_t payload = payload_of(fl, psn);
    x.in_flight_bytes -= payload;
    x.state[psn] = uec_psn::queued;
    x.rtx.push_back(psn);
    lost_bytes += payload;
    if (x.cc) x.cc->on_nack(now_, payload);
  }
  if (lost_bytes > 0) {
    if (!rccc_rx_.empty())
      uec_send_to_receiver(f, pkt_type::uec_request, static_cast<std::uint32_t>(lost_bytes), true);
    activate(f);
  }
  if (next != never_ns) {
    fl.rto_armed = true;
    q_.push(next, ev_rto, f);
  }
}

}  // namespace rocelab::fabric::twin::engine_impl

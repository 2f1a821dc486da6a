// The twin engine's run: event dispatch, queue-depth sampling, the loop from the
// workload's start to the last completion (or stop_ns, or a cancel), the run's totals
// and counters; and the public entry points of twin.hpp (validate, run_twin,
// switch_config_of).

#include "engine.hpp"
#include "rocelab/fabric/twin/uec_profile.hpp"

namespace rocelab::fabric::twin::engine_impl {

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
    case ev_response:
      on_response(idx);
      break;
    case ev_completion:
      if (!flows_[idx].done) complete(idx);
      break;
    case ev_sample:
      // idx 1: the flow timelines' own interval.
      if (idx == 1) {
        sample_flow_bytes();
        if (outstanding_ > 0) q_.push(now_ + cfg_.flow_timeline_interval_ns, ev_sample, 1);
        break;
      }
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
  if (cfg_.flow_timeline_interval_ns > 0) q_.push(0, ev_sample, 1);
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
  if (cfg_.flow_timeline_interval_ns > 0) sample_flow_bytes();
  for (std::uint32_t k = 0; k < pauses_.size(); ++k) close_pause(k, std::min(now_, pauses_[k].until_ns));
  if (credits_) {
    // Credit stalls are InfiniBand's (and UEC CBFC's) pauses: a VL of a port could not send for lack of
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
      std::uint64_t drops = 0, marks = 0, trims = 0;
      for (auto d : ps.dropped_packets) drops += d;
      for (std::uint8_t pr = 0; pr < num_priorities; ++pr) {
        const queue_stats qs = m.queue(port, pr);
        marks += qs.ecn_marked;
        trims += qs.trimmed_packets;
      }
      t.drops += drops;
      t.ce_marked += marks;
      t.trims += trims;
      if (trims != 0) out_.counters.push_back(counter_sample{s, port, "trimmed_packets", now_, trims});
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
  // Link loss counters on the link's transmitter: a switch port, or a host's uplink.
  for (std::uint32_t ch = 0; ch < link_loss_.size(); ++ch) {
    const link_loss_state& l = link_loss_[ch];
    t.link_replays += l.replays;
    const bool on_switch = ch < port_owner_.size();
    const std::uint32_t device = on_switch ? port_owner_[ch].first : nsw + (ch - static_cast<std::uint32_t>(port_owner_.size()));
    const std::uint32_t port = on_switch ? port_owner_[ch].second : 0;
    if (l.lost != 0) out_.counters.push_back(counter_sample{device, port, "link_frames_lost", now_, l.lost});
    if (l.replays != 0) out_.counters.push_back(counter_sample{device, port, "link_replays", now_, l.replays});
  }
  for (std::uint32_t h = 0; h < hosts_.size(); ++h) {
    if (hosts_[h].tx_packets == 0) continue;
    out_.counters.push_back(counter_sample{nsw + h, 0, "tx_packets", now_, hosts_[h].tx_packets});
    out_.counters.push_back(counter_sample{nsw + h, 0, "tx_bytes", now_, hosts_[h].tx_bytes});
  }
  for (std::size_t f = 0; f < flows_.size(); ++f) {
    t.cnps += flows_[f].np.cnps_sent();
    t.retransmits += out_.flows[f].retransmits;
  }
  for (const peer_qp& q : peers_) t.cnps += q.np.cnps_sent();  // one QP per peer: the QPs' NPs
  // Tear down reaction points while the engine (their clock) is alive.
  for (auto& f : flows_) {
    f.rp.reset();
    if (f.uec) f.uec->cc.reset();
  }
  for (auto& q : peers_) q.rp.reset();
  return std::move(out_);
}

}  // namespace rocelab::fabric::twin::engine_impl

namespace rocelab::fabric::twin {

using engine_impl::engine;
using engine_impl::rate_of;

status validate(const twin_config& c) {
  auto bad = [](const std::string& what) { return status(error_code::invalid_argument, what); };
  const auto& t = c.topology;
  if (t.hosts < 2 || t.hosts > 65535) return bad("topology.hosts must be 2..65535");
  if (!(t.link_gbps > 0)) return bad("topology.link_gbps must be > 0");
  if (t.link_delay_ns < 0) return bad("topology.link_delay_ns must be >= 0");
  if (t.frame_overhead_bytes > 64) return bad("topology.frame_overhead_bytes must be 0..64");
  if (t.frame_overhead_bytes != topology_config{}.frame_overhead_bytes) {
    if (c.fabric.link == link_layer::infiniband)
      return bad("topology.frame_overhead_bytes must be the default 20 on InfiniBand: its links carry IB framing, "
                 "not Ethernet's preamble and gap");
    if (c.hpcc_ns3_compat && t.frame_overhead_bytes != 0)
      return bad("topology.frame_overhead_bytes must be 0 in the HPCC ns-3 compatibility mode, which counts no "
                 "preamble or gap");
  }
  if (t.type == topology_config::kind::leaf_spine) {
    if (t.leaves < 1) return bad("topology.leaves must be >= 1");
    if (t.spines < 1 || t.spines > 256) return bad("topology.spines must be 1..256");
    if (t.hosts % t.leaves != 0) return bad("topology.hosts must be a multiple of topology.leaves");
    if (t.spine_link_gbps < 0) return bad("topology.spine_link_gbps must be >= 0");
    if (t.spine_link_gbps == 0 && !(t.oversubscription > 0)) return bad("topology.oversubscription must be > 0");
  } else if (t.type == topology_config::kind::fat_tree) {
    if (t.k < 2 || t.k > 62 || t.k % 2 != 0) return bad("topology.k must be even and 2..62 (switch ports)");
    if (t.hosts != t.k * t.k * t.k / 4)
      return bad("topology.hosts must be k^3/4 = " + std::to_string(t.k * t.k * t.k / 4) + " for a k=" +
                 std::to_string(t.k) + " fat-tree");
    if (t.spine_link_gbps < 0) return bad("topology.spine_link_gbps must be >= 0");
    if (t.spine_link_gbps == 0 && !(t.oversubscription > 0)) return bad("topology.oversubscription must be > 0");
  } else if (t.type == topology_config::kind::rail_optimized) {
    ROCELAB_RETURN_IF_ERROR(check_rail_optimized(t));
    if (t.spines > 256) return bad("topology.spines must be 1..256");
    if (t.spine_link_gbps < 0) return bad("topology.spine_link_gbps must be >= 0");
    if (t.spine_link_gbps == 0 && !(t.oversubscription > 0)) return bad("topology.oversubscription must be > 0");
  } else if (t.type == topology_config::kind::graph) {
    if (t.switches < 1) return bad("topology.switches must be >= 1");
    if (t.links.empty()) return bad("topology.links: a graph needs links");
  } else if (t.hosts > 65535) {
    return bad("topology.hosts: a single switch has at most 65535 ports");
  }
  if (t.type != topology_config::kind::rail_optimized && t.nics_per_host != 1)
    return bad("topology.nics_per_host applies to rail_optimized only (one NIC a host elsewhere)");
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
  if (c.fabric.link == link_layer::uec && c.hpcc_ns3_compat)
    return bad("fabric.link uec: the HPCC ns-3 compatibility mode is RoCE only");
  if (c.fabric.routing == routing_mode::adaptive && c.topology.spines > 256)
    return bad("fabric.routing adaptive: at most 256 uplinks");
  if (c.queue_sample_interval_ns < 0) return bad("queue_sample_interval_ns must be >= 0");
  if (c.flow_timeline_interval_ns < 0) return bad("flow_timeline_interval_ns must be >= 0");
  if (c.stop_ns <= 0) return bad("stop_ns must be > 0");
  for (const auto& e : c.ecn_by_rate)
    if (!(e.gbps > 0)) return bad("ecn_by_rate: gbps must be > 0");
  ROCELAB_RETURN_IF_ERROR(engine_impl::validate_lab(c));
  switch_config probe = c.switch_template;
  if (probe.ports.empty()) probe.ports.emplace_back();
  probe.ports.resize(1);
  probe.ports[0].rate_bps = std::max<std::int64_t>(1, rate_of(t.link_gbps));
  ROCELAB_RETURN_IF_ERROR(fabric::validate(probe).with_context("switch_template"));
  return status::success();
}

result<run_records> run_twin(const twin_config& config, workload& load) {
  engine e(with_uec_profile(config), load);
  ROCELAB_RETURN_IF_ERROR(e.build());
  return e.run();
}

result<switch_config> switch_config_of(const twin_config& config, std::uint32_t index) {
  struct no_workload final : workload {
    void start(twin_context&) override {}
  } none;
  engine e(with_uec_profile(config), none);
  ROCELAB_RETURN_IF_ERROR(e.build());
  const switch_config* c = e.built_switch_config(index);
  if (c == nullptr) return status(error_code::invalid_argument, "the twin's fabric has no switch " + std::to_string(index));
  return *c;
}

}  // namespace rocelab::fabric::twin
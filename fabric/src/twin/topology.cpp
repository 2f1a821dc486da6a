// The twin engine's fabric: the engine's construction from a twin_config, its switches
// (switch_model configured per port rate, ECN by rate, HPCC ns-3 compat buffers), its
// hosts and links as the fabric graph lays them out (fabric_graph.hpp), the path between
// two hosts and a message's ideal FCT on that path. Runs once per run, before the first
// event.

#include "engine.hpp"

#include "rocelab/fabric/twin/flow_ideal.hpp"

namespace rocelab::fabric::twin::engine_impl {

engine::engine(const twin_config& cfg, workload& load)
    : cfg_(cfg), load_(load) {
  compat_ = cfg.hpcc_ns3_compat;
  sizes_ = frame_sizes_of(cfg);
  dcqcn_ = cfg.nic.dcqcn;
  ib_ = cfg.fabric.link == link_layer::infiniband;
  adaptive_ = cfg.fabric.routing == routing_mode::adaptive;
  cc_ = cfg.nic.dcqcn_enabled ? cfg.fabric.congestion : congestion_control_kind::none;
  cfg_.nic.dcqcn_enabled = cc_ != congestion_control_kind::none;  // data ECT, CNPs/BECNs honoured
  uec_ = cfg.fabric.link == link_layer::uec;
  credits_ = ib_ || (uec_ && cfg.fabric.uec.credit_flow_control);
  if (uec_) {
    frame_loss_rate_ = cfg.fabric.uec.link_frame_loss_rate;
    llr_ = cfg.fabric.uec.link_level_retry;
  }
  if (uec_) {
    // UEC: its own transport and congestion control (uec_transport.cpp); no DCQCN.
    cc_ = congestion_control_kind::none;
    cfg_.nic.dcqcn_enabled = false;
  }
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
  qp_per_peer_ = cfg.nic.one_qp_per_peer && !compat_ && !uec_;
}


switch_config engine::switch_config_for(const std::vector<std::int64_t>& rates) const {
  switch_config sc = cfg_.switch_template;
  sc.wire_overhead_bytes = cfg_.topology.frame_overhead_bytes;
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
  if (uec_ && credits_) {
    // UEC CBFC: every class a fixed credit-backed buffer (infiniband_switch_config's
    // arithmetic, in 64-byte blocks), Ethernet framing; the queues keep their ECN for
    // NSCC, and nothing overflows, so nothing is trimmed.
    std::vector<std::array<ecn_config, num_priorities>> ecn(sc.ports.size());
    for (std::size_t i = 0; i < sc.ports.size(); ++i)
      for (std::size_t p = 0; p < num_priorities; ++p) ecn[i][p] = sc.ports[i].queues[p].ecn;
    switch_config c =
        infiniband_switch_config(std::move(sc), vl_mask_, cfg_.fabric, cfg_.topology.frame_overhead_bytes);
    for (std::size_t i = 0; i < c.ports.size(); ++i)
      for (std::size_t p = 0; p < num_priorities; ++p)
        if (p != cfg_.fabric.uec.trim_priority) c.ports[i].queues[p].ecn = ecn[i][p];
    c.trim.priority = cfg_.fabric.uec.trim_priority;
    return c;
  }
  if (uec_) {
    // Lossy Ethernet: no PFC; data queues trim (past the threshold, or where the buffer
    // would drop them: an unreachable threshold leaves only the drop case) and the trim
    // class, which also carries the transport's control packets, is strict priority.
    const uec_config& u = cfg_.fabric.uec;
    sc.lossless_priorities = 0;
    sc.trim.header_bytes = u.trim_header_bytes;
    sc.trim.priority = u.trim_priority;
    for (auto& pc : sc.ports) {
      pc.queues[u.trim_priority].dwrr_weight = 0;
      pc.queues[u.trim_priority].ecn.enabled = false;
      if (!u.trimming) continue;
      for (int p = 0; p < num_priorities; ++p)
        if (p != u.trim_priority)
          pc.queues[static_cast<std::size_t>(p)].trim_threshold_bytes =
              u.trim_threshold_bytes > 0 ? u.trim_threshold_bytes : std::numeric_limits<std::int64_t>::max() / 4;
    }
  }
  return sc;
}

status engine::build_switches() {
  const fabric_graph& g = routes_->graph();
  switches_.resize(g.switches());
  std::uint32_t gport = 0;
  for (std::uint32_t i = 0; i < g.switches(); ++i) {
    const graph_switch& gs = g.switch_at(i);
    std::vector<std::int64_t> rates;
    rates.reserve(gs.ports.size());
    for (const graph_port& p : gs.ports) rates.push_back(p.rate_bps);
    switch_node& s = switches_[i];
    s.clk = std::make_unique<node_clock>(*this, -1);
    s.sink = std::make_unique<switch_sink>(*this, i);
    switch_config sc = switch_config_for(rates);
    sc.ecn_seed = mix64(cfg_.seed ^ (0x5157ull + i));
    std::unique_ptr<link_flow_control> fc;
    if (credits_) {
      s.credit_out = std::make_unique<switch_credit_link>(*this, i);
      auto c = credit_flow_control::create(sc, *s.clk, *s.credit_out,
                                           credit_config{max_frame_bytes(), cfg_.fabric.credit_update_interval_ns});
      if (!c.ok()) return c.error().with_context(gs.name);
      s.credits = c->get();
      fc = std::move(c).value();
    }
    auto m = switch_model::create(sc, *s.clk, s.sink.get(), std::move(fc));
    if (!m.ok()) return m.error().with_context(gs.name);
    s.model = std::move(m).value();
    s.port_base = gport;
    for (std::size_t p = 0; p < rates.size(); ++p) port_owner_.emplace_back(i, static_cast<std::uint16_t>(p));
    gport += static_cast<std::uint32_t>(rates.size());
    out_.devices.push_back(gs.name);
  }
  port_pending_.assign(gport, never_ns);
  return status::success();
}

status engine::build() {
  ROCELAB_RETURN_IF_ERROR(validate(cfg_).with_context("twin config"));
  const auto& t = cfg_.topology;
  auto routes = fabric_routes::create(t);
  if (!routes) return routes.error().with_context("twin config");
  routes_ = std::move(*routes);
  // One graph for the engine's links and its ideal FCTs.
  ideal_.emplace(cfg_, routes_);
  const fabric_graph& g = routes_->graph();
  host_rate_bps_ = g.host(0).link.rate_bps;
  overhead_ = wire_overhead_of(cfg_);
  ack_prio_ = cfg_.nic.ack_priority;
  cnp_prio_ = dcqcn_.cnp_802p_prio;
  if (ib_) {
    // VLs in use: data, ACKs, CN packets (SL to VL one to one).
    vl_mask_ = static_cast<std::uint8_t>((1u << cfg_.nic.data_priority) | (1u << cnp_prio_) |
                                         (cfg_.nic.ack_priority >= 0 ? 1u << cfg_.nic.ack_priority : 0u));
  }
  if (uec_ && credits_) {
    // UEC CBFC: credits for the data class and the trim class (control and trimmed
    // headers), on Ethernet framing.
    vl_mask_ = static_cast<std::uint8_t>((1u << cfg_.nic.data_priority) | (1u << cfg_.fabric.uec.trim_priority));
  }
  ROCELAB_RETURN_IF_ERROR(build_switches());
  if (uec_) uec_build();

  // Channels: every switch port's egress link, then every host's uplink.
  const std::uint32_t nsw = static_cast<std::uint32_t>(switches_.size());
  for (std::uint32_t h = 0; h < t.hosts; ++h) out_.hosts.push_back("h" + std::to_string(h + 1));
  for (std::uint32_t h = 0; h < t.hosts; ++h) out_.devices.push_back(g.device_name(g.host_device(h)));
  channels_.resize(port_owner_.size() + t.hosts);
  for (std::uint32_t s = 0; s < nsw; ++s) {
    switch_node& sw = switches_[s];
    sw.channel_base = sw.port_base;
    const auto& ports = g.switch_at(s).ports;
    for (std::uint32_t p = 0; p < ports.size(); ++p) {
      const graph_port& gp = ports[p];
      channel& c = channels_[sw.port_base + p];
      c.delay_ns = gp.delay_ns + cfg_.fabric.switch_latency_ns;
      c.to_device = gp.peer;
      if (g.is_host_device(gp.peer)) {
        c.to_switch = -1, c.to_index = gp.peer - nsw;
      } else {
        c.to_switch = static_cast<std::int32_t>(gp.peer), c.to_index = gp.peer, c.to_port = gp.peer_port;
      }
    }
  }
  hosts_.resize(t.hosts);
  const bool until_resume = compat_ || cfg_.switch_template.pfc.pause_until_resume;
  for (std::uint32_t h = 0; h < t.hosts; ++h) {
    const graph_host& gh = g.host(h);
    host_node& hn = hosts_[h];
    hn.rate_bps = gh.link.rate_bps;
    if (8'000'000'000'000 % hn.rate_bps == 0) hn.ps_per_byte = 8'000'000'000'000 / hn.rate_bps;
    hn.pause = pfc_pause_state(hn.rate_bps, until_resume);
    hn.channel = static_cast<std::uint32_t>(port_owner_.size()) + h;
    hn.clk = std::make_unique<node_clock>(*this, static_cast<std::int32_t>(h));
    channel& c = channels_[hn.channel];
    c.delay_ns = gh.link.delay_ns;
    c.to_switch = static_cast<std::int32_t>(gh.sw), c.to_index = gh.sw, c.to_port = gh.port, c.to_device = gh.sw;
  }
  if (credits_) init_credits();
  lab_build();
  if (frame_loss_rate_ > 0 || llr_) link_loss_.resize(channels_.size());
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
  std::int64_t max_forward_ns = 0;  // lab timing: the longest forwarding draw
  for (const delay_stream& d : forward_delay_)
    if (d.active()) max_forward_ns = std::max(max_forward_ns, d.q->ns.back());
  max_delay_ns += max_forward_ns;
  for (const switch_node& sw : switches_)
    for (const port_config& pc : sw.model->config().ports) min_rate_bps = std::min(min_rate_bps, pc.rate_bps);
  const std::int64_t frame_ns = ceil_div(ser_ps(max_frame_bytes(), overhead_, min_rate_bps), 1000);
  assert(q_.empty());
  q_ = event_queue(2 * (max_delay_ns + 2 * frame_ns));
  q_.reserve(4096);
  out_.backend = "twin";
  return status::success();
}

// Links (rate_bps, delay_ns) from src to dst: the path flow_ideal computes ideal FCTs on.
void engine::path_of(std::uint32_t src, std::uint32_t dst,
                     std::vector<std::pair<std::int64_t, std::int64_t>>& links) const {
  links.clear();
  for (const ideal_hop& h : ideal_->path(src, dst)) links.emplace_back(h.rate_bps, h.delay_ns);
}

std::int64_t engine::ideal_fct(const flow_state& f, std::uint64_t bytes) const {
  return ideal_->fct_ns(f.src, f.dst, bytes);
}

}  // namespace rocelab::fabric::twin::engine_impl

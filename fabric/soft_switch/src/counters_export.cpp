// The soft switch's counters for the control API: model counters summed over model
// generations, the adapter's own per-port counters, watermarks, mirror, faults and
// status as JSON, and the same counters in the Prometheus text format.

#include "soft_switch_impl.hpp"

namespace rocelab::fabric::soft_switch {

port_drop_causes soft_switch::impl::drop_causes_of(std::uint16_t p, const model_counters& t) {
  const auto& io = ports_[p].stats();
  const auto& s = soft_[p];
  const auto& c = t.ports[p];
  const auto model = [&](drop_reason r) { return static_cast<std::uint64_t>(c.dropped[static_cast<int>(r)]); };
  port_drop_causes d;
  d.ring = io.kernel_drops;
  d.link_rx = io.link_rx_dropped;
  d.link_tx = io.link_tx_dropped;
  d.tx_refused = io.tx_errors;
  d.pool = s.pool_drops;
  d.oversize = s.oversize_drops;
  d.ingress_limit = model(drop_reason::ingress_limit);
  d.egress_limit = model(drop_reason::egress_limit);
  d.headroom = model(drop_reason::headroom_exhausted);
  d.pfc_watchdog = model(drop_reason::pfc_watchdog);
  d.fault = s.fault_drops;
  d.reconfig = s.reconfig_drops;
  return d;
}

json soft_switch::impl::counters_json(bool watermarks_only) {
  const model_counters t = totals();
  port_drop_causes all_drops;
  const std::int64_t cell = opt_.settings.model.cell_bytes;
  json ports = json::array();
  for (std::uint16_t p = 0; p < ports_.size(); ++p) {
    json port = {{"index", p}, {"name", ports_[p].name()}};
    const auto& c = t.ports[p];
    if (!watermarks_only) {
      const auto& s = soft_[p];
      const auto& io = ports_[p].stats();
      port.update({{"rx_packets", c.rx_packets}, {"rx_bytes", c.rx_bytes}, {"tx_packets", c.tx_packets},
                   {"tx_bytes", c.tx_bytes}, {"pfc_tx_frames", c.pfc_tx_frames}, {"pfc_rx_frames", c.pfc_rx_frames},
                   {"ingress_limit_drops", c.dropped[static_cast<int>(drop_reason::ingress_limit)]},
                   {"egress_limit_drops", c.dropped[static_cast<int>(drop_reason::egress_limit)]},
                   {"headroom_drops", c.dropped[static_cast<int>(drop_reason::headroom_exhausted)]},
                   {"pfc_watchdog_drops", c.dropped[static_cast<int>(drop_reason::pfc_watchdog)]},
                   {"pool_drops", s.pool_drops}, {"oversize_drops", s.oversize_drops}, {"filtered", s.filtered},
                   {"flooded", s.flooded}, {"pause_rx_frames", s.pause_rx_frames}, {"ce_rewrites", s.ce_rewrites},
                   {"fault_drops", s.fault_drops}, {"fault_marks", s.fault_marks},
                   {"delayed_frames", s.delayed_frames}, {"storm_frames", s.storm_frames},
                   {"reconfig_drops", s.reconfig_drops}, {"wire_rx_frames", io.rx_frames},
                   {"wire_tx_frames", io.tx_frames}, {"wire_tx_errors", io.tx_errors},
                   {"ring_drops", io.kernel_drops}, {"ring_wait_max_ns", io.ring_wait_max_ns},
                   {"ring_wait_log2_us", io.ring_wait_log2_us},
                   {"ring_wait_over_budget", io.ring_wait_over_budget}, {"link_rx_drops", io.link_rx_dropped},
                   {"link_tx_drops", io.link_tx_dropped}});
      const port_drop_causes d = drop_causes_of(p, t);
      port["drops"] = d.to_json();
      port["forwarding_latency"] = to_json(forwarding_[p]);
      all_drops += d;
    }
    json queues = json::array(), pgs = json::array();
    for (std::uint8_t q = 0; q < num_priorities; ++q) {
      const auto& qc = t.queues[p * num_priorities + q];
      const queue_stats live = model_->queue(p, q);
      const pg_stats pl = model_->priority_group(p, q);
      const auto& gc = t.pgs[p * num_priorities + q];
      json jq = {{"queue", q}, {"watermark_bytes", qc.watermark_bytes}, {"depth_bytes", live.depth_bytes}};
      json jg = {{"pg", q},
                 {"shared_watermark_bytes", gc.shared_watermark_cells * cell},
                 {"headroom_watermark_bytes", gc.headroom_watermark_cells * cell},
                 {"reserve_bytes", pl.reserve_cells * cell},
                 {"shared_bytes", pl.shared_cells * cell},
                 {"headroom_bytes", pl.headroom_cells * cell}};
      if (!watermarks_only) {
        jq.update({{"enqueued_packets", qc.enqueued_packets}, {"enqueued_bytes", qc.enqueued_bytes},
                   {"dequeued_packets", qc.dequeued_packets}, {"dequeued_bytes", qc.dequeued_bytes},
                   {"dropped_packets", qc.dropped_packets}, {"ecn_marked", qc.ecn_marked},
                   {"depth_packets", live.depth_packets}});
        if (const watchdog_stats wd = model_->watchdog(p, q); wd.storms_detected != 0 || wd.stormed)
          // The live model's watchdog (a `set` rebuilds the model and starts it afresh).
          jq["pfc_watchdog"] = {{"stormed", wd.stormed},           {"storms_detected", wd.storms_detected},
                                {"storms_restored", wd.storms_restored}, {"tx_dropped", wd.tx_dropped},
                                {"rx_dropped", wd.rx_dropped},       {"last_detected_ns", wd.last_detected_ns},
                                {"last_restored_ns", wd.last_restored_ns}, {"last_xoff_rx_ns", wd.last_xoff_rx_ns}};
        jg.update({{"rx_packets", gc.rx_packets}, {"rx_bytes", gc.rx_bytes}, {"dropped_packets", gc.dropped_packets},
                   {"xoff_sent", gc.xoff_sent}, {"xon_sent", gc.xon_sent}, {"refresh_sent", gc.refresh_sent},
                   {"xoff", pl.xoff}});
      }
      queues.push_back(std::move(jq));
      pgs.push_back(std::move(jg));
    }
    port["queues"] = std::move(queues);
    port["pgs"] = std::move(pgs);
    ports.push_back(std::move(port));
  }
  const buffer_stats b = model_->buffer();
  json out = {{"ok", true},
              {"ports", std::move(ports)},
              {"buffer",
               {{"total_bytes", b.total_cells * cell},
                {"used_bytes", b.used_cells * cell},
                {"watermark_bytes", t.buffer_watermark_cells * cell},
                {"resident_packets", b.resident_packets}}}};
  if (!watermarks_only) {
    out["mirror"] = {{"frames", mirror_frames_}, {"bytes", mirror_bytes_}, {"errors", mirror_errors_},
                     {"truncated", mirror_truncated_}, {"pfc_frames", mirror_pfc_frames_},
                     {"arrival_frames", mirror_arrival_frames_}};
    out["pool"] = {{"slots", slots_}, {"free", free_.size()}, {"slot_bytes", slot_bytes_}};
    out["drops"] = all_drops.to_json();
  }
  return out;
}

std::string soft_switch::impl::prometheus() {
  // Prometheus text exposition format 0.0.4: one HELP/TYPE header per metric family,
  // then its samples. Counters get _total; levels and watermarks are gauges.
  const json c = counters_json(false);
  std::map<std::string, std::pair<bool, std::vector<std::string>>> families;  // name -> (gauge, samples)
  auto is_gauge = [](const std::string& k) {
    return k.find("watermark") != std::string::npos || k.find("depth") != std::string::npos ||
           k == "shared_bytes" || k == "headroom_bytes" || k == "xoff" || k == "used_bytes" ||
           k == "total_bytes" || k == "resident_packets" || k == "free" || k == "slots" || k == "slot_bytes";
  };
  auto emit = [&](const std::string& prefix, const json& obj, const std::string& labels) {
    for (const auto& [k, v] : obj.items()) {
      if (!(v.is_number() || v.is_boolean()) || k == "index" || k == "queue" || k == "pg") continue;
      const bool gauge = is_gauge(k);
      const std::string name = "rocelab_switch_" + prefix + "_" + k + (gauge ? "" : "_total");
      const std::string value = v.is_boolean() ? (v.get<bool>() ? "1" : "0") : v.dump();
      auto& fam = families[name];
      fam.first = gauge;
      fam.second.push_back(name + (labels.empty() ? "" : "{" + labels + "}") + " " + value);
    }
  };
  for (const auto& port : c["ports"]) {
    const std::string pl = "port=\"" + port["name"].get<std::string>() + "\"";
    emit("port", port, pl);
    emit("port_forwarder_drops", port["drops"]["forwarder"], pl);
    emit("port_shaper_drops", port["drops"]["shaper"], pl);
    for (const auto& q : port["queues"]) emit("queue", q, pl + ",queue=\"" + q["queue"].dump() + "\"");
    for (const auto& g : port["pgs"]) emit("pg", g, pl + ",pg=\"" + g["pg"].dump() + "\"");
  }
  emit("buffer", c["buffer"], "");
  emit("mirror", c["mirror"], "");
  emit("pool", c["pool"], "");
  std::ostringstream out;
  for (const auto& [name, fam] : families) {
    out << "# TYPE " << name << (fam.first ? " gauge" : " counter") << "\n";
    for (const auto& s : fam.second) out << s << "\n";
  }
  return out.str();
}

json soft_switch::impl::mirror_json() const {
  const auto& m = opt_.mirror;
  return {{"enabled", m.enabled},
          {"direction", m.direction == mirror_direction::ingress  ? "ingress"
                        : m.direction == mirror_direction::egress ? "egress"
                                                                  : "both"},
          {"truncate_bytes", m.truncate_bytes},
          {"erspan", m.erspan_type},
          {"session_id", m.session_id},
          {"pfc_tx", m.pfc_tx},
          {"arrivals", m.arrivals},
          {"port", opt_.mirror_ifname}};
}

json soft_switch::impl::faults_json() const {
  json a = json::array();
  static constexpr const char* kinds[] = {"drop", "mark", "delay", "pfc_storm"};
  for (const auto& f : faults_) {
    json j = {{"id", f.id}, {"kind", kinds[static_cast<int>(f.spec.kind)]}, {"port", f.port},
              {"hits", f.hits}, {"done", f.done}};
    if (f.spec.kind == fault_kind::drop || f.spec.kind == fault_kind::mark)
      j.update({{"dest_qp", f.spec.dest_qp}, {"nth", f.spec.nth}, {"every", f.spec.every}, {"matched", f.matched}});
    if (f.spec.kind == fault_kind::delay) j["delay_ns"] = f.spec.delay_ns;
    if (f.spec.kind == fault_kind::pfc_storm)
      j.update({{"priority", f.spec.priority}, {"quanta", f.spec.quanta}, {"interval_ns", f.spec.interval_ns},
                {"count", f.spec.count}});
    a.push_back(std::move(j));
  }
  return a;
}

json soft_switch::impl::status_json() {
  json ports = json::array();
  for (std::size_t p = 0; p < ports_.size(); ++p)
    ports.push_back({{"index", p},
                     {"name", ports_[p].name()},
                     {"mac", format_mac(opt_.ports[p].mac)},
                     {"rate_bps", opt_.settings.model.ports[p].rate_bps},
                     {"rate_pps", opt_.port_rate_pps}});
  const std::int64_t now = clock_.now_ns();
  return {{"ok", true},
          {"ports", std::move(ports)},
          {"mirror", mirror_json()},
          {"clock", "CLOCK_MONOTONIC"},
          {"now_ns", now},
          {"realtime_offset_ns", realtime_offset_ns()},
          {"uptime_ns", now - started_ns_},
          {"ring", opt_.ring.version == ring_version::v2 ? "tpacket_v2" : "tpacket_v3"},
          {"ring_frames", opt_.ring.frames},
          {"scheduling", scheduling_},
          {"response_budget_ns", opt_.response_budget_ns},
          {"pool", {{"slots", slots_}, {"free", free_.size()}}}};
}

}  // namespace rocelab::fabric::soft_switch

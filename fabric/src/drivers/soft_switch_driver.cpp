#include "rocelab/fabric/drivers/soft_switch_driver.hpp"

#include <set>

#include "rocelab/fabric/soft_switch/control_client.hpp"

namespace rocelab::fabric::drivers {

using nlohmann::json;

result<std::unique_ptr<soft_switch_driver>> soft_switch_driver::connect(soft_switch_driver_options options) {
  std::unique_ptr<soft_switch_driver> d(new soft_switch_driver(std::move(options)));
  auto st = d->call({{"op", "status"}});
  if (!st.ok()) return st.error();
  if (!st->contains("ports") || !(*st)["ports"].is_array())
    return status(error_code::malformed_input, "soft switch at " + d->options_.control_socket + ": status has no ports");
  for (const auto& p : (*st)["ports"]) {
    if (!p.is_object() || !p.contains("name") || !p["name"].is_string())
      return status(error_code::malformed_input, "soft switch at " + d->options_.control_socket +
                                                     ": status ports: expected objects with a string name, found " +
                                                     p.dump());
    d->port_names_.push_back(p["name"].get<std::string>());
  }
  return d;
}

result<json> soft_switch_driver::call(const json& request) {
  const std::string context = "soft switch at " + options_.control_socket + ", " + request.value("op", "?");
  // A connection per call: the switch serves one line per request, and a driver may sit
  // idle for a whole run between its apply and its restore.
  auto client = soft_switch::control_client::connect(options_.control_socket, options_.timeout);
  if (!client.ok()) return client.error().with_context(context);
  auto response = client->call(request, options_.timeout);
  if (!response.ok()) return response.error().with_context(context);
  if (!response->is_object())
    return status(error_code::malformed_input,
                  context + ": expected an object as the response, found " + std::string(response->type_name()));
  const auto ok = response->find("ok");
  if (ok == response->end() || !ok->is_boolean() || !ok->get<bool>()) {
    const auto error = response->find("error");
    std::string message = error != response->end() && error->is_string() ? error->get<std::string>() : "failed";
    if (const auto field = response->find("field"); field != response->end() && field->is_string())
      message = field->get<std::string>() + ": " + message;
    return status(error_code::invalid_argument, context + ": " + message);
  }
  return *response;
}

result<int> soft_switch_driver::port_index(const std::string& name) const {
  for (std::size_t i = 0; i < port_names_.size(); ++i)
    if (port_names_[i] == name) return static_cast<int>(i);
  std::string known;
  for (const auto& n : port_names_) known += (known.empty() ? "" : ", ") + n;
  return status(error_code::not_found, "soft switch has no port '" + name + "' (ports: " + known + ")");
}

namespace {

// The switch-wide 64- and 8-entry class tables: their value is the whole array.
bool class_table(std::string_view field) { return field == "dscp_to_tc" || field == "pcp_to_tc"; }

json at(const json& config, const char* field, int port, int priority = -1) {
  const json& v = config.at(field);
  if (!v.is_array() || class_table(field)) return v;
  const json& per_port = v.at(static_cast<std::size_t>(port));
  return priority >= 0 && per_port.is_array() ? per_port.at(static_cast<std::size_t>(priority)) : per_port;
}

mirror_direction direction_of(const std::string& s) {
  return s == "ingress" ? mirror_direction::rx : s == "egress" ? mirror_direction::tx : mirror_direction::both;
}
const char* soft_direction(mirror_direction d) {
  return d == mirror_direction::rx ? "ingress" : d == mirror_direction::tx ? "egress" : "both";
}

}  // namespace

result<switch_settings> soft_switch_driver::read_settings(const std::vector<std::string>& ports) {
  auto config = call({{"op", "config"}});
  if (!config.ok()) return config.error();
  const json& c = (*config)["config"];
  auto mirror = call({{"op", "mirror"}});
  if (!mirror.ok()) return mirror.error();
  switch_settings out;
  try {
    const auto lossless = c.at("lossless_priorities").get<std::int64_t>();
    for (const auto& name : ports) {
      auto p = port_index(name);
      if (!p.ok()) return p.error();
      pfc_setting pfc{name, {}};
      for (int q = 0; q < 8; ++q) {
        if (lossless & (1 << q)) pfc.priorities.push_back(static_cast<std::uint8_t>(q));
        out.ecn.push_back({name, static_cast<std::uint8_t>(q), at(c, "queue.ecn.enabled", *p, q).get<bool>(),
                           at(c, "queue.ecn.kmin_bytes", *p, q).get<std::int64_t>(),
                           at(c, "queue.ecn.kmax_bytes", *p, q).get<std::int64_t>(),
                           at(c, "queue.ecn.pmax", *p, q).get<double>()});
        out.buffers.push_back({name, static_cast<std::uint8_t>(q), at(c, "pg.reserve_bytes", *p, q).get<std::int64_t>(),
                               at(c, "pg.headroom_bytes", *p, q).get<std::int64_t>(),
                               at(c, "pg.xon_bytes", *p, q).get<std::int64_t>(),
                               at(c, "pg.xon_offset_bytes", *p, q).get<std::int64_t>(),
                               static_cast<int>(at(c, "pg.dynamic_th", *p, q).get<std::int64_t>())});
      }
      out.pfc.push_back(std::move(pfc));
      dscp_map_setting map{name, {}};
      const json& table = c.at("dscp_to_tc");
      for (std::size_t d = 0; d < table.size() && d < 64; ++d)
        map.dscp_to_tc[static_cast<std::uint8_t>(d)] = table[d].get<std::uint8_t>();
      out.dscp_maps.push_back(std::move(map));
    }
    const json& m = (*mirror)["mirror"];
    mirror_setting ms;
    ms.enabled = m.at("enabled").get<bool>();
    ms.direction = direction_of(m.at("direction").get<std::string>());
    ms.truncate_bytes = m.at("truncate_bytes").get<std::uint32_t>();
    ms.destination_port = m.value("port", "");
    out.mirror = ms;
  } catch (const json::exception& e) {
    return status(error_code::malformed_input, "soft switch at " + options_.control_socket +
                                                   ": unexpected config shape: " + e.what());
  }
  return out;
}

status soft_switch_driver::apply(const switch_settings& settings) {
  const std::string context = "applying switch settings to the soft switch at " + options_.control_socket;
  ROCELAB_RETURN_IF_ERROR(validate(settings).with_context(context));
  json fields = json::array();
  auto add = [&](const char* field, json value, const std::string& port, int priority) -> status {
    auto p = port_index(port);
    if (!p.ok()) return p.error();
    json a = {{"field", field}, {"value", std::move(value)}, {"port", *p}};
    if (priority >= 0) a["priority"] = priority;
    fields.push_back(std::move(a));
    return status::success();
  };
  for (const auto& e : settings.ecn) {
    ROCELAB_RETURN_IF_ERROR(add("queue.ecn.enabled", e.enabled, e.port, e.queue).with_context(context));
    ROCELAB_RETURN_IF_ERROR(add("queue.ecn.kmin_bytes", e.kmin_bytes, e.port, e.queue).with_context(context));
    ROCELAB_RETURN_IF_ERROR(add("queue.ecn.kmax_bytes", e.kmax_bytes, e.port, e.queue).with_context(context));
    ROCELAB_RETURN_IF_ERROR(add("queue.ecn.pmax", e.pmax, e.port, e.queue).with_context(context));
  }
  for (const auto& b : settings.buffers) {
    const int pg = b.priority_group;
    ROCELAB_RETURN_IF_ERROR(add("pg.reserve_bytes", b.size_bytes, b.port, pg).with_context(context));
    ROCELAB_RETURN_IF_ERROR(add("pg.headroom_bytes", b.xoff_bytes, b.port, pg).with_context(context));
    ROCELAB_RETURN_IF_ERROR(add("pg.xon_bytes", b.xon_bytes, b.port, pg).with_context(context));
    ROCELAB_RETURN_IF_ERROR(add("pg.xon_offset_bytes", b.xon_offset_bytes, b.port, pg).with_context(context));
    ROCELAB_RETURN_IF_ERROR(add("pg.dynamic_th", b.dynamic_th, b.port, pg).with_context(context));
  }
  if (!settings.pfc.empty()) {
    std::set<std::uint8_t> first(settings.pfc[0].priorities.begin(), settings.pfc[0].priorities.end());
    for (const auto& p : settings.pfc) {
      ROCELAB_RETURN_IF_ERROR(port_index(p.port).error().with_context(context));
      if (std::set<std::uint8_t>(p.priorities.begin(), p.priorities.end()) != first)
        return {error_code::unsupported, context + ": the soft switch's PFC enable is switch-wide; " + p.port +
                                             " asks for other priorities than " + settings.pfc[0].port};
    }
    std::int64_t mask = 0;
    for (auto q : first) mask |= std::int64_t{1} << q;
    fields.push_back({{"field", "lossless_priorities"}, {"value", mask}});
  }
  if (!settings.dscp_maps.empty()) {
    // One map for the whole switch, as its PFC enable.
    const auto& first = settings.dscp_maps[0];
    json entries = json::object();
    for (const auto& d : settings.dscp_maps) {
      ROCELAB_RETURN_IF_ERROR(port_index(d.port).error().with_context(context));
      if (d.dscp_to_tc != first.dscp_to_tc)
        return {error_code::unsupported, context + ": the soft switch's DSCP map is switch-wide; " + d.port +
                                             " asks for other entries than " + first.port};
    }
    for (const auto& [dscp, tc] : first.dscp_to_tc) entries[std::to_string(dscp)] = tc;
    fields.push_back({{"field", "dscp_to_tc"}, {"value", std::move(entries)}});
  }

  std::optional<json> mirror_before;
  if (settings.mirror && !snapshot_mirror_) {
    auto m = call({{"op", "mirror"}});
    if (!m.ok()) return m.error().with_context(context);
    mirror_before = (*m)["mirror"];
  }
  ROCELAB_RETURN_IF_ERROR(apply_fields(fields).with_context(context));
  if (mirror_before) snapshot_mirror_ = std::move(mirror_before);
  if (settings.mirror) {
    const auto& m = *settings.mirror;
    json req = {{"op", "mirror"},
                {"enabled", m.enabled},
                {"direction", soft_direction(m.direction)},
                {"truncate_bytes", m.truncate_bytes},
                {"erspan", m.dst_ip.empty() ? 0 : 2}};
    auto r = call(req);
    if (!r.ok()) return r.error().with_context(context);
  }
  return status::success();
}

status soft_switch_driver::apply_fields(const json& fields) {
  if (fields.empty()) return status::success();
  // Snapshot: the value of every (field, port, priority) about to change, unless an
  // earlier apply already holds it. A field without a port applies to every port; its
  // snapshot is port 0's value (callers set such fields alike on all ports).
  auto config = call({{"op", "config"}});
  if (!config.ok()) return config.error();
  const json& c = (*config)["config"];
  auto already = [&](const json& a) {
    for (const auto& s : snapshot_fields_)
      if (s["field"] == a["field"] && s.value("port", -1) == a.value("port", -1) &&
          s.value("priority", -1) == a.value("priority", -1))
        return true;
    return false;
  };
  json new_snapshots = json::array();
  try {
    for (const auto& a : fields) {
      if (already(a)) continue;
      json s = a;
      s["value"] = at(c, a["field"].get<std::string>().c_str(), a.value("port", 0), a.value("priority", -1));
      new_snapshots.push_back(std::move(s));
    }
  } catch (const json::exception& e) {
    return status(error_code::malformed_input, "soft switch at " + options_.control_socket +
                                                   ": its config lacks a field to snapshot (" + e.what() + ")");
  }
  for (auto& s : new_snapshots) snapshot_fields_.push_back(std::move(s));
  auto r = call({{"op", "set"}, {"fields", fields}});
  if (!r.ok()) return r.error();
  return status::success();
}

status soft_switch_driver::restore() {
  const std::string context = "restoring the soft switch at " + options_.control_socket;
  if (!snapshot_fields_.empty()) {
    auto r = call({{"op", "set"}, {"fields", snapshot_fields_}});
    if (!r.ok()) return r.error().with_context(context);
    snapshot_fields_ = json::array();
  }
  if (snapshot_mirror_) {
    const json& m = *snapshot_mirror_;
    // Whatever settable members the switch reported (pfc_tx exists in newer soft switches).
    json req = {{"op", "mirror"}};
    for (const char* k : {"enabled", "direction", "truncate_bytes", "erspan", "session_id", "pfc_tx"})
      if (m.contains(k)) req[k] = m[k];
    auto r = call(req);
    if (!r.ok()) return r.error().with_context(context);
    snapshot_mirror_.reset();
  }
  return status::success();
}

result<std::vector<switch_counter>> soft_switch_driver::read_counters() {
  auto r = call({{"op", "counters"}});
  if (!r.ok()) return r.error();
  std::vector<switch_counter> out;
  auto u = [](const json& j, const char* k) { return j.contains(k) ? j[k].get<std::uint64_t>() : std::uint64_t{0}; };
  try {
    for (const auto& p : (*r)["ports"]) {
      const std::string name = p.at("name").get<std::string>();
      const std::uint64_t drops = u(p, "ingress_limit_drops") + u(p, "headroom_drops") + u(p, "pool_drops") +
                                  u(p, "oversize_drops") + u(p, "fault_drops");
      for (const char* k : {"rx_packets", "rx_bytes", "tx_packets", "tx_bytes"}) out.push_back({name, "port", -1, k, u(p, k)});
      out.push_back({name, "port", -1, "rx_drops", drops});
      out.push_back({name, "port", -1, "tx_drops", u(p, "egress_limit_drops")});
      // The soft switch's own names with no common equivalent.
      for (const char* k : {"pfc_tx_frames", "pfc_rx_frames", "pause_rx_frames", "ce_rewrites", "ring_drops"})
        out.push_back({name, "port", -1, k, u(p, k)});
      for (const auto& q : p.at("queues")) {
        const int i = q.at("queue").get<int>();
        out.push_back({name, "queue", i, "tx_packets", u(q, "dequeued_packets")});
        out.push_back({name, "queue", i, "tx_bytes", u(q, "dequeued_bytes")});
        out.push_back({name, "queue", i, "dropped_packets", u(q, "dropped_packets")});
        // Unknown when the switch does not report it, never 0.
        out.push_back({name, "queue", i, "ecn_marked_packets", u(q, "ecn_marked"), !q.contains("ecn_marked")});
        out.push_back({name, "queue", i, "watermark_bytes", u(q, "watermark_bytes")});
      }
      for (const auto& g : p.at("pgs")) {
        const int i = g.at("pg").get<int>();
        out.push_back({name, "pg", i, "rx_packets", u(g, "rx_packets")});
        out.push_back({name, "pg", i, "dropped_packets", u(g, "dropped_packets")});
        out.push_back({name, "pg", i, "pfc_tx_frames", u(g, "xoff_sent") + u(g, "refresh_sent")});
        out.push_back({name, "pg", i, "shared_watermark_bytes", u(g, "shared_watermark_bytes")});
        out.push_back({name, "pg", i, "headroom_watermark_bytes", u(g, "headroom_watermark_bytes")});
      }
    }
    const json& b = (*r)["buffer"];
    out.push_back({"", "switch", -1, "buffer_watermark_bytes", u(b, "watermark_bytes")});
  } catch (const json::exception& e) {
    return status(error_code::malformed_input, "soft switch at " + options_.control_socket +
                                                   ": unexpected counters shape: " + e.what());
  }
  return out;
}

}  // namespace rocelab::fabric::drivers

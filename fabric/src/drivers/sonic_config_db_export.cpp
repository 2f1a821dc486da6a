// to_config_db: switch settings as config_db entries of their own, for `config load` on a
// switch (the export form; sonic_switch_driver.hpp).
#include "rocelab/fabric/drivers/sonic_switch_driver.hpp"

#include <cmath>
#include <cstdio>
#include <set>

#include "sonic_config_db_keys.hpp"

namespace rocelab::fabric::drivers {

using nlohmann::json;

using namespace sonic_keys;

namespace {

const char* sonic_direction(mirror_direction d) {
  return d == mirror_direction::rx ? "RX" : d == mirror_direction::tx ? "TX" : "BOTH";
}

}  // namespace

result<json> to_config_db(const switch_settings& settings, const sonic_options& options) {
  ROCELAB_RETURN_IF_ERROR(validate(settings).with_context("SONiC config"));
  json db = json::object();
  auto check = [](const std::string& name, const char* what) -> status {
    if (!plain_name(name)) return {error_code::invalid_argument, std::string(what) + " '" + name + "' is not a plain name"};
    return status::success();
  };
  for (const auto& e : settings.ecn) {
    ROCELAB_RETURN_IF_ERROR(check(e.port, "port"));
    const std::string profile = "ROCELAB_" + e.port + "_Q" + std::to_string(e.queue);
    if (profile.size() > 32) return status(error_code::invalid_argument, "WRED profile name " + profile + " is longer than SONiC's 32");
    const std::string kmin = std::to_string(e.kmin_bytes), kmax = std::to_string(e.kmax_bytes);
    const std::string pmax = std::to_string(static_cast<int>(std::lround(e.pmax * 100.0)));
    const std::string on = e.enabled ? "true" : "false";
    // One curve for every colour: RoCE traffic is not coloured, and SONiC's own lossless
    // profile (AZURE_LOSSLESS) sets all three alike.
    json w = {{"ecn", e.enabled ? "ecn_all" : "ecn_none"}};
    for (const char* colour : {"green", "yellow", "red"}) {
      w[std::string("wred_") + colour + "_enable"] = on;
      w[std::string(colour) + "_min_threshold"] = kmin;
      w[std::string(colour) + "_max_threshold"] = kmax;
      w[std::string(colour) + "_drop_probability"] = pmax;
    }
    db["WRED_PROFILE"][profile] = std::move(w);
    db["QUEUE"][e.port + "|" + std::to_string(e.queue)] = {{"wred_profile", profile}};
  }
  for (const auto& p : settings.pfc) {
    ROCELAB_RETURN_IF_ERROR(check(p.port, "port"));
    std::set<int> prios(p.priorities.begin(), p.priorities.end());
    std::string list;
    for (int q : prios) list += (list.empty() ? "" : ",") + std::to_string(q);
    db["PORT_QOS_MAP"][p.port] = {{"pfc_enable", list}};
  }
  for (const auto& b : settings.buffers) {
    ROCELAB_RETURN_IF_ERROR(check(b.port, "port"));
    const std::string profile = "ROCELAB_PG_" + b.port + "_" + std::to_string(b.priority_group);
    db["BUFFER_PROFILE"][profile] = {{"pool", options.lossless_pool},
                                     {"size", std::to_string(b.size_bytes)},
                                     {"xoff", std::to_string(b.xoff_bytes)},
                                     {"xon", std::to_string(b.xon_bytes)},
                                     {"xon_offset", std::to_string(b.xon_offset_bytes)},
                                     {"dynamic_th", std::to_string(b.dynamic_th)}};
    db["BUFFER_PG"][b.port + "|" + std::to_string(b.priority_group)] = {{"profile", profile}};
  }
  for (const auto& d : settings.dscp_maps) {
    ROCELAB_RETURN_IF_ERROR(check(d.port, "port"));
    ROCELAB_RETURN_IF_ERROR(check(options.dscp_to_tc_map, "DSCP_TO_TC_MAP"));
    for (const auto& [dscp, tc] : d.dscp_to_tc) {
      json& slot = db["DSCP_TO_TC_MAP"][options.dscp_to_tc_map][std::to_string(dscp)];
      if (!slot.is_null() && slot != std::to_string(tc))
        return status(error_code::unsupported, "DSCP_TO_TC_MAP " + options.dscp_to_tc_map + " is shared: DSCP " +
                                                   std::to_string(dscp) + " asked to map to two traffic classes");
      slot = std::to_string(tc);
    }
  }
  if (settings.mirror) {
    const auto& m = *settings.mirror;
    ROCELAB_RETURN_IF_ERROR(check(m.name, "mirror session"));
    if (!m.enabled) {
      db["MIRROR_SESSION"][m.name] = nullptr;
    } else {
      json s = {{"direction", sonic_direction(m.direction)}};
      std::string sources;
      for (const auto& p : m.source_ports) {
        ROCELAB_RETURN_IF_ERROR(check(p, "mirror source port"));
        sources += (sources.empty() ? "" : ",") + p;
      }
      if (sources.empty()) return status(error_code::invalid_argument, "SONiC mirror session " + m.name + ": no source ports");
      s["src_port"] = sources;
      if (!m.dst_ip.empty()) {
        char gre[8];
        std::snprintf(gre, sizeof gre, "0x%04x", m.gre_type);
        s.update({{"type", "ERSPAN"}, {"src_ip", m.src_ip}, {"dst_ip", m.dst_ip}, {"gre_type", gre},
                  {"dscp", std::to_string(m.dscp)}, {"ttl", std::to_string(m.ttl)}});
      } else {
        ROCELAB_RETURN_IF_ERROR(check(m.destination_port, "mirror destination port"));
        s.update({{"type", "SPAN"}, {"dst_port", m.destination_port}});
      }
      db["MIRROR_SESSION"][m.name] = std::move(s);
    }
  }
  return db;
}

}  // namespace rocelab::fabric::drivers

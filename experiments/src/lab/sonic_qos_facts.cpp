#include "sonic_qos_facts.hpp"

#include <charconv>

namespace rocelab::experiments {
namespace {

using nlohmann::json;

const json& table_of(const json& db, const char* name) {
  static const json empty = json::object();
  return db.contains(name) && db[name].is_object() ? db[name] : empty;
}

std::string text(const json& entry, const char* field) {
  return entry.is_object() && entry.contains(field) && entry[field].is_string() ? entry[field].get<std::string>()
                                                                                : std::string();
}

// "AZURE", or "[TC_TO_PRIORITY_GROUP_MAP|AZURE]" as releases before 202012 wrote references.
std::string reference(std::string v) {
  if (v.size() > 2 && v.front() == '[' && v.back() == ']') {
    const auto bar = v.find('|');
    if (bar != std::string::npos) return v.substr(bar + 1, v.size() - bar - 2);
  }
  return v;
}

int small_number(std::string_view s) {
  int v = -1;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc{} && p == s.data() + s.size() && v >= 0 && v <= 7 ? v : -1;
}

// PORT_QOS_MAP binding -> the table of its maps (qos_config.j2).
constexpr std::pair<const char*, const char*> bindings[] = {
    {"tc_to_pg_map", "TC_TO_PRIORITY_GROUP_MAP"},
    {"tc_to_queue_map", "TC_TO_QUEUE_MAP"},
    {"pfc_to_queue_map", "MAP_PFC_PRIORITY_TO_QUEUE"},
    {"pfc_to_pg_map", "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP"},
};

void add_maps(const json& db, const std::string& port, switch_facts& f) {
  const json& qos = table_of(db, "PORT_QOS_MAP");
  const json none = json::object();
  const json& entry = qos.contains(port) ? qos[port] : none;
  for (const auto& [field, table] : bindings) {
    // A dump without the maps' table says nothing of them: the fact stays unknown. The
    // PFC-to-PG map exists on Mellanox and Barefoot only; elsewhere its binding is absent.
    if (!db.contains(table)) continue;
    switch_qos_map m;
    m.name = reference(text(entry, field));
    if (!m.name.empty() && table_of(db, table).contains(m.name))
      for (const auto& [from, to] : table_of(db, table)[m.name].items()) {
        const int a = small_number(from), b = small_number(to.is_string() ? to.get<std::string>() : "");
        if (a >= 0 && b >= 0) m.entries[static_cast<std::uint8_t>(a)] = static_cast<std::uint8_t>(b);
      }
    f.qos_maps[port][field] = std::move(m);
  }
}

// PGs of `port` whose BUFFER_PG profile is lossless: a profile with xoff (headroom), or NULL,
// which only the dynamic buffer model's lossless PGs carry (buffermgrd computes them).
void add_lossless_pgs(const json& db, const std::string& port, switch_facts& f) {
  if (!db.contains("BUFFER_PG")) return;
  std::vector<std::uint8_t>& out = f.lossless_pgs[port];
  for (const auto& [key, entry] : table_of(db, "BUFFER_PG").items()) {
    if (!key.starts_with(port + "|")) continue;
    const std::string range = key.substr(port.size() + 1);
    const auto dash = range.find('-');
    const int first = small_number(range.substr(0, dash));
    const int last = dash == std::string::npos ? first : small_number(range.substr(dash + 1));
    const std::string profile = reference(text(entry, "profile"));
    const json& profiles = table_of(db, "BUFFER_PROFILE");
    const bool lossless = profile == "NULL" || (profiles.contains(profile) && !text(profiles[profile], "xoff").empty());
    if (!lossless || first < 0 || last < first) continue;
    for (int pg = first; pg <= last; ++pg) out.push_back(static_cast<std::uint8_t>(pg));
  }
}

void add_watchdog(const json& db, const std::vector<std::string>& ports, switch_facts& f) {
  const json& meta = table_of(db, "DEVICE_METADATA");
  const std::string default_status = meta.contains("localhost") ? text(meta["localhost"], "default_pfcwd_status") : "";
  if (!db.contains("PFC_WD")) {
    if (default_status != "disable") {
      f.pfc_watchdog_note = "the config_db holds no PFC_WD table, and DEVICE_METADATA|localhost default_pfcwd_status is " +
                            (default_status.empty() ? std::string("absent") : default_status);
      return;
    }
    f.pfc_watchdog.emplace();  // disabled by default and never started: off everywhere
    return;
  }
  auto& out = f.pfc_watchdog.emplace();
  for (const auto& port : ports) {
    switch_pfc_watchdog w;
    if (table_of(db, "PFC_WD").contains(port)) {
      const json& e = table_of(db, "PFC_WD")[port];
      w.on = true;
      w.action = text(e, "action").empty() ? "drop" : text(e, "action");  // pfcwd's DEFAULT_ACTION
      std::uint32_t ms = 0;
      const std::string d = text(e, "detection_time");
      std::from_chars(d.data(), d.data() + d.size(), ms);
      w.detection_ms = ms;
    }
    out[port] = w;
  }
}

void add_mirrors(const json& db, switch_facts& f) {
  for (const auto& [name, s] : table_of(db, "MIRROR_SESSION").items()) {
    fabric::drivers::mirror_setting m;
    m.name = name;
    const std::string dir = text(s, "direction");
    m.direction = dir == "RX"   ? fabric::drivers::mirror_direction::rx
                  : dir == "TX" ? fabric::drivers::mirror_direction::tx
                                : fabric::drivers::mirror_direction::both;
    const std::string src = text(s, "src_port");
    for (std::size_t b = 0; b < src.size();) {
      const auto e = std::min(src.find(',', b), src.size());
      if (e > b) m.source_ports.push_back(src.substr(b, e - b));
      b = e + 1;
    }
    m.destination_port = text(s, "dst_port");
    m.dst_ip = text(s, "dst_ip");
    m.src_ip = text(s, "src_ip");
    f.mirror_settings.push_back(std::move(m));
  }
}

// What validate_mirror_session_config (sonic-utilities config/main.py) refuses a SPAN
// destination for: an L3 interface (INTERFACE), a VLAN member, a port-channel member.
void add_memberships(const json& db, switch_facts& f) {
  for (const char* table : {"INTERFACE", "VLAN_MEMBER", "PORTCHANNEL_MEMBER"})
    for (const auto& [key, entry] : table_of(db, table).items()) {
      const auto bar = key.find('|');
      const bool port_first = std::string_view(table) == "INTERFACE";
      const std::string port =
          port_first ? key.substr(0, bar) : (bar == std::string::npos ? std::string() : key.substr(bar + 1));
      if (!port.empty()) f.port_memberships[port].push_back(std::string(table) + "|" + key);
    }
}

}  // namespace

void add_sonic_qos_facts(const json& config_db, const std::vector<std::string>& ports, switch_facts& f) {
  for (const auto& port : ports) {
    add_maps(config_db, port, f);
    add_lossless_pgs(config_db, port, f);
  }
  add_watchdog(config_db, ports, f);
  add_mirrors(config_db, f);
  add_memberships(config_db, f);
}

}  // namespace rocelab::experiments

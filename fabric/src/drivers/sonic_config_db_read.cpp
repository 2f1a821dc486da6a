// Reading what a switch runs: sonic_version.yml, the shape of a config_db dump, and the
// settings it holds (sonic_switch_driver.hpp).
#include "rocelab/fabric/drivers/sonic_switch_driver.hpp"

#include <algorithm>
#include <charconv>

#include "sonic_config_db_keys.hpp"

namespace rocelab::fabric::drivers {

using nlohmann::json;

using namespace sonic_keys;

std::string sonic_version::branch_version() const {
  std::string found;
  for (std::size_t b = 0; b <= build_version.size();) {
    const auto e = std::min(build_version.find('.', b), build_version.size());
    const std::string part = build_version.substr(b, e - b);
    if (part.size() == 8 && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; }))
      found = part;  // the last one, as rdma_config_update_validator keeps it
    b = e + 1;
  }
  return found;
}

result<sonic_version> parse_sonic_version(std::string_view yml) {
  std::map<std::string, std::string> fields;
  for (std::size_t b = 0; b < yml.size();) {
    const auto e = std::min(yml.find('\n', b), yml.size());
    std::string_view line = yml.substr(b, e - b);
    b = e + 1;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || line.starts_with(" ") || line.starts_with("#")) continue;
    std::string value(line.substr(colon + 1));
    value.erase(0, value.find_first_not_of(" \t"));
    while (!value.empty() && (value.back() == ' ' || value.back() == '\r' || value.back() == '\t')) value.pop_back();
    if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') && value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    fields[std::string(line.substr(0, colon))] = value;
  }
  sonic_version v;
  v.build_version = fields["build_version"];
  v.asic_type = fields["asic_type"];
  if (v.build_version.empty() || v.asic_type.empty())
    return status(error_code::malformed_input, "sonic_version.yml: no build_version or no asic_type");
  const std::string release = fields["release"];
  if (!release.empty() && release != "none") v.release = release;
  else if (const std::string bv = v.branch_version(); !bv.empty()) v.release = bv.substr(0, 6);
  return v;
}

std::string dscp_to_tc_map_name(const json& running, const std::string& port) { return dscp_map_of(running, port); }

namespace {

// The config_db tables this driver reads and, per entry, the fields it reads. SONiC's
// config_db holds every field value as a string (redis hash fields); DSCP_TO_TC_MAP
// entries are maps of DSCP -> TC, every value read.
struct table_shape {
  const char* table;
  std::vector<const char*> fields;  // empty: every field of an entry is read
};

const std::vector<table_shape>& tables_read() {
  static const std::vector<table_shape> shapes{
      {"WRED_PROFILE", {"ecn", "wred_green_enable", "green_min_threshold", "green_max_threshold",
                        "green_drop_probability"}},
      {"QUEUE", {"wred_profile"}},
      {"PORT_QOS_MAP", {"pfc_enable", "dscp_to_tc_map"}},
      {"DSCP_TO_TC_MAP", {}},
      {"BUFFER_PG", {"profile"}},
      {"BUFFER_PROFILE", {"size", "xoff", "xon", "xon_offset", "dynamic_th"}},
      {"MIRROR_SESSION", {"direction", "src_port", "dst_port", "src_ip", "dst_ip", "dscp", "ttl"}},
      {"DEVICE_METADATA", {"hwsku"}},
  };
  return shapes;
}

std::string a_type_name(const json& j) {
  const std::string t = j.type_name();
  return (t == "array" || t == "object" ? "an " : "a ") + t;
}

}  // namespace

status check_config_db_shape(const json& config_db, const std::string& source) {
  const auto wrong = [&](const std::string& where, const char* expected, const json& found) {
    return status(error_code::malformed_input,
                  source + ": " + where + ": expected " + expected + ", found " + a_type_name(found));
  };
  if (!config_db.is_object()) return wrong("the config_db", "an object of tables", config_db);
  for (const auto& shape : tables_read()) {
    const auto table = config_db.find(shape.table);
    if (table == config_db.end()) continue;
    if (!table->is_object()) return wrong(std::string("table ") + shape.table, "an object of keys", *table);
    for (const auto& [key, entry] : table->items()) {
      const std::string where = std::string(shape.table) + "|" + key;
      if (!entry.is_object()) return wrong(where, "an object of fields", entry);
      for (const auto& [field, value] : entry.items()) {
        const bool read = shape.fields.empty() || std::any_of(shape.fields.begin(), shape.fields.end(),
                                                              [&](const char* f) { return field == f; });
        if (read && !value.is_string()) return wrong(where + " field " + field, "a string", value);
      }
    }
  }
  return status::success();
}

result<switch_settings> settings_from_config_db(const json& config_db, const std::vector<std::string>& ports,
                                                const json& generated) {
  ROCELAB_RETURN_IF_ERROR(check_config_db_shape(config_db, "config_db"));
  const json* db = &config_db;
  const json empty = json::object();
  auto table = [&](const char* name) -> const json& {
    return db->contains(name) && (*db)[name].is_object() ? (*db)[name] : empty;
  };
  switch_settings out;
  for (const auto& port : ports) {
    for (int q = 0; q < 8; ++q) {
      const std::string key = port + "|" + std::to_string(q);
      if (!table("QUEUE").contains(key)) continue;
      const std::string profile = referenced(table("QUEUE")[key], "wred_profile", "WRED_PROFILE");
      if (profile.empty() || !table("WRED_PROFILE").contains(profile)) continue;
      const json& w = table("WRED_PROFILE")[profile];
      out.ecn.push_back({port, static_cast<std::uint8_t>(q), w.value("ecn", "ecn_none") != "ecn_none",
                         to_int(w, "green_min_threshold"), to_int(w, "green_max_threshold"),
                         static_cast<double>(to_int(w, "green_drop_probability")) / 100.0});
    }
    pfc_setting pfc{port, {}};
    if (table("PORT_QOS_MAP").contains(port)) {
      const std::string list = table("PORT_QOS_MAP")[port].value("pfc_enable", "");
      for (char c : list)
        if (c >= '0' && c <= '7') pfc.priorities.push_back(static_cast<std::uint8_t>(c - '0'));
    }
    out.pfc.push_back(std::move(pfc));
    dscp_map_setting map{port, {}};
    if (const std::string name = dscp_map_of(*db, port); !name.empty() && table("DSCP_TO_TC_MAP").contains(name))
      for (const auto& [dscp, tc] : table("DSCP_TO_TC_MAP")[name].items()) {
        int d = -1, t = -1;
        std::from_chars(dscp.data(), dscp.data() + dscp.size(), d);
        const std::string tc_text = tc.is_string() ? tc.get<std::string>() : "";
        std::from_chars(tc_text.data(), tc_text.data() + tc_text.size(), t);
        if (d >= 0 && d < 64 && t >= 0 && t < 8) map.dscp_to_tc[static_cast<std::uint8_t>(d)] = static_cast<std::uint8_t>(t);
      }
    out.dscp_maps.push_back(std::move(map));
    // BUFFER_PG keys may name a range of PGs ("Ethernet0|3-4").
    for (const auto& [key, entry] : table("BUFFER_PG").items()) {
      if (!key.starts_with(port + "|")) continue;
      const std::string range = key.substr(port.size() + 1);
      const int first = range[0] - '0';
      const int last = range.size() == 3 ? range[2] - '0' : first;
      const std::string profile = referenced(entry, "profile", "BUFFER_PROFILE");
      const json* found = nullptr;
      if (profile == "NULL" && generated.contains(key) && generated[key].contains("profile"))
        found = &generated[key]["profile"];  // the dynamic model's, from APPL_DB
      else if (table("BUFFER_PROFILE").contains(profile))
        found = &table("BUFFER_PROFILE")[profile];
      if (found == nullptr) continue;
      const json& b = *found;
      for (int pg = first; pg <= last && pg >= 0 && pg < 8; ++pg)
        out.buffers.push_back({port, static_cast<std::uint8_t>(pg), to_int(b, "size"), to_int(b, "xoff"),
                               to_int(b, "xon"), to_int(b, "xon_offset"), static_cast<int>(to_int(b, "dynamic_th"))});
    }
  }
  for (const auto& [name, s] : table("MIRROR_SESSION").items()) {
    mirror_setting m;
    m.name = name;
    const std::string dir = s.value("direction", "BOTH");
    m.direction = dir == "RX" ? mirror_direction::rx : dir == "TX" ? mirror_direction::tx : mirror_direction::both;
    const std::string src = s.value("src_port", "");
    for (std::size_t b = 0; b < src.size();) {
      const auto e = src.find(',', b);
      m.source_ports.push_back(src.substr(b, e == std::string::npos ? std::string::npos : e - b));
      if (e == std::string::npos) break;
      b = e + 1;
    }
    m.destination_port = s.value("dst_port", "");
    m.src_ip = s.value("src_ip", "");
    m.dst_ip = s.value("dst_ip", "");
    m.dscp = static_cast<std::uint8_t>(to_int(s, "dscp", 8));
    m.ttl = static_cast<std::uint8_t>(to_int(s, "ttl", 64));
    if (!out.mirror || name == "rocelab") out.mirror = m;  // ours if present, else the first
    if (name == "rocelab") break;
  }
  return out;
}

}  // namespace rocelab::fabric::drivers

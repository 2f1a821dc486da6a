#include "rocelab/fabric/drivers/sonic_switch_driver.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "rocelab/fabric/drivers/process_runner.hpp"
#include "sonic_gcu_platforms.hpp"

namespace rocelab::fabric::drivers {

using nlohmann::json;

namespace {

// Port and session names go into config_db keys and remote command words: SONiC's own
// names (Ethernet8, PortChannel01, a session name) never need more than these.
bool plain_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

bool oid_name(std::string_view s) {
  if (!s.starts_with("oid:0x") || s.size() <= 6 || s.size() > 24) return false;
  return std::all_of(s.begin() + 6, s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

std::string pointer_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string ptr(const std::string& table, const std::string& key = {}, const std::string& field = {}) {
  std::string p = "/" + pointer_escape(table);
  if (!key.empty()) p += "/" + pointer_escape(key);
  if (!field.empty()) p += "/" + pointer_escape(field);
  return p;
}

const char* sonic_direction(mirror_direction d) {
  return d == mirror_direction::rx ? "RX" : d == mirror_direction::tx ? "TX" : "BOTH";
}

// Tables in the order their entries may be created: referenced before referencing.
// Removal runs the other way round.
constexpr const char* table_order[] = {"WRED_PROFILE",  "BUFFER_PROFILE", "DSCP_TO_TC_MAP", "QUEUE",
                                       "BUFFER_PG",     "PORT_QOS_MAP",   "MIRROR_SESSION"};

int rank(const std::string& table) {
  for (int i = 0; i < static_cast<int>(std::size(table_order)); ++i)
    if (table == table_order[i]) return i;
  return static_cast<int>(std::size(table_order));
}

std::vector<std::string> tables_in_order(const json& j, bool reverse) {
  std::vector<std::string> t;
  for (const auto& [name, v] : j.items()) t.push_back(name);
  std::stable_sort(t.begin(), t.end(), [&](const auto& a, const auto& b) {
    return reverse ? rank(a) > rank(b) : rank(a) < rank(b);
  });
  return t;
}

std::int64_t to_int(const json& entry, const char* field, std::int64_t fallback = 0) {
  if (!entry.is_object() || !entry.contains(field) || !entry[field].is_string()) return fallback;
  std::int64_t v = fallback;
  const std::string s = entry[field].get<std::string>();
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
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

bool apply_patch_flaps_ports(std::string_view table) {
  // patch_sorter.py RequiredValueIdentifier: a change under these keys requires
  // PORT|<port> admin_status down, which the sorter's RequiredValueMoveExtender arranges
  // by taking the port down before and bringing it up after.
  constexpr std::string_view tied_to_admin_status[] = {"BUFFER_PG",  "BUFFER_PORT_EGRESS_PROFILE_LIST",
                                                       "BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_QUEUE",
                                                       "PORT_QOS_MAP", "QUEUE"};
  return std::find(std::begin(tied_to_admin_status), std::end(tied_to_admin_status), table) !=
         std::end(tied_to_admin_status);
}

json make_apply_patch(const json& running, const json& desired) {
  json patch = json::array();
  for (const auto& table : tables_in_order(desired, false)) {
    if (apply_patch_flaps_ports(table)) continue;
    const json& keys = desired[table];
    const bool table_exists = running.contains(table) && running[table].is_object();
    json new_table = json::object();
    for (const auto& [key, entry] : keys.items()) {
      const bool key_exists = table_exists && running[table].contains(key);
      if (entry.is_null()) {
        if (key_exists) patch.push_back({{"op", "remove"}, {"path", ptr(table, key)}});
        continue;
      }
      if (!table_exists) {
        new_table[key] = entry;
      } else if (!key_exists) {
        patch.push_back({{"op", "add"}, {"path", ptr(table, key)}, {"value", entry}});
      } else {
        // "replace" where the field exists: the config updater's field validators
        // (WRED_PROFILE, BUFFER_PROFILE) allow changes to existing fields by that op only.
        const json& now = running[table][key];
        for (const auto& [field, value] : entry.items()) {
          if (now.is_object() && now.contains(field) && now[field] == value) continue;
          const char* op = now.is_object() && now.contains(field) ? "replace" : "add";
          patch.push_back({{"op", op}, {"path", ptr(table, key, field)}, {"value", value}});
        }
      }
    }
    if (!table_exists && !new_table.empty()) patch.push_back({{"op", "add"}, {"path", ptr(table)}, {"value", new_table}});
  }
  return patch;
}

namespace {

// A word for the switch's login shell: ssh joins the remote command's words with spaces,
// so every word is single-quoted ('|' in a config_db key is the shell's pipe), a quote
// inside it closed, escaped and reopened.
std::string shell_quoted(const std::string& word) {
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<std::string> db_command(std::initializer_list<std::string> words) {
  std::vector<std::string> c{"sonic-db-cli", "CONFIG_DB"};
  c.insert(c.end(), words.begin(), words.end());
  return c;
}

}  // namespace

std::vector<std::vector<std::string>> make_db_writes(const json& running, const json& desired) {
  std::vector<std::vector<std::string>> out;
  for (const auto& table : tables_in_order(desired, false)) {
    if (!apply_patch_flaps_ports(table)) continue;
    const bool table_exists = running.contains(table) && running[table].is_object();
    for (const auto& [key, entry] : desired[table].items()) {
      const std::string redis_key = shell_quoted(table + "|" + key);
      const bool key_exists = table_exists && running[table].contains(key);
      if (entry.is_null()) {
        if (key_exists) out.push_back(db_command({"DEL", redis_key}));
        continue;
      }
      const json none = json::object();
      const json& now = key_exists && running[table][key].is_object() ? running[table][key] : none;
      for (const auto& [field, value] : entry.items()) {
        if (now.contains(field) && now[field] == value) continue;
        out.push_back(db_command({"HSET", redis_key, shell_quoted(field), shell_quoted(value.get<std::string>())}));
      }
    }
  }
  return out;
}

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

namespace {

// A reference field as config_db holds it: "name", or "[TABLE|name]" in older releases.
std::string referenced(const json& entry, const char* field, const std::string& table) {
  if (!entry.is_object() || !entry.contains(field) || !entry[field].is_string()) return {};
  std::string v = entry[field].get<std::string>();
  const std::string prefix = "[" + table + "|";
  if (v.starts_with(prefix) && v.ends_with("]")) v = v.substr(prefix.size(), v.size() - prefix.size() - 1);
  return v;
}

const json& table_of(const json& db, const char* name) {
  static const json empty = json::object();
  return db.contains(name) && db[name].is_object() ? db[name] : empty;
}

// The BUFFER_PG key of `port` whose PG range ("3" or "3-4") holds `pg`, or empty.
std::string buffer_pg_key(const json& running, const std::string& port, int pg) {
  for (const auto& [key, entry] : table_of(running, "BUFFER_PG").items()) {
    if (!key.starts_with(port + "|")) continue;
    const std::string range = key.substr(port.size() + 1);
    int first = -1, last = -1;
    const auto dash = range.find('-');
    std::from_chars(range.data(), range.data() + (dash == std::string::npos ? range.size() : dash), first);
    if (dash == std::string::npos) last = first;
    else std::from_chars(range.data() + dash + 1, range.data() + range.size(), last);
    if (first >= 0 && first <= pg && pg <= last) return key;
  }
  return {};
}

// The DSCP_TO_TC_MAP a port classifies by: its PORT_QOS_MAP binding, else the global one.
std::string dscp_map_of(const json& running, const std::string& port) {
  const json& qos = table_of(running, "PORT_QOS_MAP");
  for (const std::string& key : {port, std::string("global")})
    if (qos.contains(key))
      if (auto name = referenced(qos[key], "dscp_to_tc_map", "DSCP_TO_TC_MAP"); !name.empty()) return name;
  return {};
}

// Every port a setting names goes into config_db keys and JSON pointers.
status check_names(const switch_settings& settings) {
  std::vector<std::string> ports;
  for (const auto& e : settings.ecn) ports.push_back(e.port);
  for (const auto& p : settings.pfc) ports.push_back(p.port);
  for (const auto& b : settings.buffers) ports.push_back(b.port);
  for (const auto& d : settings.dscp_maps) ports.push_back(d.port);
  if (settings.mirror) {
    ports.push_back(settings.mirror->name);
    for (const auto& p : settings.mirror->source_ports) ports.push_back(p);
  }
  for (const auto& name : ports)
    if (!plain_name(name)) return {error_code::invalid_argument, "'" + name + "' is not a plain name"};
  return status::success();
}

std::string lower_ascii(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool has_digit(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

// Sets db[table][key][field] = value unless another setting already asked for a different
// value there (shared profiles and maps): then unsupported, naming both.
status set_shared(json& db, const std::string& table, const std::string& key, const std::string& field,
                  const std::string& value, const std::string& who, std::map<std::string, std::string>& owners) {
  const std::string where = table + "|" + key + " " + field;
  json& slot = db[table][key][field];
  if (!slot.is_null() && slot != value)
    return {error_code::unsupported, where + " is shared: " + owners[where] + " asks for " + slot.get<std::string>() +
                                         ", " + who + " for " + value};
  slot = value;
  owners[where] = who;
  return status::success();
}

// A CONFIG_DB key as APPL_DB spells it ("Ethernet0|3-4" -> "Ethernet0:3-4"), as buffermgrd
// transforms it (sonic-swss cfgmgr/buffermgrdyn.cpp, transformSeperator).
std::string appl_db_key(std::string key) {
  std::replace(key.begin(), key.end(), '|', ':');
  return key;
}

// A buffer setting on a PG whose BUFFER_PG profile is NULL: under the dynamic model
// buffermgrd computes that profile (cfgmgr/buffermgrdyn.cpp, getDynamicProfileName:
// pg_lossless_<speed>_<cable>[_mtu<mtu>][_th<th>]_profile) and writes it to APPL_DB
// BUFFER_PROFILE_TABLE (updateBufferProfileToDb), and recomputes it whenever the port's
// speed, cable length or MTU changes; config apply-patch has nothing of it to change. So
// the setting is met only when the generated profile already holds it.
status check_generated_profile(const pg_buffer_setting& b, const std::string& key, const json& running,
                               const json& generated, const std::string& who) {
  const std::string model = buffer_model(running);
  const std::string where = who + ": BUFFER_PG|" + key + " has profile NULL";
  if (model != "dynamic")
    return {error_code::not_found, where + ", which only SONiC's dynamic buffer model fills in, and "
                                           "DEVICE_METADATA|localhost buffer_model is " + model + ": no profile to change"};
  const std::string appl_pg = "APPL_DB BUFFER_PG_TABLE:" + appl_db_key(key);
  const json empty = json::object();
  const json& g = generated.contains(key) ? generated[key] : empty;
  const std::string name = g.value("name", "");
  const std::string computed = " (buffer_model dynamic: buffermgrd computes the PG's lossless profile from the port's "
                               "speed and cable length)";
  if (name.empty())
    return {error_code::not_found, where + computed + ", and " + appl_pg +
                                       " names no profile: buffermgrd has not generated it (is the port admin up, with a "
                                       "CABLE_LENGTH entry?)"};
  if (!g.contains("profile"))
    return {error_code::not_found, where + computed + ": " + appl_pg + " names " + name +
                                       ", which APPL_DB BUFFER_PROFILE_TABLE does not hold"};
  const json& profile = g["profile"];
  const std::pair<const char*, std::int64_t> asked[] = {{"size", b.size_bytes},
                                                        {"xoff", b.xoff_bytes},
                                                        {"xon", b.xon_bytes},
                                                        {"xon_offset", b.xon_offset_bytes},
                                                        {"dynamic_th", b.dynamic_th}};
  for (const auto& [field, want] : asked)
    // updateBufferProfileToDb writes xon_offset only when the profile has one: absent is 0.
    if (to_int(profile, field, std::string_view(field) == "xon_offset" ? 0 : -1) != want)
      return {error_code::unsupported,
              where + computed + ": it is " + name + " (APPL_DB BUFFER_PROFILE_TABLE) with " + field + " " +
                  profile.value(field, "absent") + ", " + std::to_string(want) +
                  " asked; buffermgrd rewrites a generated profile, so config apply-patch cannot change it (give the "
                  "PG a profile of its own in BUFFER_PG, a headroom override, or change the port's CABLE_LENGTH)"};
  return status::success();
}

// Every WRED_PROFILE and BUFFER_PROFILE field `db` changes on `running` against the
// config updater's rules of the switch's release (sonic_gcu_platforms.hpp), before
// anything is sent: an unchanged field is not in the patch, so it needs no rule.
status check_gcu_rules(const json& db, const json& running, const sonic_options& options) {
  std::vector<std::pair<std::string, std::string>> changed;  // table, "key/field"
  for (const char* table : {"WRED_PROFILE", "BUFFER_PROFILE"})
    for (const auto& [key, entry] : table_of(db, table).items()) {
      const json& now = table_of(running, table).contains(key) ? table_of(running, table)[key] : json::object();
      for (const auto& [field, value] : entry.items())
        if (!now.contains(field) || now[field] != value) changed.emplace_back(table, key + "/" + field);
    }
  if (changed.empty()) return status::success();
  const auto refused = [](const std::string& why) {
    return status(error_code::unsupported, why + "; set ECN and buffers with `config load` on the switch instead");
  };
  if (!options.version)
    return refused("the switch's SONiC release is not known (/etc/sonic/sonic_version.yml), and config apply-patch's "
                   "rules for WRED_PROFILE and BUFFER_PROFILE differ per release");
  const sonic_version& v = *options.version;
  if (!gcu_release_known(v.release))
    return refused("SONiC release '" + (v.release.empty() ? v.build_version : v.release) +
                   "': rocelab holds config apply-patch's WRED_PROFILE and BUFFER_PROFILE rules of releases 202305, "
                   "202311, 202405 and 202411 only");
  const json& meta = table_of(running, "DEVICE_METADATA");
  const std::string hwsku = meta.contains("localhost") ? meta["localhost"].value("hwsku", "") : "";
  const auto asic = gcu_rdma_asic(v.release, v.asic_type, hwsku);
  if (!asic)
    return refused("HWSKU '" + hwsku + "' (asic_type " + v.asic_type + ") is not a platform whose WRED_PROFILE and "
                   "BUFFER_PROFILE config apply-patch of SONiC " + v.release +
                   " may change (gcu_field_operation_validators.conf.json)");
  for (const auto& [table, key_field] : changed) {
    // The validator drops path elements with a digit, then lowercases: AZURE_LOSSLESS
    // stays in the field name, pg_lossless_100000_5m_profile does not.
    const auto slash = key_field.find('/');
    const std::string key = key_field.substr(0, slash), field = key_field.substr(slash + 1);
    const std::string cleaned = has_digit(key) ? field : lower_ascii(key) + "/" + field;
    if (const std::string why = gcu_field_refusal(table, cleaned, *asic, v.branch_version()); !why.empty())
      return refused("config apply-patch of SONiC " + v.release + " refuses " + table + "|" + key + " " + field +
                     " on " + hwsku + " (" + *asic + "): " + why);
  }
  return status::success();
}

}  // namespace

std::string buffer_model(const json& config_db) {
  const json& meta = table_of(config_db, "DEVICE_METADATA");
  if (!meta.contains("localhost") || !meta["localhost"].is_object()) return "traditional";
  const json& m = meta["localhost"];
  return m.contains("buffer_model") && m["buffer_model"] == "dynamic" ? "dynamic" : "traditional";
}

std::vector<std::string> null_profile_buffer_pgs(const json& config_db, const std::vector<std::string>& ports) {
  std::vector<std::string> out;
  for (const auto& [key, entry] : table_of(config_db, "BUFFER_PG").items())
    for (const auto& port : ports)
      if (key.starts_with(port + "|") && referenced(entry, "profile", "BUFFER_PROFILE") == "NULL") out.push_back(key);
  return out;
}

json generated_buffer_profiles(const std::vector<std::string>& null_pgs,
                               const std::map<std::string, std::map<std::string, std::string>>& appl_db) {
  json out = json::object();
  for (const auto& key : null_pgs) {
    json g = {{"name", ""}};
    if (auto pg = appl_db.find("BUFFER_PG_TABLE:" + appl_db_key(key)); pg != appl_db.end()) {
      // Older releases wrote references bracketed: [BUFFER_PROFILE_TABLE:name].
      std::string name = pg->second.contains("profile") ? pg->second.at("profile") : "";
      constexpr std::string_view prefix = "[BUFFER_PROFILE_TABLE:";
      if (name.starts_with(prefix) && name.ends_with("]")) name = name.substr(prefix.size(), name.size() - prefix.size() - 1);
      g["name"] = name;
      if (auto p = appl_db.find("BUFFER_PROFILE_TABLE:" + name); !name.empty() && p != appl_db.end() && !p->second.empty())
        g["profile"] = p->second;
    }
    out[key] = std::move(g);
  }
  return out;
}

namespace {

// The sonic-db-cli writes that put a table's snapshotted fields back: a key that did not
// exist is deleted, a field it did not have deleted, any other field set to its old value.
void restore_in_place(const std::string& table, const json& now_table, const std::map<std::string, json>& snapshot,
                      std::vector<std::vector<std::string>>& writes) {
  for (const auto& [key, snap] : snapshot) {
    const std::string redis_key = shell_quoted(table + "|" + key);
    const json& previous = snap["previous"];
    const bool key_now = now_table.contains(key);
    if (previous.is_null()) {
      if (key_now) writes.push_back(db_command({"DEL", redis_key}));
      continue;
    }
    const json none = json::object();
    const json& now = key_now ? now_table[key] : none;
    for (const auto& f : snap["fields"]) {
      const std::string field = f.get<std::string>();
      const bool had = previous.contains(field), has = now.contains(field);
      if (had && has && previous[field] == now[field]) continue;
      if (had)
        writes.push_back(db_command({"HSET", redis_key, shell_quoted(field), shell_quoted(previous[field].get<std::string>())}));
      else if (has)
        writes.push_back(db_command({"HDEL", redis_key, shell_quoted(field)}));
    }
  }
}

}  // namespace

result<json> to_config_db_changes(const switch_settings& settings, const json& running, const sonic_options& options,
                                  const json& generated) {
  ROCELAB_RETURN_IF_ERROR(validate(settings).with_context("SONiC config"));
  ROCELAB_RETURN_IF_ERROR(check_config_db_shape(running, "config_db"));
  ROCELAB_RETURN_IF_ERROR(check_names(settings));
  json db = json::object();
  std::map<std::string, std::string> owners;
  auto unsupported = [](const std::string& s) { return status(error_code::unsupported, s); };

  // ECN: the green thresholds of the lossless WRED profile, the one field set the config
  // updater lets change (a replace of AZURE_LOSSLESS green_min_threshold,
  // green_max_threshold, green_drop_probability); the queue is bound to it.
  constexpr const char* lossless_wred = "AZURE_LOSSLESS";
  for (const auto& e : settings.ecn) {
    const std::string who = "ECN of " + e.port + " queue " + std::to_string(e.queue);
    if (!table_of(running, "WRED_PROFILE").contains(lossless_wred))
      return unsupported(who + ": the switch has no WRED_PROFILE " + lossless_wred + ", the only profile config "
                         "apply-patch lets change");
    const json& profile = table_of(running, "WRED_PROFILE")[lossless_wred];
    if (!e.enabled)
      return unsupported(who + ": turning ECN off changes WRED_PROFILE ecn, which config apply-patch does not allow");
    if (profile.value("ecn", "ecn_none") == "ecn_none" || profile.value("wred_green_enable", "false") != "true")
      return unsupported(who + ": WRED_PROFILE " + lossless_wred + " does not mark green packets (ecn " +
                         profile.value("ecn", "absent") + ", wred_green_enable " +
                         profile.value("wred_green_enable", "absent") + ") and config apply-patch cannot change that");
    const std::string pmax = std::to_string(static_cast<int>(std::lround(e.pmax * 100.0)));
    ROCELAB_RETURN_IF_ERROR(
        set_shared(db, "WRED_PROFILE", lossless_wred, "green_min_threshold", std::to_string(e.kmin_bytes), who, owners));
    ROCELAB_RETURN_IF_ERROR(
        set_shared(db, "WRED_PROFILE", lossless_wred, "green_max_threshold", std::to_string(e.kmax_bytes), who, owners));
    ROCELAB_RETURN_IF_ERROR(set_shared(db, "WRED_PROFILE", lossless_wred, "green_drop_probability", pmax, who, owners));
    db["QUEUE"][e.port + "|" + std::to_string(e.queue)]["wred_profile"] = lossless_wred;
  }
  for (const auto& p : settings.pfc) {
    std::set<int> prios(p.priorities.begin(), p.priorities.end());
    std::string list;
    for (int q : prios) list += (list.empty() ? "" : ",") + std::to_string(q);
    db["PORT_QOS_MAP"][p.port]["pfc_enable"] = list;
  }
  // Buffers: xoff and dynamic_th of the profile the PG's BUFFER_PG entry names (a single PG
  // or a range such as Ethernet0|3-4): config apply-patch replaces only those two fields
  // of a BUFFER_PROFILE, and no BUFFER_PG key is written, so none is ever removed.
  for (const auto& b : settings.buffers) {
    const std::string who = "buffer of " + b.port + " PG " + std::to_string(b.priority_group);
    const std::string key = buffer_pg_key(running, b.port, b.priority_group);
    if (key.empty()) return status(error_code::not_found, who + ": no BUFFER_PG entry covers it");
    const std::string name = referenced(table_of(running, "BUFFER_PG")[key], "profile", "BUFFER_PROFILE");
    if (name == "NULL") {
      ROCELAB_RETURN_IF_ERROR(check_generated_profile(b, key, running, generated, who));
      continue;
    }
    if (!table_of(running, "BUFFER_PROFILE").contains(name))
      return status(error_code::not_found, who + ": BUFFER_PG|" + key + " names profile '" + name +
                                               "', which BUFFER_PROFILE does not hold");
    // The updater strips path elements with a digit before matching "xoff"/"dynamic_th":
    // only profiles named like pg_lossless_100000_5m_profile can be changed.
    if (!has_digit(name))
      return unsupported(who + ": config apply-patch changes BUFFER_PROFILE fields only of profiles whose name has "
                         "a digit (pg_lossless_<speed>_<cable>_profile); BUFFER_PG|" + key + " names " + name);
    const json& profile = table_of(running, "BUFFER_PROFILE")[name];
    const std::pair<const char*, std::int64_t> fixed[] = {
        {"size", b.size_bytes}, {"xon", b.xon_bytes}, {"xon_offset", b.xon_offset_bytes}};
    for (const auto& [field, want] : fixed)
      if (to_int(profile, field, -1) != want)
        return unsupported(who + ": BUFFER_PROFILE " + name + " " + field + " is " + profile.value(field, "absent") +
                           ", " + std::to_string(want) + " asked; config apply-patch changes only xoff and dynamic_th");
    ROCELAB_RETURN_IF_ERROR(
        set_shared(db, "BUFFER_PROFILE", name, "xoff", std::to_string(b.xoff_bytes), who, owners));
    ROCELAB_RETURN_IF_ERROR(
        set_shared(db, "BUFFER_PROFILE", name, "dynamic_th", std::to_string(b.dynamic_th), who, owners));
  }
  // The lossless class: entries of the DSCP_TO_TC_MAP each port is bound to.
  for (const auto& d : settings.dscp_maps) {
    const std::string who = "DSCP map of " + d.port;
    const std::string map = dscp_map_of(running, d.port);
    if (map.empty()) return status(error_code::not_found, who + ": PORT_QOS_MAP binds no dscp_to_tc_map to it");
    if (!table_of(running, "DSCP_TO_TC_MAP").contains(map))
      return status(error_code::not_found, who + ": DSCP_TO_TC_MAP " + map + " does not exist");
    for (const auto& [dscp, tc] : d.dscp_to_tc)
      ROCELAB_RETURN_IF_ERROR(
          set_shared(db, "DSCP_TO_TC_MAP", map, std::to_string(dscp), std::to_string(tc), who, owners));
  }
  if (options.check_gcu_hwsku) ROCELAB_RETURN_IF_ERROR(check_gcu_rules(db, running, options));
  if (settings.mirror) {
    // MIRROR_SESSION has no field validator: the session is added and removed whole.
    auto whole = to_config_db(switch_settings{{}, {}, {}, settings.mirror, {}}, options);
    if (!whole.ok()) return whole.error();
    db["MIRROR_SESSION"] = (*whole)["MIRROR_SESSION"];
  }
  return db;
}

result<std::unique_ptr<sonic_switch_driver>> sonic_switch_driver::open(sonic_options options) {
  if (options.host.empty() || options.host.starts_with("-"))
    return status(error_code::invalid_argument, "SONiC driver: '" + options.host + "' is not an ssh destination");
  for (const auto& p : options.ports)
    if (!plain_name(p)) return status(error_code::invalid_argument, "SONiC driver: port '" + p + "' is not a plain name");
  if (!plain_name(options.lossless_pool))
    return status(error_code::invalid_argument, "SONiC driver: pool '" + options.lossless_pool + "' is not a plain name");
  return std::unique_ptr<sonic_switch_driver>(new sonic_switch_driver(std::move(options)));
}

result<std::string> sonic_switch_driver::remote(const std::vector<std::string>& command, const std::string& input) {
  std::vector<std::string> argv{options_.ssh_program, "-o", "BatchMode=yes"};
  argv.insert(argv.end(), options_.ssh_options.begin(), options_.ssh_options.end());
  argv.push_back("--");
  argv.push_back(options_.host);
  argv.insert(argv.end(), command.begin(), command.end());
  std::string what;
  for (const auto& w : command) what += (what.empty() ? "" : " ") + w;
  auto r = run_process(argv, input, options_.timeout);
  if (!r.ok()) return r.error().with_context("SONiC " + options_.host + ": " + what);
  if (r->exit_code != 0) {
    std::string err = r->err.empty() ? r->out : r->err;
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
    return status(error_code::io_error, "SONiC " + options_.host + ": " + what + " exited with " +
                                            std::to_string(r->exit_code) + ": " + err);
  }
  return std::move(r->out);
}

result<json> sonic_switch_driver::read_config_db() {
  auto out = remote({"sudo", "sonic-cfggen", "-d", "--print-data"});
  if (!out.ok()) return out.error();
  auto j = json::parse(*out, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return status(error_code::malformed_input, "SONiC " + options_.host + ": sonic-cfggen printed no JSON object");
  ROCELAB_RETURN_IF_ERROR(check_config_db_shape(j, "SONiC " + options_.host + " config_db"));
  return j;
}

status sonic_switch_driver::apply_patch(const json& patch, const std::string& context) {
  if (patch.empty()) return status::success();
  auto out = remote({"sudo", "config", "apply-patch", "/dev/stdin"}, patch.dump(2) + "\n");
  if (!out.ok()) return out.error().with_context(context);
  return status::success();
}

status sonic_switch_driver::apply(const switch_settings& settings) {
  const std::string context = "applying switch settings to SONiC " + options_.host;
  ROCELAB_RETURN_IF_ERROR(validate(settings).with_context(context));
  ROCELAB_RETURN_IF_ERROR(check_names(settings).with_context(context));
  auto running = read_config_db();
  if (!running.ok()) return running.error().with_context(context);
  std::vector<std::string> buffer_ports;
  for (const auto& b : settings.buffers) buffer_ports.push_back(b.port);
  auto generated = read_generated_profiles(*running, buffer_ports);
  if (!generated.ok()) return generated.error().with_context(context);
  sonic_options options = options_;
  if (!options.version && options.check_gcu_hwsku && (!settings.ecn.empty() || !settings.buffers.empty())) {
    auto version = read_version();
    if (!version.ok()) return version.error().with_context(context);
    options.version = *version;
  }
  auto desired = to_config_db_changes(settings, *running, options, *generated);
  if (!desired.ok()) return desired.error().with_context(context);
  // Snapshot every key about to change, once, before writing anything: its previous entry
  // (null: absent) and the fields written, which are all that restore() puts back.
  for (const auto& [table, keys] : desired->items()) {
    const bool table_exists = running->contains(table) && (*running)[table].is_object() && !(*running)[table].empty();
    if (!table_exists && !snapshot_.contains(table) &&
        std::find(tables_created_.begin(), tables_created_.end(), table) == tables_created_.end())
      tables_created_.push_back(table);
    for (const auto& [key, entry] : keys.items()) {
      auto& t = snapshot_[table];
      if (!t.contains(key))
        t[key] = {{"previous", table_exists && (*running)[table].contains(key) ? (*running)[table][key] : json(nullptr)},
                  {"fields", json::array()}};
      json& fields = t[key]["fields"];
      if (entry.is_object())
        for (const auto& [field, v] : entry.items())
          if (std::find(fields.begin(), fields.end(), field) == fields.end()) fields.push_back(field);
    }
  }
  // The patch first: the QUEUE bindings written after it name a profile already there.
  ROCELAB_RETURN_IF_ERROR(apply_patch(make_apply_patch(*running, *desired), context));
  return write_db(make_db_writes(*running, *desired), context);
}

status sonic_switch_driver::write_db(const std::vector<std::vector<std::string>>& commands, const std::string& context) {
  if (commands.empty()) return status::success();
  std::vector<std::string> command;
  for (const auto& c : commands) {
    if (!command.empty()) command.push_back("&&");
    command.insert(command.end(), c.begin(), c.end());
  }
  auto out = remote(command);
  if (!out.ok()) return out.error().with_context(context + " (config_db fields written in place, no port flap)");
  return status::success();
}

result<sonic_version> sonic_switch_driver::read_version() {
  auto out = remote({"cat", "/etc/sonic/sonic_version.yml"});
  if (!out.ok()) return out.error().with_context("reading the SONiC version");
  auto v = parse_sonic_version(*out);
  if (!v.ok()) return v.error().with_context("SONiC " + options_.host);
  return v;
}

status sonic_switch_driver::restore() {
  const std::string context = "restoring SONiC " + options_.host;
  if (snapshot_.empty()) return status::success();
  auto running = read_config_db();
  if (!running.ok()) return running.error().with_context(context);
  json patch = json::array();
  std::vector<std::vector<std::string>> writes;  // tables apply-patch would flap ports for
  json tables = json::object();
  for (const auto& [table, keys] : snapshot_) tables[table] = true;
  // Referencing entries first (QUEUE before its WRED_PROFILE), so nothing dangles.
  for (const auto& table : tables_in_order(tables, true)) {
    const bool created = std::find(tables_created_.begin(), tables_created_.end(), table) != tables_created_.end();
    const bool exists_now = running->contains(table) && (*running)[table].is_object();
    if (apply_patch_flaps_ports(table)) {
      restore_in_place(table, exists_now ? (*running)[table] : json::object(), snapshot_.at(table), writes);
      continue;
    }
    if (created) {
      // The table did not exist: remove it whole unless someone else added keys since.
      bool only_ours = exists_now;
      if (exists_now)
        for (const auto& [key, v] : (*running)[table].items())
          if (!snapshot_.at(table).contains(key)) only_ours = false;
      if (only_ours) {
        patch.push_back({{"op", "remove"}, {"path", ptr(table)}});
        continue;
      }
    }
    for (const auto& [key, snap] : snapshot_.at(table)) {
      const json& previous = snap["previous"];
      const bool key_now = exists_now && (*running)[table].contains(key);
      if (previous.is_null()) {
        if (key_now) patch.push_back({{"op", "remove"}, {"path", ptr(table, key)}});
      } else if (!exists_now) {
        patch.push_back({{"op", "add"}, {"path", ptr(table)}, {"value", json{{key, previous}}}});
      } else if (!key_now) {
        patch.push_back({{"op", "add"}, {"path", ptr(table, key)}, {"value", previous}});
      } else {
        // Field by field, only the fields apply() wrote: a key that existed is never
        // removed (a BUFFER_PG range key, a shared profile), and the updater's field
        // validators see the same replace ops as at apply.
        const json& now = (*running)[table][key];
        for (const auto& f : snap["fields"]) {
          const std::string field = f.get<std::string>();
          const bool had = previous.contains(field), has = now.contains(field);
          if (had && has && previous[field] == now[field]) continue;
          if (had) patch.push_back({{"op", has ? "replace" : "add"}, {"path", ptr(table, key, field)}, {"value", previous[field]}});
          else if (has) patch.push_back({{"op", "remove"}, {"path", ptr(table, key, field)}});
        }
      }
    }
  }
  // The in-place writes first: a QUEUE binding goes back before a profile it named goes.
  ROCELAB_RETURN_IF_ERROR(write_db(writes, context));
  ROCELAB_RETURN_IF_ERROR(apply_patch(patch, context));
  snapshot_.clear();
  tables_created_.clear();
  return status::success();
}

result<switch_settings> sonic_switch_driver::read_settings(const std::vector<std::string>& ports) {
  auto db = read_config_db();
  if (!db.ok()) return db.error();
  auto generated = read_generated_profiles(*db, ports);
  if (!generated.ok()) return generated.error();
  return settings_from_config_db(*db, ports, *generated);
}

result<json> sonic_switch_driver::read_generated_profiles(const json& running, const std::vector<std::string>& ports) {
  const auto null_pgs = null_profile_buffer_pgs(running, ports);
  if (null_pgs.empty() || buffer_model(running) != "dynamic") return json::object();
  const std::string context = "reading the dynamic buffer model's generated profiles (APPL_DB)";
  std::vector<std::string> pg_keys;
  for (const auto& key : null_pgs) {
    // Keys go into the remote command: port names are plain, the PG part digits and '-'.
    if (key.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-|./") != std::string::npos)
      return status(error_code::malformed_input, context + ": BUFFER_PG key '" + key + "' is not a plain name");
    pg_keys.push_back("BUFFER_PG_TABLE:" + appl_db_key(key));
  }
  auto pgs = hgetall(pg_keys, "APPL_DB");
  if (!pgs.ok()) return pgs.error().with_context(context);
  std::map<std::string, std::map<std::string, std::string>> appl_db;
  std::vector<std::string> profile_keys;
  for (std::size_t i = 0; i < pg_keys.size(); ++i) {
    appl_db[pg_keys[i]] = (*pgs)[i];
    const json names = generated_buffer_profiles({null_pgs[i]}, appl_db);
    const std::string name = names[null_pgs[i]].value("name", "");
    if (!name.empty() && plain_name(name)) profile_keys.push_back("BUFFER_PROFILE_TABLE:" + name);
  }
  if (!profile_keys.empty()) {
    auto profiles = hgetall(profile_keys, "APPL_DB");
    if (!profiles.ok()) return profiles.error().with_context(context);
    for (std::size_t i = 0; i < profile_keys.size(); ++i) appl_db[profile_keys[i]] = (*profiles)[i];
  }
  return generated_buffer_profiles(null_pgs, appl_db);
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

result<std::map<std::string, std::string>> parse_python_dict(const std::string& text) {
  std::map<std::string, std::string> out;
  std::vector<std::string> strings;
  std::size_t i = text.find('{');
  if (i == std::string::npos) {
    // An empty hash prints as {} -- and a missing key too; anything else is not a dict.
    return status(error_code::malformed_input, "not a Python dict: '" + text.substr(0, 80) + "'");
  }
  for (++i; i < text.size() && text[i] != '}'; ++i) {
    const char q = text[i];
    if (q != '\'' && q != '"') continue;
    const auto end = text.find(q, i + 1);
    if (end == std::string::npos) return status(error_code::malformed_input, "unterminated string in a Python dict");
    strings.push_back(text.substr(i + 1, end - i - 1));
    i = end;
  }
  if (strings.size() % 2 != 0) return status(error_code::malformed_input, "a Python dict with an odd number of strings");
  for (std::size_t k = 0; k < strings.size(); k += 2) out[strings[k]] = strings[k + 1];
  return out;
}

result<std::vector<std::map<std::string, std::string>>> sonic_switch_driver::hgetall(
    const std::vector<std::string>& keys, const char* db) {
  // One SSH session for every key: `sonic-db-cli ... HGETALL k1 ; sonic-db-cli ... HGETALL
  // k2 ; ...` runs in the switch's login shell; each prints its dict on one line.
  std::vector<std::string> command;
  for (const auto& key : keys) {
    if (!command.empty()) command.push_back(";");
    command.insert(command.end(), {"sonic-db-cli", db, "HGETALL", key});
  }
  auto out = remote(command);
  if (!out.ok()) return out.error();
  std::vector<std::string> lines;
  for (std::size_t b = 0; b < out->size();) {
    const auto e = out->find('\n', b);
    std::string line = out->substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (line.find_first_not_of(" \r\t") != std::string::npos) lines.push_back(std::move(line));
    if (e == std::string::npos) break;
    b = e + 1;
  }
  if (lines.size() != keys.size())
    return status(error_code::malformed_input, "SONiC " + options_.host + ": " + std::to_string(keys.size()) +
                                                   " HGETALLs printed " + std::to_string(lines.size()) + " lines");
  std::vector<std::map<std::string, std::string>> values;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto d = parse_python_dict(lines[i]);
    if (!d.ok()) return d.error().with_context("SONiC " + options_.host + ": HGETALL " + keys[i]);
    values.push_back(std::move(*d));
  }
  return values;
}

namespace {

// SAI counter names onto switch_driver.hpp's vocabulary.
const std::map<std::string, std::string>& port_names() {
  static const std::map<std::string, std::string> m{
      {"SAI_PORT_STAT_IF_IN_UCAST_PKTS", "rx_packets"}, {"SAI_PORT_STAT_IF_IN_OCTETS", "rx_bytes"},
      {"SAI_PORT_STAT_IF_OUT_UCAST_PKTS", "tx_packets"}, {"SAI_PORT_STAT_IF_OUT_OCTETS", "tx_bytes"},
      {"SAI_PORT_STAT_IF_IN_DISCARDS", "rx_drops"},      {"SAI_PORT_STAT_IF_OUT_DISCARDS", "tx_drops"}};
  return m;
}
const std::map<std::string, std::string>& queue_names() {
  static const std::map<std::string, std::string> m{
      {"SAI_QUEUE_STAT_PACKETS", "tx_packets"},
      {"SAI_QUEUE_STAT_BYTES", "tx_bytes"},
      {"SAI_QUEUE_STAT_DROPPED_PACKETS", "dropped_packets"},
      {"SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", "ecn_marked_packets"},
      {"SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES", "watermark_bytes"}};
  return m;
}
const std::map<std::string, std::string>& pg_names() {
  static const std::map<std::string, std::string> m{
      {"SAI_INGRESS_PRIORITY_GROUP_STAT_PACKETS", "rx_packets"},
      {"SAI_INGRESS_PRIORITY_GROUP_STAT_DROPPED_PACKETS", "dropped_packets"},
      {"SAI_INGRESS_PRIORITY_GROUP_STAT_SHARED_WATERMARK_BYTES", "shared_watermark_bytes"},
      {"SAI_INGRESS_PRIORITY_GROUP_STAT_XOFF_ROOM_WATERMARK_BYTES", "headroom_watermark_bytes"}};
  return m;
}

// Fields the PFC watchdog writes into a watched queue's COUNTERS hash that are text, not
// counters: PFC_WD_ACTION and PFC_STAT_HISTORY (sonic-swss orchagent/pfcwdsworch.cpp,
// registerInWdDb), PFC_WD_STATUS (pfcactionhandler.cpp), BIG_RED_SWITCH_MODE
// (pfcwdsworch.cpp) and DEBUG_STORM (read by pfc_detect_<asic>.lua).
constexpr std::string_view watchdog_text_fields[] = {"PFC_WD_STATUS", "PFC_WD_ACTION", "PFC_STAT_HISTORY",
                                                     "BIG_RED_SWITCH_MODE", "DEBUG_STORM"};

// Whether `field` of a COUNTERS_DB hash is something other than a counter: a watchdog text
// field, the watchdog's restoration time left empty (it is optional: pfcwdsworch.cpp
// writes "" when none is configured), or a SAI attribute (SAI_QUEUE_ATTR_PAUSE_STATUS,
// "true"/"false", and its "_last" copy that pfc_detect_broadcom.lua keeps).
bool not_a_counter(const std::string& field, const std::string& value) {
  for (std::string_view f : watchdog_text_fields)
    if (field == f) return true;
  if (field == "PFC_WD_RESTORATION_TIME" && value.empty()) return true;
  return field.starts_with("SAI_") && field.find("_ATTR_") != std::string::npos;
}

result<std::uint64_t> parse_u64(const std::string& s, const std::string& what) {
  std::uint64_t v = 0;
  if (auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v); ec != std::errc{} || p != s.data() + s.size())
    return status(error_code::malformed_input, what + " holds '" + s + "', not a counter value");
  return v;
}

}  // namespace

result<std::vector<switch_counter>> sonic_switch_driver::read_counters() {
  const std::string context = "reading counters of SONiC " + options_.host;
  // The name maps change only when the switch re-creates its objects (a config reload, a
  // restart); an object id that answers with nothing sends us back to the maps, once.
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool fresh = !port_map_ || attempt > 0;
    if (fresh) {
      auto maps = hgetall({"COUNTERS_PORT_NAME_MAP", "COUNTERS_QUEUE_NAME_MAP", "COUNTERS_PG_NAME_MAP"});
      if (!maps.ok()) return maps.error().with_context(context);
      port_map_ = (*maps)[0];
      queue_map_ = (*maps)[1];
      pg_map_ = (*maps)[2];
    }
    struct object {
      std::string port;
      const char* scope;
      int index;
      std::string table, oid;
      const std::map<std::string, std::string>* names;
    };
    std::vector<object> objects;
    for (const auto& port : options_.ports) {
      const auto p = port_map_->find(port);
      if (p == port_map_->end())
        return status(error_code::not_found, context + ": no port " + port + " in COUNTERS_PORT_NAME_MAP");
      objects.push_back({port, "port", -1, "COUNTERS", p->second, &port_names()});
      for (int i = 0; i < 8; ++i) {
        const std::string key = port + ":" + std::to_string(i);
        if (auto q = queue_map_->find(key); q != queue_map_->end()) {
          objects.push_back({port, "queue", i, "COUNTERS", q->second, &queue_names()});
          objects.push_back({port, "queue", i, "USER_WATERMARKS", q->second, &queue_names()});
        }
        if (auto g = pg_map_->find(key); g != pg_map_->end()) {
          objects.push_back({port, "pg", i, "COUNTERS", g->second, &pg_names()});
          objects.push_back({port, "pg", i, "USER_WATERMARKS", g->second, &pg_names()});
        }
      }
    }
    std::vector<std::string> keys;
    for (const auto& o : objects) {
      if (!oid_name(o.oid)) return status(error_code::malformed_input, context + ": '" + o.oid + "' is not an object id");
      keys.push_back(o.table + ":" + o.oid);
    }
    auto values = hgetall(keys);
    if (!values.ok()) return values.error().with_context(context);
    bool stale = false;
    for (std::size_t i = 0; i < objects.size(); ++i)
      if (objects[i].table == "COUNTERS" && (*values)[i].empty()) stale = true;
    if (stale && !fresh) continue;

    std::vector<switch_counter> out;
    std::vector<pfc_watchdog_queue> watchdog;
    for (std::size_t i = 0; i < objects.size(); ++i) {
      const auto& o = objects[i];
      if (o.table == "COUNTERS" && std::string_view(o.scope) == "queue") {
        const auto& fields = (*values)[i];
        const auto st = fields.find("PFC_WD_STATUS");
        const auto act = fields.find("PFC_WD_ACTION");
        if (st != fields.end() || act != fields.end())
          watchdog.push_back({o.port, o.index, st != fields.end() ? st->second : "",
                              act != fields.end() ? act->second : ""});
      }
      for (const auto& [sai, text] : (*values)[i]) {
        if (not_a_counter(sai, text)) continue;
        auto v = parse_u64(text, keys[i] + " field " + sai);
        if (!v.ok()) return v.error().with_context(context);
        // PFC frames per priority are port counters in SAI; they belong to the PG.
        int prio = -1;
        if (std::sscanf(sai.c_str(), "SAI_PORT_STAT_PFC_%d_", &prio) == 1 && prio >= 0 && prio < 8) {
          if (sai.ends_with("_RX_PKTS")) out.push_back({o.port, "pg", prio, "pfc_rx_frames", *v});
          else if (sai.ends_with("_TX_PKTS")) out.push_back({o.port, "pg", prio, "pfc_tx_frames", *v});
          else out.push_back({o.port, "pg", prio, sai, *v});
          continue;
        }
        const auto it = o.names->find(sai);
        out.push_back({o.port, o.scope, o.index, it != o.names->end() ? it->second : sai, *v});
      }
      // A platform that does not count WRED ECN marks leaves the SAI name out: unknown.
      if (o.table == "COUNTERS" && std::string_view(o.scope) == "queue" &&
          !(*values)[i].contains("SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS"))
        out.push_back({o.port, "queue", o.index, "ecn_marked_packets", 0, true});
    }
    pfc_watchdog_ = std::move(watchdog);
    return out;
  }
  return status(error_code::internal, context + ": unreachable");
}

}  // namespace rocelab::fabric::drivers

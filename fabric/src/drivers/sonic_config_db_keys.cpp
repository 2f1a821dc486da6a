#include "sonic_config_db_keys.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <iterator>

namespace rocelab::fabric::drivers::sonic_keys {

using nlohmann::json;

namespace {

std::string pointer_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
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

}  // namespace

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

std::string ptr(const std::string& table, const std::string& key, const std::string& field) {
  std::string p = "/" + pointer_escape(table);
  if (!key.empty()) p += "/" + pointer_escape(key);
  if (!field.empty()) p += "/" + pointer_escape(field);
  return p;
}

std::vector<std::string> tables_in_order(const json& j, bool reverse) {
  std::vector<std::string> t;
  for (const auto& [name, v] : j.items()) t.push_back(name);
  std::stable_sort(t.begin(), t.end(), [&](const auto& a, const auto& b) {
    return reverse ? rank(a) > rank(b) : rank(a) < rank(b);
  });
  return t;
}

std::int64_t to_int(const json& entry, const char* field, std::int64_t fallback) {
  if (!entry.is_object() || !entry.contains(field) || !entry[field].is_string()) return fallback;
  std::int64_t v = fallback;
  const std::string s = entry[field].get<std::string>();
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

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

std::string dscp_map_of(const json& running, const std::string& port) {
  const json& qos = table_of(running, "PORT_QOS_MAP");
  for (const std::string& key : {port, std::string("global")})
    if (qos.contains(key))
      if (auto name = referenced(qos[key], "dscp_to_tc_map", "DSCP_TO_TC_MAP"); !name.empty()) return name;
  return {};
}

std::string appl_db_key(std::string key) {
  std::replace(key.begin(), key.end(), '|', ':');
  return key;
}

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

}  // namespace rocelab::fabric::drivers::sonic_keys

// to_config_db_changes: switch settings as changes to the switch's own entries that
// config apply-patch accepts, checked against the updater's rules of the release, and
// the dynamic buffer model's generated profiles (sonic_switch_driver.hpp).
#include "rocelab/fabric/drivers/sonic_switch_driver.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>

#include "sonic_config_db_keys.hpp"
#include "sonic_gcu_platforms.hpp"

namespace rocelab::fabric::drivers {

using nlohmann::json;

using namespace sonic_keys;

namespace {

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

}  // namespace rocelab::fabric::drivers

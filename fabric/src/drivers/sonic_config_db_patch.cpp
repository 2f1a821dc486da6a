// The two ways the driver writes config_db: a JSON Patch for `config apply-patch`, and
// field writes with sonic-db-cli for the tables apply-patch would flap ports for
// (sonic_switch_driver.hpp).
#include "rocelab/fabric/drivers/sonic_switch_driver.hpp"

#include <algorithm>
#include <iterator>

#include "sonic_config_db_keys.hpp"

namespace rocelab::fabric::drivers {

using nlohmann::json;

using namespace sonic_keys;

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

}  // namespace rocelab::fabric::drivers

#pragma once
// What the SONiC driver's files share about config_db (sonic_switch_driver.hpp): which
// names may go into keys and remote command words, JSON pointers to tables, keys and
// fields, the order tables are created in, and reading fields and references of a dump.
// Private to the driver (fabric/src/drivers); pure, no I/O.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/drivers/switch_driver.hpp"

namespace rocelab::fabric::drivers::sonic_keys {

// Port and session names go into config_db keys and remote command words: SONiC's own
// names (Ethernet8, PortChannel01, a session name) never need more than these.
[[nodiscard]] bool plain_name(std::string_view s);
// A COUNTERS_DB object id: "oid:0x" and hex digits.
[[nodiscard]] bool oid_name(std::string_view s);
// Every port and session name a setting holds is plain; invalid_argument naming the first
// that is not.
[[nodiscard]] status check_names(const switch_settings& settings);

// The JSON pointer (RFC 6901) to a table, a key of it or a field of that key.
[[nodiscard]] std::string ptr(const std::string& table, const std::string& key = {}, const std::string& field = {});
// The tables of `j` in the order their entries may be created (referenced before
// referencing: WRED_PROFILE before QUEUE); `reverse` for removal.
[[nodiscard]] std::vector<std::string> tables_in_order(const nlohmann::json& j, bool reverse);

// A field holding a decimal number, `fallback` when the entry has no such string field.
[[nodiscard]] std::int64_t to_int(const nlohmann::json& entry, const char* field, std::int64_t fallback = 0);
// A reference field as config_db holds it: "name", or "[TABLE|name]" in older releases.
[[nodiscard]] std::string referenced(const nlohmann::json& entry, const char* field, const std::string& table);
// The table `name` of a dump, an empty object when it has none.
[[nodiscard]] const nlohmann::json& table_of(const nlohmann::json& db, const char* name);
// The DSCP_TO_TC_MAP a port classifies by: its PORT_QOS_MAP binding, else the global one.
[[nodiscard]] std::string dscp_map_of(const nlohmann::json& running, const std::string& port);
// A CONFIG_DB key as APPL_DB spells it ("Ethernet0|3-4" -> "Ethernet0:3-4"), as buffermgrd
// transforms it (sonic-swss cfgmgr/buffermgrdyn.cpp, transformSeperator).
[[nodiscard]] std::string appl_db_key(std::string key);

// A word for the switch's login shell: ssh joins the remote command's words with spaces,
// so every word is single-quoted ('|' in a config_db key is the shell's pipe), a quote
// inside it closed, escaped and reopened.
[[nodiscard]] std::string shell_quoted(const std::string& word);
// `sonic-db-cli CONFIG_DB` followed by `words`.
[[nodiscard]] std::vector<std::string> db_command(std::initializer_list<std::string> words);

}  // namespace rocelab::fabric::drivers::sonic_keys

#pragma once
// The SONiC switch driver.
//
// apply() changes the running config_db over SSH, in two ways, chosen per table:
//
// * Most tables with SONiC's Generic Config Updater, `sudo config apply-patch /dev/stdin`
//   (a JSON Patch, RFC 6902, validated against the YANG models in sonic-buildimage
//   src/sonic-yang-models and against sonic-utilities' field operation validators,
//   gcu_field_operation_validators.conf.json). Those validators allow only a `replace` of
//   WRED_PROFILE AZURE_LOSSLESS green_min_threshold, green_max_threshold and
//   green_drop_probability, and of BUFFER_PROFILE xoff and dynamic_th, and only on the
//   ASICs their release lists, field by field (a platform entry "" refuses the field:
//   td2 may not change xoff) and from a minimum build. The rules differ per release, so
//   the driver reads the switch's /etc/sonic/sonic_version.yml (release, build_version,
//   asic_type) and applies that release's rules (202305, 202311, 202405, 202411, recorded
//   in tests/data/sonic-gcu); on another release it refuses the RDMA tables rather than
//   guess. So the driver changes the switch's own lossless entries instead of adding
//   profiles (to_config_db_changes).
// * QUEUE and PORT_QOS_MAP (and every table the updater's patch sorter ties to
//   `PORT|<port> admin_status`: BUFFER_PG, BUFFER_QUEUE, BUFFER_PORT_{IN,E}GRESS_PROFILE_LIST,
//   patch_sorter.py RequiredValueIdentifier) never go through apply-patch: for those the
//   sorter inserts moves taking each port admin down before the change and up after it,
//   which kills every queue pair in flight (RETRY_EXC). Their fields are written one by
//   one with `sonic-db-cli CONFIG_DB HSET '<TABLE>|<key>' <field> <value>`: orchagent
//   applies both in place, with no port flap (sonic-swss orchagent/qosorch.cpp, 202305:
//   handleQueueTable sets the queue's SAI_QUEUE_ATTR_WRED_PROFILE_ID,
//   handlePortQosMapTable calls PortsOrch::setPortPfc; neither touches admin status), and
//   put back with HSET or HDEL (DEL for a key the driver created). A field write never
//   replaces a whole entry, so a QUEUE key keeps its `scheduler`.
//
// What the driver writes (to_config_db_changes):
//   ECN     WRED_PROFILE|AZURE_LOSSLESS green_{min,max}_threshold (bytes),
//           green_drop_probability (Pmax x 100), shared by every lossless queue
//           [apply-patch]; QUEUE|<port>|<q> wred_profile AZURE_LOSSLESS [HSET]
//   PFC     PORT_QOS_MAP|<port> pfc_enable ("3,4") [HSET]
//   buffers xoff and dynamic_th of the BUFFER_PROFILE that the PG's BUFFER_PG entry names
//           (a single PG or SONiC's range key, Ethernet0|3-4; no BUFFER_PG key is written);
//           size, xon and xon_offset must already be what is asked [apply-patch]. Under
//           SONiC's dynamic buffer model (DEVICE_METADATA|localhost buffer_model: dynamic)
//           a BUFFER_PG whose profile is NULL has its lossless profile computed by
//           buffermgrd from the port's speed and cable length
//           (pg_lossless_<speed>_<cable>_profile) into APPL_DB BUFFER_PROFILE_TABLE, and
//           rewritten by it: that profile is read from APPL_DB (BUFFER_PG_TABLE:<port>:<pgs>
//           names it), a setting it already matches needs nothing, any other is refused
//           (unsupported) naming the model, the generated profile and the field
//   DSCP    entries of the DSCP_TO_TC_MAP that PORT_QOS_MAP|<port> (or |global) binds
//           (dscp_to_tc_map), e.g. AZURE 26 -> 3 for the lossless class [apply-patch]
//   mirror  MIRROR_SESSION|<name>, added and removed whole [apply-patch]
// Anything else the validators refuse (ECN off, another size, an ASIC or field the
// switch's release does not allow) is an `unsupported` error naming the rule before
// anything is sent. The running config_db is read with `sudo sonic-cfggen -d
// --print-data`. Before the first write the driver keeps the previous value of every
// field it changes (or that the key was absent), and restore() replaces those fields back,
// removes the keys it added and never removes a key that existed.
//
// to_config_db() is the export form of the same settings, for `config load` on a switch
// (which runs no field validators): profiles of their own, ROCELAB_<port>_Q<q> and
// ROCELAB_PG_<port>_<pg>, bound to the queues and PGs, and DSCP_TO_TC_MAP entries of
// options.dscp_to_tc_map.
//
// Counters come from COUNTERS_DB with `sonic-db-cli COUNTERS_DB HGETALL ...`: the port,
// queue and PG name maps (read once and kept while their object ids answer), then
// COUNTERS:<oid> of each port, queue and PG of the configured ports and
// USER_WATERMARKS:<oid> of each queue and PG, all in one SSH command per sample. SAI names
// are mapped onto switch_driver.hpp's vocabulary (PFC counters per priority land on the PG
// of that number); the others are kept with their SAI names. A queue without
// SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS (the platform does not count WRED ECN marks) has
// ecn_marked_packets reported missing, never 0. Every field is a counter and must hold a
// decimal number (else malformed_input naming the COUNTERS_DB key and the field) except
// what the PFC watchdog keeps beside the counters of a queue it watches (sonic-swss
// orchagent/pfcwdsworch.cpp, pfcactionhandler.cpp, pfc_detect_<asic>.lua): the text
// fields PFC_WD_STATUS ("operational" | "stormed"), PFC_WD_ACTION ("drop" | "forward" |
// "alert"), PFC_STAT_HISTORY, BIG_RED_SWITCH_MODE and DEBUG_STORM, PFC_WD_RESTORATION_TIME
// when empty (no restoration time configured), and SAI attributes (SAI_QUEUE_ATTR_*, a
// "true"/"false" pause status) -- none of them counters. The watchdog's status and action
// of each queue are kept in pfc_watchdog().
//
// ssh runs with an argv vector (BatchMode, so it never prompts); the remote command is
// made of fixed words and validated names only.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rocelab/fabric/drivers/switch_driver.hpp"

namespace rocelab::fabric::drivers {

// What /etc/sonic/sonic_version.yml says of the switch's build (sonic-buildimage
// files/build_templates/sonic_version.yml.j2).
struct sonic_version {
  std::string build_version;  // "20230531.17"
  std::string asic_type;      // mellanox | broadcom | vs | cisco-8000 | ...
  std::string release;        // "202305": the `release` field, else the first six digits of
                              // build_version's 8-digit part; empty: not known (master)
  // build_version's 8-digit part ("20230531"), which the updater compares against a
  // field's minimum; empty when there is none (a master build).
  [[nodiscard]] std::string branch_version() const;
  friend bool operator==(const sonic_version&, const sonic_version&) = default;
};
// Errors: malformed_input when there is no build_version or no asic_type.
[[nodiscard]] result<sonic_version> parse_sonic_version(std::string_view yml);

struct sonic_options {
  std::string host;                       // ssh destination: "admin@10.0.0.1"
  std::vector<std::string> ssh_options;   // e.g. {"-i", "/etc/rocelab/switch_key", "-p", "22"}
  std::string ssh_program = "ssh";
  std::vector<std::string> ports;         // the ports whose counters are read
  std::string lossless_pool = "ingress_lossless_pool";
  std::string dscp_to_tc_map = "AZURE";  // the map to_config_db's DSCP entries go to
  // false: skip the config updater's rules (release, ASIC, field) for WRED_PROFILE and
  // BUFFER_PROFILE; the switch's updater still judges the patch.
  bool check_gcu_hwsku = true;
  // The switch's SONiC version; nullopt: apply() reads it (/etc/sonic/sonic_version.yml).
  std::optional<sonic_version> version;
  std::chrono::milliseconds timeout{60000};
};

// The config_db entries `settings` amount to: {"TABLE": {"key": {"field": "value"}}}.
// A disabled mirror session is the key mapped to null (delete it).
[[nodiscard]] result<nlohmann::json> to_config_db(const switch_settings& settings, const sonic_options& options);

// The config_db fields that put `settings` on `running` (a config_db dump) in forms
// config apply-patch accepts: {"TABLE": {"key": {"field": "value"}}}, fields of existing
// keys; keys added only in QUEUE, PORT_QOS_MAP and MIRROR_SESSION (no field validator).
// Errors: invalid_argument (names, ranges), not_found (no entry to change: no BUFFER_PG
// covering the PG, no DSCP map bound), unsupported (what the updater refuses, or two
// settings asking different values of one shared profile or map), each naming the rule.
// `generated`: the lossless profiles buffermgrd generated for the BUFFER_PG entries
// whose profile is NULL (see generated_buffer_profiles); a NULL profile not in it is
// not_found naming the buffer model and the APPL_DB key missing.
[[nodiscard]] result<nlohmann::json> to_config_db_changes(const switch_settings& settings,
                                                          const nlohmann::json& running, const sonic_options& options,
                                                          const nlohmann::json& generated = nlohmann::json::object());

// SONiC's buffer model, DEVICE_METADATA|localhost buffer_model: "dynamic", or
// "traditional" (also when the field is absent, as on releases before the dynamic model).
[[nodiscard]] std::string buffer_model(const nlohmann::json& config_db);
// The BUFFER_PG keys of `ports` whose profile is NULL ("Ethernet0|3-4"): under the dynamic
// model, those whose lossless profile buffermgrd computes.
[[nodiscard]] std::vector<std::string> null_profile_buffer_pgs(const nlohmann::json& config_db,
                                                               const std::vector<std::string>& ports);
// The generated profiles of those keys from APPL_DB's hashes, as the driver reads them
// (`appl_db`: {"BUFFER_PG_TABLE:Ethernet0:3-4": {"profile": ...}, "BUFFER_PROFILE_TABLE:
// <name>": {...}}, a missing hash empty):
//   {"Ethernet0|3-4": {"name": "pg_lossless_100000_5m_profile", "profile": {fields}}}
// with "name" empty when APPL_DB has no BUFFER_PG_TABLE entry for the key, and "profile"
// absent when it has no BUFFER_PROFILE_TABLE entry of that name.
[[nodiscard]] nlohmann::json generated_buffer_profiles(const std::vector<std::string>& null_pgs,
                                                       const std::map<std::string, std::map<std::string, std::string>>& appl_db);

// Whether `config apply-patch` takes a port admin down and up around a change of `table`
// (patch_sorter.py RequiredValueIdentifier: BUFFER_PG, BUFFER_PORT_EGRESS_PROFILE_LIST,
// BUFFER_PORT_INGRESS_PROFILE_LIST, BUFFER_QUEUE, PORT_QOS_MAP, QUEUE).
[[nodiscard]] bool apply_patch_flaps_ports(std::string_view table);

// The JSON Patch that writes `desired` (as to_config_db_changes gives it) over `running`:
// fields of existing keys replaced (added where absent) one by one, absent keys and tables
// added whole, null keys removed. Tables for which apply_patch_flaps_ports() holds are left
// out: make_db_writes writes them.
[[nodiscard]] nlohmann::json make_apply_patch(const nlohmann::json& running, const nlohmann::json& desired);

// The remote commands that write `desired`'s entries of the tables apply-patch would flap
// ports for, field by field: one `sonic-db-cli CONFIG_DB HSET '<TABLE>|<key>' <field>
// <value>` per field that differs from `running` (the key single-quoted for the switch's
// shell), `DEL '<TABLE>|<key>'` for a null key that exists. Every name must be plain
// (check_names), so quoting never needs escapes.
[[nodiscard]] std::vector<std::vector<std::string>> make_db_writes(const nlohmann::json& running,
                                                                   const nlohmann::json& desired);

// The settings of `ports` and the mirror session a config_db dump holds, as read_settings()
// gives them: WRED of the queues that name a profile, PORT_QOS_MAP pfc_enable, the
// DSCP_TO_TC_MAP each port is bound to, the BUFFER_PG profiles (range keys expanded), and
// the session "rocelab" if present, else the first. Pure. Errors: check_config_db_shape's.
// A NULL profile (dynamic model) is read from `generated` (generated_buffer_profiles);
// without it that PG is left out.
[[nodiscard]] result<switch_settings> settings_from_config_db(const nlohmann::json& config_db,
                                                              const std::vector<std::string>& ports,
                                                              const nlohmann::json& generated = nlohmann::json::object());
// Checks the shape of every part of a config_db (a switch's, or a dump in a file) that this
// driver reads: the dump an object, each table it reads an object of keys, each key an
// object of fields, each field it reads a string. Errors are malformed_input naming
// `source`, the table, key and field, the type expected and the type found
// ("config_db: MIRROR_SESSION|everflow0: expected an object of fields, found a number").
// read_config_db, settings_from_config_db and to_config_db_changes check before use.
[[nodiscard]] status check_config_db_shape(const nlohmann::json& config_db, const std::string& source);
// The DSCP_TO_TC_MAP that PORT_QOS_MAP|<port> (else |global) binds; empty: none.
[[nodiscard]] std::string dscp_to_tc_map_name(const nlohmann::json& config_db, const std::string& port);

// The PFC watchdog's state of one queue, as the last read_counters() found it.
struct pfc_watchdog_queue {
  std::string port;
  int queue = -1;
  std::string status;  // PFC_WD_STATUS: "operational" | "stormed"; empty: not written yet
  std::string action;  // PFC_WD_ACTION: "drop" | "forward" | "alert"
  friend bool operator==(const pfc_watchdog_queue&, const pfc_watchdog_queue&) = default;
};

class sonic_switch_driver final : public switch_driver {
 public:
  [[nodiscard]] static result<std::unique_ptr<sonic_switch_driver>> open(sonic_options options);

  [[nodiscard]] std::string_view kind() const noexcept override { return "sonic"; }
  [[nodiscard]] result<switch_settings> read_settings(const std::vector<std::string>& ports) override;
  [[nodiscard]] status apply(const switch_settings& settings) override;
  [[nodiscard]] status restore() override;
  [[nodiscard]] bool has_snapshot() const noexcept override { return !snapshot_.empty(); }
  [[nodiscard]] result<std::vector<switch_counter>> read_counters() override;

  // The running config_db (sonic-cfggen -d --print-data).
  [[nodiscard]] result<nlohmann::json> read_config_db();

  // The queues the PFC watchdog watches (their COUNTERS hash holds PFC_WD_ACTION or
  // PFC_WD_STATUS) as the last successful read_counters() found them, in port then queue
  // order; empty when the watchdog watches none of the configured ports' queues.
  [[nodiscard]] const std::vector<pfc_watchdog_queue>& pfc_watchdog() const noexcept { return pfc_watchdog_; }

 private:
  explicit sonic_switch_driver(sonic_options options) : options_(std::move(options)) {}
  [[nodiscard]] result<std::string> remote(const std::vector<std::string>& command, const std::string& input = {});
  [[nodiscard]] status apply_patch(const nlohmann::json& patch, const std::string& context);
  // The commands of make_db_writes, in one SSH session, stopping at the first that fails.
  [[nodiscard]] status write_db(const std::vector<std::vector<std::string>>& commands, const std::string& context);
  [[nodiscard]] result<sonic_version> read_version();
  // HGETALL of every key in `db` (COUNTERS_DB, APPL_DB), in one SSH session; one map per
  // key, in order.
  [[nodiscard]] result<std::vector<std::map<std::string, std::string>>> hgetall(const std::vector<std::string>& keys,
                                                                                const char* db = "COUNTERS_DB");
  // generated_buffer_profiles of the NULL-profile BUFFER_PGs of `ports` in `running`, read
  // from APPL_DB (no SSH session when there are none).
  [[nodiscard]] result<nlohmann::json> read_generated_profiles(const nlohmann::json& running,
                                                               const std::vector<std::string>& ports);

  sonic_options options_;
  // table -> key -> {"previous": entry (null: the key did not exist), "fields": [written]};
  // tables_created_: tables that did not exist at all, removed whole on restore.
  std::map<std::string, std::map<std::string, nlohmann::json>> snapshot_;
  std::vector<std::string> tables_created_;
  // COUNTERS_{PORT,QUEUE,PG}_NAME_MAP, kept between samples while their object ids answer.
  std::optional<std::map<std::string, std::string>> port_map_, queue_map_, pg_map_;
  std::vector<pfc_watchdog_queue> pfc_watchdog_;
};

// `sonic-db-cli ... HGETALL` prints a Python dict: {'name': 'value', ...}.
[[nodiscard]] result<std::map<std::string, std::string>> parse_python_dict(const std::string& text);

}  // namespace rocelab::fabric::drivers

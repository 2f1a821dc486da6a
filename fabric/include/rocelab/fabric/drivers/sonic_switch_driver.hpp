#pragma once
// The SONiC switch driver. Settings become config_db entries (as SONiC's YANG models in
// sonic-buildimage src/sonic-yang-models define them):
//   WRED_PROFILE|ROCELAB_<port>_Q<q>    wred_{green,yellow,red}_enable, ecn (ecn_all |
//                                       ecn_none), {green,yellow,red}_{min,max}_threshold
//                                       (bytes), *_drop_probability (percent, Pmax x 100)
//   QUEUE|<port>|<q>                    wred_profile
//   PORT_QOS_MAP|<port>                 pfc_enable ("3,4")
//   BUFFER_PROFILE|ROCELAB_PG_<port>_<pg>  pool, size, xoff, xon, xon_offset, dynamic_th
//   BUFFER_PG|<port>|<pg>               profile
//   MIRROR_SESSION|<name>               type SPAN (dst_port) or ERSPAN (src_ip, dst_ip,
//                                       gre_type, dscp, ttl), src_port, direction
// Applied over SSH as a JSON Patch (RFC 6902) with SONiC's Generic Config Updater,
// `sudo config apply-patch /dev/stdin`, which validates it against the same YANG models
// and applies it in dependency order; the running config_db is read with
// `sudo sonic-cfggen -d --print-data`. Before the first write the driver keeps the
// previous entry of every key it changes (or that the key was absent), and restore()
// sends the patch that puts those entries back exactly (and removes what it added).
//
// Counters come from COUNTERS_DB through `sonic-db-cli COUNTERS_DB HGETALL ...`: the
// port, queue and PG name maps, then COUNTERS:<oid> of each port, queue and PG of the
// configured ports and USER_WATERMARKS:<oid> of each queue and PG. SAI names are mapped
// onto switch_driver.hpp's vocabulary (PFC counters per priority land on the PG of that
// number); the others are kept with their SAI names.
//
// ssh runs with an argv vector (BatchMode, so it never prompts); the remote command is
// made of fixed words and validated names only.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rocelab/fabric/drivers/switch_driver.hpp"

namespace rocelab::fabric::drivers {

struct sonic_options {
  std::string host;                       // ssh destination: "admin@10.0.0.1"
  std::vector<std::string> ssh_options;   // e.g. {"-i", "/etc/rocelab/switch_key", "-p", "22"}
  std::string ssh_program = "ssh";
  std::vector<std::string> ports;         // the ports whose counters are read
  std::string lossless_pool = "ingress_lossless_pool";
  std::chrono::milliseconds timeout{60000};
};

// The config_db entries `settings` amount to: {"TABLE": {"key": {"field": "value"}}}.
// A disabled mirror session is the key mapped to null (delete it).
[[nodiscard]] result<nlohmann::json> to_config_db(const switch_settings& settings, const sonic_options& options);

// The JSON Patch that writes `desired` (as to_config_db gives it) over `running` (a
// config_db dump): fields of existing keys are replaced one by one, new keys and tables
// added whole, null keys removed.
[[nodiscard]] nlohmann::json make_apply_patch(const nlohmann::json& running, const nlohmann::json& desired);

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

 private:
  explicit sonic_switch_driver(sonic_options options) : options_(std::move(options)) {}
  [[nodiscard]] result<std::string> remote(const std::vector<std::string>& command, const std::string& input = {});
  [[nodiscard]] status apply_patch(const nlohmann::json& patch, const std::string& context);
  [[nodiscard]] result<std::map<std::string, std::string>> hgetall(const std::string& key);

  sonic_options options_;
  // table -> key -> previous entry (null: the key did not exist); tables_created_: tables
  // that did not exist at all, removed whole on restore.
  std::map<std::string, std::map<std::string, nlohmann::json>> snapshot_;
  std::vector<std::string> tables_created_;
};

// `sonic-db-cli ... HGETALL` prints a Python dict: {'name': 'value', ...}.
[[nodiscard]] result<std::map<std::string, std::string>> parse_python_dict(const std::string& text);

}  // namespace rocelab::fabric::drivers

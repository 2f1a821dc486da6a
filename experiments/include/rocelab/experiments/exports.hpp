#pragma once
// A tuned configuration, exported for the real fabric:
// - the switch side as SONiC config_db JSON (WRED_PROFILE/QUEUE for ECN, PORT_QOS_MAP for
//   PFC, BUFFER_PROFILE/BUFFER_PG for the lossless PG), produced by the SONiC driver's
//   emitter (fabric/drivers/sonic_switch_driver.hpp: to_config_db), so what is exported is
//   exactly what `rocelab` would apply over SSH;
// - the NIC side as mlx5 sysfs settings: one "path value" line per DCQCN knob under
//   /sys/class/net/IF/ecn/roce_rp|roce_np (the knob names of the mlx5 driver,
//   agents/nic/mlx5_driver.hpp), plus enable/<priority> for the data priority. No shell
//   syntax: a tool (or `rocelab nic set`) reads the pairs and writes each file.
// Pure functions of the spec; no I/O.

#include <string>
#include <utility>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec.hpp"

namespace rocelab::experiments {

struct export_options {
  std::vector<std::string> switch_ports;  // empty: Ethernet0, Ethernet4, ... one per host of the spec
  std::string nic_interface = "IF";       // the RoCE netdev the sysfs paths name
  std::string sysfs_root = "/sys";
};

// The switch ports the export covers (the option's, or SONiC's default names).
[[nodiscard]] std::vector<std::string> export_ports(const experiment_spec& spec, const export_options& options);

// config_db JSON ({"WRED_PROFILE": {...}, "QUEUE": {...}, ...}), pretty-printed.
// Errors: the spec's values out of the driver's ranges.
[[nodiscard]] result<std::string> sonic_config_db_json(const experiment_spec& spec, const export_options& options);

// mlx5 sysfs "path value" lines (newline-terminated), knobs in the driver's order:
// roce_rp then roce_np, then enable/<data priority> on both (1 when DCQCN is on, else 0).
[[nodiscard]] std::string mlx5_sysfs_settings(const experiment_spec& spec, const export_options& options);

// The same settings as (mlx5 setting name, value) pairs, "roce_rp/rpg_time_reset" style:
// what the controller applies on a lab's agents (agents/nic/mlx5_driver.hpp names them so).
[[nodiscard]] std::vector<std::pair<std::string, std::string>> mlx5_knob_values(const experiment_spec& spec);

// DCQCN knobs of the spec that mlx5 sysfs has no file for (twin-only model switches).
[[nodiscard]] std::vector<std::string> knobs_without_mlx5_file();

}  // namespace rocelab::experiments

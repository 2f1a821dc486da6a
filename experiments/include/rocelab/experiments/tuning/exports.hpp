#pragma once
// A tuned configuration, exported for the real fabric:
// - the switch side as the switch drivers' settings (ECN, PFC, the lossless PG's buffers,
//   the DSCP map: fabric/drivers/switch_driver.hpp), which the lab adapter writes as SONiC
//   config_db JSON with the SONiC driver's emitter (lab/sonic_export.hpp), so what is
//   exported is exactly what `rocelab` would apply over SSH;
// - the NIC side as mlx5 sysfs settings: one "path value" line per DCQCN knob under
//   /sys/class/net/IF/ecn/roce_rp|roce_np (the knob names of the mlx5 driver,
//   agents/nic/mlx5_driver.hpp), plus enable/<priority> for the data priority. No shell
//   syntax: a tool (or `rocelab nic set`) reads the pairs and writes each file.
// Pure functions of the spec; no I/O.
//
// Exports are for hardware: a spec is exported only when its link speed is a real port
// speed and every mlx5 value lies within the firmware's documented range for that speed
// (mlx5_knob_ranges). The virtual lab's configurations run at a fraction of a gigabit,
// dilated from the hardware they stand for (scaling.hardware_gbps); check_hardware_export
// refuses them, naming why, and hardware_equivalent undoes the dilation exactly for the
// speed they stand for.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/fabric/drivers/switch_driver.hpp"

namespace rocelab::experiments {

struct export_options {
  std::vector<std::string> switch_ports;  // empty: Ethernet0, Ethernet4, ... one per host of the spec
  std::string nic_interface = "IF";       // the RoCE netdev the sysfs paths name
  std::string sysfs_root = "/sys";
};

// The switch ports the export covers (the option's, or SONiC's default names).
[[nodiscard]] std::vector<std::string> export_ports(const experiment_spec& spec, const export_options& options);

// The switch settings of the export on export_ports: per port ECN on the spec's queues,
// PFC on its priorities, the lossless PGs' buffers (xoff and size the headroom the links
// need) and the lossless class's DSCP entries. Errors: the spec's values out of the
// drivers' ranges (fabric::drivers::validate).
[[nodiscard]] result<fabric::drivers::switch_settings> export_switch_settings(const experiment_spec& spec,
                                                                             const export_options& options);

// mlx5 sysfs "path value" lines (newline-terminated), knobs in the driver's order:
// roce_rp then roce_np, then enable/<data priority> on both (1 when DCQCN is on, else 0).
[[nodiscard]] std::string mlx5_sysfs_settings(const experiment_spec& spec, const export_options& options);

// The same settings as (mlx5 setting name, value) pairs, "roce_rp/rpg_time_reset" style:
// what the controller applies on a lab's agents (agents/nic/mlx5_driver.hpp names them so).
[[nodiscard]] std::vector<std::pair<std::string, std::string>> mlx5_knob_values(const experiment_spec& spec);

// DCQCN knobs of the spec that mlx5 sysfs has no file for (twin-only model switches).
[[nodiscard]] std::vector<std::string> knobs_without_mlx5_file();

// Ethernet port speeds (Gb/s) that switches and ConnectX NICs run at.
inline constexpr double real_port_speeds_gbps[] = {10, 25, 40, 50, 100, 200, 400, 800};

// A knob's documented range in its sysfs unit. Rates whose maximum is the line rate
// (max_is_line_rate) are bounded by the link speed in Mb/s.
struct mlx5_knob_range {
  const char* knob;  // "roce_rp/rpg_time_reset"
  std::int64_t min = 0, max = 0;
  bool max_is_line_rate = false;
  const char* unit = "";
};
// Every knob mlx5_knob_values exports (enable/<prio> aside), one row each.
[[nodiscard]] std::span<const mlx5_knob_range> mlx5_knob_ranges();
// The range of `knob` at `link_gbps` ({min, max}); nullopt for a knob without a row.
[[nodiscard]] std::optional<std::pair<std::int64_t, std::int64_t>> mlx5_range(std::string_view knob, double link_gbps);

// What an export is for: the link speed, the NIC and the switch, in words.
[[nodiscard]] std::string export_target_text(const experiment_spec& spec);

// Whether the spec can be applied to hardware. Errors (invalid_argument) name every
// reason: a link speed no port runs at, lab scaling (scaling.hardware_gbps: its DCQCN runs
// on a dilated clock), an mlx5 value outside its documented range at this link speed,
// switch values SONiC refuses.
[[nodiscard]] status check_hardware_export(const experiment_spec& spec);

// The spec at `link_gbps` in hardware units. For the speed a lab-scaled spec stands for
// (scaling.hardware_gbps) it is the exact inverse of the scaling: the links at that
// speed, scaling removed, every knob and byte as it is. For any other speed the ECN
// thresholds keep their marking delay (bytes x link_gbps / the speed the spec is for): a
// starting point, not a measurement; tune on the twin at `link_gbps` to confirm. Errors:
// link_gbps not a real port speed, or the result still not exportable.
[[nodiscard]] result<experiment_spec> hardware_equivalent(const experiment_spec& spec, double link_gbps);

}  // namespace rocelab::experiments

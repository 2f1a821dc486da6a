#pragma once
// A host NIC's congestion-control settings and counters, behind one interface for real
// (mlx5) and soft (the virtual lab's soft RoCEv2 NIC) ports.
//
// Setting names are the paths under an mlx5 port's /sys/class/net/IF/ecn/ directory, so a
// spec's nic.dcqcn.<mlx5 knob> and the controller protocol's settings name the same thing:
//   roce_rp/<knob>      reaction point: rpg_time_reset, rpg_ai_rate, dce_tcp_g, ...
//   roce_np/<knob>      notification point: min_time_between_cnps, cnp_dscp, cnp_802p_prio
//   roce_rp/enable/<p>, roce_np/enable/<p>   DCQCN on priority p (0..7), 0 or 1
// A bare mlx5 knob name ("rpg_time_reset") is accepted and resolved to its directory.
// Values are decimal integers, as sysfs takes them.
//
// Snapshot and restore: apply() reads the current value of every setting it is about to
// change (once per setting, the first time) before it writes anything; restore() writes
// those values back, newest change last undone first, and forgets them. A failed apply
// leaves the snapshot of everything it may have touched, so restore() after a partial
// apply puts the port back exactly as it was.
//
// Threading: one thread at a time per driver.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/result.hpp"

namespace rocelab::agents::nic {

using nic_settings = std::map<std::string, std::string>;  // canonical name -> value

struct nic_counter {
  std::string name;  // hw_counters or ethtool name: np_cnp_sent, rx_prio3_pause, ...
  std::uint64_t value = 0;
};

class nic_driver {
 public:
  nic_driver() = default;
  nic_driver(const nic_driver&) = delete;
  nic_driver& operator=(const nic_driver&) = delete;
  virtual ~nic_driver() = default;

  [[nodiscard]] virtual std::string_view kind() const noexcept = 0;  // "mlx5" | "soft"
  [[nodiscard]] virtual const std::string& interface_name() const noexcept = 0;

  // Every setting the port has, with its current value.
  [[nodiscard]] result<nic_settings> read_settings();
  // Validates every name and value first (nothing is written when one is wrong), then
  // snapshots, then writes in order. Names may be bare knob names; errors name the
  // setting and the file or field.
  [[nodiscard]] status apply(const nic_settings& settings);
  // Writes the snapshot back; tries every setting even after a failure and returns the
  // first error. Settings restored are forgotten; failed ones stay for a retry.
  [[nodiscard]] status restore();
  [[nodiscard]] bool has_snapshot() const noexcept { return !order_.empty(); }
  // The values apply() will restore, by canonical name.
  [[nodiscard]] const nic_settings& snapshot() const noexcept { return snapshot_; }
  // What the last apply() accepted but could not set, one line each naming the setting,
  // the value asked and why ("roce_rp/enable/3 = 1 not set: ...").
  [[nodiscard]] const std::vector<std::string>& not_set() const noexcept { return not_set_; }

  // The port's counters now (cumulative values, as the NIC keeps them).
  [[nodiscard]] virtual result<std::vector<nic_counter>> read_counters() = 0;

 protected:
  [[nodiscard]] virtual std::vector<std::string> setting_names() const = 0;
  // The canonical name for `name` (resolving a bare knob name), or not_found.
  [[nodiscard]] virtual result<std::string> canonical_name(std::string_view name) const = 0;
  [[nodiscard]] virtual status validate(const std::string& canonical, const std::string& value) const = 0;
  [[nodiscard]] virtual result<std::string> read_setting(const std::string& canonical) = 0;
  [[nodiscard]] virtual status write_setting(const std::string& canonical, const std::string& value) = 0;
  // Why a valid `value` for `canonical` is accepted without being written, or nullopt when
  // it is written (every setting, unless the driver says otherwise).
  [[nodiscard]] virtual std::optional<std::string> not_settable_reason(const std::string& canonical,
                                                                       const std::string& value) const {
    (void)canonical;
    (void)value;
    return std::nullopt;
  }
  // Called once after apply() or restore() wrote settings (the soft driver saves its file).
  [[nodiscard]] virtual status commit() { return status::success(); }

 private:
  nic_settings snapshot_;
  std::vector<std::string> order_;  // canonical names in the order first snapshotted
  std::vector<std::string> not_set_;
};

// Shared by the drivers: "roce_rp/enable/3" style names and their checks.
[[nodiscard]] bool is_enable_setting(std::string_view canonical) noexcept;
// Integer check and, for knobs rocelab's DCQCN model knows, its range (fabric::dcqcn_config).
[[nodiscard]] status validate_dcqcn_value(const std::string& canonical, const std::string& value);
// The knob's mlx5 name without its directory ("roce_rp/rpg_time_reset" -> "rpg_time_reset").
[[nodiscard]] std::string_view knob_of(std::string_view canonical) noexcept;

}  // namespace rocelab::agents::nic

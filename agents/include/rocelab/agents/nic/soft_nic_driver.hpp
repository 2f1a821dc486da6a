#pragma once
// The NIC driver of the virtual lab's soft RoCEv2 NIC (traffic/soft_nic). The soft NIC is
// a process started per job with its whole config, so its DCQCN settings live in a
// settings file per host (JSON, canonical names as nic_driver.hpp, integers), which
// apply_soft_nic_settings() folds into the nic_config the job starts the NIC with. A
// missing file means the mlx5 firmware defaults with DCQCN on the data priority (3), as
// the soft NIC runs without one; restoring to those defaults removes the file again.
//
// Counters: the interface's kernel statistics (<root>/class/net/IF/statistics/*) and the
// soft NIC's own counters (rx_cnps, rx_ce_marked, retransmitted_packets, ...) from the
// counters file the job writes with write_soft_nic_counters() when its NIC process ends.
//
// Files are replaced atomically (write to a temporary, rename), so the NIC never reads a
// half-written one.

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "rocelab/agents/nic/nic_driver.hpp"
#include "rocelab/traffic/soft_nic/rc_nic.hpp"

namespace rocelab::agents::nic {

struct soft_nic_options {
  std::string ifname = "eth0";
  // Where <ifname>.dcqcn.json and <ifname>.counters.json live: one directory per host,
  // since every host of a virtual lab calls its NIC eth0 (e.g. /run/rocelab/<lab>/<host>/).
  std::string state_dir;
  std::string sysfs_root = "/sys";    // for class/net/IF/statistics (in the NIC's namespace)
};

class soft_nic_driver final : public nic_driver {
 public:
  [[nodiscard]] static result<std::unique_ptr<soft_nic_driver>> open(soft_nic_options options);

  [[nodiscard]] std::string_view kind() const noexcept override { return "soft"; }
  [[nodiscard]] const std::string& interface_name() const noexcept override { return options_.ifname; }
  [[nodiscard]] const std::string& settings_path() const noexcept { return settings_path_; }
  [[nodiscard]] const std::string& counters_path() const noexcept { return counters_path_; }

  [[nodiscard]] result<std::vector<nic_counter>> read_counters() override;

 protected:
  [[nodiscard]] std::vector<std::string> setting_names() const override;
  [[nodiscard]] result<std::string> canonical_name(std::string_view name) const override;
  [[nodiscard]] status validate(const std::string& canonical, const std::string& value) const override;
  [[nodiscard]] result<std::string> read_setting(const std::string& canonical) override;
  [[nodiscard]] status write_setting(const std::string& canonical, const std::string& value) override;
  [[nodiscard]] status commit() override;

 private:
  explicit soft_nic_driver(soft_nic_options options);

  soft_nic_options options_;
  std::string settings_path_;
  std::string counters_path_;
  nic_settings current_;
};

// The settings a soft NIC has with no settings file.
[[nodiscard]] nic_settings soft_nic_default_settings();

// Reads the settings file at `path` (missing: defaults) into `cfg`: the DCQCN knobs, and
// dcqcn_enabled from roce_rp/enable/<cfg.data_priority>. Errors name the file and field.
[[nodiscard]] status apply_soft_nic_settings(const std::string& path, traffic::soft_nic::nic_config& cfg);

// Writes the soft NIC's final counters (nic_process's "counters" event object) for the
// driver's read_counters().
[[nodiscard]] status write_soft_nic_counters(const std::string& path, const nlohmann::json& counters);

}  // namespace rocelab::agents::nic

#pragma once
// The mlx5 NIC driver (ConnectX-4 and later): DCQCN knobs under
// <root>/class/net/IF/ecn/roce_rp|roce_np (the MLNX_OFED / NVIDIA driver's sysfs, see
// "Explicit Congestion Notification" in the NVIDIA networking docs) where the host has
// them, else under the upstream kernel's debugfs <root>/kernel/debug/mlx5/<PCI>/cc_params/
// (drivers/infiniband/hw/mlx5/cong.c: rp_time_reset, np_cnp_dscp, ...). Either way the
// settings keep the sysfs names (roce_rp/rpg_time_reset, roce_np/cnp_dscp), and apply /
// snapshot / restore work the same; parameters without a sysfs name appear as
// cc_params/<file>. debugfs has no per-priority enable (the firmware's mlxconfig
// ROCE_CC_PRIO_MASK_P<port> holds it): there roce_rp|roce_np/enable/<p> = 1 is accepted
// without being written and listed in not_set(), and = 0 is refused (unsupported), since
// the upstream kernel cannot turn DCQCN off on a priority. RDMA counters under
// <root>/class/infiniband/DEV/ports/PORT/hw_counters (np_cnp_sent, rp_cnp_handled,
// np_ecn_marked_roce_packets, out_of_sequence, ...), and per-priority pause counters
// through the ethtool ioctl (rx_prio3_pause, tx_prio3_pause_duration, ...).
//
// The root is "/sys" on a host; tests point it at a recorded tree (tests/data/mlx5-sysfs).
// The RDMA device of IF is found the way the kernel links them:
// <root>/class/net/IF/device/infiniband/<dev>, else <root>/class/infiniband/*/device/net/IF.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rocelab/agents/nic/nic_driver.hpp"
#include "rocelab/agents/nic/sysfs_io.hpp"

namespace rocelab::agents::nic {

using ethtool_reader = std::function<result<std::vector<nic_counter>>(const std::string& ifname)>;

struct mlx5_options {
  std::string ifname;                 // the RoCE netdev: "enp1s0f0np0"
  std::string sysfs_root = "/sys";
  std::string rdma_device;            // "mlx5_0"; empty: found from the netdev
  std::uint32_t port = 1;             // mlx5 has one IB port per PCI function
  ethtool_reader ethtool;             // empty: read_ethtool_stats (the ioctl) in this netns
  std::shared_ptr<sysfs_io> io;       // empty: posix_sysfs_io()
};

class mlx5_driver final : public nic_driver {
 public:
  // Errors: not_found when IF does not exist under the root; unavailable when IF has
  // neither ecn/ directory nor debugfs cc_params/ (not an mlx5 port, or debugfs not
  // mounted or readable; the message names both paths) or no RDMA device ("no RDMA
  // device found for IF", naming the paths looked at).
  [[nodiscard]] static result<std::unique_ptr<mlx5_driver>> open(mlx5_options options);

  [[nodiscard]] std::string_view kind() const noexcept override { return "mlx5"; }
  [[nodiscard]] const std::string& interface_name() const noexcept override { return options_.ifname; }
  [[nodiscard]] const std::string& rdma_device() const noexcept { return options_.rdma_device; }
  [[nodiscard]] std::uint32_t port() const noexcept { return options_.port; }
  // "sysfs" (MLNX_OFED's ecn/) or "debugfs" (the upstream kernel's cc_params/), and its directory.
  [[nodiscard]] const std::string& knob_source() const noexcept { return knob_source_; }
  [[nodiscard]] const std::string& knob_directory() const noexcept { return knob_dir_; }

  // hw_counters (every file but the writable `lifespan`) then the ethtool counters that
  // is_congestion_counter() selects.
  [[nodiscard]] result<std::vector<nic_counter>> read_counters() override;

 protected:
  [[nodiscard]] std::vector<std::string> setting_names() const override { return names_; }
  [[nodiscard]] result<std::string> canonical_name(std::string_view name) const override;
  [[nodiscard]] status validate(const std::string& canonical, const std::string& value) const override;
  [[nodiscard]] result<std::string> read_setting(const std::string& canonical) override;
  [[nodiscard]] status write_setting(const std::string& canonical, const std::string& value) override;
  [[nodiscard]] std::optional<std::string> not_settable_reason(const std::string& canonical,
                                                               const std::string& value) const override;

 private:
  explicit mlx5_driver(mlx5_options options) : options_(std::move(options)) {}
  [[nodiscard]] std::string path_of(const std::string& canonical) const;
  void add_knob(std::string canonical, std::string path);

  mlx5_options options_;
  std::string knob_source_;
  std::string knob_dir_;
  std::string hw_counters_dir_;
  std::vector<std::string> names_;            // canonical, discovered from the tree
  std::map<std::string, std::string> paths_;  // canonical -> file
};

}  // namespace rocelab::agents::nic

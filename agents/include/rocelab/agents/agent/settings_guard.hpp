#pragma once
// What the agent changed on its host, so it can put it back: the controller's
// apply_settings go through the host's NIC drivers (agents/nic/nic_driver.hpp), which
// snapshot every setting before they write it; restore() has each driver write its
// snapshot back, the driver changed last first. Used for the controller's
// restore_settings and for the dead-man switch.
//
// Drivers (typed operations only; a name is a knob, never a command or a path the peer
// chooses freely):
//   "mlx5": the DCQCN knobs of an mlx5 port (mlx5_driver: <sysfs_root>/class/net/<device>/
//           ecn/roce_np|roce_rp/<knob>, names and values checked against the port's own
//           knobs and rocelab's DCQCN ranges); the root is /sys on a host and a recorded
//           tree in tests. On an upstream kernel (debugfs cc_params/) a per-priority
//           enable = 1 is accepted without being written (not_set() says so) and = 0 is
//           refused: the firmware holds the enable there. A device that is not an mlx5 port with an RDMA device is refused
//           with the driver's message ("no RDMA device found for ...").
// The virtual lab's soft NICs take their settings with their job (start_job's config),
// so there is nothing of theirs to snapshot here.
//
// A failed apply leaves in the snapshot whatever it may have touched, so restore() puts
// the port back exactly as it was (nic_driver's contract).
//
// Threading: one thread (the agent's io_context).

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "rocelab/agents/nic/nic_driver.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/protocol/messages.hpp"

namespace rocelab::agents::agent {

class settings_guard {
 public:
  explicit settings_guard(std::string sysfs_root) : sysfs_root_(std::move(sysfs_root)) {}

  // Validates every setting of a device, snapshots, then sets them (device by device, in
  // the order given). Returns the previous values.
  [[nodiscard]] result<std::vector<protocol::setting>> apply(const std::string& driver,
                                                               const std::vector<protocol::setting>& settings);
  // Writes back every snapshot, the device changed last first, and forgets them; returns
  // how many settings were restored, or the first error (it still tries the others).
  [[nodiscard]] result<std::uint32_t> restore();

  [[nodiscard]] bool has_changes() const noexcept;
  // What the last apply() accepted but could not set ("<device>: roce_rp/enable/3 = 1 not
  // set: ..."), see nic_driver::not_set(); the agent logs each line.
  [[nodiscard]] const std::vector<std::string>& not_set() const noexcept { return not_set_; }

 private:
  [[nodiscard]] result<nic::nic_driver*> driver_for(const std::string& driver, const std::string& device);

  std::string sysfs_root_;
  std::map<std::string, std::unique_ptr<nic::nic_driver>> drivers_;  // "mlx5:<device>"
  std::vector<nic::nic_driver*> changed_;  // in the order first changed
  std::vector<std::string> not_set_;
};

}  // namespace rocelab::agents::agent

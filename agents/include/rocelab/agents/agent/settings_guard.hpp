#pragma once
// What the agent changed on its host, so it can put it back: apply() snapshots every
// setting before writing it, restore() writes the snapshots back in reverse order. Used
// for the controller's restore_settings and for the dead-man switch.
//
// Drivers (typed operations only; a name is a knob, never a command or a path the peer
// chooses freely):
//   "mlx5": the DCQCN knobs of an mlx5 port, <sysfs_root>/<device>/ecn/<name> with name
//           roce_np/<knob> or roce_rp/<knob> (e.g. roce_np/min_time_between_cnps); the
//           root is /sys/class/net on a host and a recorded tree in tests.
// A device or knob name with "/" beyond the one after roce_np|roce_rp, "..", or anything
// outside [A-Za-z0-9_.-] is refused, so a peer cannot reach other files.
//
// Threading: one thread (the agent's io_context).

#include <string>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/controller/protocol.hpp"

namespace rocelab::agents::agent {

class settings_guard {
 public:
  explicit settings_guard(std::string sysfs_root) : sysfs_root_(std::move(sysfs_root)) {}

  // Snapshots then sets each setting; on the first failure, restores what this call
  // changed and returns the error. Returns the previous values.
  [[nodiscard]] result<std::vector<controller::setting>> apply(const std::string& driver,
                                                               const std::vector<controller::setting>& settings);
  // Writes back every snapshot, newest first, and forgets them; returns how many were
  // restored, or the first error (it still tries the others).
  [[nodiscard]] result<std::uint32_t> restore();

  [[nodiscard]] bool has_changes() const noexcept { return !snapshots_.empty(); }

 private:
  struct snapshot {
    std::string path;
    std::string previous;
  };
  [[nodiscard]] result<std::string> path_of(const std::string& driver, const controller::setting& s) const;

  std::string sysfs_root_;
  std::vector<snapshot> snapshots_;
};

}  // namespace rocelab::agents::agent

#pragma once
// File access for drivers that speak sysfs, behind an interface so tests can wrap the
// real one to inject the failures sysfs produces (a knob rejecting a value with EINVAL
// half-way through an apply) on a recorded tree.

#include <memory>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"

namespace rocelab::agents::nic {

class sysfs_io {
 public:
  virtual ~sysfs_io() = default;
  // The file's content without the trailing newline.
  [[nodiscard]] virtual result<std::string> read(const std::string& path) = 0;
  // One write(2) of `value` + "\n", as `echo value > path` does (sysfs takes one write).
  [[nodiscard]] virtual status write(const std::string& path, const std::string& value) = 0;
  // Names of regular files (not directories) in `dir`, sorted; not_found if it is missing.
  [[nodiscard]] virtual result<std::vector<std::string>> list_files(const std::string& dir) = 0;
};

[[nodiscard]] std::shared_ptr<sysfs_io> posix_sysfs_io();

}  // namespace rocelab::agents::nic

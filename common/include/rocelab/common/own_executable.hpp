#pragma once
// The path of the running program's file (/proc/self/exe, symlinks resolved as the kernel
// ran it), for starting another rocelab process from the same build; empty when it cannot
// be read.

#include <unistd.h>

#include <array>
#include <string>

namespace rocelab {

inline std::string own_executable_path() {
  std::array<char, 4096> buf{};
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : std::string();
}

}  // namespace rocelab

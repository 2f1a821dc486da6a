#pragma once
// The first line of a small kernel file (sysfs, procfs) without its trailing newline,
// spaces or carriage return; none when the file cannot be opened or is empty. Reading an
// attribute the kernel refuses (an unused GID entry's type: EINVAL) also gives none.

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

namespace rocelab {

[[nodiscard]] inline std::optional<std::string> read_sysfs_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

}  // namespace rocelab

#pragma once
// Files the subcommands write: a text file in one go, and a report directory with its
// files (the user's --out, or runs/<what>-<unix time>).
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "rocelab/common/result.hpp"

namespace rocelab::cli {

inline status write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return status::from_errno("writing " + path);
  return status::success();
}

// Writes `files` (name, text) into `dir`, or into runs/<what>-<unix seconds> when dir is
// empty; returns the directory.
inline result<std::string> write_report_files(std::string dir, const std::string& what,
                                              const std::vector<std::pair<std::string, std::string>>& files) {
  if (dir.empty()) {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    dir = "runs/" + what + "-" + std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now).count());
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return status(error_code::io_error, "creating " + dir + ": " + ec.message());
  for (const auto& [name, text] : files) ROCELAB_RETURN_IF_ERROR(write_text(dir + "/" + name, text));
  return dir;
}

}  // namespace rocelab::cli

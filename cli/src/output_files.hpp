#pragma once
// Files the subcommands write: a text file in one go, and a report directory with its
// files (the user's --out, or runs/<what>-<unix time>). Both go through
// common/output_file.hpp: never through a symlink, and an existing output is replaced only
// with --force (existing_output::replace).
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "rocelab/common/output_file.hpp"
#include "rocelab/common/result.hpp"

namespace rocelab::cli {

// A directory the user names (--out) is the user's: outputs there are replaced only with
// --force. One rocelab names for a run or sweep of its own (runs/<run id>, report-RUN,
// runs/tune-SWEEP) holds that run's outputs, written again by each command on it.
inline existing_output output_policy(const std::string& named_dir, bool force) {
  return named_dir.empty() || force ? existing_output::replace : existing_output::refuse;
}

inline constexpr const char* force_help =
    "replace outputs that are in --out already (without it such a directory is refused before anything is "
    "written); outputs are never written through a symlink";

inline status write_text(const std::string& path, const std::string& text, existing_output existing) {
  return write_output_file(path, text, existing);
}

// Writes `files` (name, text) into `dir`, or into runs/<what>-<unix seconds> when dir is
// empty; returns the directory.
inline result<std::string> write_report_files(std::string dir, const std::string& what,
                                              const std::vector<std::pair<std::string, std::string>>& files,
                                              existing_output existing) {
  if (dir.empty()) {
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    dir = "runs/" + what + "-" + std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now).count());
  }
  ROCELAB_RETURN_IF_ERROR(write_output_files(dir, files, existing));
  return dir;
}

}  // namespace rocelab::cli

#pragma once
// A writable copy of the recorded mlx5 sysfs tree per test, and a byte-for-byte picture of
// a tree to check that restore() put back exactly what was there.

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include "../support/temp_dir.hpp"

namespace rocelab::agents::nic::testing {

namespace fs = std::filesystem;

// Each test's directory is named after its folder, so leftovers say whose they are.
class temp_dir : public rocelab::testing::temp_dir {
 public:
  temp_dir() : rocelab::testing::temp_dir("rocelab-nic") {}
};

inline fs::path recorded_mlx5_tree() { return fs::path(ROCELAB_SOURCE_DIR) / "tests/data/mlx5-sysfs"; }

// Copies the recorded tree (symlinks as symlinks) into `dir`/sys and returns that root.
inline std::string copy_recorded_tree(const temp_dir& dir) {
  const fs::path root = dir.path() / "sys";
  fs::copy(recorded_mlx5_tree(), root, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  return root.string();
}

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every regular file under root (not following symlinks) -> its bytes.
inline std::map<std::string, std::string> picture(const std::string& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_symlink() || !e.is_regular_file()) continue;
    out[fs::relative(e.path(), root).string()] = read_file(e.path());
  }
  return out;
}

}  // namespace rocelab::agents::nic::testing

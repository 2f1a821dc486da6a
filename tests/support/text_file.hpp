#pragma once
// A whole file as a string, for tests that check what a command wrote; empty when the
// file cannot be read (the expectation that follows then fails with the content shown).

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace rocelab::testing {

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace rocelab::testing

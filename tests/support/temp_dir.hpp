#pragma once
// A private temporary directory per test (mkdtemp), removed with everything in it when the
// test ends, pass or fail.

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace rocelab::testing {

class temp_dir {
 public:
  explicit temp_dir(const std::string& prefix = "rocelab") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp " + pattern + " failed");
    path_ = pattern;
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace rocelab::testing

#include "rocelab/agents/nic/sysfs_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "rocelab/common/unique_fd.hpp"

namespace rocelab::agents::nic {
namespace {

class posix_io final : public sysfs_io {
 public:
  result<std::string> read(const std::string& path) override {
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) {
      if (errno == ENOENT) return status(error_code::not_found, path + ": no such file", ENOENT);
      return status::from_errno("reading " + path);
    }
    std::string out;
    char buf[4096];
    // sysfs attributes are at most a page; the bound guards against a wrong path.
    for (int i = 0; i < 16; ++i) {
      const ssize_t n = ::read(fd.get(), buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        return status::from_errno("reading " + path);
      }
      if (n == 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
  }

  status write(const std::string& path, const std::string& value) override {
    // No O_CREAT: a knob that does not exist is an error, never a new file.
    unique_fd fd(::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
    if (!fd.valid()) {
      if (errno == ENOENT) return {error_code::not_found, path + ": no such file", ENOENT};
      return status::from_errno("writing " + value + " to " + path);
    }
    const std::string line = value + "\n";
    ssize_t n;
    do n = ::write(fd.get(), line.data(), line.size());
    while (n < 0 && errno == EINTR);
    // The driver rejects an out-of-range value here, with EINVAL.
    if (n < 0) return status::from_errno("writing " + value + " to " + path);
    if (static_cast<std::size_t>(n) != line.size())
      return {error_code::io_error, "writing " + value + " to " + path + ": short write"};
    return status::success();
  }

  result<std::vector<std::string>> list_files(const std::string& dir) override {
    std::error_code ec;
    std::filesystem::directory_iterator it(dir, ec);
    if (ec) return status(ec == std::errc::no_such_file_or_directory ? error_code::not_found : error_code::io_error,
                          "listing " + dir + ": " + ec.message(), ec.value());
    std::vector<std::string> out;
    for (const auto& entry : it) {
      if (entry.is_regular_file(ec)) out.push_back(entry.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
};

}  // namespace

std::shared_ptr<sysfs_io> posix_sysfs_io() { return std::make_shared<posix_io>(); }

}  // namespace rocelab::agents::nic

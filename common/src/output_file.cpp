#include "rocelab/common/output_file.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <utility>

namespace rocelab {
namespace {

bool exists_no_follow(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

status output_exists_error(const std::string& path) {
  return {error_code::invalid_argument, path + " exists already; give --force to replace it"};
}

result<output_file> output_file::create(const std::string& path, existing_output existing) {
  if (existing == existing_output::refuse && exists_no_follow(path)) return output_exists_error(path);
  const std::filesystem::path target(path);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  std::string temporary = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
  // mkstemp opens with O_CREAT | O_EXCL: a name planted in the directory is never opened.
  const int fd = ::mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0) return status::from_errno("creating a temporary file for " + path + " in " + dir.string());
  // mkstemp makes 0600; an output is an ordinary file: 0666 less the umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) {
    const status st = status::from_errno("setting the mode of " + temporary);
    ::close(fd);
    ::unlink(temporary.c_str());
    return st;
  }
  std::FILE* stream = ::fdopen(fd, "w");
  if (stream == nullptr) {
    const status st = status::from_errno("opening " + temporary);
    ::close(fd);
    ::unlink(temporary.c_str());
    return st;
  }
  return output_file(path, std::move(temporary), stream, existing);
}

output_file::output_file(output_file&& other) noexcept
    : path_(std::move(other.path_)),
      temporary_(std::exchange(other.temporary_, std::string())),
      stream_(std::exchange(other.stream_, nullptr)),
      existing_(other.existing_) {}

output_file::~output_file() {
  if (stream_ != nullptr) std::fclose(stream_);
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
}

status output_file::commit() {
  if (stream_ == nullptr || temporary_.empty()) return {error_code::internal, "writing " + path_ + ": committed twice"};
  const bool write_failed = std::fflush(stream_) != 0 || std::ferror(stream_) != 0;
  const int write_errno = errno;
  const bool close_failed = std::fclose(std::exchange(stream_, nullptr)) != 0;
  if (write_failed || close_failed) {
    if (write_failed) errno = write_errno;
    return status::from_errno("writing " + path_);
  }
  if (existing_ == existing_output::replace) {
    if (::rename(temporary_.c_str(), path_.c_str()) != 0)
      return status::from_errno("renaming " + temporary_ + " to " + path_);
  } else if (::renameat2(AT_FDCWD, temporary_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE) != 0) {
    if (errno == EEXIST) return output_exists_error(path_);
    // A file system without RENAME_NOREPLACE (EINVAL): link(2) refuses an existing name
    // just as atomically.
    if (errno != EINVAL) return status::from_errno("renaming " + temporary_ + " to " + path_);
    if (::link(temporary_.c_str(), path_.c_str()) != 0) {
      if (errno == EEXIST) return output_exists_error(path_);
      return status::from_errno("linking " + temporary_ + " to " + path_);
    }
    ::unlink(temporary_.c_str());
  }
  temporary_.clear();
  return status::success();
}

status write_output_file(const std::string& path, std::string_view text, existing_output existing) {
  auto out = output_file::create(path, existing);
  if (!out) return out.error();
  if (!text.empty()) std::fwrite(text.data(), 1, text.size(), out->stream());
  return out->commit();
}

status check_outputs_absent(const std::string& dir, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    if (exists_no_follow(path)) return output_exists_error(path);
  }
  return status::success();
}

status write_output_files(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files,
                          existing_output existing) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return {error_code::io_error, "creating " + dir + ": " + ec.message(), ec.value()};
  if (existing == existing_output::refuse) {
    std::vector<std::string> names;
    for (const auto& [name, text] : files) names.push_back(name);
    ROCELAB_RETURN_IF_ERROR(check_outputs_absent(dir, names));
  }
  for (const auto& [name, text] : files)
    ROCELAB_RETURN_IF_ERROR(write_output_file((std::filesystem::path(dir) / name).string(), text, existing));
  return status::success();
}

}  // namespace rocelab

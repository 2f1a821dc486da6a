#include "rocelab/common/bounded_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "rocelab/common/unique_fd.hpp"
#include "rocelab/common/units.hpp"

namespace rocelab {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

}  // namespace

result<std::string> read_bounded_file(const std::string& path, std::size_t max_bytes, std::string_view what) {
  const std::string context = std::string(what) + " " + path;
  // O_NONBLOCK: opening a FIFO must not wait for a writer before fstat can refuse it.
  unique_fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd.valid()) return status::from_errno("reading " + context);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return status::from_errno("reading " + context);
  if (!S_ISREG(st.st_mode))
    return status(error_code::invalid_argument,
                  "reading " + context + ": " + kind_of(st.st_mode) + "; only regular files are read");
  const auto too_big = [&] {
    return status(error_code::resource_exhausted, "reading " + context + ": larger than the " +
                                                      format_size(static_cast<std::int64_t>(max_bytes)) +
                                                      " limit for this kind of file");
  };
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) return too_big();
  // Room for one byte past the file's size, so a file that grew is noticed; a file at the
  // bound plus one byte is over it.
  std::string out(static_cast<std::size_t>(st.st_size) + 1, '\0');
  std::size_t have = 0;
  for (;;) {
    if (have == out.size()) out.resize(std::min(max_bytes + 1, 2 * out.size()));
    const ssize_t n = ::read(fd.get(), out.data() + have, out.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      return status::from_errno("reading " + context);
    }
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
    if (have > max_bytes) return too_big();
  }
  out.resize(have);
  return out;
}

}  // namespace rocelab

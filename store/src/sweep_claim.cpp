#include "rocelab/store/sweep_claim.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "owner_process.hpp"

namespace rocelab::store {
namespace {

std::string read_holder(int fd) {
  char buf[256] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string text(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

std::string sweep_claim::lock_path(const std::string& store_path, std::int64_t sweep) {
  return store_path + ".sweep-" + std::to_string(sweep) + ".lock";
}

result<sweep_claim> sweep_claim::take(const std::string& store_path, std::int64_t sweep) {
  const std::string path = lock_path(store_path, sweep);
  // A releasing claim unlinks the file while it holds the lock; one that opened the old
  // file before that and locked it after holds a lock nobody else sees: check that the
  // file locked is the one at the path, else open again.
  for (int attempt = 0; attempt < 100; ++attempt) {
    unique_fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!fd.valid()) return status::from_errno("claiming sweep " + std::to_string(sweep) + ": opening " + path);
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK) return status::from_errno("claiming sweep " + std::to_string(sweep) + ": locking " + path);
      std::string holder = read_holder(fd.get());
      if (holder.empty()) holder = "another process (it has not written its pid yet)";
      return status(error_code::unavailable,
                    "sweep " + std::to_string(sweep) + " is being run by " + holder + " (lock " + path +
                        "); one process at a time continues a sweep: wait for it to end or stop it");
    }
    struct stat locked {}, named {};
    if (::fstat(fd.get(), &locked) != 0 || ::stat(path.c_str(), &named) != 0 || locked.st_ino != named.st_ino ||
        locked.st_dev != named.st_dev)
      continue;
    const owner_process self = owner_process::self();
    const std::string line = "process " + std::to_string(self.pid) + " on " + self.host + "\n";
    if (::ftruncate(fd.get(), 0) != 0 || ::pwrite(fd.get(), line.data(), line.size(), 0) != static_cast<ssize_t>(line.size()))
      return status::from_errno("claiming sweep " + std::to_string(sweep) + ": writing " + path);
    return sweep_claim(path, std::move(fd));
  }
  return status(error_code::unavailable, "claiming sweep " + std::to_string(sweep) + ": " + path +
                                             " kept being replaced while it was locked");
}

sweep_claim& sweep_claim::operator=(sweep_claim&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = std::move(other.fd_);
  }
  return *this;
}

sweep_claim::~sweep_claim() { release(); }

void sweep_claim::release() noexcept {
  if (!fd_.valid()) return;
  // Unlinked while still locked, so no one locks this file and believes it current.
  ::unlink(path_.c_str());
  fd_ = unique_fd();
}

}  // namespace rocelab::store

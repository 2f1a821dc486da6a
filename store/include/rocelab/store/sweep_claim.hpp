#pragma once
// One writer per sweep: a process that continues a sweep (tune, tune --resume) claims it
// first, so a second one cannot propose and store the same trials again (a UNIQUE
// constraint error in one, an orphan duplicate run in the store).
//
// The claim is an flock(2) on a lock file beside the store, <store>.sweep-<id>.lock,
// holding the claimer's pid and host. The kernel drops the lock when its process ends,
// however it ends (kill -9 too), so a dead holder's claim is simply taken over; the file
// is removed when a claim is released. Two claims in one process conflict as well (each
// opens its own file description). On a shared file system the lock is as good as its
// flock (NFSv4: yes).
// Threading: a claim is a value owned by one thread; release by destroying it.

#include <cstdint>
#include <string>

#include "rocelab/common/result.hpp"
#include "rocelab/common/unique_fd.hpp"

namespace rocelab::store {

class sweep_claim {
 public:
  // Errors: unavailable, naming the sweep, the holder's pid and host and the lock file,
  // while another claim holds it; io_error (with errno) when the lock file cannot be made.
  [[nodiscard]] static result<sweep_claim> take(const std::string& store_path, std::int64_t sweep);

  sweep_claim() = default;  // holds nothing
  sweep_claim(sweep_claim&&) noexcept = default;
  sweep_claim& operator=(sweep_claim&& other) noexcept;
  ~sweep_claim();

  [[nodiscard]] bool held() const noexcept { return fd_.valid(); }
  [[nodiscard]] static std::string lock_path(const std::string& store_path, std::int64_t sweep);

 private:
  sweep_claim(std::string path, unique_fd fd) noexcept : path_(std::move(path)), fd_(std::move(fd)) {}
  void release() noexcept;
  std::string path_;
  unique_fd fd_;
};

}  // namespace rocelab::store

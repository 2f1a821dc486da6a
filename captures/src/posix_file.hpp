#pragma once
// Private to captures/: owning handles for a POSIX file descriptor and a read-only
// mapping, shared by the capture file reader and the pcapng writer. Move-only; the
// destructors release quietly (a failed close(2) of a read-only descriptor or a failed
// munmap(2) of our own mapping leaves nothing a caller could act on).

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace rocelab::captures::detail {

class unique_fd {
 public:
  unique_fd() = default;
  explicit unique_fd(int fd) noexcept : fd_(fd) {}
  unique_fd(unique_fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  unique_fd& operator=(unique_fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  ~unique_fd() { reset(); }

  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] bool valid() const noexcept { return fd_ >= 0; }
  // Gives up ownership, e.g. to close(2) explicitly and look at the result.
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }
  void reset() noexcept {
    // close(2) must not be retried on EINTR on Linux: the descriptor is already gone.
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

class mapped_region {
 public:
  mapped_region() = default;
  mapped_region(void* base, std::size_t size) noexcept : base_(base), size_(size) {}
  mapped_region(mapped_region&& other) noexcept
      : base_(std::exchange(other.base_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  mapped_region& operator=(mapped_region&& other) noexcept {
    if (this != &other) {
      reset();
      base_ = std::exchange(other.base_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  mapped_region(const mapped_region&) = delete;
  mapped_region& operator=(const mapped_region&) = delete;
  ~mapped_region() { reset(); }

  [[nodiscard]] std::span<const std::uint8_t> bytes() const noexcept {
    return {static_cast<const std::uint8_t*>(base_), size_};
  }
  void reset() noexcept {
    if (base_ != nullptr) ::munmap(base_, size_);
    base_ = nullptr;
    size_ = 0;
  }

 private:
  void* base_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace rocelab::captures::detail

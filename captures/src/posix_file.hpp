#pragma once
// Private to captures/: an owning handle for a read-only mapping, shared by the capture
// file reader and the pcapng writer, beside the common unique_fd. Move-only; the
// destructor releases quietly (a failed munmap(2) of our own mapping leaves nothing a
// caller could act on).

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "rocelab/common/unique_fd.hpp"

namespace rocelab::captures::detail {

// The owned descriptor is common to every folder.
using rocelab::unique_fd;

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

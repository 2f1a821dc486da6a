#pragma once
// Bytes of incomplete frames held across the connections that share one budget (a
// controller's authenticated connections): a body is read as it arrives, never allocated
// to its declared size, and what connections hold beyond their free allowance is capped in
// total.
//
// Each frame's first `free_bytes_per_frame` bytes are always granted (counted, not
// refused), so small frames (hellos, heartbeats, submissions) never wait behind large
// ones; beyond that a connection takes chunks with try_take, which refuses while the total
// would pass `limit_bytes`, and the reader waits (within its read deadline) for another
// frame to complete and give its bytes back. So memory held for frames being read is at
// most limit_bytes + connections x free_bytes_per_frame.
//
// Threading: the counters are atomic; any thread may take and give back.

#include <atomic>
#include <cstddef>

namespace rocelab::protocol {

class read_budget {
 public:
  static constexpr std::size_t free_bytes_per_frame = 64u << 10;

  explicit read_budget(std::size_t limit_bytes) : limit_(limit_bytes) {}

  // Takes `n` bytes when the total stays within the limit; false (nothing taken) otherwise.
  [[nodiscard]] bool try_take(std::size_t n) noexcept {
    std::size_t held = held_.load(std::memory_order_relaxed);
    do {
      if (held + n > limit_) return false;
    } while (!held_.compare_exchange_weak(held, held + n, std::memory_order_relaxed));
    return true;
  }
  // A frame's free allowance: counted, never refused.
  void take_free(std::size_t n) noexcept { held_.fetch_add(n, std::memory_order_relaxed); }
  void give_back(std::size_t n) noexcept { held_.fetch_sub(n, std::memory_order_relaxed); }

  [[nodiscard]] std::size_t held() const noexcept { return held_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::size_t limit() const noexcept { return limit_; }

 private:
  const std::size_t limit_;
  std::atomic<std::size_t> held_{0};
};

}  // namespace rocelab::protocol

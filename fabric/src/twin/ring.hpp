#pragma once
// A FIFO of trivially copyable values in a power-of-two ring that grows by doubling and
// never shrinks: after the run's peak it never allocates again. Private to the twin.

#include <cstdint>
#include <memory>
#include <type_traits>

namespace rocelab::fabric::twin::detail {

template <typename T>
class ring {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  [[nodiscard]] bool empty() const { return count_ == 0; }
  [[nodiscard]] std::uint32_t size() const { return count_; }
  [[nodiscard]] const T& front() const { return buf_[head_]; }
  // Each operation prefetches the slot the next one of its kind touches: a link's ring
  // is visited once per frame on it, and hundreds of rings interleave, so the hardware
  // prefetchers see no stream and the slot has usually left L1 by then.
  void push_back(const T& v) {
    if (count_ == capacity_) grow();
    buf_[(head_ + count_) & mask_] = v;
    ++count_;
    __builtin_prefetch(&buf_[(head_ + count_) & mask_], 1);
  }
  T pop_front() {
    const T v = buf_[head_];
    head_ = (head_ + 1) & mask_;
    --count_;
    __builtin_prefetch(&buf_[head_]);
    return v;
  }

 private:
  void grow() {
    const std::uint32_t cap = capacity_ == 0 ? 16 : capacity_ * 2;
    auto next = std::make_unique<T[]>(cap);
    for (std::uint32_t i = 0; i < count_; ++i) next[i] = buf_[(head_ + i) & mask_];
    buf_ = std::move(next);
    capacity_ = cap;
    mask_ = cap - 1;
    head_ = 0;
  }

  // 24 bytes with the indexes (a channel, its ring included, fits one cache line); the
  // mask is kept rather than derived from a vector's size, which for a 24-byte T is a
  // multiply on every operation.
  std::unique_ptr<T[]> buf_;
  std::uint32_t capacity_ = 0, mask_ = 0, head_ = 0, count_ = 0;
};

}  // namespace rocelab::fabric::twin::detail

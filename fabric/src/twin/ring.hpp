#pragma once
// A FIFO of trivially copyable values in a power-of-two ring that grows by doubling and
// never shrinks: after the run's peak it never allocates again. Private to the twin.

#include <cstdint>
#include <type_traits>
#include <vector>

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
    if (count_ == buf_.size()) grow();
    const std::uint32_t mask = static_cast<std::uint32_t>(buf_.size()) - 1;
    buf_[(head_ + count_) & mask] = v;
    ++count_;
    __builtin_prefetch(&buf_[(head_ + count_) & mask], 1);
  }
  T pop_front() {
    const T v = buf_[head_];
    head_ = (head_ + 1) & (static_cast<std::uint32_t>(buf_.size()) - 1);
    --count_;
    __builtin_prefetch(&buf_[head_]);
    return v;
  }

 private:
  void grow() {
    const std::size_t cap = buf_.empty() ? 16 : buf_.size() * 2;
    std::vector<T> next(cap);
    for (std::uint32_t i = 0; i < count_; ++i)
      next[i] = buf_[(head_ + i) & (static_cast<std::uint32_t>(buf_.size()) - 1)];
    buf_.swap(next);
    head_ = 0;
  }

  std::vector<T> buf_;
  std::uint32_t head_ = 0, count_ = 0;
};

}  // namespace rocelab::fabric::twin::detail

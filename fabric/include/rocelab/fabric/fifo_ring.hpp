#pragma once
// A FIFO of trivially copyable values in a power-of-two ring that grows by doubling and
// never shrinks: after a run's peak it never allocates again. The switch model's egress
// queues hold their packet descriptors in one; the twin's links and NIC control queues
// in others.
//
// Cache behaviour, which is what the twin's speed comes down to (bench/README.md):
// - Every push and pop prefetches the slot the next one of its kind touches. A ring is
//   visited once per frame on it and hundreds of rings interleave, so the hardware
//   prefetchers see no stream, and by the next visit the slot has usually left L1.
// - A ring that empties starts again at slot 0, so a queue that drains between bursts
//   keeps reusing its first, warm lines instead of walking through a capacity grown at
//   some earlier peak.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace rocelab::fabric {

template <typename T, std::uint32_t first_capacity = 16>
class fifo_ring {
  static_assert(std::is_trivially_copyable_v<T>);
  static_assert(first_capacity > 0 && (first_capacity & (first_capacity - 1)) == 0,
                "the capacity stays a power of two");

 public:
  [[nodiscard]] bool empty() const { return count_ == 0; }
  [[nodiscard]] std::uint32_t size() const { return count_; }
  [[nodiscard]] const T& front() const { return buf_[head_].value; }
  [[nodiscard]] T& front() { return buf_[head_].value; }

  // The next free slot, already counted: the caller fills it in place. (A value built
  // on the stack and copied in whole right after its fields were stored one by one
  // stalls on store-to-load forwarding.)
  [[gnu::always_inline]] T& append() {
    // mask_ + 1 is the capacity; it wraps to 0 while nothing is allocated, so one
    // comparison covers the first push too.
    if (count_ == mask_ + 1) [[unlikely]]
      grow();
    T& slot = buf_[(head_ + count_) & mask_].value;
    ++count_;
    __builtin_prefetch(&buf_[(head_ + count_) & mask_], 1);
    return slot;
  }
  void push_back(const T& v) { append() = v; }

  // Needs !empty().
  [[gnu::always_inline]] T pop_front() {
    const T v = buf_[head_].value;
    head_ = --count_ == 0 ? 0 : (head_ + 1) & mask_;
    __builtin_prefetch(&buf_[head_]);
    return v;
  }

 private:
  [[gnu::noinline]] void grow() {
    const std::uint32_t capacity = mask_ + 1;
    const std::uint32_t grown = capacity == 0 ? first_capacity : capacity * 2;
    auto next = std::make_unique<cell[]>(grown);
    for (std::uint32_t i = 0; i < count_; ++i) next[i] = buf_[(head_ + i) & mask_];
    buf_ = std::move(next);
    mask_ = grown - 1;
    head_ = 0;
  }

  // 20 bytes of state: a twin link's whole state fits one cache line, and the switch's
  // queue keeps its per-packet fields in the first line of its state. The mask is kept
  // rather than derived from a size, which for a 24-byte T is a multiply per operation.
  // A slot never straddles two cache lines: its size is rounded up to a power of two (a
  // 24-byte packet takes 32) and the array is aligned to it. With a 24-byte stride, or
  // malloc's 16-byte alignment of a 32-byte one, a third to a half of the slots spanned
  // two lines, and a slot is touched once per visit with its line long gone from L1.
  static constexpr std::size_t cell_align = sizeof(T) >= 64 ? 64 : std::bit_ceil(sizeof(T));
  struct alignas(cell_align) cell {
    T value;
  };
  std::unique_ptr<cell[]> buf_;
  std::uint32_t mask_ = ~0u;  // capacity - 1; all ones (capacity 0) until the first push
  std::uint32_t head_ = 0, count_ = 0;
};

}  // namespace rocelab::fabric

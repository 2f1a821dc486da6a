#pragma once
// The twin's event queue: one priority queue of 16-byte event records, ordered by
// (time, insertion sequence), so events at the same nanosecond run in the order they
// were scheduled and a run is reproducible bit for bit.
//
// Why not fabric::virtual_clock: that clock dispatches through a timer_client pointer and
// a slot table per event, which the twin pays on every packet; here an event is a time
// and a 32-bit payload (kind in the top 4 bits, an index below) that the engine decodes
// with one switch, and the heaps are 4-ary (half the depth of a binary heap, children of
// a node share a cache line). The fabric objects that need a `clock` (switch PFC refresh,
// DCQCN timers) get one from the engine, which puts their timers in this same queue.
//
// Contract: push never allocates once the vector has grown to the run's peak size
// (reserve() pre-sizes it); the sequence number wraps at 2^32 and ties are compared in
// serial-number arithmetic (RFC 1982), which is exact unless two events for the same
// nanosecond were scheduled 2^31 pushes apart. Single-threaded.

#include <cstdint>
#include <vector>

namespace rocelab::fabric::twin {

struct event_record {
  std::int64_t at_ns;
  std::uint32_t seq;
  std::uint32_t payload;  // kind << 28 | index
};
static_assert(sizeof(event_record) == 16);

inline constexpr std::uint32_t event_index_bits = 28;
inline constexpr std::uint32_t event_index_mask = (1u << event_index_bits) - 1;

class event_queue {
 public:
  // Events due more than far_horizon_ns after the last popped one (message starts,
  // retransmit and DCQCN rate timers) wait in a second heap, so the heap that every
  // packet event goes through stays as small as the packets in flight.
  static constexpr std::int64_t far_horizon_ns = 20'000;

  void reserve(std::size_t n) { near_.reserve(n), far_.reserve(n); }
  [[nodiscard]] bool empty() const { return near_.empty() && far_.empty(); }
  [[nodiscard]] std::size_t size() const { return near_.size() + far_.size(); }
  [[nodiscard]] const event_record& top() const { return from_far() ? far_.front() : near_.front(); }

  void push(std::int64_t at_ns, std::uint32_t kind, std::uint32_t index) {
    const event_record e{at_ns, seq_++, (kind << event_index_bits) | (index & event_index_mask)};
    push_heap(at_ns - now_ns_ > far_horizon_ns ? far_ : near_, e);
  }
  // Sequence number the next push will carry (lets a caller recognise its own event).
  [[nodiscard]] std::uint32_t next_seq() const { return seq_; }

  event_record pop() {
    const event_record out = pop_heap(from_far() ? far_ : near_);
    now_ns_ = out.at_ns;
    return out;
  }

  static bool before(const event_record& a, const event_record& b) {
    if (a.at_ns != b.at_ns) return a.at_ns < b.at_ns;
    return static_cast<std::int32_t>(a.seq - b.seq) < 0;
  }

 private:
  [[nodiscard]] bool from_far() const {
    return !far_.empty() && (near_.empty() || before(far_.front(), near_.front()));
  }
  static void push_heap(std::vector<event_record>& h, const event_record& e) {
    std::size_t i = h.size();
    h.push_back(e);
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!before(e, h[parent])) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = e;
  }
  static event_record pop_heap(std::vector<event_record>& h) {
    const event_record out = h.front();
    const event_record last = h.back();
    h.pop_back();
    const std::size_t n = h.size();
    if (n == 0) return out;
    // Sift the former last element down from the root.
    std::size_t i = 0;
    for (;;) {
      const std::size_t c = 4 * i + 1;
      if (c >= n) break;
      std::size_t best = c;
      const std::size_t end = c + 4 < n ? c + 4 : n;
      for (std::size_t k = c + 1; k < end; ++k)
        if (before(h[k], h[best])) best = k;
      if (!before(h[best], last)) break;
      h[i] = h[best];
      i = best;
    }
    h[i] = last;
    return out;
  }

  std::vector<event_record> near_, far_;
  std::uint32_t seq_ = 0;
  std::int64_t now_ns_ = 0;
};

}  // namespace rocelab::fabric::twin

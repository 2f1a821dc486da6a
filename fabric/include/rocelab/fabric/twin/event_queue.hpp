#pragma once
// The twin's event queue: 16-byte event records popped in (time, insertion sequence)
// order, so events at the same nanosecond run in the order they were scheduled and a run
// is reproducible bit for bit.
//
// Why not fabric::virtual_clock: that clock dispatches through a timer_client pointer and
// a slot table per event, which the twin pays on every packet; here an event is a time
// and a 32-bit payload (kind in the top 4 bits, an index below) that the engine decodes
// with one switch. The fabric objects that need a `clock` (switch PFC refresh, DCQCN
// timers) get one from the engine, which puts their timers in this same queue.
//
// Structure: a timing wheel (Varghese & Lauck 1987, "Hashed and hierarchical timing
// wheels") of 1 ns buckets covering the horizon ahead of the last popped time, for the
// events every packet makes (link arrivals, port and NIC starts); events further ahead
// (message starts, retransmit and DCQCN rate timers, pause expiries) and, defensively,
// any in the past wait in a 4-ary heap. A bucket holds events of one nanosecond only
// (everything in the wheel is within the wheel's span of now), appended in push
// order, which is sequence order, so a bucket is a FIFO and a push is O(1); a pop finds
// the next non-empty bucket through an occupancy bitmap (one bit per bucket, 64 per word)
// and compares its head with the heap's top by (time, sequence). The pop order is exactly
// that of a single heap keyed by (time, sequence).
//
// The horizon is the owner's choice (the twin: twice its longest link delay plus two
// frame times), and the wheel the next power of two above it. Not a fixed span of tens
// of microseconds: a packet's next event lands about one link delay ahead, so a push
// writes a bucket line last touched one wheel turn ago. With 32k buckets (256 KB of
// bucket lines) that line had left the caches, and its load was the costliest of a push
// in perf; a wheel a few link delays long is swept often enough to stay in them
// (paired runs on the first 500 flows of ls64_ws50: 6-9% less CPU time; on the whole
// run, 3% in rounds interleaved with ns-3).
//
// The FIFOs are linked through one array of links (`links_`): slots 2b and 2b + 1 are
// the head of bucket b and its tail (the slot its next event is written to), slot
// 2 wheel + n the successor of node n. Head and tail share a cache line, since a
// bucket a few microseconds ahead is usually cold (measured gain within noise).
// Appending and unlinking then need no test of whether the bucket was, or becomes,
// empty: whether another event falls in the same nanosecond is close to a coin toss,
// and a branch on it mispredicted on every other packet hop.
//
// Contract: after the run's peak no push allocates (nodes are recycled through a free
// list; reserve() pre-sizes); the sequence number wraps at 2^32 and ties are compared in
// serial-number arithmetic (RFC 1982), which is exact unless two events for the same
// nanosecond were scheduled 2^31 pushes apart. Single-threaded.

#include <algorithm>
#include <bit>
#include <climits>
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
  static constexpr std::int64_t default_horizon_ns = 20'000;
  static constexpr std::int64_t max_horizon_ns = (1 << 24) - 1;

  // Events due more than `horizon_ns` (clamped to 63..max_horizon_ns) after the last
  // popped one go to the heap; the wheel has the next power of two of 1 ns buckets.
  explicit event_queue(std::int64_t horizon_ns = default_horizon_ns)
      : horizon_ns_(std::clamp<std::int64_t>(horizon_ns, 63, max_horizon_ns)),
        wheel_(static_cast<std::uint32_t>(std::bit_ceil(static_cast<std::uint64_t>(horizon_ns_) + 1))),
        links_(2 * wheel_, nil),
        occupied_(wheel_ / 64, 0) {
    for (std::uint32_t b = 0; b < wheel_; ++b) links_[tail_slot(b)] = head_slot(b);
  }

  [[nodiscard]] std::int64_t horizon_ns() const { return horizon_ns_; }
  void reserve(std::size_t n) { nodes_.reserve(n), links_.reserve(2 * wheel_ + n), far_.reserve(n); }
  [[nodiscard]] bool empty() const { return in_wheel_ == 0 && far_.empty(); }
  [[nodiscard]] std::size_t size() const { return in_wheel_ + far_.size(); }

  // Inline, since every packet hop pushes at least one event; the rare cases (far
  // events, a new node past the run's peak) are not.
  //
  // The node is written field by field, never built as a record on the stack first: a
  // 16-byte load of a record just stored as 8 + 4 + 4 bytes cannot be forwarded from the
  // store buffer and waits for the stores to reach the cache, which profiled as the
  // costliest instruction of a packet hop.
  [[gnu::always_inline]] void push(std::int64_t at_ns, std::uint32_t kind, std::uint32_t index) {
    const std::uint32_t seq = seq_++;
    const std::uint32_t payload = (kind << event_index_bits) | (index & event_index_mask);
    const std::int64_t ahead = at_ns - now_ns_;
    if (ahead < 0 || ahead > horizon_ns_ || free_ == nil) [[unlikely]] {
      push_slow(at_ns, seq, payload);
      return;
    }
    const std::uint32_t n = free_;
    free_ = links_[next_slot(n)];
    event_record& node = nodes_[n];
    node.at_ns = at_ns;
    node.seq = seq;
    node.payload = payload;
    link(n, at_ns);
  }
  // Sequence number the next push will carry (lets a caller recognise its own event).
  [[nodiscard]] std::uint32_t next_seq() const { return seq_; }

  // The earliest event; the queue must not be empty.
  [[nodiscard]] event_record top() const {
    if (in_wheel_ == 0) return far_.front();
    const event_record& w = nodes_[links_[head_slot(first_bucket())]];
    return far_first_ns_ <= w.at_ns && before(far_.front(), w) ? far_.front() : w;
  }

  // Inline (forced: GCC's choice flipped with unrelated changes elsewhere in the engine,
  // and a call here costs about 40 instructions an event in spills).
  [[gnu::always_inline]] event_record pop() {
    event_record out;
    if (in_wheel_ == 0) {
      out = pop_far();
    } else {
      const std::size_t b = first_bucket();
      const std::uint32_t n = links_[head_slot(b)];
      // far_first_ns_ first: a far event is rarely due, and it is never_ns when none waits.
      if (far_first_ns_ <= nodes_[n].at_ns && before(far_.front(), nodes_[n])) {
        out = pop_far();
      } else {
        out = nodes_[n];
        const std::uint32_t next = links_[next_slot(n)];
        links_[head_slot(b)] = next;
        // The bucket emptied: its tail is its head slot again and its bit goes.
        const std::uint32_t emptied = next == nil ? 1u : 0u;
        std::uint32_t& tail = links_[tail_slot(b)];
        tail ^= (tail ^ head_slot(b)) & (0u - emptied);
        occupied_[b >> 6] &= ~(std::uint64_t{emptied} << (b & 63));
        links_[next_slot(n)] = free_;
        free_ = n;
        --in_wheel_;
      }
    }
    now_ns_ = out.at_ns;
    return out;
  }

  static bool before(const event_record& a, const event_record& b) {
    if (a.at_ns != b.at_ns) return a.at_ns < b.at_ns;
    return static_cast<std::int32_t>(a.seq - b.seq) < 0;
  }

 private:
  static constexpr std::uint32_t nil = 0xffffffffu;
  static constexpr std::uint32_t head_slot(std::size_t b) { return static_cast<std::uint32_t>(2 * b); }
  static constexpr std::uint32_t tail_slot(std::size_t b) { return static_cast<std::uint32_t>(2 * b + 1); }
  [[nodiscard]] std::uint32_t next_slot(std::uint32_t n) const { return 2 * wheel_ + n; }
  [[nodiscard]] std::size_t bucket_of(std::int64_t at_ns) const {
    return static_cast<std::size_t>(at_ns) & (wheel_ - 1);
  }

  // The first occupied bucket at or after now's, circularly: every wheel event is due in
  // [now, now + horizon], so that is the earliest one. Needs in_wheel_ > 0.
  [[nodiscard]] std::size_t first_bucket() const {
    const std::size_t words = wheel_ / 64;
    const std::size_t start = bucket_of(now_ns_);
    std::size_t w = start >> 6;
    std::uint64_t bits = occupied_[w] & (~std::uint64_t{0} << (start & 63));
    while (bits == 0) {
      w = (w + 1) & (words - 1);
      bits = occupied_[w];
    }
    return (w << 6) | static_cast<std::size_t>(std::countr_zero(bits));
  }

  event_record pop_far() {
    const event_record out = pop_heap(far_);
    far_first_ns_ = far_.empty() ? INT64_MAX : far_.front().at_ns;
    return out;
  }
  [[gnu::always_inline]] void link(std::uint32_t n, std::int64_t at_ns) {
    const std::size_t b = bucket_of(at_ns);
    links_[next_slot(n)] = nil;
    std::uint32_t& tail = links_[tail_slot(b)];
    links_[tail] = n;
    tail = next_slot(n);
    occupied_[b >> 6] |= std::uint64_t{1} << (b & 63);
    ++in_wheel_;
  }
  [[gnu::noinline]] void push_slow(std::int64_t at_ns, std::uint32_t seq, std::uint32_t payload) {
    const event_record e{at_ns, seq, payload};
    const std::int64_t ahead = e.at_ns - now_ns_;
    if (ahead < 0 || ahead > horizon_ns_) {
      push_heap(far_, e);
      far_first_ns_ = far_.front().at_ns;
      return;
    }
    const auto n = static_cast<std::uint32_t>(nodes_.size());  // the free list is empty
    nodes_.push_back(e);
    links_.push_back(nil);
    link(n, e.at_ns);
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

  std::int64_t horizon_ns_;
  std::uint32_t wheel_;  // buckets: a power of two above horizon_ns_
  std::vector<event_record> nodes_;
  std::uint32_t free_ = nil;              // free nodes, linked through links_ too
  std::vector<std::uint32_t> links_;      // bucket heads and tails, then each node's successor (nil: none)
  std::vector<std::uint64_t> occupied_;     // bit per bucket: non-empty
  std::size_t in_wheel_ = 0;
  std::vector<event_record> far_;
  std::int64_t far_first_ns_ = INT64_MAX;  // far_.front().at_ns, or INT64_MAX when far_ is empty
  std::uint32_t seq_ = 0;
  std::int64_t now_ns_ = 0;
};

}  // namespace rocelab::fabric::twin

#pragma once
// Private to captures/: the lookup tables behind congestion_analyzer's per-packet path.
// Flows between IPv4 addresses (almost every flow on a RoCEv2 fabric) in 64-byte entries
// that hold the key and the per-packet counters; other flows by a five-word key; capture
// ports by a 64-bit key. Open addressing with linear probing, grown at half full (IPv4
// flows at a quarter). Keys are not chosen by anyone who gains from collisions beyond
// slowing one analysis.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "rocelab/captures/congestion_analyzer.hpp"

namespace rocelab::captures::detail {

// What every packet of a flow updates. The rest of the flow (its first packet's time,
// CE marks, CNPs, retransmissions) is in its roce_flow record, which few packets touch.
struct flow_hot {
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  std::int64_t last_ns = 0;
  std::uint32_t highest_psn = 0;
  std::uint32_t previous_psn = 0;
  bool has_psn = false;
};

inline constexpr std::uint32_t no_record = 0xffffffff;

inline bool ipv4_mapped(const std::array<std::uint8_t, 16>& a) {
  static constexpr std::uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(a.data(), prefix, 12) == 0;
}

// Flows between IPv4 addresses, a mirror port's bulk: open addressing with linear probing
// over 64-byte entries that hold the key and the per-packet counters together, so a
// packet's lookup and update touch one cache line.
class ipv4_flow_table {
 public:
  struct alignas(64) entry {
    std::uint64_t addresses = 0;  // source and destination, wire bytes in this order
    std::uint32_t dest_qp = 0;
    std::uint32_t record = no_record;  // index into the records; no_record: a free entry
    flow_hot hot;
  };
  static_assert(sizeof(entry) == 64);

  ipv4_flow_table() { entries_.resize(64); }

  // Two 32-bit loads joined in a register: one 64-bit load of two 4-byte fields stored
  // apart would wait for store forwarding to fail.
  static std::uint64_t addresses_of(const std::uint8_t* src, const std::uint8_t* dst) {
    std::uint32_t s, d;
    std::memcpy(&s, src, 4);
    std::memcpy(&d, dst, 4);
    return (std::uint64_t{s} << 32) | d;
  }

  // The entry of (addresses, dest_qp); a new flow's record is appended to `records`.
  entry& find_or_insert(std::uint64_t addresses, std::uint32_t dest_qp, std::vector<roce_flow>& records) {
    const std::size_t mask = entries_.size() - 1;
    for (std::size_t i = slot_of(addresses, dest_qp); ; i = (i + 1) & mask) {
      entry& e = entries_[i];
      // One branch for the whole key: three would each be a chance to mispredict.
      const bool same_key = ((e.addresses ^ addresses) | (e.dest_qp ^ dest_qp)) == 0;
      if (same_key & (e.record != no_record)) [[likely]] return e;
      if (e.record == no_record) return insert(addresses, dest_qp, records);
    }
  }

  const std::vector<entry>& entries() const { return entries_; }

 private:
  // Fibonacci hashing: the top bits of one product, which depend on every bit of the key.
  // The low bits of a product depend only on the low bits of its factors, and a mirror's
  // flows differ in a few bits of the source address and the QP.
  static std::size_t slot_of(std::uint64_t addresses, std::uint32_t dest_qp, unsigned shift) {
    return static_cast<std::size_t>(((addresses ^ (std::uint64_t{dest_qp} * 0xc2b2ae3d27d4eb4full)) *
                                     0x9e3779b97f4a7c15ull) >> shift);
  }
  std::size_t slot_of(std::uint64_t addresses, std::uint32_t dest_qp) const {
    return slot_of(addresses, dest_qp, shift_);
  }

  [[gnu::noinline]] entry& insert(std::uint64_t addresses, std::uint32_t dest_qp, std::vector<roce_flow>& records) {
    // Grown at a quarter full: a mirror's few hundred flows then find their entry at the
    // first probe almost always (at half full a quarter of the lookups probed on).
    if ((used_ + 1) * 4 > entries_.size()) grow();
    const std::size_t mask = entries_.size() - 1;
    std::size_t i = slot_of(addresses, dest_qp);
    while (entries_[i].record != no_record) i = (i + 1) & mask;
    entry& e = entries_[i];
    e.addresses = addresses;
    e.dest_qp = dest_qp;
    e.record = static_cast<std::uint32_t>(records.size());
    ++used_;
    roce_flow& r = records.emplace_back();
    r.src[10] = r.src[11] = r.dst[10] = r.dst[11] = 0xff;
    const auto src = static_cast<std::uint32_t>(addresses >> 32), dst = static_cast<std::uint32_t>(addresses);
    std::memcpy(r.src.data() + 12, &src, 4);
    std::memcpy(r.dst.data() + 12, &dst, 4);
    r.dest_qp = dest_qp;
    return e;
  }

  void grow() {
    std::vector<entry> bigger(entries_.size() * 2);
    const std::size_t mask = bigger.size() - 1;
    for (const entry& e : entries_) {
      if (e.record == no_record) continue;
      std::size_t i = slot_of(e.addresses, e.dest_qp, shift_ - 1);
      while (bigger[i].record != no_record) i = (i + 1) & mask;
      bigger[i] = e;
    }
    entries_ = std::move(bigger);
    --shift_;
  }

  std::vector<entry> entries_;
  unsigned shift_ = 64 - 6;  // 64 - log2(entries_.size())
  std::size_t used_ = 0;
};

// Every other flow (IPv6 addresses): the key as five 64-bit words (source, destination,
// QP), compared word by word.
struct flow_key {
  std::array<std::uint64_t, 5> words;
  // Word by word: std::array's operator== may become a memcmp call on this path.
  bool operator==(const flow_key& o) const {
    return ((words[0] ^ o.words[0]) | (words[1] ^ o.words[1]) | (words[2] ^ o.words[2]) |
            (words[3] ^ o.words[3]) | (words[4] ^ o.words[4])) == 0;
  }

  static flow_key of(const std::array<std::uint8_t, 16>& src, const std::array<std::uint8_t, 16>& dst,
                     std::uint32_t dest_qp) {
    flow_key k;
    std::memcpy(&k.words[0], src.data(), 16);
    std::memcpy(&k.words[2], dst.data(), 16);
    k.words[4] = dest_qp;
    return k;
  }
};

// Each word times its own odd constant, folded and mixed once: the five products do not
// depend on each other, so they issue in parallel instead of a chain of multiplies.
// Keys are not chosen by anyone who gains from collisions beyond slowing one analysis.
inline std::uint64_t hash_key(const flow_key& k) {
  std::uint64_t h = (k.words[0] * 0x9e3779b97f4a7c15ull) ^ (k.words[1] * 0xc2b2ae3d27d4eb4full) ^
                    (k.words[2] * 0x165667b19e3779f9ull) ^ (k.words[3] * 0xd6e8feb86659fd93ull) ^
                    (k.words[4] * 0xff51afd7ed558ccdull);
  h ^= h >> 32;
  h *= 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

struct flow_state {
  flow_key key;
  flow_hot hot;
  std::uint32_t record = no_record;  // index into the records
};

// Open addressing with linear probing. A slot is 8 bytes (flow index and 32 bits of the
// hash); the full key is checked in the flow state.
class flow_table {
 public:
  flow_table() { slots_.assign(64, slot{}); }

  flow_state& find_or_insert(const flow_key& key, std::uint64_t h, std::vector<flow_state>& flows,
                             std::vector<roce_flow>& records) {
    const auto tag = static_cast<std::uint32_t>(h >> 32);
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      slot& s = slots_[i];
      if (s.index == empty) [[unlikely]] {
        s = {static_cast<std::uint32_t>(flows.size()), tag};
        flow_state& f = flows.emplace_back();
        f.key = key;
        f.record = static_cast<std::uint32_t>(records.size());
        roce_flow& r = records.emplace_back();
        std::memcpy(r.src.data(), &key.words[0], 16);
        std::memcpy(r.dst.data(), &key.words[2], 16);
        r.dest_qp = static_cast<std::uint32_t>(key.words[4]);
        if (flows.size() * 2 > slots_.size()) grow(flows);
        return f;
      }
      if (s.tag == tag) {
        flow_state& f = flows[s.index];
        if (f.key == key) [[likely]] return f;
      }
    }
  }

 private:
  static constexpr std::uint32_t empty = 0xffffffff;
  struct slot {
    std::uint32_t index = empty;
    std::uint32_t tag = 0;
  };

  void grow(const std::vector<flow_state>& flows) {
    std::vector<slot> bigger(slots_.size() * 2);
    const std::size_t mask = bigger.size() - 1;
    for (const slot& s : slots_) {
      if (s.index == empty) continue;
      std::size_t i = hash_key(flows[s.index].key) & mask;
      while (bigger[i].index != empty) i = (i + 1) & mask;
      bigger[i] = s;
    }
    slots_ = std::move(bigger);
  }

  std::vector<slot> slots_;
};

// Port key (a MAC, or an interface id with bit 63 set) to its index in the analyzer's
// ports: open addressing over 16-byte slots, so a storm's lookup per PFC frame is a
// multiply and, for the few dozen ports a mirror sees, one cache line.
class port_table {
 public:
  port_table() { slots_.assign(64, slot{}); }

  // The index stored for `key`, or `next` (stored for it) when the key is new.
  std::uint32_t find_or_insert(std::uint64_t key, std::uint32_t next) {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      slot& s = slots_[i];
      if (s.index == empty) [[unlikely]] {
        s = {key, next};
        if (++used_ * 2 > slots_.size()) grow();
        return next;
      }
      if (s.key == key) return s.index;
    }
  }

 private:
  static constexpr std::uint32_t empty = 0xffffffff;
  struct slot {
    std::uint64_t key = 0;
    std::uint32_t index = empty;
  };

  static std::uint64_t hash(std::uint64_t key) {
    key *= 0x9e3779b97f4a7c15ull;
    return key ^ (key >> 32);
  }

  void grow() {
    std::vector<slot> bigger(slots_.size() * 2);
    const std::size_t mask = bigger.size() - 1;
    for (const slot& s : slots_) {
      if (s.index == empty) continue;
      std::size_t i = hash(s.key) & mask;
      while (bigger[i].index != empty) i = (i + 1) & mask;
      bigger[i] = s;
    }
    slots_ = std::move(bigger);
  }

  std::vector<slot> slots_;
  std::size_t used_ = 0;
};

}  // namespace rocelab::captures::detail

#include "rocelab/captures/capture_summary.hpp"

#include <algorithm>
#include <numeric>

namespace rocelab::captures {
namespace {

// The indexes of the `n` largest keys (key > 0), largest first, ties in index order.
template <typename Key>
std::vector<std::size_t> top(std::size_t size, std::size_t n, Key key) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < size; ++i)
    if (key(i) > 0) idx.push_back(i);
  const auto before = [&](std::size_t a, std::size_t b) { return key(a) > key(b) || (key(a) == key(b) && a < b); };
  const std::size_t k = std::min(n, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(), before);
  idx.resize(k);
  return idx;
}

}  // namespace

std::vector<port_priority_pauses> summarize_pauses(const capture_analysis& a) {
  std::vector<port_priority_pauses> by_key(a.ports.size() * 8);
  for (const pause_interval& p : a.pauses) {
    port_priority_pauses& s = by_key[static_cast<std::size_t>(p.port) * 8 + (p.priority & 7)];
    const std::int64_t length = p.end_ns - p.start_ns;
    ++s.intervals;
    s.frames += p.frames;
    s.paused_ns += length;
    s.longest_ns = std::max(s.longest_ns, length);
  }
  std::vector<port_priority_pauses> out;
  for (std::size_t i = 0; i < by_key.size(); ++i) {
    if (by_key[i].intervals == 0) continue;
    by_key[i].port = static_cast<std::uint32_t>(i / 8);
    by_key[i].priority = static_cast<std::uint8_t>(i % 8);
    out.push_back(by_key[i]);
  }
  return out;
}

std::vector<std::size_t> longest_pauses(const capture_analysis& a, std::size_t n) {
  return top(a.pauses.size(), n, [&](std::size_t i) { return a.pauses[i].end_ns - a.pauses[i].start_ns + 1; });
}

std::vector<std::size_t> flows_by_retransmits(const capture_analysis& a, std::size_t n) {
  return top(a.flows.size(), n, [&](std::size_t i) { return a.flows[i].retransmits; });
}

std::vector<std::size_t> flows_by_ce(const capture_analysis& a, std::size_t n) {
  return top(a.flows.size(), n, [&](std::size_t i) { return a.flows[i].ce; });
}

}  // namespace rocelab::captures

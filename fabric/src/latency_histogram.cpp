#include "rocelab/fabric/latency_histogram.hpp"

#include <algorithm>
#include <cmath>

namespace rocelab::fabric {

void latency_histogram::clear() noexcept {
  buckets_.fill(0);
  count_ = 0;
  min_ns_ = max_ns_ = 0;
}

void latency_histogram::merge(const latency_histogram& o) noexcept {
  if (o.count_ == 0) return;
  for (std::size_t i = 0; i < bucket_count; ++i) buckets_[i] += o.buckets_[i];
  min_ns_ = count_ == 0 ? o.min_ns_ : std::min(min_ns_, o.min_ns_);
  max_ns_ = std::max(max_ns_, o.max_ns_);
  count_ += o.count_;
}

delay_quantiles latency_histogram::quantiles() const {
  delay_quantiles q;
  if (count_ == 0) return q;
  const auto n = static_cast<double>(count_);
  std::size_t bucket = 0;
  std::uint64_t below = 0;  // samples in buckets before `bucket`
  for (std::size_t k = 0; k < delay_quantiles::probabilities.size(); ++k) {
    const double p = delay_quantiles::probabilities[k];
    // Nearest rank, as delay_quantiles::of: the smallest sample with at least p of the
    // samples at or below it; its bucket's middle stands for it.
    const auto rank = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::ceil(p * n)), 1, count_);
    while (below + buckets_[bucket] < rank) below += buckets_[bucket++];
    const std::int64_t low = bucket_low(bucket), high = std::min(bucket_high(bucket), max_ns_);
    q.ns[k] = std::clamp(low + (high - low) / 2, min_ns_, max_ns_);
  }
  q.ns.front() = min_ns_;
  q.ns.back() = max_ns_;
  q.samples = count_;
  return q;
}

std::vector<std::pair<std::uint32_t, std::uint64_t>> latency_histogram::nonzero() const {
  std::vector<std::pair<std::uint32_t, std::uint64_t>> out;
  for (std::size_t i = 0; i < bucket_count; ++i)
    if (buckets_[i] != 0) out.emplace_back(static_cast<std::uint32_t>(i), buckets_[i]);
  return out;
}

result<latency_histogram> latency_histogram::from_nonzero(std::span<const std::pair<std::uint32_t, std::uint64_t>> b,
                                                          std::int64_t min_ns, std::int64_t max_ns) {
  latency_histogram h;
  for (const auto& [i, c] : b) {
    if (i >= bucket_count)
      return status(error_code::malformed_input, "latency histogram: bucket " + std::to_string(i) +
                                                     " out of range (0.." + std::to_string(bucket_count - 1) + ")");
    h.buckets_[i] += c;
    h.count_ += c;
  }
  if (h.count_ > 0 && (min_ns < 0 || min_ns > max_ns))
    return status(error_code::malformed_input, "latency histogram: min_ns " + std::to_string(min_ns) +
                                                   " and max_ns " + std::to_string(max_ns) + " do not bound it");
  if (h.count_ > 0) {
    h.min_ns_ = min_ns;
    h.max_ns_ = max_ns;
  }
  return h;
}

}  // namespace rocelab::fabric

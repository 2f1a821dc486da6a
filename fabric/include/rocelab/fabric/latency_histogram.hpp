#pragma once
// A latency distribution kept as counts in fixed log-linear buckets, for a hot path that
// must not allocate or sort: the soft switch's forwarding latency per egress port, the
// soft NIC's receive processing. Values below 32 ns have a bucket each; above, every
// power of two is split into 32 equal buckets, so a bucket is at most 1/32 (3.1%) of its
// values wide. Values from 2^40 ns (~18 min) on share the last bucket.
//
// record() is a few integer operations and one increment; the buckets are a fixed array
// inside the object (9 KiB), allocated with it. quantiles() turns the counts into the
// fabric::delay_quantiles a calibration carries: nearest rank over the counts, each
// quantile the middle of its bucket, clamped to the exact minimum and maximum recorded.
//
// Pure; one thread (a reader copies it between records).

#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/delay_quantiles.hpp"

namespace rocelab::fabric {

class latency_histogram {
 public:
  static constexpr int sub_bits = 5;
  static constexpr std::uint32_t sub_buckets = 1u << sub_bits;
  static constexpr int max_exponent = 40;
  static constexpr std::size_t bucket_count = sub_buckets + std::size_t{max_exponent - sub_bits} * sub_buckets;

  // A negative value (a clock step between two stamps) is counted as 0.
  void record(std::int64_t ns) noexcept {
    const std::int64_t v = ns < 0 ? 0 : ns;
    ++buckets_[bucket_of(v)];
    if (count_ == 0 || v < min_ns_) min_ns_ = v;
    if (v > max_ns_) max_ns_ = v;
    ++count_;
  }
  void clear() noexcept;
  void merge(const latency_histogram& other) noexcept;

  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
  [[nodiscard]] std::int64_t min_ns() const noexcept { return min_ns_; }  // 0 when empty
  [[nodiscard]] std::int64_t max_ns() const noexcept { return max_ns_; }
  [[nodiscard]] std::span<const std::uint64_t> buckets() const noexcept { return buckets_; }

  // The quantiles at delay_quantiles::probabilities; samples 0 when empty.
  [[nodiscard]] delay_quantiles quantiles() const;

  // The non-empty buckets as (index, count), in index order: the histogram's exchange form
  // (JSON on the switch's control socket and in the NIC's counters line).
  [[nodiscard]] std::vector<std::pair<std::uint32_t, std::uint64_t>> nonzero() const;
  // Back from nonzero() and the exact extremes; fails on an index out of range or a
  // minimum above the maximum.
  [[nodiscard]] static result<latency_histogram> from_nonzero(
      std::span<const std::pair<std::uint32_t, std::uint64_t>> buckets, std::int64_t min_ns, std::int64_t max_ns);

  // The bucket a value falls in, and the values a bucket holds [low, high].
  [[nodiscard]] static constexpr std::size_t bucket_of(std::int64_t ns) noexcept {
    const auto v = static_cast<std::uint64_t>(ns < 0 ? 0 : ns);
    if (v < sub_buckets) return static_cast<std::size_t>(v);
    const int e = 63 - __builtin_clzll(v);
    if (e >= max_exponent) return bucket_count - 1;
    const std::uint64_t sub = (v >> (e - sub_bits)) - sub_buckets;
    return sub_buckets + static_cast<std::size_t>(e - sub_bits) * sub_buckets + static_cast<std::size_t>(sub);
  }
  [[nodiscard]] static constexpr std::int64_t bucket_low(std::size_t i) noexcept {
    if (i < sub_buckets) return static_cast<std::int64_t>(i);
    const auto e = static_cast<int>((i - sub_buckets) / sub_buckets) + sub_bits;
    const std::uint64_t sub = (i - sub_buckets) % sub_buckets;
    return static_cast<std::int64_t>((sub_buckets + sub) << (e - sub_bits));
  }
  [[nodiscard]] static constexpr std::int64_t bucket_high(std::size_t i) noexcept {
    if (i < sub_buckets) return static_cast<std::int64_t>(i);
    if (i + 1 >= bucket_count) return INT64_MAX;
    return bucket_low(i + 1) - 1;
  }

 private:
  std::array<std::uint64_t, bucket_count> buckets_{};
  std::uint64_t count_ = 0;
  std::int64_t min_ns_ = 0, max_ns_ = 0;
};

}  // namespace rocelab::fabric

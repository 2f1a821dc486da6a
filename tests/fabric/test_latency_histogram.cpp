#include "rocelab/fabric/latency_histogram.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace rocelab::fabric {
namespace {

TEST(LatencyHistogram, EveryBucketHoldsTheValuesBetweenItsBoundsAndTheBucketsTileTheRange) {
  for (std::size_t i = 0; i + 1 < latency_histogram::bucket_count; ++i) {
    ASSERT_EQ(latency_histogram::bucket_high(i) + 1, latency_histogram::bucket_low(i + 1)) << i;
    ASSERT_EQ(latency_histogram::bucket_of(latency_histogram::bucket_low(i)), i) << i;
    ASSERT_EQ(latency_histogram::bucket_of(latency_histogram::bucket_high(i)), i) << i;
  }
  EXPECT_EQ(latency_histogram::bucket_of(-5), 0u);
  EXPECT_EQ(latency_histogram::bucket_of(INT64_MAX), latency_histogram::bucket_count - 1);
}

TEST(LatencyHistogram, ABucketIsAtMostOneThirtySecondOfItsValuesWide) {
  for (std::size_t i = latency_histogram::sub_buckets; i + 1 < latency_histogram::bucket_count; ++i) {
    const auto low = static_cast<double>(latency_histogram::bucket_low(i));
    const auto width = static_cast<double>(latency_histogram::bucket_high(i) - latency_histogram::bucket_low(i) + 1);
    ASSERT_LE(width / low, 1.0 / 32 + 1e-12) << i;
  }
}

TEST(LatencyHistogram, AnEmptyHistogramHasNoSamples) {
  const latency_histogram h;
  EXPECT_TRUE(h.quantiles().empty());
  EXPECT_TRUE(h.nonzero().empty());
}

TEST(LatencyHistogram, SmallValuesAreExactAndTheEndsAreTheRecordedExtremes) {
  latency_histogram h;
  for (std::int64_t v : {3, 7, 7, 9, 20}) h.record(v);
  const delay_quantiles q = h.quantiles();
  EXPECT_EQ(q.samples, 5u);
  EXPECT_EQ(q.ns.front(), 3);
  EXPECT_EQ(q.median(), 7);
  EXPECT_EQ(q.ns.back(), 20);
  // Below 32 ns every value has its own bucket: the same as the exact quantiles.
  const std::vector<std::int64_t> exact{3, 7, 7, 9, 20};
  EXPECT_EQ(q, delay_quantiles::of(exact));
}

TEST(LatencyHistogram, QuantilesOfManySamplesAreWithinHalfABucketOfTheExactOnes) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> d(std::log(20'000.0), 0.6);  // ~20 us, a long tail
  latency_histogram h;
  std::vector<std::int64_t> samples;
  for (int i = 0; i < 20'000; ++i) {
    const auto v = static_cast<std::int64_t>(d(rng));
    samples.push_back(v);
    h.record(v);
  }
  const delay_quantiles exact = delay_quantiles::of(samples);
  const delay_quantiles binned = h.quantiles();
  EXPECT_EQ(binned.samples, exact.samples);
  EXPECT_TRUE(binned.valid());
  for (std::size_t k = 0; k < exact.ns.size(); ++k)
    EXPECT_NEAR(static_cast<double>(binned.ns[k]), static_cast<double>(exact.ns[k]),
                static_cast<double>(exact.ns[k]) / 64 + 1)
        << "p" << delay_quantiles::probabilities[k];
}

TEST(LatencyHistogram, NegativeValuesCountAsZero) {
  latency_histogram h;
  h.record(-100);
  h.record(50);
  EXPECT_EQ(h.min_ns(), 0);
  EXPECT_EQ(h.quantiles().ns.front(), 0);
}

TEST(LatencyHistogram, TheExchangeFormRoundTripsAndMergeAddsCounts) {
  latency_histogram a, b;
  for (std::int64_t v : {100, 5'000, 5'001, 1'000'000}) a.record(v);
  for (std::int64_t v : {40, 7'000}) b.record(v);
  auto back = latency_histogram::from_nonzero(a.nonzero(), a.min_ns(), a.max_ns());
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->quantiles(), a.quantiles());
  a.merge(b);
  EXPECT_EQ(a.count(), 6u);
  EXPECT_EQ(a.min_ns(), 40);
  EXPECT_EQ(a.max_ns(), 1'000'000);
  a.clear();
  EXPECT_EQ(a.count(), 0u);
}

TEST(LatencyHistogram, TheExchangeFormRefusesABucketOutOfRangeAndExtremesThatDoNotBoundIt) {
  const std::vector<std::pair<std::uint32_t, std::uint64_t>> bad{{latency_histogram::bucket_count, 1}};
  EXPECT_FALSE(latency_histogram::from_nonzero(bad, 0, 10).ok());
  const std::vector<std::pair<std::uint32_t, std::uint64_t>> one{{3, 1}};
  EXPECT_FALSE(latency_histogram::from_nonzero(one, 10, 3).ok());
}

}  // namespace
}  // namespace rocelab::fabric

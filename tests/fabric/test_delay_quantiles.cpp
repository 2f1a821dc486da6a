// A measured delay's quantiles and the draws a model makes from them.
#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <vector>

#include "rocelab/fabric/delay_quantiles.hpp"

namespace rocelab::fabric {
namespace {

TEST(delay_quantiles, takes_nearest_rank_quantiles_of_the_samples) {
  std::vector<std::int64_t> samples(100);
  std::iota(samples.begin(), samples.end(), 1);  // 1..100 ns, shuffled below
  std::shuffle(samples.begin(), samples.end(), std::mt19937(7));
  const auto q = delay_quantiles::of(samples);
  EXPECT_EQ(q.samples, 100u);
  EXPECT_EQ(q.ns.front(), 1);
  EXPECT_EQ(q.median(), 50);
  EXPECT_EQ(q.p99(), 99);
  EXPECT_EQ(q.ns.back(), 100);
  EXPECT_TRUE(q.valid());
}

TEST(delay_quantiles, nothing_measured_draws_zero_and_a_constant_draws_itself) {
  EXPECT_TRUE(delay_quantiles::of({}).empty());
  EXPECT_EQ(delay_quantiles{}.draw(0.7), 0);
  const auto c = delay_quantiles::constant(2'500);
  for (double u : {0.0, 0.3, 0.999, 1.0}) EXPECT_EQ(c.draw(u), 2'500);
}

TEST(delay_quantiles, draws_reproduce_the_measured_distribution) {
  // Exponential service times, mean 10 us: the draws' median and p99 come back.
  std::mt19937_64 rng(3);
  std::exponential_distribution<double> exp(1.0 / 10'000);
  std::vector<std::int64_t> samples(20'000);
  for (auto& s : samples) s = static_cast<std::int64_t>(exp(rng));
  const auto q = delay_quantiles::of(samples);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::int64_t> draws(20'000);
  for (auto& d : draws) d = q.draw(u(rng));
  const auto again = delay_quantiles::of(draws);
  EXPECT_NEAR(static_cast<double>(again.median()), static_cast<double>(q.median()), 0.05 * q.median());
  EXPECT_NEAR(static_cast<double>(again.p99()), static_cast<double>(q.p99()), 0.05 * q.p99());
  EXPECT_GE(again.ns.front(), q.ns.front()) << "no draw leaves the measured range";
  EXPECT_LE(again.ns.back(), q.ns.back());
}

TEST(delay_quantiles, draw_is_linear_between_the_fixed_quantiles) {
  delay_quantiles q;
  for (std::size_t i = 0; i < q.ns.size(); ++i) q.ns[i] = static_cast<std::int64_t>(delay_quantiles::probabilities[i] * 1000);
  q.samples = 1000;
  EXPECT_EQ(q.draw(0.3), 300);
  EXPECT_EQ(q.draw(0.62), 620);
  q.ns[3] = q.ns[2] - 1;
  EXPECT_FALSE(q.valid()) << "decreasing quantiles are not a distribution";
}

}  // namespace
}  // namespace rocelab::fabric

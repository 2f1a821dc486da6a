#include "rocelab/experiments/tuning/gaussian_process.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace rocelab::experiments {
namespace {

TEST(cholesky, factors_a_known_matrix) {
  // A = L L^T with L = [[2,0,0],[1,3,0],[-1,2,4]].
  std::vector<double> a{4, 2, -2, 2, 10, 5, -2, 5, 21};
  ASSERT_TRUE(cholesky_in_place(a, 3));
  const std::vector<double> l{2, 0, 0, 1, 3, 0, -1, 2, 4};
  for (std::size_t i = 0; i < 9; ++i) EXPECT_NEAR(a[i], l[i], 1e-12) << i;
  // Solves A x = b through both triangles.
  std::vector<double> b{0, 15, 26};  // A (0, 1, 1)
  solve_lower(a, 3, b);
  solve_upper_transposed(a, 3, b);
  EXPECT_NEAR(b[0], 0, 1e-12);
  EXPECT_NEAR(b[1], 1, 1e-12);
  EXPECT_NEAR(b[2], 1, 1e-12);
}

TEST(cholesky, rejects_a_matrix_that_is_not_positive_definite) {
  std::vector<double> a{1, 2, 2, 1};
  EXPECT_FALSE(cholesky_in_place(a, 2));
}

TEST(matern52, is_one_at_zero_and_decays) {
  EXPECT_DOUBLE_EQ(matern52(0), 1.0);
  EXPECT_LT(matern52(1), matern52(0.5));
  // (1 + sqrt5 + 5/3) e^-sqrt5 at r = 1.
  EXPECT_NEAR(matern52(1), (1 + std::sqrt(5.0) + 5.0 / 3.0) * std::exp(-std::sqrt(5.0)), 1e-15);
}

std::vector<std::vector<double>> sample_points(std::size_t n, std::size_t d, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<double>> x(n, std::vector<double>(d));
  for (auto& p : x)
    for (double& v : p) v = std::uniform_real_distribution<double>(0, 1)(rng);
  return x;
}

double smooth_2d(const std::vector<double>& p) { return std::sin(6 * p[0]) + 0.5 * std::cos(4 * p[1]) + p[0] * p[1]; }

TEST(gaussian_process, interpolates_noiseless_data) {
  const auto x = sample_points(20, 2, 3);
  std::vector<double> y;
  for (const auto& p : x) y.push_back(smooth_2d(p));
  gp_options options;
  options.learn_noise = false;
  auto gp = gaussian_process::fit(x, y, {}, options);
  ASSERT_TRUE(gp.ok()) << gp.error().message();
  for (std::size_t i = 0; i < x.size(); ++i) {
    const gp_prediction p = gp->predict(x[i]);
    EXPECT_NEAR(p.mean, y[i], 1e-4) << i;
    EXPECT_LT(p.variance, 1e-6) << i;
  }
  // Between the data it predicts a smooth function well and is uncertain.
  const auto test = sample_points(50, 2, 99);
  double err = 0;
  for (const auto& p : test) err += std::abs(gp->predict(p).mean - smooth_2d(p));
  EXPECT_LT(err / 50, 0.15);
  EXPECT_GT(gp->predict(std::vector<double>{0.999, 0.001}).variance + gp->predict(std::vector<double>{0.001, 0.999}).variance,
            1e-4);
}

TEST(gaussian_process, learns_the_noise_of_noisy_data) {
  std::mt19937_64 rng(5);
  const auto x = sample_points(60, 1, 7);
  std::vector<double> y;
  for (const auto& p : x) y.push_back(std::sin(5 * p[0]) + std::normal_distribution<double>(0, 0.3)(rng));
  auto gp = gaussian_process::fit(x, y, {}, {});
  ASSERT_TRUE(gp.ok()) << gp.error().message();
  // Noise variance in standardized units; the raw noise is 0.09 against a total variance
  // near 0.5 + 0.09, so the learned value sits well above the floor and near 0.15.
  EXPECT_GT(gp->hyperparameters().noise_variance, 0.05);
  EXPECT_LT(gp->hyperparameters().noise_variance, 0.5);
  // It smooths rather than interpolates: the mean at a data point is not its noisy value
  // everywhere, but stays close to the true function.
  double err = 0;
  for (double t = 0.05; t < 1; t += 0.1) err += std::abs(gp->predict(std::vector<double>{t}).mean - std::sin(5 * t));
  EXPECT_LT(err / 10, 0.2);
}

TEST(gaussian_process, averaged_repeats_count_as_less_noisy) {
  // Two points with the same noise model; the one averaged from 16 repeats is trusted more.
  gp_hyperparameters h{{0.3}, 1.0, 0.25};
  auto one = gaussian_process::condition({{0.2}, {0.8}}, {1.0, -1.0}, {1, 1}, h);
  auto many = gaussian_process::condition({{0.2}, {0.8}}, {1.0, -1.0}, {16, 1}, h);
  ASSERT_TRUE(one.ok() && many.ok());
  EXPECT_LT(many->predict(std::vector<double>{0.2}).variance, one->predict(std::vector<double>{0.2}).variance);
}

TEST(gaussian_process, marginal_likelihood_prefers_the_right_length_scale) {
  const auto x = sample_points(30, 1, 11);
  std::vector<double> y;
  for (const auto& p : x) y.push_back(std::sin(3 * p[0]));  // slow: long length scale
  auto slow = gaussian_process::condition(x, y, {}, {{0.5}, 1.0, 1e-6});
  auto fast = gaussian_process::condition(x, y, {}, {{0.02}, 1.0, 1e-6});
  ASSERT_TRUE(slow.ok() && fast.ok());
  EXPECT_GT(slow->log_marginal_likelihood(), fast->log_marginal_likelihood());
  auto fitted = gaussian_process::fit(x, y, {}, {});
  ASSERT_TRUE(fitted.ok());
  EXPECT_GE(fitted->log_marginal_likelihood(), slow->log_marginal_likelihood() - 1e-6);
}

TEST(gaussian_process, rejects_bad_data) {
  EXPECT_FALSE(gaussian_process::fit({}, {}, {}, {}).ok());
  EXPECT_FALSE(gaussian_process::fit({{0.5}}, {1, 2}, {}, {}).ok());
  EXPECT_FALSE(gaussian_process::fit({{1.5}}, {1}, {}, {}).ok());
  EXPECT_FALSE(gaussian_process::fit({{0.5}}, {std::nan("")}, {}, {}).ok());
}

TEST(expected_improvement, is_zero_at_a_sampled_noiseless_point) {
  const auto x = sample_points(12, 2, 21);
  std::vector<double> y;
  for (const auto& p : x) y.push_back(smooth_2d(p));
  const double best = *std::min_element(y.begin(), y.end());
  gp_options options;
  options.learn_noise = false;
  auto gp = gaussian_process::fit(x, y, {}, options);
  ASSERT_TRUE(gp.ok());
  for (const auto& p : x) {
    const gp_prediction g = gp->predict(p);
    EXPECT_NEAR(expected_improvement(g.mean, std::sqrt(g.variance), best), 0.0, 1e-5);
  }
  // Away from the data it is positive.
  double somewhere = 0;
  for (const auto& p : sample_points(30, 2, 77)) {
    const gp_prediction g = gp->predict(p);
    somewhere = std::max(somewhere, expected_improvement(g.mean, std::sqrt(g.variance), best));
  }
  EXPECT_GT(somewhere, 1e-4);
}

TEST(expected_improvement, matches_the_closed_form) {
  // Mean at the incumbent: EI = sigma * phi(0) = sigma / sqrt(2 pi).
  EXPECT_NEAR(expected_improvement(1.0, 2.0, 1.0), 2.0 / std::sqrt(2 * M_PI), 1e-12);
  // No uncertainty: the plain improvement.
  EXPECT_DOUBLE_EQ(expected_improvement(0.5, 0.0, 1.0), 0.5);
  EXPECT_DOUBLE_EQ(expected_improvement(1.5, 0.0, 1.0), 0.0);
  EXPECT_NEAR(probability_below(0, 1, 0), 0.5, 1e-12);
  EXPECT_NEAR(probability_below(0, 1, 1.959963985), 0.975, 1e-6);
}

}  // namespace
}  // namespace rocelab::experiments

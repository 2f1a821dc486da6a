#include "rocelab/experiments/tuning/gaussian_process.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>

#include "tuning/nelder_mead.hpp"

namespace rocelab::experiments {

bool cholesky_in_place(std::vector<double>& a, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (std::size_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0) || !std::isfinite(d)) return false;
    const double ljj = std::sqrt(d);
    a[j * n + j] = ljj;
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (std::size_t k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / ljj;
    }
    for (std::size_t i = 0; i < j; ++i) a[i * n + j] = 0;  // upper part cleared: L only
  }
  return true;
}

void solve_lower(const std::vector<double>& l, std::size_t n, std::span<double> b) {
  for (std::size_t i = 0; i < n; ++i) {
    double s = b[i];
    for (std::size_t k = 0; k < i; ++k) s -= l[i * n + k] * b[k];
    b[i] = s / l[i * n + i];
  }
}

void solve_upper_transposed(const std::vector<double>& l, std::size_t n, std::span<double> b) {
  for (std::size_t ii = n; ii-- > 0;) {
    double s = b[ii];
    for (std::size_t k = ii + 1; k < n; ++k) s -= l[k * n + ii] * b[k];
    b[ii] = s / l[ii * n + ii];
  }
}

double matern52(double r) noexcept {
  const double s = std::sqrt(5.0) * r;
  return (1.0 + s + s * s / 3.0) * std::exp(-s);
}

namespace {

status bad(const std::string& what) { return {error_code::invalid_argument, "gaussian process: " + what}; }

double scaled_kernel(const gp_hyperparameters& h, std::span<const double> a, std::span<const double> b) {
  double r2 = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    const double d = (a[k] - b[k]) / h.length_scales[k];
    r2 += d * d;
  }
  return h.signal_variance * matern52(std::sqrt(r2));
}

// Factorizes K + noise/count for standardized targets z; returns the log marginal
// likelihood (R&W algorithm 2.1), or -inf when the matrix is not positive definite.
double factorize(const std::vector<std::vector<double>>& x, const std::vector<double>& counts,
                 const std::vector<double>& z, const gp_hyperparameters& h, std::vector<double>& chol,
                 std::vector<double>& alpha) {
  const std::size_t n = x.size();
  chol.assign(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      double k = scaled_kernel(h, x[i], x[j]);
      if (i == j) k += h.noise_variance / counts[i];
      chol[i * n + j] = k;
      chol[j * n + i] = k;
    }
  if (!cholesky_in_place(chol, n)) return -std::numeric_limits<double>::infinity();
  alpha = z;
  solve_lower(chol, n, alpha);
  double quad = 0;
  for (double v : alpha) quad += v * v;  // z^T K^-1 z = |L^-1 z|^2
  solve_upper_transposed(chol, n, alpha);
  double log_det_half = 0;
  for (std::size_t i = 0; i < n; ++i) log_det_half += std::log(chol[i * n + i]);
  return -0.5 * quad - log_det_half - 0.5 * static_cast<double>(n) * std::log(2.0 * std::numbers::pi);
}

status check_data(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                  std::vector<double>& counts) {
  if (x.empty()) return bad("no observations");
  if (x.size() != y.size()) return bad("inputs and targets differ in number");
  if (counts.empty()) counts.assign(x.size(), 1.0);
  if (counts.size() != x.size()) return bad("counts and targets differ in number");
  const std::size_t d = x.front().size();
  if (d == 0) return bad("inputs have no dimensions");
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i].size() != d) return bad("inputs differ in dimension");
    for (double v : x[i])
      if (!(v >= -1e-9 && v <= 1 + 1e-9)) return bad("input outside the unit cube");
    if (!std::isfinite(y[i])) return bad("non-finite target");
    if (!(counts[i] >= 1)) return bad("count below 1");
  }
  return status::success();
}

}  // namespace

double gaussian_process::kernel(std::span<const double> a, std::span<const double> b) const noexcept {
  return scaled_kernel(h_, a, b);
}

result<gaussian_process> gaussian_process::condition(std::vector<std::vector<double>> x, std::vector<double> y,
                                                     std::vector<double> counts, const gp_hyperparameters& h) {
  ROCELAB_RETURN_IF_ERROR(check_data(x, y, counts));
  if (h.length_scales.size() != x.front().size()) return bad("hyperparameters do not match the input dimension");
  gaussian_process gp;
  double mean = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(y.size());
  double var = 0;
  for (double v : y) var += (v - mean) * (v - mean);
  var /= static_cast<double>(y.size());
  gp.y_mean_ = mean;
  // Constant targets have no scale of their own; 1 keeps the model defined (flat).
  gp.y_scale_ = var > 1e-300 ? std::sqrt(var) : (std::abs(mean) > 0 ? std::abs(mean) : 1.0);
  std::vector<double> z(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) z[i] = (y[i] - mean) / gp.y_scale_;
  gp.h_ = h;
  gp.x_ = std::move(x);
  gp.counts_ = std::move(counts);
  // Jitter grows until the factorization succeeds (duplicate inputs with tiny noise).
  for (int attempt = 0; attempt < 8; ++attempt) {
    gp.lml_ = factorize(gp.x_, gp.counts_, z, gp.h_, gp.chol_, gp.alpha_);
    if (std::isfinite(gp.lml_)) return gp;
    gp.h_.noise_variance = std::max(gp.h_.noise_variance * 10, 1e-10);
  }
  return status(error_code::internal, "gaussian process: kernel matrix is not positive definite");
}

result<gaussian_process> gaussian_process::fit(std::vector<std::vector<double>> x, std::vector<double> y,
                                               std::vector<double> counts, const gp_options& options) {
  ROCELAB_RETURN_IF_ERROR(check_data(x, y, counts));
  const std::size_t d = x.front().size();
  double mean = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(y.size());
  double var = 0;
  for (double v : y) var += (v - mean) * (v - mean);
  var /= static_cast<double>(y.size());
  const double scale = var > 1e-300 ? std::sqrt(var) : 1.0;
  std::vector<double> z(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) z[i] = (y[i] - mean) / scale;

  // Search space: log length scales, log signal variance, log noise variance (when
  // learned), each clamped to its bounds.
  const std::size_t dims = d + 1 + (options.learn_noise ? 1 : 0);
  std::vector<double> lo(dims), hi(dims);
  for (std::size_t k = 0; k < d; ++k) {
    lo[k] = std::log(options.min_length_scale);
    hi[k] = std::log(options.max_length_scale);
  }
  lo[d] = std::log(options.min_signal_variance);
  hi[d] = std::log(options.max_signal_variance);
  if (options.learn_noise) {
    lo[d + 1] = std::log(options.min_noise_variance);
    hi[d + 1] = std::log(options.max_noise_variance);
  }
  const auto unpack = [&](std::span<const double> theta) {
    gp_hyperparameters h;
    h.length_scales.resize(d);
    for (std::size_t k = 0; k < d; ++k) h.length_scales[k] = std::exp(std::clamp(theta[k], lo[k], hi[k]));
    h.signal_variance = std::exp(std::clamp(theta[d], lo[d], hi[d]));
    h.noise_variance =
        options.learn_noise ? std::exp(std::clamp(theta[d + 1], lo[d + 1], hi[d + 1])) : options.fixed_noise_variance;
    return h;
  };
  std::vector<double> chol, alpha;
  const auto negative_lml = [&](std::span<const double> theta) {
    double penalty = 0;  // outside the box: the clamped value plus a slope back inside
    for (std::size_t k = 0; k < dims; ++k) {
      if (theta[k] < lo[k]) penalty += (lo[k] - theta[k]) * 10;
      if (theta[k] > hi[k]) penalty += (theta[k] - hi[k]) * 10;
    }
    const double lml = factorize(x, counts, z, unpack(theta), chol, alpha);
    return std::isfinite(lml) ? -lml + penalty : 1e300;
  };

  std::mt19937_64 rng(options.seed);
  std::vector<double> best_theta;
  double best_value = std::numeric_limits<double>::infinity();
  for (std::uint32_t r = 0; r < std::max<std::uint32_t>(options.restarts, 1); ++r) {
    std::vector<double> start(dims);
    if (r == 0) {
      // The usual guess: length scale 0.3 of the cube, unit signal, small noise.
      for (std::size_t k = 0; k < d; ++k) start[k] = std::log(0.3);
      start[d] = 0;
      if (options.learn_noise) start[d + 1] = std::log(1e-3);
    } else {
      for (std::size_t k = 0; k < dims; ++k) start[k] = std::uniform_real_distribution<double>(lo[k], hi[k])(rng);
    }
    auto found = nelder_mead(negative_lml, start, 0.5, 300, 1e-7);
    if (found.value < best_value) {
      best_value = found.value;
      best_theta = std::move(found.point);
    }
  }
  if (best_theta.empty() || !std::isfinite(best_value) || best_value >= 1e299)
    return status(error_code::internal, "gaussian process: no hyperparameters give a positive definite kernel");
  return condition(std::move(x), std::move(y), std::move(counts), unpack(best_theta));
}

gp_prediction gaussian_process::predict(std::span<const double> point) const {
  const std::size_t n = x_.size();
  std::vector<double> k(n);
  for (std::size_t i = 0; i < n; ++i) k[i] = kernel(point, x_[i]);
  double mean = 0;
  for (std::size_t i = 0; i < n; ++i) mean += k[i] * alpha_[i];
  solve_lower(chol_, n, k);
  double explained = 0;
  for (double v : k) explained += v * v;
  const double var = std::max(h_.signal_variance - explained, 0.0);
  return {y_mean_ + mean * y_scale_, var * y_scale_ * y_scale_};
}

namespace {
double normal_pdf(double z) { return std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi); }
double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::numbers::sqrt2); }
}  // namespace

double expected_improvement(double mean, double stddev, double best) noexcept {
  const double gain = best - mean;
  if (!(stddev > 1e-12)) return std::max(gain, 0.0);
  const double z = gain / stddev;
  return std::max(gain * normal_cdf(z) + stddev * normal_pdf(z), 0.0);
}

double probability_below(double mean, double stddev, double threshold) noexcept {
  if (!(stddev > 1e-12)) return mean <= threshold ? 1.0 : 0.0;
  return normal_cdf((threshold - mean) / stddev);
}

}  // namespace rocelab::experiments

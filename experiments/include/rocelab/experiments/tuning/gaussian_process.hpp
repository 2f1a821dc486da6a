#pragma once
// A Gaussian-process regression model for Bayesian optimisation of switch and NIC
// thresholds: Matern 5/2 kernel with one length scale per input (ARD), a learned noise
// term, hyperparameters chosen by maximizing the log marginal likelihood, and the
// expected-improvement acquisition for minimization.
//
// Conventions (Rasmussen & Williams, "Gaussian Processes for Machine Learning", 2006:
// eq. 2.25-2.26 for the predictive distribution, eq. 2.30 and algorithm 2.1 for the
// Cholesky-based marginal likelihood, eq. 4.17 for Matern 5/2):
// - Inputs are points of the unit cube [0,1]^d (the tuner maps parameters there, log
//   scaled where asked). Targets are standardized internally (mean 0, variance 1), so the
//   hyperparameter bounds below are scale-free; predictions come back in target units.
// - Observations may carry a count (repeats of the same point averaged): the noise
//   variance of an averaged point is noise / count.
// - Small dense linear algebra with a Cholesky factorization; O(n^3) per fit, meant for
//   the tens to a few hundred trials of a tuning sweep. No I/O, no globals; randomness
//   (restarts of the hyperparameter search) comes from the seed in the options.
// Thread-safety: a fitted model is immutable; predict() may be called concurrently.

#include <cstdint>
#include <span>
#include <vector>

#include "rocelab/common/result.hpp"

namespace rocelab::experiments {

// Lower triangular Cholesky factor of a symmetric positive definite n x n matrix (row
// major), or nullopt-like failure when it is not positive definite.
[[nodiscard]] bool cholesky_in_place(std::vector<double>& a, std::size_t n);
// Solves L x = b (forward) and L^T x = b (backward) for the lower triangular L above.
void solve_lower(const std::vector<double>& l, std::size_t n, std::span<double> b);
void solve_upper_transposed(const std::vector<double>& l, std::size_t n, std::span<double> b);

// Matern 5/2 for a scaled distance r = |x - x'| / l: (1 + sqrt5 r + 5/3 r^2) exp(-sqrt5 r).
[[nodiscard]] double matern52(double r) noexcept;

struct gp_hyperparameters {
  std::vector<double> length_scales;  // per input, in unit-cube lengths
  double signal_variance = 1.0;       // of the standardized target
  double noise_variance = 1e-6;       // of the standardized target, per single observation
};

struct gp_options {
  bool learn_noise = true;
  double fixed_noise_variance = 1e-10;  // used when learn_noise is false (standardized units)
  double min_noise_variance = 1e-8;     // floor of the learned noise (numerical stability)
  double min_length_scale = 0.02, max_length_scale = 20.0;
  double min_signal_variance = 0.01, max_signal_variance = 100.0;
  double max_noise_variance = 1.0;
  std::uint32_t restarts = 6;  // starting points of the likelihood search (one is the default guess)
  std::uint64_t seed = 1;
};

struct gp_prediction {
  double mean = 0;
  double variance = 0;  // of the latent function (observation noise not added)
};

class gaussian_process {
 public:
  // Fits hyperparameters by maximizing the marginal likelihood, then conditions on the
  // data. `counts` (repeats averaged into each y) may be empty (all 1). Errors: no data,
  // mismatched sizes, inputs outside the unit cube, non-finite targets.
  [[nodiscard]] static result<gaussian_process> fit(std::vector<std::vector<double>> x, std::vector<double> y,
                                                    std::vector<double> counts, const gp_options& options);
  // Conditions on the data with the given hyperparameters (no search): the batch
  // proposals' "kriging believer" refits with fantasized observations this way.
  [[nodiscard]] static result<gaussian_process> condition(std::vector<std::vector<double>> x, std::vector<double> y,
                                                          std::vector<double> counts, const gp_hyperparameters& h);

  [[nodiscard]] gp_prediction predict(std::span<const double> x) const;
  [[nodiscard]] const gp_hyperparameters& hyperparameters() const noexcept { return h_; }
  // Of the standardized targets under the fitted hyperparameters.
  [[nodiscard]] double log_marginal_likelihood() const noexcept { return lml_; }
  [[nodiscard]] std::size_t size() const noexcept { return x_.size(); }
  [[nodiscard]] std::size_t dimensions() const noexcept { return h_.length_scales.size(); }

 private:
  gaussian_process() = default;
  [[nodiscard]] double kernel(std::span<const double> a, std::span<const double> b) const noexcept;

  std::vector<std::vector<double>> x_;
  std::vector<double> counts_;
  double y_mean_ = 0, y_scale_ = 1;
  gp_hyperparameters h_;
  std::vector<double> chol_;   // L of K + noise / counts
  std::vector<double> alpha_;  // (K + noise)^-1 y (standardized)
  double lml_ = 0;
};

// Expected improvement below `best` (minimization) of a Gaussian with this mean and
// standard deviation: E[max(best - f, 0)]. Zero when stddev is zero and mean >= best.
[[nodiscard]] double expected_improvement(double mean, double stddev, double best) noexcept;
// P(f <= threshold) for a Gaussian (constraint feasibility).
[[nodiscard]] double probability_below(double mean, double stddev, double threshold) noexcept;

}  // namespace rocelab::experiments

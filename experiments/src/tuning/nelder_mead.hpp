#pragma once
// Nelder-Mead downhill simplex (Nelder & Mead 1965; the standard coefficients: reflection
// 1, expansion 2, contraction 0.5, shrink 0.5), used where the tuner minimizes smooth
// functions of a few variables without gradients: the GP's negative log marginal
// likelihood and the refinement of acquisition maxima. Bounds are the caller's business
// (clamp or penalize inside f). Private to experiments/.

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <span>
#include <vector>

namespace rocelab::experiments {

struct simplex_result {
  std::vector<double> point;
  double value = 0;
};

template <class F>
simplex_result nelder_mead(F&& f, std::vector<double> start, double step, std::size_t max_evaluations,
                           double tolerance) {
  const std::size_t n = start.size();
  std::vector<std::vector<double>> p(n + 1, start);
  std::vector<double> v(n + 1);
  for (std::size_t i = 0; i < n; ++i) p[i + 1][i] += step;
  std::size_t evaluations = 0;
  for (std::size_t i = 0; i <= n; ++i, ++evaluations) v[i] = f(std::span<const double>(p[i]));
  std::vector<std::size_t> order(n + 1);
  std::vector<double> centroid(n), trial(n), trial2(n);
  while (evaluations < max_evaluations) {
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
    const std::size_t best = order.front(), worst = order.back(), second = order[n - 1];
    if (std::abs(v[worst] - v[best]) <= tolerance * (std::abs(v[best]) + tolerance)) break;
    std::fill(centroid.begin(), centroid.end(), 0.0);
    for (std::size_t i = 0; i <= n; ++i)
      if (i != worst)
        for (std::size_t k = 0; k < n; ++k) centroid[k] += p[i][k] / static_cast<double>(n);
    for (std::size_t k = 0; k < n; ++k) trial[k] = centroid[k] + (centroid[k] - p[worst][k]);
    const double fr = f(std::span<const double>(trial));
    ++evaluations;
    if (fr < v[best]) {
      for (std::size_t k = 0; k < n; ++k) trial2[k] = centroid[k] + 2.0 * (centroid[k] - p[worst][k]);
      const double fe = f(std::span<const double>(trial2));
      ++evaluations;
      if (fe < fr) {
        p[worst] = trial2;
        v[worst] = fe;
      } else {
        p[worst] = trial;
        v[worst] = fr;
      }
      continue;
    }
    if (fr < v[second]) {
      p[worst] = trial;
      v[worst] = fr;
      continue;
    }
    // Contraction toward the better of the worst point and the reflection.
    const bool outside = fr < v[worst];
    for (std::size_t k = 0; k < n; ++k)
      trial2[k] = outside ? centroid[k] + 0.5 * (trial[k] - centroid[k]) : centroid[k] + 0.5 * (p[worst][k] - centroid[k]);
    const double fc = f(std::span<const double>(trial2));
    ++evaluations;
    if (fc < std::min(fr, v[worst])) {
      p[worst] = trial2;
      v[worst] = fc;
      continue;
    }
    for (std::size_t i = 0; i <= n; ++i) {
      if (i == best) continue;
      for (std::size_t k = 0; k < n; ++k) p[i][k] = p[best][k] + 0.5 * (p[i][k] - p[best][k]);
      v[i] = f(std::span<const double>(p[i]));
      ++evaluations;
    }
  }
  const std::size_t best = static_cast<std::size_t>(std::min_element(v.begin(), v.end()) - v.begin());
  return {p[best], v[best]};
}

}  // namespace rocelab::experiments

#include "rocelab/fabric/delay_quantiles.hpp"

#include <algorithm>
#include <cmath>

namespace rocelab::fabric {

delay_quantiles delay_quantiles::of(std::span<const std::int64_t> samples) {
  delay_quantiles q;
  if (samples.empty()) return q;
  std::vector<std::int64_t> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const auto n = sorted.size();
  for (std::size_t i = 0; i < probabilities.size(); ++i) {
    // Nearest rank: the smallest sample with at least p of the samples at or below it.
    const auto rank = static_cast<std::size_t>(std::ceil(probabilities[i] * static_cast<double>(n)));
    q.ns[i] = sorted[std::clamp<std::size_t>(rank, 1, n) - 1];
  }
  q.samples = n;
  return q;
}

delay_quantiles delay_quantiles::constant(std::int64_t ns) {
  delay_quantiles q;
  q.ns.fill(ns);
  q.samples = 1;
  return q;
}

std::int64_t delay_quantiles::draw(double u) const noexcept {
  if (samples == 0) return 0;
  u = std::clamp(u, 0.0, 1.0);
  const auto hi = std::upper_bound(probabilities.begin(), probabilities.end(), u) - probabilities.begin();
  if (hi >= static_cast<std::ptrdiff_t>(probabilities.size())) return ns.back();
  const auto lo = hi - 1;
  const double span = probabilities[hi] - probabilities[lo];
  const double f = (u - probabilities[lo]) / span;
  return ns[lo] + static_cast<std::int64_t>(std::llround(f * static_cast<double>(ns[hi] - ns[lo])));
}

bool delay_quantiles::valid() const noexcept {
  if (ns.front() < 0) return false;
  return std::is_sorted(ns.begin(), ns.end());
}

}  // namespace rocelab::fabric

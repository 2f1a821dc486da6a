#pragma once
// A delay as a lab measured it (a NIC's send or receive processing, a switch port's
// forwarding latency): its quantiles at fixed probabilities, so that a model can draw
// from it by inverse CDF without carrying every sample. Pure data; the calibration file
// (experiments/calibration) writes and reads it, the twin draws from it.

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace rocelab::fabric {

struct delay_quantiles {
  // The probabilities the quantiles are taken at: enough of the tail for a p99 to be
  // drawn as often as it was measured, and both ends so no draw leaves the measured range.
  static constexpr std::array<double, 11> probabilities{0.0, 0.01, 0.05, 0.10, 0.25, 0.50,
                                                        0.75, 0.90, 0.95, 0.99, 1.0};
  std::array<std::int64_t, probabilities.size()> ns{};  // non-decreasing
  std::uint64_t samples = 0;                            // 0: nothing measured; draws 0

  // The quantiles of `samples` (nearest rank, sorted copy). Empty: samples == 0.
  [[nodiscard]] static delay_quantiles of(std::span<const std::int64_t> samples);
  // Every quantile `ns` (a delay known, not measured: samples 1).
  [[nodiscard]] static delay_quantiles constant(std::int64_t ns);

  [[nodiscard]] bool empty() const noexcept { return samples == 0; }
  // The delay at uniform variate u in [0, 1): linear between the fixed quantiles.
  [[nodiscard]] std::int64_t draw(double u) const noexcept;
  [[nodiscard]] std::int64_t median() const noexcept { return ns[5]; }
  [[nodiscard]] std::int64_t p99() const noexcept { return ns[9]; }
  // Whether the quantiles are non-decreasing and non-negative.
  [[nodiscard]] bool valid() const noexcept;

  friend bool operator==(const delay_quantiles&, const delay_quantiles&) = default;
};

}  // namespace rocelab::fabric

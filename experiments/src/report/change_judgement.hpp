#pragma once
// When a report colours a value: a change better (green) or worse (red), or one value the
// best of a row. Every report judges the same way:
// - only beyond noise: the change is more than `noise_fraction` of the value it is
//   measured against and, when a confidence interval of the difference is given, that
//   interval excludes zero;
// - never a zero as the better or the best value: a zero count usually means the
//   mechanism is absent (no pauses on a fabric without PFC), not that it won.
// Private to experiments/src.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace rocelab::experiments::report_detail {

// A relative change within this is run-to-run noise and is not coloured.
inline constexpr double noise_fraction = 0.05;

enum class judgement : std::uint8_t { none, better, worse };

// `to` against `from`. `diff_ci`: a confidence interval of to - from, when one is known.
[[nodiscard]] inline judgement judge_change(double from, double to, bool lower_is_better,
                                            const std::optional<std::pair<double, double>>& diff_ci = {}) {
  if (!std::isfinite(from) || !std::isfinite(to) || from == to) return judgement::none;
  if (std::fabs(to - from) <= noise_fraction * std::fabs(from)) return judgement::none;
  if (diff_ci && diff_ci->first <= 0 && diff_ci->second >= 0) return judgement::none;
  const bool better = lower_is_better ? to < from : to > from;
  if (better && to == 0) return judgement::none;
  return better ? judgement::better : judgement::worse;
}

// The CSS class of a judged cell: "good", "bad" or "".
[[nodiscard]] inline const char* judgement_class(judgement j) {
  return j == judgement::better ? "good" : j == judgement::worse ? "bad" : "";
}

// The index of the best of the `known` values, when it beats every other known value by
// more than noise_fraction of that value and is not zero; nullopt otherwise (fewer than
// two known values, a tie within noise, a zero best).
[[nodiscard]] inline std::optional<std::size_t> clear_best(const std::vector<double>& values,
                                                           const std::vector<bool>& known, bool higher_is_better) {
  std::optional<std::size_t> best;
  std::size_t n = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i >= known.size() || !known[i] || !std::isfinite(values[i])) continue;
    ++n;
    if (!best || (higher_is_better ? values[i] > values[*best] : values[i] < values[*best])) best = i;
  }
  if (!best || n < 2 || values[*best] == 0) return std::nullopt;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i == *best || i >= known.size() || !known[i] || !std::isfinite(values[i])) continue;
    if (std::fabs(values[*best] - values[i]) <= noise_fraction * std::fabs(values[i])) return std::nullopt;
  }
  return best;
}

}  // namespace rocelab::experiments::report_detail

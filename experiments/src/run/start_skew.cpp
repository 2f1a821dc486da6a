#include "rocelab/experiments/run/start_skew.hpp"

#include <algorithm>

#include "rocelab/common/units.hpp"

namespace rocelab::experiments {

namespace {

std::string readable(std::int64_t ns) { return readable_duration(static_cast<double>(ns)); }

}  // namespace

std::int64_t start_skew_ns(const std::map<std::string, std::int64_t>& offsets) {
  if (offsets.empty()) return 0;
  const auto [lo, hi] = std::minmax_element(offsets.begin(), offsets.end(),
                                            [](const auto& a, const auto& b) { return a.second < b.second; });
  return hi->second - lo->second;
}

std::string start_skew_violation(const run_records& records, std::int64_t max_start_skew_ns,
                                 std::int64_t clock_uncertainty_ns) {
  if (max_start_skew_ns <= 0 || records.start_offsets_ns.empty()) return {};
  const std::int64_t skew = start_skew_ns(records.start_offsets_ns);
  const std::int64_t uncertainty = std::max<std::int64_t>(clock_uncertainty_ns, 0);
  if (skew + uncertainty <= max_start_skew_ns) return {};
  const auto [first, last] =
      std::minmax_element(records.start_offsets_ns.begin(), records.start_offsets_ns.end(),
                          [](const auto& a, const auto& b) { return a.second < b.second; });
  std::string why = "senders started " + readable(skew) + " apart (" + first->first + " first, " + last->first +
                    " last" + (records.start_source.empty() ? "" : ", from the " + records.start_source) + ")";
  if (uncertainty > 0) why += " with a clock uncertainty of " + readable(uncertainty);
  return why + ", beyond timing.max_start_skew_ns " + readable(max_start_skew_ns);
}

}  // namespace rocelab::experiments

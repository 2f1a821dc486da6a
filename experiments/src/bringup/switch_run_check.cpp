#include <algorithm>
#include <string_view>

#include "rocelab/experiments/bringup/bringup_check.hpp"

namespace rocelab::experiments {

status switch_ready_for_run(const bringup_expectation& want, const bringup_inventory& inv, const switch_facts& sw) {
  // The mirror session matters to a capture, not to the run's losslessness.
  constexpr std::string_view needed[] = {"switch_pfc", "dscp_map", "ecn", "priority_group", "pfc_queue", "pfc_watchdog"};
  lab_facts facts;
  facts.sw = sw;
  std::string why;
  for (const auto& c : check_bringup(want, inv, facts)) {
    if (std::find(std::begin(needed), std::end(needed), c.item) == std::end(needed)) continue;
    if (c.verdict == check_verdict::pass || c.verdict == check_verdict::skip) continue;
    why += (why.empty() ? "" : "; ") + std::string(to_string(c.verdict)) + " " + c.item + ": " + c.observed +
           (c.fix.empty() ? std::string() : " (fix: " + c.fix + ")");
  }
  if (why.empty()) return status::success();
  return status(error_code::unavailable, "switch " + inv.switch_name + " is not ready for the run: " + why);
}

}  // namespace rocelab::experiments

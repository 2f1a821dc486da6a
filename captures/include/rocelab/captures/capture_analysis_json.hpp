#pragma once
// The JSON shape of a capture analysis, as `rocelab analyze --json` prints it. Field names
// are a contract with scripts and tests: frames, malformed, truncated, roce{...},
// pfc{...}, pause{...}, erspan{packets}, link_gbps, ports[...], and the summary a storm
// does not drown: pause_summary[...] (per port and priority: intervals, frames,
// paused_ns, longest_ns), longest_pauses[...] (ten), flow_count, most_retransmits[...]
// and most_ce[...] (ten flows each). The full lists flows[...] and pauses[...] are there
// only when asked for (and the analysis kept the intervals:
// analyzer_options::keep_pause_intervals).

#include <nlohmann/json.hpp>

#include "rocelab/captures/congestion_analyzer.hpp"

namespace rocelab::captures {

struct json_lists {
  bool flows = false;   // every flow
  bool pauses = false;  // every pause interval
};

nlohmann::ordered_json to_json(const capture_analysis& analysis, json_lists lists = {});

}  // namespace rocelab::captures

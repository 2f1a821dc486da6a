#pragma once
// The JSON shape of a capture analysis, as `rocelab analyze --json` prints it. Field names
// are a contract with scripts and tests: frames, malformed, roce{...}, pfc{...},
// pause{...}, erspan{packets}, flows[...], pauses[...].

#include <nlohmann/json.hpp>

#include "rocelab/captures/congestion_analyzer.hpp"

namespace rocelab::captures {

nlohmann::ordered_json to_json(const capture_analysis& analysis);

}  // namespace rocelab::captures

#include "rocelab/fabric/adaptive_routing.hpp"

#include <string>

namespace rocelab::fabric {

const char* to_string(routing_mode m) { return m == routing_mode::adaptive ? "adaptive" : "ecmp"; }

result<routing_mode> parse_routing_mode(std::string_view text) {
  if (text == "ecmp") return routing_mode::ecmp;
  if (text == "adaptive") return routing_mode::adaptive;
  return status(error_code::invalid_argument, "routing '" + std::string(text) + "': expects ecmp or adaptive");
}

std::uint32_t adaptive_router::pick(std::span<const std::uint64_t> load_bytes) {
  const auto n = static_cast<std::uint32_t>(load_bytes.size());
  if (n <= 1) return 0;
  // Rotating the start among ties keeps idle uplinks in turn instead of always the first,
  // which is how a switch's arbiter breaks ties too (round robin among equals).
  const std::uint32_t start = next_start_ % n;
  next_start_ = start + 1;
  std::uint32_t best = start;
  for (std::uint32_t k = 1; k < n; ++k) {
    const std::uint32_t i = (start + k) % n;
    if (load_bytes[i] < load_bytes[best]) best = i;
  }
  return best;
}

}  // namespace rocelab::fabric

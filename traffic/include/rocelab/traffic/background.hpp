#pragma once
// Background traffic: every participating host starts flows as a Poisson process, each
// flow to a destination drawn uniformly from the other participating hosts, with a size
// drawn from a flow-size CDF. The arrival rate gives the offered load:
//     load = (flows per second per host x mean flow size x 8) / link rate
// so lambda = load x link_bps / (8 x mean_bytes) per host (the definition the pFabric
// and HPCC evaluations use). Arrivals fall in [start_ns, start_ns + duration_ns).
// All messages are generated up front from the seed and posted at start.

#include <cstdint>
#include <memory>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/twin/twin.hpp"
#include "rocelab/traffic/flow_size_cdf.hpp"

namespace rocelab::traffic {

struct background_config {
  flow_size_cdf cdf;
  double load = 0.5;                // 0 < load <= 1 of the host link rate
  std::vector<std::uint32_t> hosts; // participants; empty: all hosts
  std::int64_t start_ns = 0;
  std::int64_t duration_ns = 10'000'000;
  std::uint64_t max_flows = 0;      // 0: no limit; otherwise the earliest max_flows arrivals
  std::int16_t priority = -1;
};

[[nodiscard]] status validate(const background_config& cfg, std::uint32_t hosts);

// The flows, sorted by start time (ties by source host). Tags number them 0, 1, ...
[[nodiscard]] std::vector<fabric::twin::message> background_messages(const background_config& cfg,
                                                                     std::uint32_t hosts, double link_gbps,
                                                                     std::uint64_t seed);

[[nodiscard]] result<std::unique_ptr<fabric::twin::workload>> make_background(background_config cfg,
                                                                              std::uint32_t hosts,
                                                                              std::uint64_t seed);

}  // namespace rocelab::traffic

#pragma once
// Incast: N senders each send one message of flow_bytes to one receiver at (nearly) the
// same time, `rounds` times. Round k+1 starts round_gap_ns after the last message of
// round k completed (a partition-aggregate or parameter-server step waits for all of its
// responses before the next request). Each sender starts at the round's start plus a
// uniform jitter in [0, start_jitter_ns], drawn from the seed.
//
// Senders are `senders` when given; otherwise sender_count hosts drawn without
// replacement from the hosts other than the receiver (all of them when sender_count is
// hosts - 1). Message tags are (round << 32) | sender index.

#include <cstdint>
#include <memory>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::traffic {

struct incast_config {
  std::uint32_t receiver = 0;
  std::vector<std::uint32_t> senders;  // explicit; empty: sender_count chosen hosts
  std::uint32_t sender_count = 16;
  std::uint64_t flow_bytes = 64 * 1024;
  std::uint32_t rounds = 1;
  std::int64_t round_gap_ns = 0;
  std::int64_t start_ns = 0;
  std::int64_t start_jitter_ns = 0;
  std::int16_t priority = -1;  // -1: the NIC's data priority
};

// Checks the config against the number of hosts; errors name the field.
[[nodiscard]] status validate(const incast_config& cfg, std::uint32_t hosts);

// The senders an incast uses (explicit or drawn from the seed), in order.
[[nodiscard]] std::vector<std::uint32_t> incast_senders(const incast_config& cfg, std::uint32_t hosts,
                                                        std::uint64_t seed);

// The messages of one round that starts at round_start_ns (jitter drawn from the seed and
// the round number, so a round's messages do not depend on when it starts).
[[nodiscard]] std::vector<fabric::twin::message> incast_round(const incast_config& cfg,
                                                              const std::vector<std::uint32_t>& senders,
                                                              std::uint32_t round, std::int64_t round_start_ns,
                                                              std::uint64_t seed);

[[nodiscard]] result<std::unique_ptr<fabric::twin::workload>> make_incast(const incast_config& cfg,
                                                                          std::uint32_t hosts, std::uint64_t seed);

}  // namespace rocelab::traffic

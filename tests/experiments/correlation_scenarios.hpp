#pragma once
// Twin runs the correlation and report tests share: a two-leaf, one-spine fabric where PFC
// alone handles congestion, and messages posted on it.

#include <gtest/gtest.h>

#include <vector>

#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/fabric/twin/twin.hpp"
#include "rocelab/traffic/message_list.hpp"

namespace rocelab::experiments::scenarios {

// Two leaves of 8 hosts and one spine, so every leaf-to-leaf flow shares leaf0's uplink
// and the spine's port to leaf1. The uplinks run at 800 Gb/s: the 8 senders of leaf0
// (800 Gb/s) cannot congest them, so the only congestion is at leaf1's edge ports, and
// any pause upstream of them is PFC spreading it. ECN and DCQCN are off so PFC alone
// handles the incasts; a 2 MiB buffer makes it pause early.
inline constexpr const char* leaf_spine_yaml = R"(
name: pfc-spreading
backend: twin
seed: 7
topology:
  type: leaf_spine
  hosts: 16
  leaves: 2
  spines: 1
  link_gbps: 100
  spine_link_gbps: 800
  link_delay_ns: 1us
switch:
  buffer_bytes: 2MiB
  pfc:
    enabled: true
    priorities: [3]
  ecn:
    enabled: false
nic:
  mtu_bytes: 1024
  data_priority: 3
  dcqcn:
    enabled: false
workload:
  incast:
    receiver: 8
    senders: 3
    flow_bytes: 512KiB
twin:
  stop_ns: 100ms
  queue_sample_interval_ns: 1us
)";

struct twin_run {
  run_records records;
  fabric::twin::twin_config config;
};

inline twin_run run(const std::vector<fabric::twin::message>& messages) {
  auto spec = load_spec(leaf_spine_yaml, "pfc-spreading.yaml");
  EXPECT_TRUE(spec.ok()) << spec.error().message();
  auto config = to_twin_config(*spec, spec->seed);
  EXPECT_TRUE(config.ok()) << config.error().message();
  traffic::message_list_workload load(messages);
  auto records = fabric::twin::run_twin(*config, load);
  EXPECT_TRUE(records.ok()) << records.error().message();
  return {std::move(records).value(), *config};
}

inline fabric::twin::message msg(std::uint32_t src, std::uint32_t dst, std::uint64_t bytes) {
  fabric::twin::message m;
  m.src = src;
  m.dst = dst;
  m.bytes = bytes;
  m.kind = workload_kind::other;
  return m;
}

// Two incasts sharing leaf0's uplink with two bystanders (flows 6 and 7) that only share
// the upstream: PFC spreads the incasts' congestion onto the bystanders.
inline twin_run two_incasts_and_bystanders() {
  std::vector<fabric::twin::message> m;
  for (std::uint32_t s = 0; s < 3; ++s) m.push_back(msg(s, 8, 512 * 1024));
  for (std::uint32_t s = 3; s < 6; ++s) m.push_back(msg(s, 9, 512 * 1024));
  m.push_back(msg(6, 12, 512 * 1024));
  m.push_back(msg(7, 13, 512 * 1024));
  return run(m);
}

}  // namespace rocelab::experiments::scenarios

#pragma once
// Victim traffic: short flows from an incast's senders to hosts whose ports the incast
// does not congest, started while the incast runs, on the same priority by default.
//
// Why: PFC stops a priority on a whole link. When the incast's receiver port fills, the
// switch pauses the ingress ports the incast arrives on, i.e. the senders' links, and a
// sender's NIC then holds every flow of that priority, also one to an idle host. Those
// flows are the victims ECN/DCQCN exists for: marking slows the incast's own QPs before
// the buffer reaches XOFF, and the victims keep the rest of the senders' links.
//
// Hosts. Senders are `hosts` when given, otherwise the incast's senders (as
// incast_senders draws them from the seed). Receivers are `receivers` when given,
// otherwise every host that is neither the incast's receiver nor one of the incast's
// senders. A receiver must not be the incast's receiver (its port is the congested one).
// Sender i's k-th flow (k = 0 .. flows_per_sender-1) goes to receivers[(i + k) % R],
// skipping a receiver that is the sender itself, and starts at start_ns + k x gap_ns.
// Tags are (k << 32) | i. All flows are posted at start; the engine holds each until its
// start time, so every backend that drives twin workloads (the twin, the soft NIC fleet)
// sends the same schedule.

#include <cstdint>
#include <memory>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/twin/twin.hpp"
#include "rocelab/traffic/incast.hpp"

namespace rocelab::traffic {

struct victim_config {
  std::vector<std::uint32_t> hosts;      // senders, explicit; empty: the incast's senders
  std::vector<std::uint32_t> receivers;  // explicit; empty: hosts outside the incast
  std::uint64_t flow_bytes = 64 * 1024;
  std::uint32_t flows_per_sender = 1;
  std::int64_t start_ns = 0;
  std::int64_t gap_ns = 0;     // between one sender's consecutive flows
  std::int16_t priority = -1;  // -1: the NIC's data priority
};

struct victim_hosts {
  std::vector<std::uint32_t> senders;
  std::vector<std::uint32_t> receivers;
};

// The senders and receivers the victims use, against the incast (`incast` may be null
// when the run has none; then both lists must be explicit). Every error starts with the
// victim_config field at fault ("receivers: ...").
[[nodiscard]] result<victim_hosts> resolve_victim_hosts(const victim_config& cfg, const incast_config* incast,
                                                         std::uint32_t hosts, std::uint64_t seed);

// The flows in order of k, then sender (so sorted by start time). Errors as
// resolve_victim_hosts.
[[nodiscard]] result<std::vector<fabric::twin::message>> victim_messages(const victim_config& cfg,
                                                                         const incast_config* incast,
                                                                         std::uint32_t hosts, std::uint64_t seed);

// The flows as a workload; errors as resolve_victim_hosts (the caller names the section).
[[nodiscard]] result<std::unique_ptr<fabric::twin::workload>> make_victims(const victim_config& cfg,
                                                                           const incast_config* incast,
                                                                           std::uint32_t hosts, std::uint64_t seed);

}  // namespace rocelab::traffic

#pragma once
// The checklist's host items on receive classification and clock synchronisation
// (bringup_check.hpp: nic_trust, clock_source). Private to the checklist: check_bringup()
// calls them once per host, after nic_pfc.

#include <cstdint>
#include <string>

#include "rocelab/experiments/bringup/bringup_check.hpp"

namespace rocelab::experiments::bringup_detail {

// The loosest host clock bound clock_source passes. A run starts its senders on the host
// clocks only when their bound is tighter than rocelab's own offset estimate
// (docs/hardware-lab.md, "Clock sources": 40-100 us on loopback), so a host synchronised
// more loosely than this adds nothing to a run's start: T0 falls back to the estimate.
// PTP with phc2sys gives |master_offset| + 1 us; chrony from an NTP server, milliseconds.
inline constexpr std::int64_t max_host_clock_bound_ns = 100'000;

// `facts_fix`: how to gather this host's facts (for a host whose facts are unavailable or
// were gathered by a rocelab that did not read this fact).
[[nodiscard]] check_item nic_trust_item(const bringup_expectation& want, const host_facts& f,
                                        const std::string& facts_fix, const std::string& target);
[[nodiscard]] check_item clock_source_item(const host_facts& f, const std::string& facts_fix,
                                           const std::string& target);

}  // namespace rocelab::experiments::bringup_detail

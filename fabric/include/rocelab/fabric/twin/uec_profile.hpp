#pragma once
// A twin_config with its UEC profile applied (uec_config::profile): under
// uec_profile::htsim, the switch queues, ECN thresholds, trim threshold and retransmission
// timeout htsim_uec derives for this fabric (uec_htsim_profile.hpp), on links that carry
// no preamble or gap (htsim counts none), with byte accounting and ECN marked as a packet
// leaves its queue (htsim's CompositeQueue::decide_ECN). run_twin applies it, and so
// does every caller that builds a config from a spec, so the config a run reports is the
// one it ran; applying it twice changes nothing.
//
// Pure.

#include "rocelab/fabric/twin/flow_ideal.hpp"
#include "rocelab/fabric/twin/twin.hpp"
#include "rocelab/fabric/uec_htsim_profile.hpp"

namespace rocelab::fabric::twin {

// The fabric as htsim's derivation sees it: the host link speed, the longest path the
// twin routes between two hosts (links, and their delays plus the switch latencies
// between them), the full data frame (nic.mtu_bytes of payload and UEC's 64-byte header).
[[nodiscard]] uec_htsim_fabric htsim_fabric_of(const twin_config& config);
// The same over routes already built for config.topology (the engine's own).
[[nodiscard]] uec_htsim_fabric htsim_fabric_of(const twin_config& config, const flow_ideal& ideal);

// `config` unchanged unless it is a UEC fabric with profile htsim.
[[nodiscard]] twin_config with_uec_profile(twin_config config);

}  // namespace rocelab::fabric::twin

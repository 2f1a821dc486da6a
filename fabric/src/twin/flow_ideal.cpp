#include "rocelab/fabric/twin/flow_ideal.hpp"

#include <cmath>

namespace rocelab::fabric::twin {

frame_sizes frame_sizes_of(const twin_config& config) {
  if (config.fabric.link == link_layer::uec) return uec_frame_sizes();
  if (config.fabric.link == link_layer::infiniband) return frame_sizes_for_ib(config.fabric.ib_grh);
  return frame_sizes_for(config.hpcc_ns3_compat);
}

std::uint32_t wire_overhead_of(const twin_config& config) {
  if (config.fabric.link == link_layer::infiniband) return ib_framing_bytes;
  return config.hpcc_ns3_compat ? 0 : config.topology.frame_overhead_bytes;
}

flow_ideal::flow_ideal(const twin_config& config) {
  const topology_config& t = config.topology;
  host_rate_bps_ = std::llround(t.link_gbps * 1e9);
  if (t.type == topology_config::kind::leaf_spine && t.leaves > 0) {
    leaf_spine_ = true;
    hosts_per_leaf_ = t.hosts / t.leaves;
    // A config without spines is refused by validate(); 0 until then, never a division by 0.
    const double up = t.spine_link_gbps > 0 ? t.spine_link_gbps
                      : t.spines > 0        ? hosts_per_leaf_ * t.link_gbps / (t.oversubscription * t.spines)
                                            : 0.0;
    uplink_rate_bps_ = std::llround(up * 1e9);
  }
  link_delay_ns_ = t.link_delay_ns;
  switch_latency_ns_ = config.fabric.switch_latency_ns;
  const frame_sizes sizes = frame_sizes_of(config);
  frames_.mtu_bytes = config.nic.mtu_bytes;
  frames_.data_overhead_bytes = sizes.data_overhead;
  frames_.first_extra_bytes = sizes.first_extra;
  frames_.ack_bytes = sizes.ack;
  frames_.wire_overhead_bytes = wire_overhead_of(config);
  frames_.truncate_to_ns = config.hpcc_ns3_compat;
}

std::vector<ideal_hop> flow_ideal::path(std::uint32_t src, std::uint32_t dst) const {
  const std::int64_t d = link_delay_ns_;
  const std::int64_t sw = d + switch_latency_ns_;  // links out of a switch
  std::vector<ideal_hop> hops{{host_rate_bps_, d}};
  if (leaf_spine_ && src / hosts_per_leaf_ != dst / hosts_per_leaf_) {
    hops.push_back({uplink_rate_bps_, sw});
    hops.push_back({uplink_rate_bps_, sw});
  }
  hops.push_back({host_rate_bps_, sw});
  return hops;
}

std::int64_t flow_ideal::fct_ns(std::uint32_t src, std::uint32_t dst, std::uint64_t bytes) const {
  return ideal_fct_ns(path(src, dst), bytes, frames_);
}

}  // namespace rocelab::fabric::twin

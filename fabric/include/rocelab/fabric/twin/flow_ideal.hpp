#pragma once
// A message's ideal FCT on a twin fabric: fabric/ideal_fct.hpp over the path the twin's
// engine routes it on (the host link, a leaf-spine's two uplink hops when it leaves its
// leaf, the receiver's link) with the frames the fabric carries it in (RoCEv2, InfiniBand,
// UEC, or HPCC ns-3's). The twin's records carry exactly this, and every other backend
// records it for its flows from the same spec, so a slowdown means one thing everywhere.
//
// Pure; built once per fabric, then one call per flow.

#include <cstdint>
#include <vector>

#include "rocelab/fabric/ideal_fct.hpp"
#include "rocelab/fabric/twin/frames.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::fabric::twin {

// The frame sizes and per-frame wire overhead (preamble and IFG, IB framing) of the
// fabric `config` describes, as its engine uses them.
[[nodiscard]] frame_sizes frame_sizes_of(const twin_config& config);
[[nodiscard]] std::uint32_t wire_overhead_of(const twin_config& config);

class flow_ideal {
 public:
  explicit flow_ideal(const twin_config& config);

  // The hops from host src to host dst, the sender's NIC first.
  [[nodiscard]] std::vector<ideal_hop> path(std::uint32_t src, std::uint32_t dst) const;
  // Ideal FCT of a message of `bytes` from src to dst, in ns.
  [[nodiscard]] std::int64_t fct_ns(std::uint32_t src, std::uint32_t dst, std::uint64_t bytes) const;
  // The links' speeds: host links, and a leaf-spine's uplinks (spine_link_gbps, or derived
  // from oversubscription) and hosts per leaf; what the twin's engine builds its links with.
  [[nodiscard]] std::int64_t host_rate_bps() const { return host_rate_bps_; }
  [[nodiscard]] std::int64_t uplink_rate_bps() const { return uplink_rate_bps_; }
  [[nodiscard]] std::uint32_t hosts_per_leaf() const { return hosts_per_leaf_; }

 private:
  bool leaf_spine_ = false;
  std::uint32_t hosts_per_leaf_ = 1;
  std::int64_t host_rate_bps_ = 0, uplink_rate_bps_ = 0;
  std::int64_t link_delay_ns_ = 0, switch_latency_ns_ = 0;
  ideal_frames frames_;
};

}  // namespace rocelab::fabric::twin

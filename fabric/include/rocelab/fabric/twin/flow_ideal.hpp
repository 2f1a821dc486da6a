#pragma once
// A message's ideal FCT on a twin fabric: fabric/ideal_fct.hpp over a shortest path of the
// fabric graph the twin's engine routes it on (the host link, then every switch's egress
// link to the receiver: on a leaf-spine the two uplink hops when it leaves its leaf; on a
// fat-tree up to the lowest common tier and down) with the frames the fabric carries it in
// (RoCEv2, InfiniBand, UEC, or HPCC ns-3's). The path taken is the first equal-cost next
// hop at every switch: the equal-cost paths of the twin's topologies have the same links'
// speeds and delays. The twin's records carry exactly this, and every other backend
// records it for its flows from the same spec, so a slowdown means one thing everywhere.
// Two NICs of one server (rail_optimized) are a message over their local link instead:
// fabric_graph::local_transfer_ns, the engine's own arithmetic for it.
//
// Pure; built once per fabric, then one call per flow.

#include <cstdint>
#include <memory>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/ideal_fct.hpp"
#include "rocelab/fabric/twin/frames.hpp"
#include "rocelab/fabric/twin/routing.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::fabric::twin {

// The frame sizes and per-frame wire overhead (preamble and IFG, IB framing) of the
// fabric `config` describes, as its engine uses them.
[[nodiscard]] frame_sizes frame_sizes_of(const twin_config& config);
[[nodiscard]] std::uint32_t wire_overhead_of(const twin_config& config);

class flow_ideal {
 public:
  // Over the routes of config.topology, built here; errors as fabric_routes::create's.
  [[nodiscard]] static result<flow_ideal> create(const twin_config& config);
  // Over `routes`, which must be those of config.topology (the engine shares its own).
  flow_ideal(const twin_config& config, std::shared_ptr<const fabric_routes> routes);

  // The hops from host src to host dst, the sender's NIC first.
  [[nodiscard]] std::vector<ideal_hop> path(std::uint32_t src, std::uint32_t dst) const;
  // Ideal FCT of a message of `bytes` from src to dst, in ns.
  [[nodiscard]] std::int64_t fct_ns(std::uint32_t src, std::uint32_t dst, std::uint64_t bytes) const;
  [[nodiscard]] const fabric_routes& routes() const { return *routes_; }

 private:
  std::shared_ptr<const fabric_routes> routes_;
  std::int64_t switch_latency_ns_ = 0;
  ideal_frames frames_;
};

}  // namespace rocelab::fabric::twin

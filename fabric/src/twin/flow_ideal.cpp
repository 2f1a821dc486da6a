#include "rocelab/fabric/twin/flow_ideal.hpp"

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

result<flow_ideal> flow_ideal::create(const twin_config& config) {
  auto routes = fabric_routes::create(config.topology);
  if (!routes) return routes.error();
  return flow_ideal(config, std::move(*routes));
}

flow_ideal::flow_ideal(const twin_config& config, std::shared_ptr<const fabric_routes> routes)
    : routes_(std::move(routes)) {
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
  const fabric_graph& g = routes_->graph();
  const graph_port& nic = g.host(src).link;
  std::vector<ideal_hop> hops{{nic.rate_bps, nic.delay_ns}};
  // Links out of a switch add its latency; code 0 takes the first next hop everywhere.
  std::uint32_t sw = g.host(src).sw, code = 0;
  for (;;) {
    const graph_port& p = g.switch_at(sw).ports[routes_->egress_port(sw, dst, code)];
    hops.push_back({p.rate_bps, p.delay_ns + switch_latency_ns_});
    if (g.is_host_device(p.peer)) return hops;
    sw = p.peer;
  }
}

std::int64_t flow_ideal::fct_ns(std::uint32_t src, std::uint32_t dst, std::uint64_t bytes) const {
  const fabric_graph& g = routes_->graph();
  if (g.same_server(src, dst)) return g.local_transfer_ns(bytes);
  return ideal_fct_ns(path(src, dst), bytes, frames_);
}

}  // namespace rocelab::fabric::twin

#include "rocelab/fabric/twin/uec_profile.hpp"

#include "rocelab/fabric/twin/flow_ideal.hpp"
#include "rocelab/fabric/twin/frames.hpp"

namespace rocelab::fabric::twin {
namespace {

// htsim's queues are each their own fixed buffer; the shared pool must never be what
// limits them, so it is made larger than every queue of a switch at once.
constexpr std::int64_t htsim_pool_bytes = std::int64_t{1} << 50;

}  // namespace

uec_htsim_fabric htsim_fabric_of(const twin_config& config) {
  auto built = flow_ideal::create(config);
  if (!built.ok()) return {};  // the engine's build reports the topology's error
  return htsim_fabric_of(config, *built);
}

uec_htsim_fabric htsim_fabric_of(const twin_config& config, const flow_ideal& ideal) {
  uec_htsim_fabric f;
  f.host_link_bps = ideal.routes().graph().host(0).link.rate_bps;
  // The twin's topologies look the same from every host, so host 0's longest path is the
  // fabric's: the one with the largest one-way latency, then the most links.
  std::int64_t best_ns = -1;
  std::size_t best_links = 0;
  for (std::uint32_t h = 1; h < config.topology.hosts; ++h) {
    std::int64_t ns = 0;
    const auto hops = ideal.path(0, h);
    for (const ideal_hop& hop : hops) ns += hop.delay_ns;
    if (ns > best_ns || (ns == best_ns && hops.size() > best_links)) best_ns = ns, best_links = hops.size();
  }
  f.diameter_links = static_cast<std::uint32_t>(best_links);
  f.diameter_latency_ps = best_ns * 1000;
  f.packet_bytes = config.nic.mtu_bytes + uec_header_bytes;
  f.ack_bytes = uec_header_bytes;
  f.trimming = config.fabric.uec.trimming;
  return f;
}

twin_config with_uec_profile(twin_config config) {
  if (config.fabric.link != link_layer::uec || config.fabric.uec.profile != uec_profile::htsim) return config;
  const uec_htsim_params p = derive_uec_htsim_params(htsim_fabric_of(config));
  // htsim counts no preamble or inter-frame gap on any link.
  config.topology.frame_overhead_bytes = 0;
  switch_config& sc = config.switch_template;
  sc.wire_overhead_bytes = 0;  // the engine takes the topology's; the reported config says the same
  sc.cell_bytes = 1;
  sc.buffer_bytes = htsim_pool_bytes;
  sc.ecn_mark_on_dequeue = true;
  if (sc.ports.empty()) sc.ports.emplace_back();
  sc.ports.resize(1);
  for (pg_config& pg : sc.ports[0].pgs) {
    pg.reserve_bytes = 0;
    pg.headroom_bytes = 0;
    pg.shared = buffer_threshold::unlimited();
  }
  for (queue_config& q : sc.ports[0].queues) {
    q.reserve_bytes = 0;
    q.shared = buffer_threshold::fixed(p.queue_bytes);
    q.ecn = ecn_config{true, p.ecn_low_bytes, p.ecn_high_bytes, 1.0};
  }
  config.ecn_by_rate.clear();
  uec_config& u = config.fabric.uec;
  u.trim_threshold_bytes = p.trim_threshold_bytes;
  u.retransmit_timeout_ns = (p.min_rto_ps + 500) / 1000;
  u.nscc_target_qdelay_ns = (p.target_qdelay_ps + 500) / 1000;
  return config;
}

}  // namespace rocelab::fabric::twin

// The builders of fabric_graph, one per topology kind, in the device order and port
// numbering fabric_graph.hpp states.

#include "rocelab/fabric/twin/fabric_graph.hpp"

#include <algorithm>
#include <cmath>

namespace rocelab::fabric::twin {

class graph_builder {
 public:
  explicit graph_builder(const topology_config& t) : t_(t) {}

  std::uint32_t add_switch(std::string name, std::uint8_t tier, std::uint32_t ports) {
    g_.switches_.push_back({std::move(name), tier, std::vector<graph_port>(ports)});
    return static_cast<std::uint32_t>(g_.switches_.size() - 1);
  }
  // A link between switch ports, both directions at `gbps` (and the topology's link delay
  // unless given).
  void link(std::uint32_t a, std::uint16_t pa, std::uint32_t b, std::uint16_t pb, double gbps,
            std::int64_t delay_ns = -1) {
    g_.switches_[a].ports[pa] = port_to(b, pb, gbps, delay_ns);
    g_.switches_[b].ports[pb] = port_to(a, pa, gbps, delay_ns);
  }
  // Host h's link to switch port (sw, port), at the host link speed unless given. Hosts
  // are attached after every switch exists, so their device indexes are final.
  void attach(std::uint32_t h, std::uint32_t sw, std::uint16_t port, double gbps = 0, std::int64_t delay_ns = -1) {
    if (gbps == 0) gbps = t_.link_gbps;
    const std::uint32_t device = static_cast<std::uint32_t>(g_.switches_.size()) + h;
    g_.switches_[sw].ports[port] = port_to(device, 0, gbps, delay_ns);
    g_.hosts_[h] = {sw, port, port_to(sw, port, gbps, delay_ns)};
  }
  void hosts(std::uint32_t n) { g_.hosts_.resize(n); }
  void set_tier(std::uint32_t sw, std::uint8_t tier) { g_.switches_[sw].tier = tier; }
  void servers(std::uint32_t nics_per_host, double local_gbps, std::int64_t local_delay_ns) {
    g_.nics_per_host_ = nics_per_host;
    g_.local_rate_bps_ = std::llround(local_gbps * 1e9);
    g_.local_delay_ns_ = local_delay_ns;
  }
  const fabric_graph& graph() const { return g_; }
  fabric_graph take() { return std::move(g_); }

 private:
  graph_port port_to(std::uint32_t peer, std::uint16_t peer_port, double gbps, std::int64_t delay_ns) const {
    return {peer, peer_port, gbps, std::llround(gbps * 1e9), delay_ns < 0 ? t_.link_delay_ns : delay_ns};
  }

  const topology_config& t_;
  fabric_graph g_;
};

namespace {

status bad(const std::string& what) { return {error_code::invalid_argument, what}; }

fabric_graph single_switch(const topology_config& t) {
  graph_builder b(t);
  b.add_switch("sw0", 0, t.hosts);
  b.hosts(t.hosts);
  for (std::uint32_t h = 0; h < t.hosts; ++h) b.attach(h, 0, static_cast<std::uint16_t>(h));
  return b.take();
}

result<fabric_graph> leaf_spine(const topology_config& t) {
  if (t.leaves < 1 || t.spines < 1 || t.hosts % t.leaves != 0)
    return bad("topology: a leaf-spine needs leaves >= 1, spines >= 1 and hosts a multiple of leaves");
  const std::uint32_t per_leaf = t.hosts / t.leaves;
  if (per_leaf + t.spines > 65535 || t.leaves > 65535)
    return bad("topology: a leaf or spine of more than 65535 ports (the twin numbers ports in 16 bits)");
  const double up = t.spine_link_gbps > 0 ? t.spine_link_gbps : per_leaf * t.link_gbps / (t.oversubscription * t.spines);
  graph_builder b(t);
  for (std::uint32_t l = 0; l < t.leaves; ++l) b.add_switch("leaf" + std::to_string(l), 0, per_leaf + t.spines);
  for (std::uint32_t s = 0; s < t.spines; ++s) b.add_switch("spine" + std::to_string(s), 1, t.leaves);
  for (std::uint32_t l = 0; l < t.leaves; ++l)
    for (std::uint32_t s = 0; s < t.spines; ++s)
      b.link(l, static_cast<std::uint16_t>(per_leaf + s), t.leaves + s, static_cast<std::uint16_t>(l), up);
  b.hosts(t.hosts);
  for (std::uint32_t h = 0; h < t.hosts; ++h) b.attach(h, h / per_leaf, static_cast<std::uint16_t>(h % per_leaf));
  return b.take();
}

result<fabric_graph> fat_tree(const topology_config& t) {
  const std::uint32_t k = t.k;
  if (k < 2 || k % 2 != 0 || k > 62) return bad("topology.k must be even and 2..62 (a fat-tree of k-port switches)");
  const std::uint32_t half = k / 2, per_pod = half * half;
  if (t.hosts != k * per_pod)
    return bad("topology.hosts: a k=" + std::to_string(k) + " fat-tree has k^3/4 = " + std::to_string(k * per_pod) +
               " hosts, not " + std::to_string(t.hosts));
  const double up = t.spine_link_gbps > 0 ? t.spine_link_gbps : t.link_gbps / t.oversubscription;
  graph_builder b(t);
  auto edge = [&](std::uint32_t pod, std::uint32_t i) { return pod * half + i; };
  auto agg = [&](std::uint32_t pod, std::uint32_t i) { return k * half + pod * half + i; };
  const std::uint32_t core0 = 2 * k * half;
  for (std::uint32_t p = 0; p < k; ++p)
    for (std::uint32_t i = 0; i < half; ++i)
      b.add_switch("edge" + std::to_string(p) + "_" + std::to_string(i), 0, k);
  for (std::uint32_t p = 0; p < k; ++p)
    for (std::uint32_t i = 0; i < half; ++i)
      b.add_switch("agg" + std::to_string(p) + "_" + std::to_string(i), 1, k);
  for (std::uint32_t c = 0; c < per_pod; ++c) b.add_switch("core" + std::to_string(c), 2, k);
  for (std::uint32_t p = 0; p < k; ++p)
    for (std::uint32_t i = 0; i < half; ++i)
      for (std::uint32_t j = 0; j < half; ++j) {
        b.link(edge(p, i), static_cast<std::uint16_t>(half + j), agg(p, j), static_cast<std::uint16_t>(i), up);
        b.link(agg(p, i), static_cast<std::uint16_t>(half + j), core0 + i * half + j, static_cast<std::uint16_t>(p), up);
      }
  b.hosts(t.hosts);
  for (std::uint32_t h = 0; h < t.hosts; ++h)
    b.attach(h, edge(h / per_pod, h % per_pod / half), static_cast<std::uint16_t>(h % half));
  return b.take();
}

result<fabric_graph> rail_optimized(const topology_config& t) {
  ROCELAB_RETURN_IF_ERROR(check_rail_optimized(t));
  const std::uint32_t n = t.nics_per_host, servers = t.hosts / n;
  const std::uint32_t per_leaf = servers / t.leaves, leaves = n * t.leaves;
  const double up = t.spine_link_gbps > 0 ? t.spine_link_gbps : per_leaf * t.link_gbps / (t.oversubscription * t.spines);
  graph_builder b(t);
  for (std::uint32_t r = 0; r < n; ++r)
    for (std::uint32_t l = 0; l < t.leaves; ++l)
      b.add_switch("rail" + std::to_string(r) + "_leaf" + std::to_string(l), 0, per_leaf + t.spines);
  for (std::uint32_t s = 0; s < t.spines; ++s) b.add_switch("spine" + std::to_string(s), 1, leaves);
  for (std::uint32_t leaf = 0; leaf < leaves; ++leaf)
    for (std::uint32_t s = 0; s < t.spines; ++s)
      b.link(leaf, static_cast<std::uint16_t>(per_leaf + s), leaves + s, static_cast<std::uint16_t>(leaf), up);
  b.hosts(t.hosts);
  for (std::uint32_t h = 0; h < t.hosts; ++h) {
    const std::uint32_t server = h / n, rail = h % n;
    b.attach(h, rail * t.leaves + server / per_leaf, static_cast<std::uint16_t>(server % per_leaf));
  }
  b.servers(n, t.local_link_gbps, t.local_link_delay_ns);
  return b.take();
}

}  // namespace

status check_rail_optimized(const topology_config& t) {
  const std::uint32_t n = t.nics_per_host;
  if (n < 2 || n > 64) return bad("topology.nics_per_host must be 2..64 on a rail-optimized fabric (NICs a server)");
  if (t.hosts % n != 0)
    return bad("topology.hosts counts NICs and must be whole servers of " + std::to_string(n) + ": " +
               std::to_string(t.hosts) + " are not (servers x nics_per_host)");
  const std::uint32_t servers = t.hosts / n;
  if (t.leaves < 1 || servers % t.leaves != 0)
    return bad("topology.leaves must divide the " + std::to_string(servers) + " servers evenly, leaves a rail: " +
               std::to_string(t.leaves) + " do not");
  if (t.spines < 1) return bad("topology.spines must be >= 1 to join its rails");
  if (servers / t.leaves + t.spines > 65535 || n * t.leaves > 65535)
    return bad("topology.leaves: a leaf or spine of more than 65535 ports (the twin numbers ports in 16 bits)");
  if (!(t.local_link_gbps > 0)) return bad("topology.local_link_gbps must be > 0");
  if (t.local_link_delay_ns < 0) return bad("topology.local_link_delay_ns must be >= 0");
  return status::success();
}

namespace {

// HPCC ns-3's topo.txt as it is: nodes 0..hosts-1 hosts, then the switches.
result<fabric_graph> explicit_graph(const topology_config& t) {
  const std::uint32_t nodes = t.hosts + t.switches;
  if (t.switches < 1) return bad("topology.switches must be >= 1");
  std::vector<std::uint32_t> ports(nodes, 0);
  for (std::size_t i = 0; i < t.links.size(); ++i) {
    const auto& l = t.links[i];
    const std::string where = "topology.links[" + std::to_string(i) + "]: ";
    if (l.a >= nodes || l.b >= nodes || l.a == l.b) return bad(where + "nodes must be two different nodes below " + std::to_string(nodes));
    if (l.a < t.hosts && l.b < t.hosts) return bad(where + "a link between two hosts");
    if (!(l.gbps > 0) || l.delay_ns < 0) return bad(where + "needs gbps > 0 and delay_ns >= 0");
    if (++ports[l.a] > 65535 || ++ports[l.b] > 65535) return bad(where + "a node of more than 65535 ports");
  }
  for (std::uint32_t h = 0; h < t.hosts; ++h)
    if (ports[h] != 1) return bad("topology.links: host " + std::to_string(h) + " has " + std::to_string(ports[h]) + " links (one NIC: one link)");
  graph_builder b(t);
  for (std::uint32_t s = 0; s < t.switches; ++s) b.add_switch("sw" + std::to_string(s), 0, ports[t.hosts + s]);
  b.hosts(t.hosts);
  std::vector<std::uint16_t> next(nodes, 0);
  for (const auto& l : t.links) {
    const auto pa = next[l.a]++, pb = next[l.b]++;
    if (l.a < t.hosts || l.b < t.hosts) {
      const bool a_host = l.a < t.hosts;
      b.attach(a_host ? l.a : l.b, (a_host ? l.b : l.a) - t.hosts, a_host ? pb : pa, l.gbps, l.delay_ns);
    } else {
      b.link(l.a - t.hosts, pa, l.b - t.hosts, pb, l.gbps, l.delay_ns);
    }
  }
  // Tiers: hops from the nearest switch with hosts.
  const fabric_graph& g = b.graph();
  constexpr std::uint32_t unseen = 0xffffffffu;
  std::vector<std::uint32_t> tier(t.switches, unseen), queue;
  for (std::uint32_t h = 0; h < t.hosts; ++h)
    if (tier[g.host(h).sw] == unseen) tier[g.host(h).sw] = 0, queue.push_back(g.host(h).sw);
  for (std::size_t i = 0; i < queue.size(); ++i)
    for (const graph_port& p : g.switch_at(queue[i]).ports)
      if (!g.is_host_device(p.peer) && tier[p.peer] == unseen) tier[p.peer] = tier[queue[i]] + 1, queue.push_back(p.peer);
  for (std::uint32_t s = 0; s < t.switches; ++s) {
    if (tier[s] == unseen) return bad("topology.links: sw" + std::to_string(s) + " is not connected to any host");
    b.set_tier(s, static_cast<std::uint8_t>(std::min<std::uint32_t>(tier[s], 255)));
  }
  return b.take();
}

}  // namespace

result<fabric_graph> fabric_graph::build(const topology_config& t) {
  if (t.hosts < 2 || t.hosts > 65535) return bad("topology.hosts must be 2..65535");
  if (!(t.link_gbps > 0)) return bad("topology.link_gbps must be > 0");
  if (t.spine_link_gbps < 0 || (t.spine_link_gbps == 0 && !(t.oversubscription > 0)))
    return bad("topology: the uplink speed needs spine_link_gbps > 0 or oversubscription > 0");
  switch (t.type) {
    case topology_config::kind::single_switch: return single_switch(t);
    case topology_config::kind::leaf_spine: return leaf_spine(t);
    case topology_config::kind::fat_tree: return fat_tree(t);
    case topology_config::kind::graph: return explicit_graph(t);
    case topology_config::kind::rail_optimized: return rail_optimized(t);
  }
  return bad("topology.type: unknown");
}

std::string fabric_graph::device_name(std::uint32_t device) const {
  if (device < switches()) return switches_[device].name;
  return "h" + std::to_string(device - switches() + 1);
}

std::uint32_t fabric_graph::device_index(std::string_view name) const {
  for (std::uint32_t d = 0; d < switches(); ++d)
    if (switches_[d].name == name) return d;
  std::uint32_t n = 0;
  if (name.size() < 2 || name[0] != 'h' || name[1] == '0') return none;
  for (const char c : name.substr(1)) {
    if (c < '0' || c > '9' || n > hosts()) return none;
    n = n * 10 + static_cast<std::uint32_t>(c - '0');
  }
  return n >= 1 && n <= hosts() ? host_device(n - 1) : none;
}

std::int64_t fabric_graph::local_serialization_ns(std::uint64_t bytes) const {
  if (local_rate_bps_ <= 0) return 0;
  const __int128 bits_ns = static_cast<__int128>(bytes) * 8 * 1'000'000'000;
  return static_cast<std::int64_t>((bits_ns + local_rate_bps_ - 1) / local_rate_bps_);
}

double fabric_graph::port_gbps(std::uint32_t device, std::uint32_t port) const {
  if (device >= switches()) return device - switches() < hosts() ? hosts_[device - switches()].link.gbps : 0.0;
  const auto& ports = switches_[device].ports;
  return port < ports.size() ? ports[port].gbps : 0.0;
}

}  // namespace rocelab::fabric::twin

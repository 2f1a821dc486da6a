// fabric_routes: the shortest-path tables (one breadth-first search per attachment
// switch, over switches only: hosts never forward) and the per-switch ECMP picks.

#include "rocelab/fabric/twin/routing.hpp"

#include <algorithm>
#include <limits>
#include <string_view>
#include <unordered_map>

namespace rocelab::fabric::twin {
namespace {

// The table holds switches x attachment switches entries of 4 bytes: at this many, 128 MiB.
constexpr std::uint64_t max_table_entries = std::uint64_t{1} << 25;
// Offsets into the port pool are 23 bits of a table entry.
constexpr std::size_t max_pool_ports = std::size_t{1} << 23;

struct port_list_hash {
  std::size_t operator()(const std::vector<std::uint16_t>& v) const noexcept {
    std::uint64_t h = v.size();
    for (const std::uint16_t p : v) h = routing_detail::mix64(h ^ p);
    return static_cast<std::size_t>(h);
  }
};

}  // namespace

fabric_routes::fabric_routes(fabric_graph g, const topology_config& t)
    : graph_(std::move(g)), ecmp_(t.ecmp), ecmp_seeds_(t.ecmp_seeds) {}

result<std::shared_ptr<const fabric_routes>> fabric_routes::create(const topology_config& t) {
  auto g = fabric_graph::build(t);
  if (!g) return g.error();
  std::shared_ptr<fabric_routes> r(new fabric_routes(std::move(*g), t));
  ROCELAB_RETURN_IF_ERROR(r->compute());
  return std::shared_ptr<const fabric_routes>(std::move(r));
}

status fabric_routes::compute() {
  const std::uint32_t nsw = graph_.switches();
  constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> attach_index(nsw, none);
  std::vector<std::uint32_t> attach_switch;  // attachment number -> switch
  host_.resize(graph_.hosts());
  for (std::uint32_t h = 0; h < graph_.hosts(); ++h) {
    const graph_host& gh = graph_.host(h);
    if (attach_index[gh.sw] == none) {
      attach_index[gh.sw] = static_cast<std::uint32_t>(attach_switch.size());
      attach_switch.push_back(gh.sw);
    }
    host_[h] = {gh.sw, attach_index[gh.sw], gh.port};
  }
  attach_switches_ = static_cast<std::uint32_t>(attach_switch.size());
  if (static_cast<std::uint64_t>(nsw) * attach_switches_ > max_table_entries)
    return {error_code::invalid_argument,
            "topology: " + std::to_string(nsw) + " switches x " + std::to_string(attach_switches_) +
                " switches with hosts is more routing table than the twin holds (at most " +
                std::to_string(max_table_entries) + " entries); use fewer, larger leaves"};
  table_.assign(static_cast<std::size_t>(nsw) * attach_switches_, 0);

  // Each switch's ports to other switches in the order of the devices they lead to: the
  // order the search visits neighbours, which orders each switch's next hops. HPCC's ns-3
  // walks a map of neighbours keyed by Ptr<Node>, so by address: every SwitchNode (2.1 MB,
  // its m_bytes[257][257][8]) is an mmap of its own, placed below the one before, so its
  // switches come in descending node id order. Ascending put 3-tier flows on other paths
  // than ns-3's (the slowdowns of one run against ns-3's correlated 0.59 on a k=8
  // fat-tree, against 0.80 between two ns-3 runs; 0.83 descending); on ls64_ws50 the
  // 400 Gb/s spines hid it. The twin's own hash keeps ascending order.
  const bool descending = ecmp_ == topology_config::ecmp_kind::hpcc_ns3;
  std::vector<std::vector<std::uint16_t>> by_peer(nsw);
  for (std::uint32_t s = 0; s < nsw; ++s) {
    const auto& ports = graph_.switch_at(s).ports;
    for (std::uint32_t p = 0; p < ports.size(); ++p)
      if (!graph_.is_host_device(ports[p].peer)) by_peer[s].push_back(static_cast<std::uint16_t>(p));
    std::stable_sort(by_peer[s].begin(), by_peer[s].end(), [&](std::uint16_t x, std::uint16_t y) {
      return descending ? ports[x].peer > ports[y].peer : ports[x].peer < ports[y].peer;
    });
  }
  std::unordered_map<std::vector<std::uint16_t>, std::uint32_t, port_list_hash> pooled;
  std::vector<std::uint32_t> dist(nsw), order;
  std::vector<std::vector<std::uint16_t>> next(nsw);
  std::vector<std::uint64_t> codes(nsw);  // the most path codes from a switch to the destination
  order.reserve(nsw);
  for (std::uint32_t a = 0; a < attach_switches_; ++a) {
    const std::uint32_t dest = attach_switch[a];
    std::fill(dist.begin(), dist.end(), none);
    for (auto& n : next) n.clear();
    order.clear();
    dist[dest] = 0;
    order.push_back(dest);
    // Breadth-first from the destination's switch: u one hop nearer than v makes v's port
    // facing u a next hop of v, in the order the search dequeues u.
    for (std::size_t i = 0; i < order.size(); ++i) {
      const std::uint32_t u = order[i];
      for (const std::uint16_t port : by_peer[u]) {
        const graph_port& p = graph_.switch_at(u).ports[port];
        const std::uint32_t v = p.peer;
        if (dist[v] == none) {
          dist[v] = dist[u] + 1;
          order.push_back(v);
        }
        if (dist[v] == dist[u] + 1) next[v].push_back(p.peer_port);
      }
    }
    codes[dest] = 1;
    for (std::size_t i = 1; i < order.size(); ++i) {
      const std::uint32_t v = order[i];
      const auto& hopsv = next[v];
      if (hopsv.size() > max_next_hops)
        return {error_code::invalid_argument, "topology: " + graph_.device_name(v) + " has " +
                                                  std::to_string(hopsv.size()) + " equal-cost next hops toward " +
                                                  graph_.device_name(dest) + " (the twin takes at most " +
                                                  std::to_string(max_next_hops) + ")"};
      std::uint64_t most = 0;
      for (const std::uint16_t port : hopsv) most = std::max(most, codes[graph_.switch_at(v).ports[port].peer]);
      codes[v] = std::min<std::uint64_t>(most * hopsv.size(), std::uint64_t{1} << 40);
      if (attach_index[v] != none && codes[v] > max_path_codes)
        return {error_code::invalid_argument, "topology: " + std::to_string(codes[v]) + " equal-cost paths from " +
                                                  graph_.device_name(v) + " to " + graph_.device_name(dest) +
                                                  " (a twin packet carries its path in 10 bits: at most " +
                                                  std::to_string(max_path_codes) + ")"};
      auto [it, added] = pooled.try_emplace(hopsv, static_cast<std::uint32_t>(ports_.size()));
      if (added) {
        ports_.insert(ports_.end(), hopsv.begin(), hopsv.end());
        if (ports_.size() > max_pool_ports)
          return {error_code::invalid_argument, "topology: too many distinct next-hop sets for the twin's tables"};
      }
      table_[static_cast<std::size_t>(v) * attach_switches_ + a] =
          (it->second << 9) | static_cast<std::uint32_t>(hopsv.size() - 1);
    }
    for (const std::uint32_t s : attach_switch)
      if (dist[s] == none)
        return {error_code::invalid_argument,
                "topology: " + graph_.device_name(s) + " has no path to " + graph_.device_name(dest)};
  }
  return status::success();
}

std::uint32_t fabric_routes::ecmp_pick_at(std::uint32_t sw, const flow_key& f, std::uint64_t seed,
                                          std::uint32_t n) const {
  if (ecmp_ == topology_config::ecmp_kind::hpcc_ns3) {
    const std::uint32_t node_seed = sw < ecmp_seeds_.size() ? ecmp_seeds_[sw] : sw;
    return hpcc_ns3_ecmp_hash(hpcc_ns3_node_ip(f.src), hpcc_ns3_node_ip(f.dst), f.sport, f.dport, node_seed) % n;
  }
  const std::uint16_t sport = f.sport != 0 ? f.sport : udp_source_port(f.qp, seed);
  // Switches hosts attach to hash with the run's seed alone: a flow passes one on its way
  // up, and a leaf then picks what the twin's leaves always picked. Others mix in their
  // device index, so consecutive tiers do not repeat one pick (hash polarization).
  const std::uint64_t salt = graph_.switch_at(sw).tier == 0 ? 0 : routing_detail::mix64(0x5a17c4ull + sw);
  return ecmp_pick(f.src, f.dst, sport, seed ^ salt, n);
}

std::uint32_t fabric_routes::path_code(const flow_key& f, std::uint64_t seed) const {
  std::uint32_t code = 0, radix = 1;
  std::uint32_t sw = host_[f.src].sw;
  const std::uint32_t last = host_[f.dst].sw;
  while (sw != last) {
    const std::span<const std::uint16_t> p = next_ports(sw, f.dst);
    const auto n = static_cast<std::uint32_t>(p.size());
    std::uint32_t c = 0;
    if (n > 1) {
      c = ecmp_pick_at(sw, f, seed, n);
      code += c * radix;
      radix *= n;
    }
    sw = graph_.switch_at(sw).ports[p[c]].peer;
  }
  return code;
}

void fabric_routes::hops(std::uint32_t src, std::uint32_t dst, std::uint32_t code, std::vector<hop>& out) const {
  out.clear();
  std::uint32_t sw = host_[src].sw;
  std::uint16_t in = host_[src].port;
  for (;;) {
    const std::uint16_t port = egress_port(sw, dst, code);
    out.push_back({sw, in, port});
    const graph_port& p = graph_.switch_at(sw).ports[port];
    if (graph_.is_host_device(p.peer)) return;
    sw = p.peer;
    in = p.peer_port;
  }
}

std::vector<hop> flow_hops(const topology_config& topology, std::uint64_t seed, std::uint32_t src, std::uint32_t dst,
                           std::uint32_t qp, std::uint16_t sport, std::uint16_t dport) {
  auto routes = fabric_routes::create(topology);
  std::vector<hop> out;
  if (!routes || src >= (*routes)->hosts() || dst >= (*routes)->hosts()) return out;
  (*routes)->hops(src, dst, (*routes)->path_code({src, dst, qp, sport, dport}, seed), out);
  return out;
}

}  // namespace rocelab::fabric::twin

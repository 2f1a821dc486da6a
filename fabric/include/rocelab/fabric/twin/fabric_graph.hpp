#pragma once
// The twin's fabric as a graph: its switches (name, tier, ports), its hosts (the switch
// and port each one's link goes to) and every link's speed and propagation delay. One
// builder per topology_config::kind makes it; the engine builds its switches and links
// from it, routing (routing.hpp) computes its tables on it and flow_ideal walks it, so
// every consumer sees one fabric.
//
// Device indexes are those of run_records::devices in a twin run: the switches first,
// then the hosts h1..hN (host h is device switches() + h). Switch order, names and ports:
// - single_switch: sw0; port p faces host p.
// - leaf_spine: leaf0..leaf(L-1), then spine0..spine(S-1). Leaf l: ports 0..H-1 face its
//   hosts l*H .. l*H+H-1 (H = hosts / leaves), port H+s the uplink to spine s; spine s:
//   port l faces leaf l.
// - fat_tree (k-ary, Al-Fares et al., SIGCOMM 2008): edge<p>_<i> (pod p, switch i; k/2 a
//   pod), then agg<p>_<i>, then core<c> ((k/2)^2). Edge i of pod p: ports 0..k/2-1 face
//   hosts p*k^2/4 + i*k/2 + port, port k/2+j the uplink to agg<p>_j; agg j of pod p:
//   port i faces edge<p>_i, port k/2+m the uplink to core j*k/2+m; core c: port p faces
//   agg<p>_<c / (k/2)>.
// - rail_optimized: rail<r>_leaf<l> (rail r, its leaf l; `leaves` a rail), rail by rail,
//   then spine0..spine(S-1). Host h is NIC r = h % nics_per_host of server
//   s = h / nics_per_host; with P = servers / leaves servers a leaf, it hangs off
//   rail<r>_leaf<s / P> port s % P. Leaf port P+j is the uplink to spine j; spine j's port
//   r x leaves + l faces rail<r>_leaf<l>. NICs of one server also share the local link
//   (not a switch, not in the graph: local_transfer_ns).
// - graph: the switches of topology_config::links, sw0, sw1, ... in node order, ports in
//   link order.
// Tier: 0 for the switches hosts attach to (sw0, leaves, rail leaves, edges), 1 for spines and
// aggregation switches, 2 for cores; in a graph, the hops to the nearest switch with hosts.
//
// Pure: built from the config alone; immutable once built; safe to share across threads.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::fabric::twin {

// One end of a link, seen from the device that owns the port.
struct graph_port {
  std::uint32_t peer = 0;       // device index at the far end (a switch, or switches() + host)
  std::uint16_t peer_port = 0;  // the far end's port (0: a host's NIC)
  double gbps = 0;              // the link's speed as the config gives it
  std::int64_t rate_bps = 0;    // the same in whole bit/s (llround(gbps x 1e9)), as links run
  std::int64_t delay_ns = 0;    // propagation delay
};

struct graph_switch {
  std::string name;
  std::uint8_t tier = 0;
  std::vector<graph_port> ports;
};

// A host's one NIC: its link to a switch port.
struct graph_host {
  std::uint32_t sw = 0;    // switch index (== device index)
  std::uint16_t port = 0;  // that switch's port
  graph_port link;         // the NIC's side: peer = sw, peer_port = port
};

// A rail-optimized topology's own rules (NICs, servers, leaves a rail, spines, local
// link), each error starting with the field it names: what the builder and the twin's
// validate both check, so a spec error points at that field.
[[nodiscard]] status check_rail_optimized(const topology_config& t);

class fabric_graph {
 public:
  // The fabric `t` describes; errors name the topology field that makes it impossible.
  [[nodiscard]] static result<fabric_graph> build(const topology_config& t);

  [[nodiscard]] std::uint32_t switches() const { return static_cast<std::uint32_t>(switches_.size()); }
  [[nodiscard]] std::uint32_t hosts() const { return static_cast<std::uint32_t>(hosts_.size()); }
  [[nodiscard]] const graph_switch& switch_at(std::uint32_t sw) const { return switches_[sw]; }
  [[nodiscard]] const graph_host& host(std::uint32_t h) const { return hosts_[h]; }
  [[nodiscard]] std::uint32_t host_device(std::uint32_t h) const { return switches() + h; }
  [[nodiscard]] bool is_host_device(std::uint32_t device) const { return device >= switches(); }
  // The name run_records::devices carries: the switch's, or "h<host + 1>".
  [[nodiscard]] std::string device_name(std::uint32_t device) const;
  // The device index of a name device_name gives; none: no such device.
  static constexpr std::uint32_t none = 0xffffffffu;
  [[nodiscard]] std::uint32_t device_index(std::string_view name) const;
  // The speed (Gb/s, as configured) of the link out of a device's port; a host has port 0.
  [[nodiscard]] double port_gbps(std::uint32_t device, std::uint32_t port) const;

  // Multi-NIC servers (rail_optimized; 1 elsewhere): hosts a and b are NICs of one server,
  // so their messages take the server's local link and not the fabric.
  [[nodiscard]] std::uint32_t nics_per_host() const { return nics_per_host_; }
  [[nodiscard]] bool same_server(std::uint32_t a, std::uint32_t b) const {
    return nics_per_host_ > 1 && a / nics_per_host_ == b / nics_per_host_;
  }
  // A message of `bytes` over the local link: its serialization at local_link_gbps
  // (rounded up to the ns), and the link's delay. Its ideal FCT is their sum; the engine
  // serializes messages one after the other per NIC and direction, then adds the delay.
  [[nodiscard]] std::int64_t local_serialization_ns(std::uint64_t bytes) const;
  [[nodiscard]] std::int64_t local_delay_ns() const { return local_delay_ns_; }
  [[nodiscard]] std::int64_t local_transfer_ns(std::uint64_t bytes) const {
    return local_serialization_ns(bytes) + local_delay_ns_;
  }

 private:
  std::vector<graph_switch> switches_;
  std::vector<graph_host> hosts_;
  std::uint32_t nics_per_host_ = 1;
  std::int64_t local_rate_bps_ = 0;
  std::int64_t local_delay_ns_ = 0;

  friend class graph_builder;
};

}  // namespace rocelab::fabric::twin

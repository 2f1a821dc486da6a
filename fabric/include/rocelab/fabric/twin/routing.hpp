#pragma once
// The twin's routing over its fabric graph (fabric_graph.hpp): which port every switch a
// flow crosses forwards it on. The engine forwards packets with exactly these tables and
// picks, so a report that attributes pauses per hop (a flow met a paused egress port)
// sees the path the twin's packets took.
//
// Routes are shortest paths (in switch hops), as HPCC's ns-3 computes them: a switch's
// next hops toward a destination are every neighbour one hop nearer to the switch the
// destination host hangs off, in the order a breadth-first search from that switch
// dequeues them (neighbours in device order). Tables are per switch and per destination
// attachment switch (not per host), so thousands of hosts stay small; the last hop is
// the destination host's port.
//
// ECMP: at every switch with more than one next hop, a hash of the flow's RoCEv2 5-tuple
// (src IP, dst IP, UDP source port, 4791, UDP) mixed with the switch picks one. twin
// hash: ecmp_pick with the run's seed for the switches hosts attach to (a flow meets one
// of them on its way up; so a leaf picks the uplink it always has) and the seed mixed
// with the device index elsewhere; hpcc_ns3 hash: that simulator's own, seeded with each
// switch's node id. The picks of a whole path are made once per flow at its sender and
// carried in the packet as a path code (path_code): mixed-radix digits, one per hop with
// a choice, in hop order; each switch takes its digit (code % n) and passes on code / n.
// On a leaf-spine the code is the spine number. A flow's ACKs, NAKs and CNPs travel
// dst -> src with the same UDP source port: flow_hops(topology, seed, dst, src, qp) is
// their path.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/twin/fabric_graph.hpp"
#include "rocelab/fabric/twin/frames.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::fabric::twin {

// One switch on a flow's path: the device (run_records::devices index), the port the
// flow's packets enter on and the port they leave on.
struct hop {
  std::uint32_t device = 0;
  std::uint16_t ingress_port = 0;
  std::uint16_t egress_port = 0;
  friend bool operator==(const hop&, const hop&) = default;
};

namespace routing_detail {
// 64-bit finalizer (Stafford's Mix13 variant of MurmurHash3's fmix64): a stand-in for
// the switch's 5-tuple hash; any well-mixed hash spreads flows the same way on average.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace routing_detail

// The RoCEv2 UDP source port of the twin's QP `qp` (flow_record::qp, 1-based): IBTA
// annex A17.5.1.1 leaves the choice to the sender (it exists for ECMP entropy); the twin
// takes a hash of the QP number into the dynamic range 0xc000..0xffff.
[[nodiscard]] constexpr std::uint16_t udp_source_port(std::uint32_t qp, std::uint64_t seed) {
  const std::uint64_t id = qp - 1u;
  return static_cast<std::uint16_t>(0xc000u | (routing_detail::mix64(seed * 0x9e3779b97f4a7c15ull + id) & 0x3fff));
}

// ECMP over `n` next hops by the RoCEv2 5-tuple of hosts src -> dst with UDP source port
// `sport`: the index of the next hop (0..n-1).
[[nodiscard]] constexpr std::uint32_t ecmp_pick(std::uint32_t src, std::uint32_t dst, std::uint32_t sport,
                                                std::uint64_t seed, std::uint32_t n) {
  if (n <= 1) return 0;
  const std::uint64_t tuple = (static_cast<std::uint64_t>(src) << 40) ^ (static_cast<std::uint64_t>(dst) << 16) ^
                              sport ^ (static_cast<std::uint64_t>(roce_v2_udp_port) << 56) ^ (17ull << 48);
  return static_cast<std::uint32_t>(routing_detail::mix64(tuple ^ routing_detail::mix64(seed)) % n);
}

// The HPCC ns-3 simulator's address of node `id` (third.cc node_id_to_ip): 11.0.x.1.
[[nodiscard]] constexpr std::uint32_t hpcc_ns3_node_ip(std::uint32_t id) {
  return 0x0b000001u + (id / 256) * 0x00010000u + (id % 256) * 0x00000100u;
}

// That simulator's SwitchNode::EcmpHash: MurmurHash3 (x86, 32-bit) of the 12 bytes
// sip, dip, sport | dport << 16 (three little-endian words), seeded with the switch's
// node id. Reproduced so a compat run picks the uplinks ns-3 picks.
[[nodiscard]] constexpr std::uint32_t hpcc_ns3_ecmp_hash(std::uint32_t sip, std::uint32_t dip, std::uint16_t sport,
                                                         std::uint16_t dport, std::uint32_t seed) {
  const std::uint32_t words[3] = {sip, dip, static_cast<std::uint32_t>(sport) | (static_cast<std::uint32_t>(dport) << 16)};
  std::uint32_t h = seed;
  for (std::uint32_t k : words) {
    k *= 0xcc9e2d51u;
    k = (k << 15) | (k >> 17);
    k *= 0x1b873593u;
    h ^= k;
    h = (h << 13) | (h >> 19);
    h += (h << 2) + 0xe6546b64u;
  }
  h ^= 12u;
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

// A flow's identity as the switches' ECMP hashes see it: hosts src -> dst, QP `qp`
// (flow_record::qp, 1-based), UDP ports when the workload gave them
// (message::udp_sport/udp_dport), else 0 for the twin's own.
struct flow_key {
  std::uint32_t src = 0, dst = 0, qp = 1;
  std::uint16_t sport = 0, dport = 0;
};

// Shortest-path tables over a fabric_graph and the ECMP picks on them. Immutable once
// built; share it (shared_ptr) rather than rebuild it: building costs one breadth-first
// search per attachment switch.
class fabric_routes {
 public:
  // A path code has at most this many values (10 bits in the twin's packets): the product
  // of the choices along any path. Every fat-tree the twin builds (k <= 62) fits.
  static constexpr std::uint32_t max_path_codes = 1024;
  // The most equal-cost next hops one switch may have (adaptive routing's load table).
  static constexpr std::uint32_t max_next_hops = 256;

  // Errors name the topology (a switch that cannot reach another, too many paths).
  [[nodiscard]] static result<std::shared_ptr<const fabric_routes>> create(const topology_config& t);

  [[nodiscard]] const fabric_graph& graph() const { return graph_; }
  [[nodiscard]] std::uint32_t switches() const { return graph_.switches(); }
  [[nodiscard]] std::uint32_t hosts() const { return graph_.hosts(); }
  [[nodiscard]] std::uint32_t host_device(std::uint32_t h) const { return graph_.host_device(h); }
  [[nodiscard]] std::string device_name(std::uint32_t device) const { return graph_.device_name(device); }

  // The equal-cost egress ports of switch `sw` toward host `dst`, in pick order (one: the
  // host's own port when sw is the switch dst hangs off).
  [[nodiscard]] std::span<const std::uint16_t> next_ports(std::uint32_t sw, std::uint32_t dst) const {
    const attachment& a = host_[dst];
    if (a.sw == sw) return {&a.port, 1};
    const std::uint32_t e = table_[static_cast<std::size_t>(sw) * attach_switches_ + a.index];
    return {ports_.data() + (e >> 9), (e & 511u) + 1};
  }

  // The port switch `sw` forwards a packet for host `dst` on, taking its digit of the path
  // code (code %= n at a choice of n, code /= n passed on). Every packet at every switch
  // asks.
  [[nodiscard]] std::uint16_t egress_port(std::uint32_t sw, std::uint32_t dst, std::uint32_t& code) const {
    const std::span<const std::uint16_t> p = next_ports(sw, dst);
    if (p.size() == 1) return p[0];
    const auto n = static_cast<std::uint32_t>(p.size());
    const std::uint32_t c = code % n;
    code /= n;
    return p[c];
  }

  // The ECMP path code of flow `f` in a run seeded `seed` (twin_config::seed): every
  // switch's pick on its way, hashed per switch.
  [[nodiscard]] std::uint32_t path_code(const flow_key& f, std::uint64_t seed) const;

  // The switches a packet from host src to host dst with path code `code` crosses, the
  // sender's switch first. Appends to `out` (cleared first).
  void hops(std::uint32_t src, std::uint32_t dst, std::uint32_t code, std::vector<hop>& out) const;

  // The switch's ECMP pick among `n` next hops for flow `f` (0..n-1).
  [[nodiscard]] std::uint32_t ecmp_pick_at(std::uint32_t sw, const flow_key& f, std::uint64_t seed,
                                           std::uint32_t n) const;

 private:
  struct attachment {
    std::uint32_t sw = 0;     // the switch the host hangs off
    std::uint32_t index = 0;  // that switch's number among attachment switches
    std::uint16_t port = 0;   // its port facing the host
  };

  explicit fabric_routes(fabric_graph g, const topology_config& t);
  status compute();

  fabric_graph graph_;
  topology_config::ecmp_kind ecmp_;
  std::vector<std::uint32_t> ecmp_seeds_;
  std::vector<attachment> host_;
  std::uint32_t attach_switches_ = 0;
  // Per (switch, attachment switch): (offset into ports_) << 9 | (next hops - 1).
  std::vector<std::uint32_t> table_;
  std::vector<std::uint16_t> ports_;  // next-hop port lists, each stored once
};

// The hops of the data packets of flow (src, dst, qp) in a twin run of `topology` with
// `seed` (twin_config::seed); qp is flow_record::qp; sport/dport the message's
// udp_sport/udp_dport (0 unless the workload set them). For its ACKs/CNPs swap src and
// dst (and sport and dport). Builds the routes for this one call: callers with many flows
// build a fabric_routes once. Empty when the topology is invalid.
[[nodiscard]] std::vector<hop> flow_hops(const topology_config& topology, std::uint64_t seed, std::uint32_t src,
                                         std::uint32_t dst, std::uint32_t qp, std::uint16_t sport = 0,
                                         std::uint16_t dport = 0);

}  // namespace rocelab::fabric::twin

#pragma once
// The twin's routing, as pure functions of the topology: which device and port every
// switch a flow crosses forwards it on. The engine forwards packets with exactly these
// functions, so a report that attributes pauses per hop (a flow met a paused egress port)
// sees the path the twin's packets took.
//
// Device indexes are those of run_records::devices in a twin run: the switches first
// (single switch: sw0; leaf-spine: leaf0..leaf(L-1), then spine0..spine(S-1)), then the
// hosts h1..hN. Switch ports:
// - single switch: port p faces host p;
// - leaf l: ports 0..H-1 face its hosts l*H .. l*H+H-1 (H = hosts / leaves), port H+s the
//   uplink to spine s;
// - spine s: port l faces leaf l.
// Leaf-spine traffic between leaves takes the uplink the ECMP hash of the RoCEv2
// 5-tuple picks (src IP, dst IP, UDP source port, 4791, UDP); the spine and the far leaf
// have one way on. A flow's ACKs, NAKs and CNPs travel dst -> src with the same UDP
// source port: flow_hops(topology, seed, dst, src, qp) is their path.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

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

// The shape of a topology: counts and device indexes. Cheap to build; copy freely.
class fabric_layout {
 public:
  enum class role : std::uint8_t { single, leaf, spine };

  explicit fabric_layout(const topology_config& t)
      : ecmp_(t.ecmp),
        ecmp_seeds_(t.ecmp_seeds),
        leaf_spine_(t.type == topology_config::kind::leaf_spine),
        hosts_(t.hosts),
        leaves_(leaf_spine_ ? t.leaves : 0),
        spines_(leaf_spine_ ? t.spines : 0),
        hosts_per_leaf_(leaf_spine_ && t.leaves > 0 ? t.hosts / t.leaves : t.hosts),
        per_leaf_inverse_(((std::uint64_t{1} << 32) + std::max<std::uint32_t>(hosts_per_leaf_, 1) - 1) /
                          std::max<std::uint32_t>(hosts_per_leaf_, 1)) {}

  [[nodiscard]] bool leaf_spine() const { return leaf_spine_; }
  [[nodiscard]] std::uint32_t hosts() const { return hosts_; }
  [[nodiscard]] std::uint32_t leaves() const { return leaves_; }
  [[nodiscard]] std::uint32_t spines() const { return spines_; }
  [[nodiscard]] std::uint32_t hosts_per_leaf() const { return hosts_per_leaf_; }
  [[nodiscard]] std::uint32_t switches() const { return leaf_spine_ ? leaves_ + spines_ : 1; }
  [[nodiscard]] std::uint32_t host_device(std::uint32_t host) const { return switches() + host; }
  [[nodiscard]] std::uint32_t leaf_device(std::uint32_t leaf) const { return leaf; }
  [[nodiscard]] std::uint32_t spine_device(std::uint32_t spine) const { return leaves_ + spine; }
  [[nodiscard]] role role_of(std::uint32_t device) const {
    if (!leaf_spine_) return role::single;
    return device < leaves_ ? role::leaf : role::spine;
  }
  // Leaf or spine number of a switch device (0 for the single switch).
  [[nodiscard]] std::uint32_t index_of(std::uint32_t device) const {
    return role_of(device) == role::spine ? device - leaves_ : device;
  }
  [[nodiscard]] std::uint32_t leaf_of(std::uint32_t host) const { return leaf_spine_ ? leaf_number(host) : 0; }
  // Ports of switch `device`.
  [[nodiscard]] std::uint32_t ports_of(std::uint32_t device) const {
    switch (role_of(device)) {
      case role::single: return hosts_;
      case role::leaf: return hosts_per_leaf_ + spines_;
      case role::spine: return leaves_;
    }
    return 0;
  }
  // The port of the switch a host's link goes to.
  [[nodiscard]] std::uint16_t host_port(std::uint32_t host) const {
    return static_cast<std::uint16_t>(leaf_spine_ ? host - leaf_number(host) * hosts_per_leaf_ : host);
  }
  // The device name run_records::devices carries.
  [[nodiscard]] std::string device_name(std::uint32_t device) const {
    if (device >= switches()) return "h" + std::to_string(device - switches() + 1);
    switch (role_of(device)) {
      case role::single: return "sw0";
      case role::leaf: return "leaf" + std::to_string(device);
      case role::spine: return "spine" + std::to_string(device - leaves_);
    }
    return {};
  }

  // The egress port switch `device` forwards a packet for host `dst` on; `ecmp` is the
  // flow's uplink choice (ecmp_pick over spines()), used by a leaf for remote hosts.
  // Every packet at every switch asks, and whether a switch is a leaf, and a leaf the
  // destination's, change from packet to packet: the choice is made by selects rather
  // than branches.
  [[nodiscard]] std::uint16_t egress_port(std::uint32_t device, std::uint32_t dst, std::uint32_t ecmp) const {
    if (!leaf_spine_) return static_cast<std::uint16_t>(dst);
    const std::uint32_t leaf = leaf_number(dst);
    const std::uint32_t down = dst - leaf * hosts_per_leaf_, up = hosts_per_leaf_ + ecmp;
    // Masks, since the compiler keeps a branch for the ternary.
    const std::uint32_t local = 0u - static_cast<std::uint32_t>(leaf == device);
    const std::uint32_t at_leaf = up ^ ((up ^ down) & local);
    const std::uint32_t is_leaf = 0u - static_cast<std::uint32_t>(device < leaves_);
    return static_cast<std::uint16_t>(leaf ^ ((leaf ^ at_leaf) & is_leaf));
  }

  // The uplink choice (spine number) of packets src -> dst of QP `qp` (0 when there is
  // no choice). sport/dport: the packets' UDP ports when the workload gave them
  // (message::udp_sport/udp_dport), else 0 for the twin's own.
  [[nodiscard]] std::uint32_t ecmp_choice(std::uint32_t src, std::uint32_t dst, std::uint32_t qp, std::uint64_t seed,
                                          std::uint16_t sport = 0, std::uint16_t dport = 0) const {
    if (!leaf_spine_ || leaf_of(src) == leaf_of(dst)) return 0;
    if (ecmp_ == topology_config::ecmp_kind::hpcc_ns3) {
      // ns-3 hosts are nodes 0..N-1; the leaf's next hops toward a remote host are the
      // spines in the order its breadth-first route search met them (third.cc
      // CalculateRoute iterates a map keyed by node pointer), taken here as spine order.
      // Any order the same for every leaf only renames the spines: which flows share an
      // uplink or a spine's downlink is the hash's alone (checked against ns-3 with 16
      // flows leaf0 -> leaf1: the same 5 flows shared one spine in both).
      const std::uint32_t leaf = leaf_device(leaf_of(src));
      const std::uint32_t node_seed = leaf < ecmp_seeds_.size() ? ecmp_seeds_[leaf] : leaf;
      const std::uint32_t h = hpcc_ns3_ecmp_hash(hpcc_ns3_node_ip(src), hpcc_ns3_node_ip(dst), sport, dport, node_seed);
      return h % spines_;
    }
    if (sport == 0) sport = udp_source_port(qp, seed);
    return ecmp_pick(src, dst, sport, seed, spines_);
  }

  // The switches a packet from host src to host dst crosses, given its uplink choice.
  // Appends to `out` (cleared first); at most 3 hops.
  void hops(std::uint32_t src, std::uint32_t dst, std::uint32_t ecmp, std::vector<hop>& out) const {
    out.clear();
    if (!leaf_spine_) {
      out.push_back({0, host_port(src), egress_port(0, dst, ecmp)});
      return;
    }
    const std::uint32_t sl = leaf_of(src), dl = leaf_of(dst);
    if (sl == dl) {
      out.push_back({leaf_device(sl), host_port(src), egress_port(leaf_device(sl), dst, ecmp)});
      return;
    }
    const std::uint16_t up = egress_port(leaf_device(sl), dst, ecmp);
    const std::uint32_t spine = up - hosts_per_leaf_;
    out.push_back({leaf_device(sl), host_port(src), up});
    out.push_back({spine_device(spine), static_cast<std::uint16_t>(sl), egress_port(spine_device(spine), dst, ecmp)});
    out.push_back({leaf_device(dl), static_cast<std::uint16_t>(hosts_per_leaf_ + spine),
                   egress_port(leaf_device(dl), dst, ecmp)});
  }

 private:
  // host / hosts_per_leaf_ as a multiply (every hop of the twin routes, and a division
  // costs more than the rest of the route): with m = ceil(2^32 / d), (x m) >> 32 is
  // floor(x / d) for every x and d below 2^16 (Granlund & Montgomery 1994; the error
  // x (m d - 2^32) / 2^32 stays below 1), and hosts are at most 65535.
  [[nodiscard]] std::uint32_t leaf_number(std::uint32_t host) const {
    return static_cast<std::uint32_t>((static_cast<std::uint64_t>(host) * per_leaf_inverse_) >> 32);
  }

  topology_config::ecmp_kind ecmp_;
  std::vector<std::uint32_t> ecmp_seeds_;
  bool leaf_spine_;
  std::uint32_t hosts_, leaves_, spines_, hosts_per_leaf_;
  std::uint64_t per_leaf_inverse_;  // ceil(2^32 / hosts_per_leaf_)
};

// The hops of the data packets of flow (src, dst, qp) in a twin run of `topology` with
// `seed` (twin_config::seed); qp is flow_record::qp; sport/dport the message's
// udp_sport/udp_dport (0 unless the workload set them). For its ACKs/CNPs swap src and
// dst (and sport and dport).
[[nodiscard]] inline std::vector<hop> flow_hops(const topology_config& topology, std::uint64_t seed,
                                                std::uint32_t src, std::uint32_t dst, std::uint32_t qp,
                                                std::uint16_t sport = 0, std::uint16_t dport = 0) {
  const fabric_layout l(topology);
  std::vector<hop> out;
  l.hops(src, dst, l.ecmp_choice(src, dst, qp, seed, sport, dport), out);
  return out;
}

}  // namespace rocelab::fabric::twin

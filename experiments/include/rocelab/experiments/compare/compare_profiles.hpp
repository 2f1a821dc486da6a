#pragma once
// Switch profiles and the price of a fabric, for the decision report (compare.hpp).
//
// A profile file (examples/fabric-profiles/*.yaml) describes a switch class as a buyer
// sees it: link layer, port speed, radix, packet buffer, port-to-port latency, routing,
// and prices per switch port, per NIC/HCA and per optic. Every field is the user's to
// edit; the shipped values are seed figures (each file says where they come from).
//
// The cost of the topology a comparison simulates (topology_cost), from the spec:
// - switches: single_switch is one switch; leaf_spine is its leaves and spines. Each is
//   a box of the profile's radix: a link uses link_gbps / port_gbps of a port (200G on a
//   400G port is a breakout half; an 800G uplink takes two), and a switch whose links
//   need more than the radix is priced as as many boxes as it takes. A box costs
//   radix x price_per_port_usd (the profile's per-port price is the chassis over radix);
// - NICs: one per host, at the spec's link speed;
// - optics: optics_per_host_link per host link at the link speed, and two per leaf-spine
//   link (one each end) at the uplink speed;
// - prices per speed: at the profile's own port_gbps its nic_price_usd and
//   optic_price_usd (the user's quotes); at any other speed the seed table of the link
//   layer (seed_speed_prices) at the smallest listed speed that carries it. A speed above
//   the table is an error naming the speeds it lists.
#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/fabric/fabric_profile.hpp"

namespace rocelab::experiments {

struct fabric_profile_file {
  fabric::switch_profile sw;
  fabric::routing_mode routing = fabric::routing_mode::ecmp;
  double optics_per_host_link = 1;  // host links: one optic (the NIC end is a DAC/AOC or its own)
  // InfiniBand only: VL buffer per port (0: the switch buffer per port split over the VLs).
  std::int64_t ib_vl_buffer_bytes = 0;
  std::string path;  // the file it came from ("" for built-in defaults)
};

// Seed list prices (USD) of one link speed: a NIC/HCA port and one optic.
struct speed_prices {
  double gbps = 0;
  double nic_usd = 0;
  double optic_usd = 0;
};
// The named seed table of a link layer (Ethernet for roce and uec, InfiniBand
// EDR/HDR/NDR/XDR for infiniband), ascending by speed. Seed figures, as the profiles'.
[[nodiscard]] std::span<const speed_prices> seed_speed_prices(fabric::link_layer link);
// NIC and optic prices for links of `gbps` on this profile's fabric (rule above); the
// returned gbps is the speed priced. Errors: a speed above the table.
[[nodiscard]] result<speed_prices> prices_at(const fabric_profile_file& p, double gbps);

struct cluster_cost {
  std::uint32_t hosts = 0;
  std::string topology;                      // single_switch | leaf_spine
  std::uint32_t leaves = 0, spines = 0;      // leaf_spine
  std::uint32_t radix = 0;                   // ports of one box (the profile's)
  double port_gbps = 0;                      // the profile's port speed
  double link_gbps = 0, uplink_gbps = 0;     // host links; leaf-spine links (0: none)
  double ports_per_leaf = 0, ports_per_spine = 0;  // in the profile's ports (breakouts count a fraction)
  double switch_ports = 0;                   // ports in use, in the profile's ports
  double switches = 0;                       // boxes bought
  double optics = 0, uplink_optics = 0;      // all optics; of them on leaf-spine links
  speed_prices host_prices, uplink_prices;   // per-unit prices used, at the speeds priced
  double nic_usd = 0, switch_usd = 0, optics_usd = 0, total_usd = 0;
  double per_gpu_usd = 0;
};

// The cost of the topology `t` (a spec's, as the twin runs it) built of this profile's
// switches, NICs and optics. Errors: a topology without hosts, a leaf-spine without
// leaves or spines, a speed with no price (naming the profile).
[[nodiscard]] result<cluster_cost> topology_cost(const fabric_profile_file& p, const topology_spec& t);
// "leaf_spine: 2 leaves (12 of 64 x 400G ports each) + 4 spines (4 ports), 6 switches; NICs 400G $1800,
// optics 400G $800 host / 800G $1300 uplink" (the cost basis, for reports).
[[nodiscard]] std::string cost_basis_text(const cluster_cost& c);

// Reads a profile file; errors name file:line and the field.
[[nodiscard]] result<fabric_profile_file> load_fabric_profile(const std::string& path);
// The profile files a fabric name maps to by default, in `dir`
// (ib: infiniband-ndr.yaml, roce-tuned and roce-default: roce-shallow-buffer.yaml,
// roce-deep: roce-deep-buffer.yaml; any other name: <name>.yaml).
[[nodiscard]] std::string default_profile_file(const std::string& fabric);

}  // namespace rocelab::experiments

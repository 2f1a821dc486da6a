#pragma once
// Switch profiles and the price of a fabric, for the decision report (compare.hpp).
//
// A profile file (examples/fabric-profiles/*.yaml) describes a switch class as a buyer
// sees it: link layer, port speed, radix, packet buffer, port-to-port latency, routing,
// and prices per switch port, per NIC/HCA and per optic. Every field is the user's to
// edit; the shipped values are seed figures (each file says where they come from).
//
// Cost of a cluster of `hosts` hosts (one NIC per GPU) on a folded Clos of this switch:
// t tiers, the fewest that reach `hosts` with radix R (1: hosts <= R; 2: <= R^2/2; 3:
// <= R^3/4, non-blocking), leaves oversubscribed by `os` (hosts / os uplink bandwidth):
//   switch ports   = hosts + 2 (t - 1) hosts / os
//   switches       = ceil(switch ports / R)
//   optics         = hosts x optics_per_host_link + 2 x (t - 1) hosts / os
//   total          = hosts x NIC + switch ports x port price + optics x optic price
// Switch port prices are chassis prices divided by radix, so they carry the switch.

#include <cstdint>
#include <map>
#include <string>

#include "rocelab/common/result.hpp"
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

struct cluster_cost {
  std::uint32_t hosts = 0;
  std::uint32_t tiers = 0;
  double switch_ports = 0, switches = 0, optics = 0;
  double nic_usd = 0, switch_usd = 0, optics_usd = 0, total_usd = 0;
  double per_gpu_usd = 0;
};

[[nodiscard]] cluster_cost fabric_cost(const fabric_profile_file& p, std::uint32_t hosts, double oversubscription);

// Reads a profile file; errors name file:line and the field.
[[nodiscard]] result<fabric_profile_file> load_fabric_profile(const std::string& path);
// The profile files a fabric name maps to by default, in `dir`
// (ib: infiniband-ndr.yaml, roce-tuned and roce-default: roce-shallow-buffer.yaml,
// roce-deep: roce-deep-buffer.yaml; any other name: <name>.yaml).
[[nodiscard]] std::string default_profile_file(const std::string& fabric);

}  // namespace rocelab::experiments

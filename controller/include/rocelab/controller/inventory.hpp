#pragma once
// The lab inventory (YAML): what a lab has, so a spec is checked against it before anything
// is touched. examples/inventory-virtual.yaml and examples/inventory-lab.yaml are commented
// instances.
//
//   name: rack1
//   switch: {name: sw1, driver: sonic | soft, ports: [Ethernet0, Ethernet4, ...]}
//   hosts:
//     - {name: h1, nic: {device: eth0, driver: mlx5 | soft, ip: 198.18.0.1}, switch_port: Ethernet0}
//   (nic.ip: the RoCE address, which selects the RoCE v2 GID; needed by backend lab)
//   mirror: {session: everflow0, destination_port: Ethernet48, direction: rx | tx | both}
//   capture: {host: cap1, device: eth1}
//
// Errors name the file, the line and the key, as spec errors do.

#include <cstdint>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::controller {

struct inventory_host {
  std::string name;
  std::string nic_device;
  std::string nic_driver;  // mlx5 | soft
  std::string nic_ip;      // RoCE address (IPv4); empty: not given
  std::string switch_port;
};

struct lab_inventory {
  std::string name;
  std::string switch_name;
  std::string switch_driver;  // sonic | soft
  std::vector<std::string> switch_ports;
  std::vector<inventory_host> hosts;
  std::string mirror_session;
  std::string mirror_destination_port;
  std::string mirror_direction = "both";
  std::string capture_host;
  std::string capture_device;
};

[[nodiscard]] result<lab_inventory> load_inventory(const std::string& yaml_text, const std::string& source_name);
[[nodiscard]] result<lab_inventory> load_inventory_file(const std::string& path);

// The spec fits the lab: a backend that runs on hosts (virtual, lab), a single-switch
// topology no larger than the hosts listed, every host's NIC on a switch port the switch
// has, a mirror session to an existing port that no host uses, and a capture host.
[[nodiscard]] status validate_against(const experiments::experiment_spec& spec, const lab_inventory& inv);

}  // namespace rocelab::controller

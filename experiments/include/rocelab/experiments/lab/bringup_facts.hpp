#pragma once
// Gathering the bring-up checklist's facts (experiments/bringup/bringup_check.hpp) where
// they live:
//   mlx5 host     a sysfs tree ("/sys" on the host, a recorded tree in tests): the netdev's
//                 mtu, its RDMA device (device/infiniband/), the RoCE v2 GID of its address
//                 (the GID table as traffic/verbs/gid_table.hpp reads it), its PHC
//                 (device/ptp/), the kernel's clocksource; PFC from `dcb pfc show dev IF`
//                 (iproute2) or `mlnx_qos -i IF` output; the NIC's trust state and DSCP
//                 map from `mlnx_qos -i IF` (MLNX_OFED), else `dcb -N app show dev IF`; the
//                 host clock's synchronisation (agents/clock/host_clock_reader.hpp: pmc,
//                 chronyc tracking, phc2sys, ntp_adjtime).
//   soft host     the virtual lab's host namespace: the interface's MTU and IPv4 address
//                 (ioctl), its timestamping PHC (ETHTOOL_GET_TS_INFO); the soft NIC itself
//                 is user space and takes the run's data DSCP, priority and PFC from each
//                 run; its hosts are namespaces of one machine, so they share one clock.
//   soft switch   the lab's switch through its control socket (soft_switch_driver).
//   SONiC switch  a config_db dump (`sonic-cfggen -d --print-data`) or the driver over SSH.
//   capture host  the capture namespace's interface MTU, or a sysfs tree's netdev mtu.
// Facts that cannot be had are left unknown with the reason in host_facts::notes, so the
// checklist says MISSING, never PASS. Needs root for namespaces (soft hosts).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rocelab/agents/clock/clock_source.hpp"
#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/experiments/bringup/bringup_check.hpp"
#include "rocelab/fabric/drivers/sonic_switch_driver.hpp"
#include "rocelab/fabric/lossless_class.hpp"

namespace rocelab::experiments {

struct sysfs_host_options {
  std::string host;
  std::string device;           // the netdev
  std::string driver = "mlx5";  // mlx5 | capture (netdev facts only)
  std::string ip;               // the RoCE address; empty: any IPv4-mapped RoCE v2 GID of the device
  std::string sysfs_root = "/sys";
  // `dcb pfc show dev IF` or `mlnx_qos -i IF` output; nullopt: run `dcb pfc show dev IF` here.
  std::optional<std::string> pfc_text;
  std::string pfc_source = "dcb pfc show";
  // `mlnx_qos -i IF` or `dcb app show dev IF` output; nullopt: run mlnx_qos here, else dcb.
  std::optional<std::string> trust_text;
  std::string trust_source = "mlnx_qos -i";
  // The host clock's synchronisation; nullopt: read this host's (read_host_clock()).
  std::optional<agents::clock::clock_source> clock;
};

// The facts of a host's netdev and RDMA device under a sysfs root. Never fails: what is
// not there is left unknown with the reason in notes.
[[nodiscard]] host_facts read_sysfs_host_facts(const sysfs_host_options& options);

// The facts of the virtual lab's host `host` (by name, h1..hN): its namespace's interface.
// The soft NIC pauses the run's data priority on PFC whenever the run asks for PFC, so
// pfc_priorities is {data_priority}, and it sends and classifies the run's data DSCP on
// the data priority, so its trust is dscp with that one entry (the sources say so).
[[nodiscard]] host_facts read_soft_host_facts(const agents::lab::lab_state& lab, const std::string& host,
                                              const fabric::lossless_class& lossless);

// The capture namespace's interface MTU.
[[nodiscard]] capture_facts read_soft_capture_facts(const agents::lab::lab_state& lab);

// The soft switch's settings of `ports` and its mirror session, through the control socket.
[[nodiscard]] switch_facts read_soft_switch_facts(const agents::lab::lab_state& lab, const std::string& name,
                                                  const std::vector<std::string>& ports);

// A SONiC switch's facts from a config_db dump. Pure. Errors: a table, key or field of the
// wrong JSON type (malformed_input naming it; fabric::drivers::check_config_db_shape).
[[nodiscard]] result<switch_facts> sonic_switch_facts(const nlohmann::json& config_db, const std::string& name,
                                                      const std::vector<std::string>& ports);
// The same, reading the running config_db over SSH (fabric/drivers/sonic_switch_driver.hpp).
[[nodiscard]] switch_facts read_sonic_switch_facts(fabric::drivers::sonic_options options, const std::string& name,
                                                   const std::vector<std::string>& ports);

}  // namespace rocelab::experiments

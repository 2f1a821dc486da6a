#pragma once
// The lossless RoCE class as one setting: the 802.1p priority and the DSCP that RoCE data
// is sent with, and the DSCP and priority of CNPs (mlx5 roce_np/cnp_dscp, cnp_802p_prio).
// Every side derives what it programs from it:
//   NIC (verbs):   GRH traffic_class = traffic_class_of(data_dscp), ah_attr.sl = data_priority
//   NIC (soft):    rc_nic_config data_dscp / data_priority
//   NIC (mlx5):    roce_np/cnp_dscp, roce_np/cnp_802p_prio
//   switch:        DSCP_TO_TC_MAP data_dscp -> data_priority and cnp_dscp -> cnp_priority
//                  (switch_class_entries), PFC (PORT_QOS_MAP pfc_enable) on data_priority
// The traffic class is the priority group and the egress queue (SONiC's default
// TC_TO_PRIORITY_GROUP_MAP and TC_TO_QUEUE_MAP are the identity on 3 and 4).
//
// lossless_mismatches() compares what each side reports against the class, before T0, so
// a run whose data would land in a lossy queue (SONiC's default DSCP_TO_TC_MAP sends DSCP
// 26 to TC 1) fails naming the mismatch instead of running without PFC, marks or CNPs.
// Pure: no I/O.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/dcqcn.hpp"

namespace rocelab::fabric {

struct lossless_class {
  std::uint8_t data_priority = 3;  // 802.1p, service level, traffic class, PG and queue of RoCE data
  std::uint8_t data_dscp = 26;
  std::uint8_t cnp_priority = 6;   // mlx5 cnp_802p_prio
  std::uint8_t cnp_dscp = 48;      // mlx5 cnp_dscp
  bool pfc = true;                 // PFC expected on data_priority
  friend bool operator==(const lossless_class&, const lossless_class&) = default;
};

// From the spec's nic.data_priority, nic.data_dscp, the DCQCN knobs and switch.pfc.enabled.
// Errors (invalid_argument) name the field out of range (priority 0..7, DSCP 0..63), or
// a CNP DSCP equal to the data DSCP on another priority (one DSCP cannot map to two TCs).
[[nodiscard]] result<lossless_class> make_lossless_class(std::uint32_t data_priority, std::uint32_t data_dscp,
                                                         const dcqcn_config& dcqcn, bool pfc_enabled);

// ECT(0) in the ECN bits: a ConnectX sets it on RoCE data when DCQCN is on; set here too so
// a switch can mark whatever the firmware does (106 for DSCP 26, as NVIDIA's RoCE guides).
inline constexpr std::uint8_t ecn_ect0 = 0b10;
// The IP TOS / GRH traffic class octet of `dscp`: DSCP in the upper six bits, ECT(0) below.
[[nodiscard]] constexpr std::uint8_t traffic_class_of(std::uint8_t dscp) noexcept {
  return static_cast<std::uint8_t>(((dscp & 63u) << 2) | ecn_ect0);
}

// The DSCP -> traffic class entries a switch must hold for the class: data_dscp ->
// data_priority and cnp_dscp -> cnp_priority.
[[nodiscard]] std::map<std::uint8_t, std::uint8_t> switch_class_entries(const lossless_class& c);

// What the sides report. A side left empty (no NIC value, no switch ports) is not checked.
struct lossless_observation {
  struct nic_side {
    std::string name;                          // "h1", "gpu01 mlx5_0"
    std::optional<std::uint8_t> data_dscp;     // what the transport sends data with
    std::optional<std::uint8_t> data_priority;
    std::optional<std::uint8_t> cnp_dscp;      // mlx5 roce_np/cnp_dscp
    std::optional<std::uint8_t> cnp_priority;  // mlx5 roce_np/cnp_802p_prio
  };
  struct switch_port {
    std::string port;
    std::map<std::uint8_t, std::uint8_t> dscp_to_tc;  // the DSCP_TO_TC map the port uses; absent DSCP: unmapped
    std::vector<std::uint8_t> pfc_priorities;         // PORT_QOS_MAP pfc_enable
  };
  std::vector<nic_side> nics;
  std::vector<switch_port> switch_ports;
};

// Each disagreement as a sentence naming the side, the item and both values, e.g.
// "switch port Ethernet0: DSCP_TO_TC_MAP maps DSCP 26 to TC 1, not to the data priority 3".
// Empty: they agree.
[[nodiscard]] std::vector<std::string> lossless_mismatches(const lossless_class& want, const lossless_observation& seen);

// lossless_mismatches as a status: invalid_argument ("the lossless class disagrees: ...";
// every mismatch, joined by "; ") or success.
[[nodiscard]] status check_lossless_class(const lossless_class& want, const lossless_observation& seen);

}  // namespace rocelab::fabric

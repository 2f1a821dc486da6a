#pragma once
// The hardware bring-up checklist (`rocelab lab check`): what a new lab must have before
// its first run, judged from facts gathered on its hosts, its switch and its capture host.
//
// Items, each a line with a verdict, the observed value and, on FAIL, the fix:
//   rdma_device     the host's RDMA device and the RoCE v2 GID of its RoCE address
//   active_mtu      the port's active MTU (the kernel's iboe_get_mtu: the largest RoCE MTU
//                   at least 96 bytes below the netdev MTU) against the path MTU
//   nic_pfc         PFC on the data priority at the NIC (dcb / mlnx_qos)
//   nic_trust       the NIC classifies received frames by DSCP and maps the data DSCP to
//                   the data priority (ConnectX trusts PCP by default: untagged RoCE then
//                   lands on priority 0, which has no PFC, and is dropped, not paused)
//   switch_pfc      PFC on the data priority at the hosts' switch ports (PORT_QOS_MAP)
//   dscp_map        DSCP_TO_TC: data DSCP -> data priority, CNP DSCP -> CNP priority
//   ecn             WRED/ECN marking on the lossless queue of the hosts' switch ports
//   priority_group  the data priority's TC lands in a lossless PG (TC_TO_PRIORITY_GROUP_MAP,
//                   BUFFER_PG) that PFC pauses (PFC_PRIORITY_TO_PRIORITY_GROUP_MAP)
//   pfc_queue       a PFC frame for the data priority pauses the queue its TC is sent on
//                   (MAP_PFC_PRIORITY_TO_QUEUE against TC_TO_QUEUE_MAP)
//   pfc_watchdog    no PFC watchdog that drops or forwards on the hosts' ports
//   mirror_session  the inventory's mirror session, to its destination port, from every
//                   host port, in the inventory's direction
//   capture_mtu     the capture device takes the largest mirrored RoCE frame whole (its
//                   netdev MTU, and the DPDK rx plan rocelab capture --dpdk makes for it)
//   clock_source    the host clock's synchronisation (ptp / ntp, its error bound) against
//                   the bound a run's start needs; the clocksource and the NIC's PHC
// Verdicts: pass, fail (with a fix), missing (the fact could not be gathered: never a
// pass), skip (the expectation does not ask for it, e.g. nic_pfc on a lossy spec).
//
// Pure: facts in, items out; no I/O. Gathering is bringup_facts.hpp (experiments/lab).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/drivers/switch_driver.hpp"
#include "rocelab/fabric/lossless_class.hpp"

namespace rocelab::experiments {

// What the lab is checked against: the spec's lossless class, path MTU and ECN, the
// inventory's mirror session, and the MTU a DPDK capture asks for.
struct bringup_expectation {
  fabric::lossless_class lossless;
  std::uint32_t path_mtu_bytes = 4096;  // RoCE path MTU: 256..4096
  bool ecn = true;                      // ECN marking expected on the lossless queue
  std::uint32_t dpdk_capture_mtu = 9216;  // rocelab capture --dpdk's capture MTU
};

// The inventory as the checklist sees it (controller::lab_inventory, without the YAML).
struct bringup_inventory {
  struct host {
    std::string name;
    std::string nic_device;
    std::string nic_driver;  // mlx5 | soft
    std::string nic_ip;      // the RoCE address; empty: any IPv4 of the device
    std::string switch_port;
  };
  std::string switch_name;
  std::string switch_driver;  // sonic | soft
  std::vector<host> hosts;
  std::string mirror_session;
  std::string mirror_destination_port;
  std::string mirror_direction = "both";  // rx | tx | both
  std::string capture_host;
  std::string capture_device;
  std::string virtual_lab;  // the virtual lab's name, for the fixes of soft parts; empty: "NAME"
};

// One host's NIC as its facts reader saw it. nullopt: not known (the reason in `notes`).
struct host_facts {
  std::string host;
  std::string device;      // the netdev
  std::string driver;      // mlx5 | soft
  std::string unavailable; // non-empty: nothing could be gathered, and why
  std::optional<std::uint32_t> netdev_mtu;
  std::optional<std::string> rdma_device;  // "mlx5_0"; the soft NIC: "soft RoCEv2 NIC"
  std::optional<std::string> roce_v2_gid;  // "::ffff:198.18.0.1"
  std::optional<std::uint32_t> roce_v2_gid_index;
  std::string gid_note;                    // why there is no GID (what the table has)
  std::optional<std::vector<std::uint8_t>> pfc_priorities;  // PFC-enabled priorities at the NIC
  std::string pfc_source;                  // "dcb pfc show", "soft NIC per run", ...
  std::optional<std::string> clocksource;  // the kernel's current_clocksource: "tsc"
  std::optional<std::string> phc;          // the NIC's PTP hardware clock ("ptp0"); "": none
  std::optional<std::string> nic_trust;    // what the NIC classifies received frames by: "dscp" | "pcp"
  std::optional<std::map<std::uint8_t, std::uint8_t>> dscp_to_priority;  // trust dscp: DSCP -> priority
  std::string trust_source;                // "mlnx_qos -i", "dcb app show", "soft NIC ..."
  // The host clock's synchronisation (agents/clock/clock_source.hpp): "ptp" | "ntp" |
  // "none", or "same-kernel" for a virtual lab's hosts (namespaces of one machine).
  std::optional<std::string> clock_sync;
  std::optional<std::int64_t> clock_bound_ns;  // its error bound; with ptp and ntp
  std::string clock_sync_detail;           // what was read (pmc, chronyc, ntp_adjtime)
  std::map<std::string, std::string> notes;  // per fact left unknown: why
  friend bool operator==(const host_facts&, const host_facts&) = default;
};

// host_facts as JSON (what `rocelab lab facts` prints, one file per host) and back.
// Errors name the field.
[[nodiscard]] std::string host_facts_json(const host_facts& f);
[[nodiscard]] result<host_facts> host_facts_from_json(std::string_view text, const std::string& source_name);

// One QoS map a SONiC port is bound to (PORT_QOS_MAP|<port> tc_to_pg_map, ...).
struct switch_qos_map {
  std::string name;                              // "AZURE"; empty: the port binds none
  std::map<std::uint8_t, std::uint8_t> entries;  // of that map; key and value 0..7
  friend bool operator==(const switch_qos_map&, const switch_qos_map&) = default;
};

// The PFC watchdog on one port (SONiC PFC_WD|<port>).
struct switch_pfc_watchdog {
  bool on = false;
  std::string action;             // drop | forward | alert
  std::uint32_t detection_ms = 0;
  friend bool operator==(const switch_pfc_watchdog&, const switch_pfc_watchdog&) = default;
};

struct switch_facts {
  std::string name;
  std::string driver;       // sonic | soft
  std::string unavailable;  // non-empty: the switch could not be read, and why
  std::optional<fabric::drivers::switch_settings> settings;  // of the hosts' ports
  std::vector<std::string> mirror_sessions;  // every session the switch has (SONiC MIRROR_SESSION keys)
  std::map<std::string, std::string> dscp_map_names;  // port -> the DSCP_TO_TC_MAP it is bound to (SONiC)
  // SONiC: port -> PORT_QOS_MAP binding ("tc_to_pg_map", "tc_to_queue_map",
  // "pfc_to_queue_map", "pfc_to_pg_map") -> the map. A binding is absent when the
  // config_db holds no table of its maps at all (not read), so it is never taken as empty.
  std::map<std::string, std::map<std::string, switch_qos_map>> qos_maps;
  // SONiC: port -> the PGs whose BUFFER_PG profile is lossless (has xoff, or NULL under the
  // dynamic buffer model); a port absent: BUFFER_PG not read.
  std::map<std::string, std::vector<std::uint8_t>> lossless_pgs;
  // SONiC: port -> its PFC watchdog; nullopt: not known (no PFC_WD table, and
  // DEVICE_METADATA default_pfcwd_status is not "disable"), and why in pfc_watchdog_note.
  std::optional<std::map<std::string, switch_pfc_watchdog>> pfc_watchdog;
  std::string pfc_watchdog_note;
  // SONiC: every mirror session's settings, in config_db order.
  std::vector<fabric::drivers::mirror_setting> mirror_settings;
  // SONiC: port -> what makes it routed or a member (INTERFACE|<port>|<prefix>,
  // VLAN_MEMBER|<vlan>|<port>, PORTCHANNEL_MEMBER|<lag>|<port>); a SPAN destination must
  // have none.
  std::map<std::string, std::vector<std::string>> port_memberships;
};

struct capture_facts {
  std::string host;
  std::string device;
  std::string unavailable;
  std::optional<std::uint32_t> netdev_mtu;
};

struct lab_facts {
  std::vector<host_facts> hosts;  // in inventory order; a host without facts: unavailable set
  switch_facts sw;
  capture_facts capture;
};

enum class check_verdict : std::uint8_t { pass, fail, missing, skip };
[[nodiscard]] const char* to_string(check_verdict v) noexcept;  // "PASS", "FAIL", "MISSING", "SKIP"

struct check_item {
  std::string item;    // rdma_device, active_mtu, nic_pfc, ...
  std::string target;  // "h1 eth0", "switch sw (p1, p2)", "capture cap eth0"
  check_verdict verdict = check_verdict::missing;
  std::string observed;
  std::string expected;
  std::string fix;     // on fail: the command or configuration to apply; on missing: how to find out
};

// The checklist, in item order: per host rdma_device, active_mtu, nic_pfc, nic_trust,
// clock_source; then the switch's switch_pfc, dscp_map, ecn, priority_group, pfc_queue,
// pfc_watchdog, mirror_session; then capture_mtu.
[[nodiscard]] std::vector<check_item> check_bringup(const bringup_expectation& want, const bringup_inventory& inv,
                                                    const lab_facts& facts);

// What a lab run needs of the switch before T0: the items switch_pfc, dscp_map, ecn,
// priority_group, pfc_queue and pfc_watchdog of check_bringup on `sw`. Success when each
// passed or was skipped; else unavailable naming each other item, what was observed and
// its fix (a MISSING fact is not ready either).
[[nodiscard]] status switch_ready_for_run(const bringup_expectation& want, const bringup_inventory& inv,
                                          const switch_facts& sw);

// True when every item passed or was skipped (a missing fact is not a pass).
[[nodiscard]] bool bringup_passed(const std::vector<check_item>& items) noexcept;

// One line per item: "PASS  active_mtu      h1 eth0: netdev MTU 4200, active MTU 4096 ..."
// with "      fix: ..." below a FAIL or MISSING; a last line counting each verdict.
[[nodiscard]] std::string bringup_text(const std::vector<check_item>& items);
// {"passed": bool, "items": [{item, target, verdict, observed, expected, fix}]}
[[nodiscard]] std::string bringup_json(const std::vector<check_item>& items);

// The port's active MTU for a netdev MTU, as the kernel's iboe_get_mtu (include/rdma/
// ib_addr.h) computes it: the largest of 4096, 2048, 1024, 512, 256 that fits in the
// netdev MTU less GRH 40 + UDP 8 + BTH 12 + XRC 4 + AtomicETH 28 + ICRC 4 = 96 bytes;
// 0 when none does.
[[nodiscard]] std::uint32_t roce_active_mtu(std::uint32_t netdev_mtu) noexcept;

// The PFC-enabled priorities in `dcb pfc show dev IF` output (iproute2's dcb:
// "pfc-cap 8 macsec-bypass off delay 0\nprio-pfc 0:off 1:off 2:off 3:on ...") or in
// `mlnx_qos -i IF` output ("PFC configuration:\n\tpriority 0 1 2 ...\n\tenabled 0 0 0 1 ...").
// Errors: malformed_input when neither form is there.
[[nodiscard]] result<std::vector<std::uint8_t>> parse_pfc_priorities(std::string_view text);

// The NIC's receive classification.
struct nic_trust_state {
  std::string trust;  // "dscp" | "pcp"
  std::map<std::uint8_t, std::uint8_t> dscp_to_priority;  // trust dscp: the map's entries
};

// The trust state in `mlnx_qos -i IF` output (MLNX_OFED mlnx-tools: "Priority trust state:
// dscp", then "dscp2prio mapping:" rows "\tprio:3 dscp:31,30,29,28,27,26,25,24,"), or in
// `dcb app show dev IF` output (iproute2: "dscp-prio AF31:3 CS6:6", names from rt_dsfield
// or numbers with -N). mlx5 trusts DSCP exactly while its APP table holds a DSCP entry
// (mlx5e_dcbnl_ieee_setapp / _delapp), so dcb output without dscp-prio is trust pcp.
// Errors: malformed_input naming what is neither.
[[nodiscard]] result<nic_trust_state> parse_nic_trust(std::string_view text);

}  // namespace rocelab::experiments

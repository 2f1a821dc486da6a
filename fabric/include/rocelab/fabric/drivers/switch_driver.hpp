#pragma once
// A switch's congestion settings and counters, behind one interface for the virtual
// lab's soft switch and for SONiC switches.
//
// Settings are given per port (by the switch's port name: "p1", "Ethernet8"):
//   ECN/WRED per egress queue (Kmin, Kmax in bytes; Pmax as a probability 0..1),
//   PFC enable per port and priority, the lossless priority group's buffer profile
//   (size = reserved bytes, xoff = headroom, xon, xon_offset, dynamic_th = log2 alpha),
//   one mirror session, and entries of the DSCP -> traffic class map.
// apply() snapshots what it is about to change before the first write, then writes;
// restore() puts the snapshot back and forgets it. A failed apply keeps its snapshot, so
// restore() afterwards undoes whatever part of it took effect.
//
// Counters use one vocabulary across drivers (the driver's own raw names are passed
// through as well where they have no equivalent):
//   port:  rx_packets, rx_bytes, tx_packets, tx_bytes, rx_drops, tx_drops
//   queue: tx_packets, tx_bytes, dropped_packets, ecn_marked_packets, watermark_bytes
//   pg:    rx_packets, dropped_packets, pfc_tx_frames, pfc_rx_frames,
//          shared_watermark_bytes, headroom_watermark_bytes
//
// Threading: one thread at a time per driver.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/fabric/lossless_class.hpp"

namespace rocelab::fabric::drivers {

struct ecn_setting {
  std::string port;
  std::uint8_t queue = 3;
  bool enabled = true;
  std::int64_t kmin_bytes = 0;
  std::int64_t kmax_bytes = 0;
  double pmax = 0.0;  // marking probability at Kmax, 0..1 (SONiC green_drop_probability / 100)
  friend bool operator==(const ecn_setting&, const ecn_setting&) = default;
};

struct pfc_setting {
  std::string port;
  std::vector<std::uint8_t> priorities;  // lossless priorities (SONiC PORT_QOS_MAP pfc_enable)
  friend bool operator==(const pfc_setting&, const pfc_setting&) = default;
};

struct pg_buffer_setting {
  std::string port;
  std::uint8_t priority_group = 3;
  std::int64_t size_bytes = 0;        // reserved
  std::int64_t xoff_bytes = 0;        // headroom after XOFF
  std::int64_t xon_bytes = 0;
  std::int64_t xon_offset_bytes = 0;
  int dynamic_th = 0;                 // alpha = 2^dynamic_th (-7..3)
  friend bool operator==(const pg_buffer_setting&, const pg_buffer_setting&) = default;
};

// The DSCP -> traffic class entries of the map a port classifies by (SONiC DSCP_TO_TC_MAP
// bound in PORT_QOS_MAP dscp_to_tc_map; the soft switch's dscp_to_tc). apply() sets the
// entries given and leaves the others; read_settings() gives the whole map.
struct dscp_map_setting {
  std::string port;
  std::map<std::uint8_t, std::uint8_t> dscp_to_tc;
  friend bool operator==(const dscp_map_setting&, const dscp_map_setting&) = default;
};

enum class mirror_direction : std::uint8_t { rx, tx, both };

struct mirror_setting {
  std::string name = "rocelab";
  bool enabled = true;
  std::vector<std::string> source_ports;  // empty: every port (the soft switch mirrors all)
  mirror_direction direction = mirror_direction::both;
  // SPAN: a local destination port; ERSPAN (when dst_ip is set): GRE to a collector.
  std::string destination_port;
  std::string src_ip, dst_ip;
  std::uint8_t dscp = 8;
  std::uint8_t ttl = 64;
  std::uint16_t gre_type = 0x88be;  // ERSPAN type II
  std::uint32_t truncate_bytes = 0; // 0: whole frames (soft switch only; SONiC has no knob)
  friend bool operator==(const mirror_setting&, const mirror_setting&) = default;
};

struct switch_settings {
  std::vector<ecn_setting> ecn;
  std::vector<pfc_setting> pfc;
  std::vector<pg_buffer_setting> buffers;
  std::optional<mirror_setting> mirror;
  std::vector<dscp_map_setting> dscp_maps;
  [[nodiscard]] bool empty() const noexcept {
    return ecn.empty() && pfc.empty() && buffers.empty() && !mirror && dscp_maps.empty();
  }
};

struct switch_counter {
  std::string port;
  std::string scope;  // "port" | "queue" | "pg" | "switch"
  int index = -1;     // queue or PG index; -1 for port and switch scope
  std::string name;
  std::uint64_t value = 0;
  // The switch does not provide this counter (a platform without WRED ECN counters):
  // unknown, and `value` means nothing. Never a zero.
  bool missing = false;
};

class switch_driver {
 public:
  switch_driver() = default;
  switch_driver(const switch_driver&) = delete;
  switch_driver& operator=(const switch_driver&) = delete;
  virtual ~switch_driver() = default;

  [[nodiscard]] virtual std::string_view kind() const noexcept = 0;  // "soft" | "sonic"
  // The current settings of `ports` (every queue and the lossless PGs) and the mirror.
  [[nodiscard]] virtual result<switch_settings> read_settings(const std::vector<std::string>& ports) = 0;
  [[nodiscard]] virtual status apply(const switch_settings& settings) = 0;
  [[nodiscard]] virtual status restore() = 0;
  [[nodiscard]] virtual bool has_snapshot() const noexcept = 0;
  [[nodiscard]] virtual result<std::vector<switch_counter>> read_counters() = 0;
};

// Checks ranges common to every driver (Kmin <= Kmax, Pmax in 0..1, priorities 0..7,
// dynamic_th -7..3, sizes non-negative, port names non-empty); errors name the entry.
[[nodiscard]] status validate(const switch_settings& settings);

// The switch settings of `ports` -- the DSCP map and PFC priorities each reports -- as the
// switch side of a lossless class check (fabric/lossless_class.hpp). A port with no PFC
// entry has none enabled; a port with no DSCP map, an empty one.
[[nodiscard]] std::vector<lossless_observation::switch_port> lossless_ports(const switch_settings& settings,
                                                                           const std::vector<std::string>& ports);

// The settings that put the lossless class on `ports`: the DSCP map entries
// (switch_class_entries) and, when the class has PFC, PFC on its data priority beside the
// lossless priorities the spec lists (`pfc_priorities`).
[[nodiscard]] switch_settings lossless_class_settings(const lossless_class& c, const std::vector<std::string>& ports,
                                                      const std::vector<std::uint8_t>& pfc_priorities);

// Counters as the run's counter_sample records of switch `device` at t_ns: the port by
// the run's index for it (`port_index`; ports it does not know are left out), the name
// with its scope, "queue3.ecn_marked_packets", "pg3.pfc_rx_frames", and port counters
// by name alone ("rx_packets"); switch-wide counters on port 0 as "switch.<name>".
// Missing counters give no sample (unknown is not 0); missing_counter_names lists them.
[[nodiscard]] std::vector<counter_sample> to_counter_samples(
    const std::vector<switch_counter>& counters, std::uint32_t device,
    const std::function<std::optional<std::uint32_t>(const std::string& port)>& port_index, std::int64_t t_ns);

// The counters marked missing, as "<port> queue3.ecn_marked_packets", for a run's notes.
[[nodiscard]] std::vector<std::string> missing_counter_names(const std::vector<switch_counter>& counters);

}  // namespace rocelab::fabric::drivers

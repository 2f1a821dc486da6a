#pragma once
// The soft switch's run-time settings by name: what the control API's get/set reach.
// Names follow the model's config and, where SONiC has a word for it, SONiC's
// (BUFFER_PROFILE dynamic_th/static_th/xon/xon_offset, WRED_PROFILE min/max thresholds,
// DSCP_TO_TC_MAP, PORT_QOS_MAP pfc_enable as lossless_priorities).
// Pure: no I/O; set_field changes a copy the caller then validates and applies.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/soft_switch/frame_ops.hpp"
#include "rocelab/fabric/switch_config.hpp"

namespace rocelab::fabric::soft_switch {

struct switch_settings {
  switch_config model;
  priority_map classes = priority_map::roce_default();
};

// global: one value; port: one per port; pg and queue: one per port x priority.
enum class field_scope : std::uint8_t { global, port, pg, queue };

struct field_description {
  std::string_view name;
  field_scope scope;
  std::string_view help;
};

[[nodiscard]] std::span<const field_description> settable_fields();

// `port` / `priority` -1 select all: the value is then an array (ports outermost).
// Errors name the field ("pg.dynamic_th: ...").
[[nodiscard]] result<nlohmann::json> get_field(const switch_settings& s, std::string_view name, int port,
                                               int priority);
[[nodiscard]] status set_field(switch_settings& s, std::string_view name, const nlohmann::json& value, int port,
                               int priority);

// The whole configuration, every field by name (what {"op":"config"} returns).
[[nodiscard]] nlohmann::json to_json(const switch_settings& s);
// The inverse of to_json (what a qualification reads back from {"op":"config"}); errors
// name the field.
[[nodiscard]] result<switch_settings> settings_from_json(const nlohmann::json& j);

}  // namespace rocelab::fabric::soft_switch

namespace rocelab::fabric::soft_switch {

// The reaction time the virtual lab's PFC headroom is sized for: from a frame entering a
// switch port's receive ring to the sender's NIC stopping after the PFC frame this frame
// caused. It is dominated by how long the switch loop is kept off the CPU (the frames
// waiting in its rings are the lab's "cable"); the NIC's share is one frame, since a
// soft NIC reads its ring before it sends. With the switch at SCHED_FIFO (rocelab switch
// --rt-priority) ring waits measured on a loaded 2-core VM stay under 1 ms; see
// bench/README.md for the figures. Headroom for it at 0.5 Gb/s is 125 KB per lossless PG.
inline constexpr std::int64_t lab_response_budget_ns = 2'000'000;

// Headroom of a lossless PG as a hardware switch's headroom calculator computes it
// (headroom_calculator: two MTUs, the PFC frame, PHY delays) with the peer response time
// replaced by `response_ns` of the soft path, in bytes of whole cells of `cell_bytes`.
[[nodiscard]] std::int64_t lab_headroom_bytes(std::int64_t rate_bps, std::int64_t mtu_bytes, std::int64_t response_ns,
                                              std::int64_t cell_bytes = 256);

// The virtual lab's starting point, SONiC-like: priority 3 lossless (PFC, XOFF at the PG's
// dynamic threshold alpha = 1, headroom lab_headroom_bytes for `response_ns` but at most
// half the buffer over all ports (check pg.headroom_bytes against lab_headroom_bytes to
// see whether the budget is covered), XON 2 MTUs lower), its egress queue unlimited (lossless traffic is never dropped at egress, as
// SONiC's lossless egress profile) with ECN from buffer/32 to buffer/8 at pmax 0.2; lossy
// queues dynamic alpha = 1; 256-byte cells.
[[nodiscard]] switch_settings lab_default_settings(std::size_t ports, std::int64_t rate_bps, std::int64_t buffer_bytes,
                                                   std::int64_t mtu_bytes,
                                                   std::int64_t response_ns = lab_response_budget_ns);

}  // namespace rocelab::fabric::soft_switch

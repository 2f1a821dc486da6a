#pragma once
// A mirror session's settings and the copy it sends to the mirror port: the frame as
// seen at ingress or egress, optionally truncated, optionally ERSPAN-encapsulated
// (draft-foschiano-erspan-03, type II or III over GRE/IPv4), as SONiC "mirror_session
// erspan" and Broadcom mirror-to-port sessions produce. Pure; no allocation.

#include <array>
#include <cstdint>
#include <span>

#include "rocelab/fabric/soft_switch/control_api.hpp"
#include "rocelab/fabric/soft_switch/frame_ops.hpp"

namespace rocelab::fabric::soft_switch {

struct mirror_settings {
  bool enabled = false;
  mirror_direction direction = mirror_direction::both;
  std::uint32_t truncate_bytes = 0;  // 0: the whole frame
  std::uint8_t erspan_type = 0;      // 0: plain copy; 2 or 3: ERSPAN over GRE/IPv4
  std::uint16_t session_id = 1;
  // Also mirror the PFC frames the switch itself sends (as egress copies of the port they
  // leave). A hardware switch generates PFC in the MAC, below its mirror engine, so its
  // captures never show them; the lab offers them so a capture shows when and where the
  // switch paused its senders. Not subject to the direction: they exist only at egress.
  bool pfc_tx = false;
  // Also an ingress copy of every RoCEv2 packet that begins a message (SEND or WRITE
  // FIRST or ONLY, READ request, atomic; build_arrival_copy), whatever the direction, as a
  // hardware switch's ACL-triggered ingress mirror gives (SONiC MIRROR_INGRESS_ACTION): a
  // capture's witness of when each sender's messages reached the switch. One copy per
  // message, so it costs the switch little where mirroring every ingress frame of an
  // incast would cost it more than the forwarding.
  bool arrivals = false;
  // ERSPAN outer headers: from the mirror port to the collector (the capture host).
  mac_address src_mac{};
  mac_address dst_mac{};
  std::array<std::uint8_t, 4> src_ip{198, 18, 1, 254};
  std::array<std::uint8_t, 4> dst_ip{198, 18, 1, 1};
};

struct mirror_context {
  std::uint16_t port = 0;  // switch port index the frame was seen on
  bool egress = false;
  std::uint8_t tc = 0;
  std::int64_t now_ns = 0;
  std::uint32_t sequence = 0;  // GRE sequence number (types II, III)
};

// How much of a frame an arrival copy keeps: every header up to the RETH and the VLAN
// tags ahead of them.
inline constexpr std::uint32_t arrival_copy_bytes = 128;

// Writes the arrival copy of `frame` into `out` and returns its length (0: `out` too
// small): ERSPAN type III on captures::arrivals_session, ingress, granularity 100 ns,
// the timestamp `arrived_realtime_ns` (when the frame reached the switch, CLOCK_REALTIME),
// the frame cut to arrival_copy_bytes. ERSPAN outer headers as `m` has them.
[[nodiscard]] std::size_t build_arrival_copy(const mirror_settings& m, std::uint16_t port, std::uint8_t tc,
                                             std::int64_t arrived_realtime_ns, std::uint32_t sequence,
                                             std::span<const std::uint8_t> frame,
                                             std::span<std::uint8_t> out) noexcept;

// Writes the mirror copy of `frame` into `out` and returns its length (0: `out` too
// small). Without ERSPAN the copy is the (truncated) frame itself. `truncated` is set
// when truncate_bytes cut the frame. `frame` must not overlap `out`.
[[nodiscard]] std::size_t build_mirror_copy(const mirror_settings& m, const mirror_context& ctx,
                                            std::span<const std::uint8_t> frame, std::span<std::uint8_t> out,
                                            bool& truncated) noexcept;

}  // namespace rocelab::fabric::soft_switch

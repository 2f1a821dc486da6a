#pragma once
// PFC headroom: how many bytes can still arrive on a lossless priority group after the
// switch decides to send XOFF, so that headroom of at least this size never drops.
//
// Worst case, for a sender that transmits back to back at line rate (all intervals at
// the link's rate_bps; see headroom_calculator.cpp for the derivation):
//   bytes = 2 x cable_delay x rate / 8          data on the wire toward us when XOFF is
//                                              decided, plus what the sender keeps
//                                              sending while the PFC frame flies back
//         + mtu                                our own port may be sending a frame; the
//                                              PFC frame cannot preempt it
//         + pfc_frame_bytes (64 + wire overhead) the PFC frame's own serialization
//         + peer_response bytes                802.1Qbb clause 36.1.3.1 / 802.3 Annex 31D:
//                                              the peer may take this long to react
//         + mtu                                the peer finishes the frame it started
//         + 2 x phy_delay x rate / 8           PHY/MAC latency in each direction
// This is the sum laid out in IEEE 802.1Qbb-2011 Annex N ("delay model") and the vendor
// guides that follow it (Cisco "Priority Flow Control: Build Reliable Layer 2
// Infrastructure", NVIDIA/Mellanox "Lossless RoCE buffer configuration"): two cable
// delays, two MTUs and the response time. Propagation is 5 ns/m (light in fibre or
// copper at about 2/3 c).
// Pure arithmetic; no errors (zero or negative inputs count as zero).

#include <cstdint>

namespace rocelab::fabric {

inline constexpr double propagation_ns_per_m = 5.0;
inline constexpr std::int64_t pfc_frame_bytes = 64;     // 802.1Qbb MAC control frame, minimum size
inline constexpr std::int64_t pause_quantum_bits = 512; // 802.3 Annex 31B: one quantum = 512 bit times

struct headroom_inputs {
  std::int64_t rate_bps = 100'000'000'000;
  double cable_m = 0.0;
  std::int64_t mtu_bytes = 1500 + 18;      // largest frame (payload MTU plus Ethernet header and FCS)
  std::int64_t peer_response_quanta = 0;   // the peer's PFC response time in pause quanta
  std::int64_t phy_delay_ns = 0;           // PHY+MAC latency per direction
  std::int64_t wire_overhead_bytes = 20;   // preamble+SFD (8) and IFG (12) per frame
};

struct headroom_breakdown {
  std::int64_t cable_bytes = 0;     // 2 x cable delay x rate
  std::int64_t mtu_bytes = 0;       // 2 x (mtu + overhead)
  std::int64_t pfc_frame = 0;       // the PFC frame itself
  std::int64_t response_bytes = 0;  // peer response time
  std::int64_t phy_bytes = 0;       // 2 x PHY delay x rate
  std::int64_t total_bytes = 0;
};

[[nodiscard]] headroom_breakdown headroom_calculator(const headroom_inputs& in);

// Headroom in cells of cell_bytes for MTU-sized frames: each frame of mtu bytes rounds
// up to whole cells, so the byte count is scaled by ceil(mtu/cell)*cell/mtu.
[[nodiscard]] std::int64_t headroom_cells(const headroom_inputs& in, std::int64_t cell_bytes);

}  // namespace rocelab::fabric

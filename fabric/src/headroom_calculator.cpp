#include "rocelab/fabric/headroom.hpp"

#include <algorithm>
#include <cmath>

namespace rocelab::fabric {
namespace {

std::int64_t bytes_in(double ns, std::int64_t rate_bps) {
  // Rounded up: headroom must cover the partial byte too.
  return static_cast<std::int64_t>(std::ceil(ns * static_cast<double>(rate_bps) / 8e9 - 1e-9));
}

}  // namespace

// Derivation (timeline from the moment t0 at which the switch admits the packet that
// crosses XOFF; store-and-forward, so t0 is a frame boundary on the wire):
//  - Bytes that can still arrive are those the sender put on the wire after t0 - D,
//    D the one-way cable (+PHY) delay, until it stops.
//  - The switch's PFC frame waits for the frame the port is sending (<= one MTU), takes
//    its own serialization, flies D, the peer needs its response time, then the peer
//    completes the frame it is sending (<= one MTU).
//  - So the sender keeps transmitting for 2D + MTU + PFC + response + MTU of line time.
headroom_breakdown headroom_calculator(const headroom_inputs& in) {
  headroom_breakdown b;
  const std::int64_t rate = std::max<std::int64_t>(in.rate_bps, 0);
  const double cable_ns = std::max(in.cable_m, 0.0) * propagation_ns_per_m;
  b.cable_bytes = bytes_in(2.0 * cable_ns, rate);
  b.mtu_bytes = 2 * (std::max<std::int64_t>(in.mtu_bytes, 0) + std::max<std::int64_t>(in.wire_overhead_bytes, 0));
  b.pfc_frame = pfc_frame_bytes + std::max<std::int64_t>(in.wire_overhead_bytes, 0);
  // A quantum is 512 bit times, i.e. 64 bytes at any speed.
  b.response_bytes = std::max<std::int64_t>(in.peer_response_quanta, 0) * (pause_quantum_bits / 8);
  b.phy_bytes = bytes_in(2.0 * static_cast<double>(std::max<std::int64_t>(in.phy_delay_ns, 0)), rate);
  b.total_bytes = b.cable_bytes + b.mtu_bytes + b.pfc_frame + b.response_bytes + b.phy_bytes;
  return b;
}

std::int64_t headroom_cells(const headroom_inputs& in, std::int64_t cell_bytes) {
  const std::int64_t bytes = headroom_calculator(in).total_bytes;
  if (cell_bytes <= 1) return bytes;
  const std::int64_t mtu = std::max<std::int64_t>(in.mtu_bytes, 1);
  const std::int64_t cells_per_mtu = (mtu + cell_bytes - 1) / cell_bytes;
  // Frames needed to carry `bytes`, each rounded up to whole cells.
  const std::int64_t frames = (bytes + mtu - 1) / mtu;
  return frames * cells_per_mtu;
}

}  // namespace rocelab::fabric

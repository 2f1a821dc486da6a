#pragma once
// The packet as the fabric model sees it: a small descriptor, never the payload.
//
// The driver (twin, soft switch, soft NIC) keeps the bytes in its own storage and puts
// an index or handle in `cookie`; the model copies descriptors by value, stores them in
// preallocated queues and hands them back on dequeue, possibly with `ecn` rewritten to
// CE. Nothing here owns memory.

#include <cstdint>
#include <type_traits>

namespace rocelab::fabric {

inline constexpr int num_priorities = 8;  // 802.1Q PCP values, 802.1Qbb classes

// The two ECN bits of the IP header (RFC 3168 section 5).
enum class ecn_codepoint : std::uint8_t { not_ect = 0, ect1 = 1, ect0 = 2, ce = 3 };

[[nodiscard]] constexpr bool is_ect(ecn_codepoint e) noexcept {
  return static_cast<unsigned>(e) - 1u < 2u;  // ect1 or ect0, without a branch
}

// Packet trimming (UEC 1.0 packet trimming; NDP, Handley et al., SIGCOMM 2017): a switch
// may cut a `trimmable` packet to its header instead of queueing it past a threshold or
// dropping it; the cut packet carries `trimmed` so its receiver can ask for a resend at
// once. Only a transport that understands trimmed headers sets `trimmable`.
inline constexpr std::uint8_t packet_flag_trimmable = 1u << 0;
inline constexpr std::uint8_t packet_flag_trimmed = 1u << 1;

struct packet {
  std::uint64_t cookie = 0;      // the driver's handle to its own packet storage
  std::uint32_t flow_id = 0;     // opaque to the switch; DCQCN state is keyed by it elsewhere
  std::uint32_t size_bytes = 0;  // L2 frame without preamble and inter-frame gap
  std::uint16_t ingress_port = 0;
  std::uint16_t egress_port = 0;
  std::uint8_t priority = 0;     // 0..7: selects ingress priority group and egress queue
  ecn_codepoint ecn = ecn_codepoint::not_ect;
  std::uint8_t flags = 0;        // packet_flag_* bits; 0 for RoCE and InfiniBand packets
};
static_assert(std::is_trivially_copyable_v<packet>);
static_assert(sizeof(packet) == 24, "the descriptor is copied on every hop; keep it small");

}  // namespace rocelab::fabric

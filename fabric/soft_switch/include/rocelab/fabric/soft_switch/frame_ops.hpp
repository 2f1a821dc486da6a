#pragma once
// What the soft switch reads from and writes into a frame: the headers it forwards and
// classifies on, the ECN rewrite and the priority map. Pure functions over bytes, no
// allocation, safe on truncated or malformed input (which just classifies as "other").

#include <array>
#include <cstdint>
#include <span>

#include "rocelab/captures/wire/ethernet.hpp"
#include "rocelab/fabric/packet.hpp"

namespace rocelab::fabric::soft_switch {

using mac_address = captures::wire::mac_address;

struct frame_info {
  bool valid = false;  // at least a full Ethernet header
  mac_address dst{};
  mac_address src{};
  std::uint16_t ethertype = 0;  // after VLAN tags
  std::uint8_t vlan_count = 0;
  std::uint8_t pcp = 0;         // outermost tag
  // IP (ip_version 0 when not IP or cut short).
  std::uint8_t ip_version = 0;
  std::uint16_t ip_offset = 0;
  std::uint8_t dscp = 0;
  ecn_codepoint ecn = ecn_codepoint::not_ect;
  std::array<std::uint8_t, 4> ipv4_src{};
  // RoCEv2 (UDP port 4791 with a full BTH).
  bool is_roce = false;
  std::uint32_t dest_qp = 0;
  std::uint32_t psn = 0;
  std::uint8_t bth_opcode = 0;
  // MAC control (EtherType 0x8808, untagged as 802.3 annex 31B requires).
  bool is_pfc = false;    // 802.1Qbb opcode 0x0101
  bool is_pause = false;  // 802.3x opcode 0x0001
  std::uint8_t pfc_class_enable = 0;  // low octet; the high octet is reserved
  std::array<std::uint16_t, num_priorities> pfc_quanta{};
  std::uint16_t pause_quanta = 0;
};

// Parses `frame` (starting at the destination MAC). Never reads past its end.
void parse_frame(std::span<const std::uint8_t> frame, frame_info& out) noexcept;

// Sets the IP ECN field to CE in place. IPv4: the TOS byte, with the header checksum
// updated incrementally (RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m')), so a header checksum
// that was valid stays valid and one that was not stays wrong the same way. IPv6: the
// low two bits of the traffic class (no header checksum; the UDP checksum's pseudo-header
// does not cover it). RoCEv2's ICRC masks the TOS/traffic class (IBTA annex A17.8), so
// the ICRC stays valid. Returns false (nothing written) when `info` has no IP header.
bool set_ce(std::span<std::uint8_t> frame, const frame_info& info) noexcept;

// The RFC 1624 update of a 16-bit one's complement checksum when one 16-bit word of the
// covered data changes from old_word to new_word.
[[nodiscard]] std::uint16_t checksum_update(std::uint16_t checksum, std::uint16_t old_word,
                                            std::uint16_t new_word) noexcept;

// Classification to a traffic class (= priority group and egress queue), as SONiC's
// DSCP_TO_TC_MAP and DOT1P_TO_TC_MAP tables do: tagged frames by PCP when trust_pcp,
// otherwise (and untagged IP) by DSCP; anything else goes to default_tc.
struct priority_map {
  std::array<std::uint8_t, 64> dscp_to_tc{};
  std::array<std::uint8_t, 8> pcp_to_tc{0, 1, 2, 3, 4, 5, 6, 7};
  bool trust_pcp = true;
  std::uint8_t default_tc = 0;

  // The lab's default: DSCP 24..31 (CS3 and AF31/32/33, so RoCE's usual 26) -> 3, the
  // lossless RoCE class of NVIDIA/Mellanox and SONiC RoCE deployments; 48 (CS6, mlx5's
  // default cnp_dscp) -> 6 for CNPs; everything else -> 0.
  [[nodiscard]] static priority_map roce_default() noexcept;
  [[nodiscard]] std::uint8_t classify(const frame_info& info) const noexcept;
};

}  // namespace rocelab::fabric::soft_switch

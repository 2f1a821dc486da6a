#pragma once
// Ethernet II header (IEEE 802.3 clause 3.2.6 with the EtherType interpretation of the
// length/type field) and the EtherTypes rocelab dissects. The FCS is not part of any
// struct: captures usually strip it and the builders never add it.

#include <array>
#include <cstddef>
#include <cstdint>

#include "rocelab/captures/wire/byte_order.hpp"

namespace rocelab::captures::wire {

using mac_address = std::array<std::uint8_t, 6>;

namespace ethertype {
inline constexpr std::uint16_t ipv4 = 0x0800;
inline constexpr std::uint16_t ipv6 = 0x86DD;
inline constexpr std::uint16_t vlan = 0x8100;          // 802.1Q C-tag
inline constexpr std::uint16_t qinq = 0x88A8;          // 802.1ad S-tag
inline constexpr std::uint16_t qinq_legacy = 0x9100;   // pre-802.1ad S-tag still seen on switches
inline constexpr std::uint16_t mac_control = 0x8808;   // 802.3 Annex 31B (PAUSE, PFC)
inline constexpr std::uint16_t roce_v1 = 0x8915;       // IBTA annex A16: GRH directly on Ethernet
inline constexpr std::uint16_t erspan_type2 = 0x88BE;  // also ERSPAN type I (GRE without S)
inline constexpr std::uint16_t erspan_type3 = 0x22EB;
inline constexpr std::uint16_t transparent_ethernet_bridging = 0x6558;  // RFC 1701: not ERSPAN

// Tag protocol identifiers that introduce an 802.1Q-format tag.
[[nodiscard]] constexpr bool is_vlan_tpid(std::uint16_t type) noexcept {
  return type == vlan || type == qinq || type == qinq_legacy;
}
}  // namespace ethertype

// Shortest frame on the wire without the FCS (802.3 minFrameSize 64 minus 4).
inline constexpr std::size_t min_frame_bytes = 60;

class ethernet_header {
 public:
  [[nodiscard]] constexpr mac_address dst() const noexcept { return dst_; }
  [[nodiscard]] constexpr mac_address src() const noexcept { return src_; }
  // The EtherType of what follows: a TPID when a VLAN tag follows.
  [[nodiscard]] constexpr std::uint16_t type() const noexcept { return type_.value(); }

  constexpr void set_dst(const mac_address& m) noexcept { dst_ = m; }
  constexpr void set_src(const mac_address& m) noexcept { src_ = m; }
  constexpr void set_type(std::uint16_t t) noexcept { type_.set(t); }

 private:
  mac_address dst_{};
  mac_address src_{};
  be16 type_{};
};
static_assert(sizeof(ethernet_header) == 14);

// Multicast (group) bit: the least significant bit of the first octet (802.3 3.2.3).
[[nodiscard]] constexpr bool is_multicast(const mac_address& m) noexcept { return (m[0] & 1) != 0; }

}  // namespace rocelab::captures::wire

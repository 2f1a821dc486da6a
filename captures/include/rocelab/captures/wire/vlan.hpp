#pragma once
// 802.1Q tag as it follows a TPID (0x8100, or 0x88A8 for an 802.1ad S-tag): the tag
// control information and the EtherType of what comes next. The TPID itself is the
// EtherType field of the preceding header, so walking a stack of tags is "read type; while
// it is a TPID, read a vlan_tag".
//
// TCI layout (802.1Q-2018 9.6): PCP (3 bits) | DEI (1 bit) | VID (12 bits).

#include <cstdint>

#include "rocelab/captures/wire/byte_order.hpp"

namespace rocelab::captures::wire {

class vlan_tag {
 public:
  [[nodiscard]] constexpr std::uint16_t tci() const noexcept { return tci_.value(); }
  [[nodiscard]] constexpr std::uint8_t pcp() const noexcept {
    return static_cast<std::uint8_t>(tci() >> 13);
  }
  [[nodiscard]] constexpr bool dei() const noexcept { return (tci() & 0x1000) != 0; }
  [[nodiscard]] constexpr std::uint16_t vid() const noexcept {
    return static_cast<std::uint16_t>(tci() & 0x0FFF);
  }
  [[nodiscard]] constexpr std::uint16_t type() const noexcept { return type_.value(); }

  // Values wider than the field are masked.
  constexpr void set(std::uint8_t pcp, bool dei, std::uint16_t vid) noexcept {
    tci_.set(static_cast<std::uint16_t>(((pcp & 0x7u) << 13) | (dei ? 0x1000u : 0u) | (vid & 0x0FFFu)));
  }
  constexpr void set_type(std::uint16_t t) noexcept { type_.set(t); }

 private:
  be16 tci_{};
  be16 type_{};
};
static_assert(sizeof(vlan_tag) == 4);

}  // namespace rocelab::captures::wire

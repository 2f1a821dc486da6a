#pragma once
// ERSPAN switch-mirror headers, carried in GRE (draft-foschiano-erspan-03).
//
// Type I:   GRE protocol 0x88BE, S bit clear, no ERSPAN header: the mirrored Ethernet
//           frame follows the 4-byte GRE header (section 4.1).
// Type II:  GRE protocol 0x88BE with a sequence number, then the 8-byte header below
//           (section 4.2), then the mirrored Ethernet frame.
// Type III: GRE protocol 0x22EB, the 12-byte header below (section 4.3), an optional
//           8-byte platform-specific subheader when O is set, then the mirrored frame
//           whose kind ft names (0 Ethernet, 2 IP; others reserved).

#include <cstdint>

#include "rocelab/captures/wire/byte_order.hpp"

namespace rocelab::captures::wire {

namespace erspan_frame_type {
inline constexpr std::uint8_t ethernet = 0;
inline constexpr std::uint8_t ip = 2;
}  // namespace erspan_frame_type

// Section 4.2: Ver(4)=1 | VLAN(12) | COS(3) | En(2) | T(1) | Session ID(10) |
// Reserved(12) | Index(20).
class erspan2_header {
 public:
  static constexpr std::uint8_t version_number = 1;

  [[nodiscard]] constexpr std::uint8_t version() const noexcept {
    return static_cast<std::uint8_t>(ver_vlan_.value() >> 12);
  }
  // VLAN of the mirrored frame as the switch saw it.
  [[nodiscard]] constexpr std::uint16_t vlan() const noexcept { return ver_vlan_.value() & 0x0FFF; }
  [[nodiscard]] constexpr std::uint8_t cos() const noexcept {
    return static_cast<std::uint8_t>(cos_en_t_session_.value() >> 13);
  }
  // Trunk encapsulation of the original frame: 0 none, 1 ISL, 2 802.1Q, 3 VLAN preserved.
  [[nodiscard]] constexpr std::uint8_t encapsulation() const noexcept {
    return (cos_en_t_session_.value() >> 11) & 0x3;
  }
  // Set when the frame was truncated to fit the mirror's MTU.
  [[nodiscard]] constexpr bool truncated() const noexcept { return (cos_en_t_session_.value() & 0x0400) != 0; }
  [[nodiscard]] constexpr std::uint16_t session_id() const noexcept {
    return cos_en_t_session_.value() & 0x03FF;
  }
  // Port index (direction and interface) on the source switch.
  [[nodiscard]] constexpr std::uint32_t index() const noexcept { return reserved_index_.value() & 0xFFFFF; }

  // Values wider than their fields are masked.
  constexpr void set(std::uint16_t vlan, std::uint8_t cos, std::uint8_t encapsulation, bool truncated,
                     std::uint16_t session_id, std::uint32_t index) noexcept {
    ver_vlan_.set(static_cast<std::uint16_t>((version_number << 12) | (vlan & 0x0FFF)));
    cos_en_t_session_.set(static_cast<std::uint16_t>(((cos & 0x7) << 13) | ((encapsulation & 0x3) << 11) |
                                                     (truncated ? 0x0400 : 0) | (session_id & 0x03FF)));
    reserved_index_.set(index & 0xFFFFF);
  }

 private:
  be16 ver_vlan_{};
  be16 cos_en_t_session_{};
  be32 reserved_index_{};
};
static_assert(sizeof(erspan2_header) == 8);

// Section 4.3: Ver(4)=2 | VLAN(12) | COS(3) | BSO(2) | T(1) | Session ID(10) |
// Timestamp(32) | SGT(16) | P(1) | FT(5) | Hw ID(6) | D(1) | Gra(2) | O(1).
class erspan3_header {
 public:
  static constexpr std::uint8_t version_number = 2;

  [[nodiscard]] constexpr std::uint8_t version() const noexcept {
    return static_cast<std::uint8_t>(ver_vlan_.value() >> 12);
  }
  [[nodiscard]] constexpr std::uint16_t vlan() const noexcept { return ver_vlan_.value() & 0x0FFF; }
  [[nodiscard]] constexpr std::uint8_t cos() const noexcept {
    return static_cast<std::uint8_t>(cos_bso_t_session_.value() >> 13);
  }
  [[nodiscard]] constexpr std::uint8_t bad_short_oversized() const noexcept {
    return (cos_bso_t_session_.value() >> 11) & 0x3;
  }
  [[nodiscard]] constexpr bool truncated() const noexcept { return (cos_bso_t_session_.value() & 0x0400) != 0; }
  [[nodiscard]] constexpr std::uint16_t session_id() const noexcept {
    return cos_bso_t_session_.value() & 0x03FF;
  }
  // In units of the granularity gra() names.
  [[nodiscard]] constexpr std::uint32_t timestamp() const noexcept { return timestamp_.value(); }
  [[nodiscard]] constexpr std::uint16_t security_group_tag() const noexcept { return sgt_.value(); }
  // The P bit of section 4.3, passed through uninterpreted.
  [[nodiscard]] constexpr bool p() const noexcept { return (flags_.value() & 0x8000) != 0; }
  [[nodiscard]] constexpr std::uint8_t frame_type() const noexcept { return (flags_.value() >> 10) & 0x1F; }
  [[nodiscard]] constexpr std::uint8_t hardware_id() const noexcept { return (flags_.value() >> 4) & 0x3F; }
  // Direction: false ingress, true egress.
  [[nodiscard]] constexpr bool direction() const noexcept { return (flags_.value() & 0x0008) != 0; }
  [[nodiscard]] constexpr std::uint8_t granularity() const noexcept { return (flags_.value() >> 1) & 0x3; }
  // O: an 8-byte platform-specific subheader follows.
  [[nodiscard]] constexpr bool has_platform_subheader() const noexcept { return (flags_.value() & 0x0001) != 0; }

  // Values wider than their fields are masked.
  constexpr void set(std::uint16_t vlan, std::uint8_t cos, bool truncated, std::uint16_t session_id) noexcept {
    ver_vlan_.set(static_cast<std::uint16_t>((version_number << 12) | (vlan & 0x0FFF)));
    cos_bso_t_session_.set(static_cast<std::uint16_t>(((cos & 0x7) << 13) | (truncated ? 0x0400 : 0) |
                                                      (session_id & 0x03FF)));
  }
  constexpr void set_timestamp(std::uint32_t v) noexcept { timestamp_.set(v); }
  constexpr void set_security_group_tag(std::uint16_t v) noexcept { sgt_.set(v); }
  constexpr void set_flags(std::uint8_t frame_type, std::uint8_t hardware_id, bool direction,
                           std::uint8_t granularity, bool platform_subheader) noexcept {
    flags_.set(static_cast<std::uint16_t>(((frame_type & 0x1F) << 10) | ((hardware_id & 0x3F) << 4) |
                                          (direction ? 0x0008 : 0) | ((granularity & 0x3) << 1) |
                                          (platform_subheader ? 1 : 0)));
  }

 private:
  be16 ver_vlan_{};
  be16 cos_bso_t_session_{};
  be32 timestamp_{};
  be16 sgt_{};
  be16 flags_{};
};
static_assert(sizeof(erspan3_header) == 12);

// Section 4.3.1: Platf ID(6) | platform-specific info(58).
class erspan3_platform_subheader {
 public:
  [[nodiscard]] constexpr std::uint8_t platform_id() const noexcept {
    return static_cast<std::uint8_t>(raw_.value() >> 58);
  }
  [[nodiscard]] constexpr std::uint64_t platform_info() const noexcept {
    return raw_.value() & ((std::uint64_t{1} << 58) - 1);
  }
  constexpr void set(std::uint8_t platform_id, std::uint64_t info) noexcept {
    raw_.set((std::uint64_t{platform_id & 0x3Fu} << 58) | (info & ((std::uint64_t{1} << 58) - 1)));
  }

 private:
  be64 raw_{};
};
static_assert(sizeof(erspan3_platform_subheader) == 8);

}  // namespace rocelab::captures::wire

#pragma once
// GRE (RFC 2784, with the key and sequence number extension of RFC 2890). The base header
// is 4 bytes; checksum+reserved, key and sequence number follow, each 4 bytes and in that
// order, when the C, K and S bits are set.

#include <cstddef>
#include <cstdint>

#include "rocelab/captures/wire/byte_order.hpp"

namespace rocelab::captures::wire {

class gre_header {
 public:
  static constexpr std::uint16_t flag_checksum = 0x8000;  // C, RFC 2784 section 2.1
  static constexpr std::uint16_t flag_routing = 0x4000;   // R, RFC 1701 only; 2784 makes it 0
  static constexpr std::uint16_t flag_key = 0x2000;       // K, RFC 2890 section 2
  static constexpr std::uint16_t flag_sequence = 0x1000;  // S, RFC 2890 section 2

  [[nodiscard]] constexpr std::uint16_t flags_version() const noexcept { return flags_version_.value(); }
  [[nodiscard]] constexpr bool has_checksum() const noexcept { return (flags_version() & flag_checksum) != 0; }
  [[nodiscard]] constexpr bool has_routing() const noexcept { return (flags_version() & flag_routing) != 0; }
  [[nodiscard]] constexpr bool has_key() const noexcept { return (flags_version() & flag_key) != 0; }
  [[nodiscard]] constexpr bool has_sequence() const noexcept { return (flags_version() & flag_sequence) != 0; }
  // 0 for RFC 2784 GRE; 1 is the enhanced GRE of PPTP (RFC 2637).
  [[nodiscard]] constexpr std::uint8_t version() const noexcept { return flags_version() & 0x7; }
  // EtherType of the payload.
  [[nodiscard]] constexpr std::uint16_t protocol() const noexcept { return protocol_.value(); }

  // Base header plus the optional fields the flags announce (routing is not supported).
  [[nodiscard]] constexpr std::size_t header_bytes() const noexcept {
    return sizeof(gre_header) + (has_checksum() ? 4 : 0) + (has_key() ? 4 : 0) +
           (has_sequence() ? 4 : 0);
  }
  // Offsets of the optional fields from the start of the GRE header; meaningful only when
  // the matching flag is set.
  [[nodiscard]] constexpr std::size_t key_offset() const noexcept {
    return sizeof(gre_header) + (has_checksum() ? 4 : 0);
  }
  [[nodiscard]] constexpr std::size_t sequence_offset() const noexcept {
    return key_offset() + (has_key() ? 4 : 0);
  }

  constexpr void set(bool checksum, bool key, bool sequence, std::uint16_t protocol) noexcept {
    flags_version_.set(static_cast<std::uint16_t>((checksum ? flag_checksum : 0) |
                                                  (key ? flag_key : 0) |
                                                  (sequence ? flag_sequence : 0)));
    protocol_.set(protocol);
  }

 private:
  be16 flags_version_{};
  be16 protocol_{};
};
static_assert(sizeof(gre_header) == 4);

}  // namespace rocelab::captures::wire

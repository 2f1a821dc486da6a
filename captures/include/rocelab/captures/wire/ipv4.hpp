#pragma once
// IPv4 header without options (RFC 791 section 3.1). Options follow when IHL > 5; the
// struct covers the fixed 20 bytes and header_bytes() says where the payload starts.

#include <array>
#include <cstdint>

#include "rocelab/captures/wire/byte_order.hpp"
#include "rocelab/captures/wire/ip.hpp"

namespace rocelab::captures::wire {

using ipv4_address = std::array<std::uint8_t, 4>;

class ipv4_header {
 public:
  static constexpr std::uint8_t version_number = 4;
  static constexpr std::uint8_t min_ihl = 5;
  static constexpr std::uint16_t flag_dont_fragment = 0x4000;
  static constexpr std::uint16_t flag_more_fragments = 0x2000;

  [[nodiscard]] constexpr std::uint8_t version() const noexcept { return version_ihl_ >> 4; }
  // In 32-bit words; values below 5 are invalid (RFC 791).
  [[nodiscard]] constexpr std::uint8_t ihl() const noexcept { return version_ihl_ & 0x0F; }
  [[nodiscard]] constexpr std::size_t header_bytes() const noexcept { return std::size_t{ihl()} * 4; }
  [[nodiscard]] constexpr std::uint8_t tos() const noexcept { return tos_; }
  [[nodiscard]] constexpr std::uint8_t dscp() const noexcept { return tos_ >> 2; }
  [[nodiscard]] constexpr ecn_codepoint ecn() const noexcept {
    return static_cast<ecn_codepoint>(tos_ & 0x3);
  }
  // Header plus payload, in bytes.
  [[nodiscard]] constexpr std::uint16_t total_length() const noexcept { return total_length_.value(); }
  [[nodiscard]] constexpr std::uint16_t identification() const noexcept { return id_.value(); }
  [[nodiscard]] constexpr bool dont_fragment() const noexcept {
    return (flags_fragment_.value() & flag_dont_fragment) != 0;
  }
  [[nodiscard]] constexpr bool more_fragments() const noexcept {
    return (flags_fragment_.value() & flag_more_fragments) != 0;
  }
  // In 8-byte units; non-zero means the transport header is in an earlier fragment.
  [[nodiscard]] constexpr std::uint16_t fragment_offset() const noexcept {
    return flags_fragment_.value() & 0x1FFF;
  }
  [[nodiscard]] constexpr std::uint8_t ttl() const noexcept { return ttl_; }
  [[nodiscard]] constexpr std::uint8_t protocol() const noexcept { return protocol_; }
  [[nodiscard]] constexpr std::uint16_t checksum() const noexcept { return checksum_.value(); }
  [[nodiscard]] constexpr ipv4_address src() const noexcept { return src_; }
  [[nodiscard]] constexpr ipv4_address dst() const noexcept { return dst_; }

  constexpr void set_version_ihl(std::uint8_t version, std::uint8_t ihl) noexcept {
    version_ihl_ = static_cast<std::uint8_t>((version << 4) | (ihl & 0x0F));
  }
  constexpr void set_tos(std::uint8_t tos) noexcept { tos_ = tos; }
  constexpr void set_dscp_ecn(std::uint8_t dscp, ecn_codepoint ecn) noexcept {
    tos_ = traffic_class(dscp, ecn);
  }
  constexpr void set_total_length(std::uint16_t v) noexcept { total_length_.set(v); }
  constexpr void set_identification(std::uint16_t v) noexcept { id_.set(v); }
  constexpr void set_flags_fragment(bool dont_fragment, bool more_fragments,
                                    std::uint16_t offset_8b) noexcept {
    flags_fragment_.set(static_cast<std::uint16_t>((dont_fragment ? flag_dont_fragment : 0) |
                                                   (more_fragments ? flag_more_fragments : 0) |
                                                   (offset_8b & 0x1FFF)));
  }
  constexpr void set_ttl(std::uint8_t v) noexcept { ttl_ = v; }
  constexpr void set_protocol(std::uint8_t v) noexcept { protocol_ = v; }
  constexpr void set_checksum(std::uint16_t v) noexcept { checksum_.set(v); }
  constexpr void set_src(const ipv4_address& a) noexcept { src_ = a; }
  constexpr void set_dst(const ipv4_address& a) noexcept { dst_ = a; }

 private:
  std::uint8_t version_ihl_ = 0;
  std::uint8_t tos_ = 0;
  be16 total_length_{};
  be16 id_{};
  be16 flags_fragment_{};
  std::uint8_t ttl_ = 0;
  std::uint8_t protocol_ = 0;
  be16 checksum_{};
  ipv4_address src_{};
  ipv4_address dst_{};
};
static_assert(sizeof(ipv4_header) == 20);

// Byte offsets used where a header is patched in place (ICRC masking, checksum fill-in).
namespace ipv4_offset {
inline constexpr std::size_t tos = 1;
inline constexpr std::size_t total_length = 2;
inline constexpr std::size_t ttl = 8;
inline constexpr std::size_t checksum = 10;
}  // namespace ipv4_offset

}  // namespace rocelab::captures::wire

#pragma once
// IPv6 fixed header (RFC 8200 section 3). Extension headers are not modelled: RoCEv2
// NICs do not send them, and the dissector reports next_header as the IP protocol.

#include <array>
#include <cstdint>

#include "rocelab/captures/wire/byte_order.hpp"
#include "rocelab/captures/wire/ip.hpp"

namespace rocelab::captures::wire {

using ipv6_address = std::array<std::uint8_t, 16>;

class ipv6_header {
 public:
  static constexpr std::uint8_t version_number = 6;

  [[nodiscard]] constexpr std::uint8_t version() const noexcept {
    return static_cast<std::uint8_t>(vtc_flow_.value() >> 28);
  }
  [[nodiscard]] constexpr std::uint8_t traffic_class() const noexcept {
    return static_cast<std::uint8_t>(vtc_flow_.value() >> 20);
  }
  [[nodiscard]] constexpr std::uint8_t dscp() const noexcept { return traffic_class() >> 2; }
  [[nodiscard]] constexpr ecn_codepoint ecn() const noexcept {
    return static_cast<ecn_codepoint>(traffic_class() & 0x3);
  }
  [[nodiscard]] constexpr std::uint32_t flow_label() const noexcept {
    return vtc_flow_.value() & 0xFFFFF;
  }
  // Bytes after the 40-byte fixed header.
  [[nodiscard]] constexpr std::uint16_t payload_length() const noexcept {
    return payload_length_.value();
  }
  [[nodiscard]] constexpr std::uint8_t next_header() const noexcept { return next_header_; }
  [[nodiscard]] constexpr std::uint8_t hop_limit() const noexcept { return hop_limit_; }
  [[nodiscard]] constexpr ipv6_address src() const noexcept { return src_; }
  [[nodiscard]] constexpr ipv6_address dst() const noexcept { return dst_; }

  // Values wider than the field are masked.
  constexpr void set_version_class_flow(std::uint8_t traffic_class,
                                        std::uint32_t flow_label) noexcept {
    vtc_flow_.set((std::uint32_t{version_number} << 28) | (std::uint32_t{traffic_class} << 20) |
                  (flow_label & 0xFFFFF));
  }
  constexpr void set_payload_length(std::uint16_t v) noexcept { payload_length_.set(v); }
  constexpr void set_next_header(std::uint8_t v) noexcept { next_header_ = v; }
  constexpr void set_hop_limit(std::uint8_t v) noexcept { hop_limit_ = v; }
  constexpr void set_src(const ipv6_address& a) noexcept { src_ = a; }
  constexpr void set_dst(const ipv6_address& a) noexcept { dst_ = a; }

 private:
  be32 vtc_flow_{};
  be16 payload_length_{};
  std::uint8_t next_header_ = 0;
  std::uint8_t hop_limit_ = 0;
  ipv6_address src_{};
  ipv6_address dst_{};
};
static_assert(sizeof(ipv6_header) == 40);

namespace ipv6_offset {
inline constexpr std::size_t hop_limit = 7;
}  // namespace ipv6_offset

}  // namespace rocelab::captures::wire

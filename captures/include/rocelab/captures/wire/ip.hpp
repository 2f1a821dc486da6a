#pragma once
// What IPv4 and IPv6 share: the DS field split (RFC 2474 DSCP, RFC 3168 ECN) and the
// protocol numbers rocelab follows.

#include <cstddef>
#include <cstdint>
#include <span>

namespace rocelab::captures::wire {

// RFC 3168 section 5: the two low bits of the IPv4 TOS / IPv6 traffic class.
enum class ecn_codepoint : std::uint8_t { not_ect = 0, ect1 = 1, ect0 = 2, ce = 3 };

namespace ip_protocol {
inline constexpr std::uint8_t udp = 17;
inline constexpr std::uint8_t gre = 47;
inline constexpr std::uint8_t tcp = 6;
}  // namespace ip_protocol

[[nodiscard]] constexpr std::uint8_t traffic_class(std::uint8_t dscp, ecn_codepoint ecn) noexcept {
  return static_cast<std::uint8_t>(((dscp & 0x3Fu) << 2) | static_cast<std::uint8_t>(ecn));
}

// RFC 1071 one's-complement sum of `bytes` (odd length padded with a zero byte), folded
// and complemented. Over an IPv4 header whose checksum field holds the right value it
// returns 0; over one whose checksum field is zero it returns the value to store.
[[nodiscard]] constexpr std::uint16_t internet_checksum(std::span<const std::uint8_t> bytes) noexcept {
  std::uint32_t sum = 0;
  std::size_t i = 0;
  for (; i + 1 < bytes.size(); i += 2) sum += (std::uint32_t{bytes[i]} << 8) | bytes[i + 1];
  if (i < bytes.size()) sum += std::uint32_t{bytes[i]} << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

}  // namespace rocelab::captures::wire

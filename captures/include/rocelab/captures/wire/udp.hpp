#pragma once
// UDP header (RFC 768).

#include <cstdint>

#include "rocelab/captures/wire/byte_order.hpp"

namespace rocelab::captures::wire {

class udp_header {
 public:
  [[nodiscard]] constexpr std::uint16_t src_port() const noexcept { return src_port_.value(); }
  [[nodiscard]] constexpr std::uint16_t dst_port() const noexcept { return dst_port_.value(); }
  // Header plus payload, in bytes.
  [[nodiscard]] constexpr std::uint16_t length() const noexcept { return length_.value(); }
  // 0 means "not computed", which RoCEv2 senders use (IBTA annex A17.3.3 lets them).
  [[nodiscard]] constexpr std::uint16_t checksum() const noexcept { return checksum_.value(); }

  constexpr void set_src_port(std::uint16_t v) noexcept { src_port_.set(v); }
  constexpr void set_dst_port(std::uint16_t v) noexcept { dst_port_.set(v); }
  constexpr void set_length(std::uint16_t v) noexcept { length_.set(v); }
  constexpr void set_checksum(std::uint16_t v) noexcept { checksum_.set(v); }

 private:
  be16 src_port_{};
  be16 dst_port_{};
  be16 length_{};
  be16 checksum_{};
};
static_assert(sizeof(udp_header) == 8);

namespace udp_offset {
inline constexpr std::size_t checksum = 6;
}  // namespace udp_offset

}  // namespace rocelab::captures::wire

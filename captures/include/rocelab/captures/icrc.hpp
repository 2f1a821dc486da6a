#pragma once
// RoCEv2 Invariant CRC (IBTA vol. 1 annex A17.3.3).
//
// The ICRC is the Ethernet CRC-32 (IEEE 802.3, reflected, initial value and final XOR
// 0xffffffff) over 8 bytes of 0xff that stand in for the InfiniBand LRH, then the IP
// header through the end of the BTH payload, with every field a router may rewrite
// replaced by ones: IPv4 TOS, TTL and header checksum; IPv6 traffic class, flow label and
// hop limit; the UDP checksum; and the BTH byte that carries FECN/BECN. It is stored in the
// 4 bytes after the payload, least significant byte first.
//
// Pure functions: no allocation, no I/O, thread-safe.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace rocelab::captures {

// CRC-32 (IEEE 802.3) continued from `crc` over `bytes`. Start with crc32_init and finish
// with crc32_final; crc32_ieee() does both. Slice-by-8 tables, about a byte per cycle.
inline constexpr std::uint32_t crc32_init = 0xFFFFFFFFu;
[[nodiscard]] std::uint32_t crc32_update(std::uint32_t crc, std::span<const std::uint8_t> bytes) noexcept;
[[nodiscard]] constexpr std::uint32_t crc32_final(std::uint32_t crc) noexcept { return ~crc; }
[[nodiscard]] std::uint32_t crc32_ieee(std::span<const std::uint8_t> bytes) noexcept;

// The ICRC of the RoCEv2 packet whose IP header starts at `ip_offset` in `frame` and
// whose ICRC field starts at `icrc_offset` (the CRC covers [ip_offset, icrc_offset)).
// The IP version comes from the header's version nibble; the UDP header follows the IP
// header (IPv4 options allowed, no IPv6 extension headers) and the BTH follows UDP.
// nullopt when the offsets leave no room for IP, UDP and BTH or the version is not 4 or 6.
[[nodiscard]] std::optional<std::uint32_t> compute_icrc(std::span<const std::uint8_t> frame,
                                                        std::size_t ip_offset,
                                                        std::size_t icrc_offset) noexcept;

enum class icrc_check : std::uint8_t {
  valid,
  mismatch,
  incomplete,  // the packet is cut short (snap length) or its lengths are inconsistent
};

// Checks the ICRC of the RoCEv2 packet at `ip_offset`, locating the trailer from the IP
// length field (IPv4 total length, IPv6 payload length), so Ethernet padding after the
// packet is ignored.
[[nodiscard]] icrc_check verify_icrc(std::span<const std::uint8_t> frame, std::size_t ip_offset) noexcept;

// Offset of the ICRC trailer of the packet at `ip_offset` according to its IP length
// field; nullopt when the header is missing, the version is not 4 or 6, or the length is
// too short to hold IP, UDP, BTH and ICRC. The trailer may lie beyond `frame` (cut).
[[nodiscard]] std::optional<std::size_t> icrc_offset_of(std::span<const std::uint8_t> frame,
                                                        std::size_t ip_offset) noexcept;

}  // namespace rocelab::captures

#pragma once
// Private to captures/: the pcapng codes the reader and the writer share
// (draft-ietf-opsawg-pcapng: block types, the byte-order magic, option codes).

#include <cstddef>
#include <cstdint>

namespace rocelab::captures::pcapng {

inline constexpr std::uint32_t block_section_header = 0x0a0d0d0a;  // palindrome: any byte order
inline constexpr std::uint32_t block_interface_description = 1;
inline constexpr std::uint32_t block_packet_obsolete = 2;
inline constexpr std::uint32_t block_simple_packet = 3;
inline constexpr std::uint32_t block_interface_statistics = 5;
inline constexpr std::uint32_t block_enhanced_packet = 6;
inline constexpr std::uint32_t byte_order_magic = 0x1a2b3c4d;

inline constexpr std::uint16_t opt_endofopt = 0;
inline constexpr std::uint16_t opt_shb_userappl = 4;
inline constexpr std::uint16_t opt_if_name = 2;
inline constexpr std::uint16_t opt_if_description = 3;
inline constexpr std::uint16_t opt_if_tsresol = 9;
inline constexpr std::uint16_t opt_if_tsoffset = 14;
inline constexpr std::uint16_t opt_isb_ifrecv = 4;
inline constexpr std::uint16_t opt_isb_ifdrop = 5;

// Blocks, option values and packet data are padded to 32 bits.
constexpr std::size_t pad4(std::size_t n) noexcept { return (n + 3) & ~std::size_t{3}; }

}  // namespace rocelab::captures::pcapng

#include "rocelab/captures/icrc.hpp"

#include <array>
#include <cstring>

#include "rocelab/captures/wire/ipv4.hpp"
#include "rocelab/captures/wire/ipv6.hpp"
#include "rocelab/captures/wire/roce.hpp"
#include "rocelab/captures/wire/udp.hpp"

namespace rocelab::captures {
namespace {

using namespace wire;

// Reflected form of the 802.3 polynomial 0x04C11DB7.
constexpr std::uint32_t crc32_polynomial = 0xEDB88320u;

// Slice-by-8: table k maps a byte to its CRC contribution when followed by k more bytes,
// so eight bytes fold in with eight independent lookups instead of a serial chain.
constexpr std::array<std::array<std::uint32_t, 256>, 8> make_tables() noexcept {
  std::array<std::array<std::uint32_t, 256>, 8> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? (c >> 1) ^ crc32_polynomial : c >> 1;
    t[0][i] = c;
  }
  for (std::size_t k = 1; k < 8; ++k)
    for (std::size_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
  return t;
}
constexpr auto tables = make_tables();

constexpr std::uint32_t load_le32(const std::uint8_t* p) noexcept {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) |
         (std::uint32_t{p[3]} << 24);
}

// The longest masked prefix: LRH stand-in, IPv4 with 40 bytes of options, UDP, BTH.
constexpr std::size_t lrh_standin_bytes = 8;
constexpr std::size_t max_prefix_bytes = lrh_standin_bytes + 60 + sizeof(udp_header) + sizeof(bth);

// Length of the IP header at `ip` (the version nibble decides), 0 when invalid.
std::size_t ip_header_bytes(const std::uint8_t* ip) noexcept {
  switch (ip[0] >> 4) {
    case 4: {
      const std::size_t ihl = ip[0] & 0x0F;
      return ihl >= ipv4_header::min_ihl ? ihl * 4 : 0;
    }
    case 6: return sizeof(ipv6_header);
    default: return 0;
  }
}

}  // namespace

std::uint32_t crc32_update(std::uint32_t crc, std::span<const std::uint8_t> bytes) noexcept {
  const std::uint8_t* p = bytes.data();
  std::size_t n = bytes.size();
  while (n >= 8) {
    const std::uint32_t lo = load_le32(p) ^ crc;
    const std::uint32_t hi = load_le32(p + 4);
    crc = tables[7][lo & 0xFF] ^ tables[6][(lo >> 8) & 0xFF] ^ tables[5][(lo >> 16) & 0xFF] ^
          tables[4][lo >> 24] ^ tables[3][hi & 0xFF] ^ tables[2][(hi >> 8) & 0xFF] ^
          tables[1][(hi >> 16) & 0xFF] ^ tables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = tables[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
  return crc;
}

std::uint32_t crc32_ieee(std::span<const std::uint8_t> bytes) noexcept {
  return crc32_final(crc32_update(crc32_init, bytes));
}

std::optional<std::uint32_t> compute_icrc(std::span<const std::uint8_t> frame, std::size_t ip_offset,
                                          std::size_t icrc_offset) noexcept {
  if (icrc_offset > frame.size() || ip_offset >= icrc_offset) return std::nullopt;
  const std::uint8_t* ip = frame.data() + ip_offset;
  const std::size_t covered = icrc_offset - ip_offset;
  const std::size_t ip_bytes = ip_header_bytes(ip);
  if (ip_bytes == 0) return std::nullopt;
  const std::size_t prefix = ip_bytes + sizeof(udp_header) + sizeof(bth);
  if (covered < prefix) return std::nullopt;

  // The variant fields are masked in a stack copy of the headers; the payload, usually
  // most of the bytes, is then CRC'd in place.
  std::array<std::uint8_t, max_prefix_bytes> buf;
  std::memset(buf.data(), 0xFF, lrh_standin_bytes);
  std::uint8_t* h = buf.data() + lrh_standin_bytes;
  std::memcpy(h, ip, prefix);
  if ((ip[0] >> 4) == ipv6_header::version_number) {
    // Version nibble stays; traffic class and flow label (the rest of word 0) go to ones.
    h[0] |= 0x0F;
    h[1] = h[2] = h[3] = 0xFF;
    h[ipv6_offset::hop_limit] = 0xFF;
  } else {
    h[ipv4_offset::tos] = 0xFF;
    h[ipv4_offset::ttl] = 0xFF;
    h[ipv4_offset::checksum] = h[ipv4_offset::checksum + 1] = 0xFF;
  }
  h[ip_bytes + udp_offset::checksum] = h[ip_bytes + udp_offset::checksum + 1] = 0xFF;
  h[ip_bytes + sizeof(udp_header) + bth_offset::fecn_becn] = 0xFF;

  std::uint32_t crc = crc32_update(crc32_init, {buf.data(), lrh_standin_bytes + prefix});
  crc = crc32_update(crc, frame.subspan(ip_offset + prefix, covered - prefix));
  return crc32_final(crc);
}

std::optional<std::size_t> icrc_offset_of(std::span<const std::uint8_t> frame,
                                          std::size_t ip_offset) noexcept {
  if (ip_offset >= frame.size()) return std::nullopt;
  const std::size_t available = frame.size() - ip_offset;
  const std::uint8_t* ip = frame.data() + ip_offset;
  std::size_t ip_length = 0;
  std::size_t ip_bytes = 0;
  switch (ip[0] >> 4) {
    case 4:
      if (available < sizeof(ipv4_header)) return std::nullopt;
      ip_bytes = ip_header_bytes(ip);
      ip_length = load_be16(ip + ipv4_offset::total_length);
      break;
    case 6:
      if (available < sizeof(ipv6_header)) return std::nullopt;
      ip_bytes = sizeof(ipv6_header);
      ip_length = sizeof(ipv6_header) + std::size_t{load_be16(ip + 4)};
      break;
    default: return std::nullopt;
  }
  if (ip_bytes == 0) return std::nullopt;
  if (ip_length < ip_bytes + sizeof(udp_header) + sizeof(bth) + sizeof(icrc_trailer)) return std::nullopt;
  return ip_offset + ip_length - sizeof(icrc_trailer);
}

icrc_check verify_icrc(std::span<const std::uint8_t> frame, std::size_t ip_offset) noexcept {
  const auto at = icrc_offset_of(frame, ip_offset);
  if (!at || *at > frame.size() || frame.size() - *at < sizeof(icrc_trailer)) return icrc_check::incomplete;
  const auto crc = compute_icrc(frame, ip_offset, *at);
  if (!crc) return icrc_check::incomplete;
  icrc_trailer stored;
  std::memcpy(&stored, frame.data() + *at, sizeof(stored));
  return stored.value() == *crc ? icrc_check::valid : icrc_check::mismatch;
}

}  // namespace rocelab::captures

#include "rocelab/fabric/soft_switch/frame_ops.hpp"

#include <cstring>

#include "rocelab/captures/wire/byte_order.hpp"
#include "rocelab/captures/wire/mac_control.hpp"
#include "rocelab/captures/wire/roce.hpp"

namespace rocelab::fabric::soft_switch {

namespace wire = captures::wire;

void parse_frame(std::span<const std::uint8_t> f, frame_info& out) noexcept {
  out = frame_info{};
  if (f.size() < 14) return;
  out.valid = true;
  std::memcpy(out.dst.data(), f.data(), 6);
  std::memcpy(out.src.data(), f.data() + 6, 6);
  std::size_t off = 12;
  std::uint16_t type = wire::load_be16(f.data() + off);
  while (wire::ethertype::is_vlan_tpid(type) && off + 6 <= f.size()) {
    if (out.vlan_count == 0) out.pcp = static_cast<std::uint8_t>(f[off + 2] >> 5);
    ++out.vlan_count;
    off += 4;
    type = wire::load_be16(f.data() + off);
  }
  off += 2;
  out.ethertype = type;

  if (type == wire::ethertype::mac_control && out.vlan_count == 0 && off + 2 <= f.size()) {
    const std::uint16_t opcode = wire::load_be16(f.data() + off);
    if (opcode == wire::mac_control_opcode::pfc && off + 2 + 2 + 16 <= f.size()) {
      out.is_pfc = true;
      out.pfc_class_enable = f[off + 3];
      for (std::size_t p = 0; p < num_priorities; ++p)
        out.pfc_quanta[p] = wire::load_be16(f.data() + off + 4 + 2 * p);
    } else if (opcode == wire::mac_control_opcode::pause && off + 4 <= f.size()) {
      out.is_pause = true;
      out.pause_quanta = wire::load_be16(f.data() + off + 2);
    }
    return;
  }

  std::size_t l4 = 0;
  std::uint8_t proto = 0;
  if (type == wire::ethertype::ipv4 && off + 20 <= f.size() && (f[off] >> 4) == 4) {
    const std::size_t ihl = std::size_t{f[off] & 0x0Fu} * 4;
    if (ihl < 20) return;
    out.ip_version = 4;
    out.ip_offset = static_cast<std::uint16_t>(off);
    out.dscp = static_cast<std::uint8_t>(f[off + 1] >> 2);
    out.ecn = static_cast<ecn_codepoint>(f[off + 1] & 3u);
    std::memcpy(out.ipv4_src.data(), f.data() + off + 12, 4);
    proto = f[off + 9];
    const bool first_fragment = (wire::load_be16(f.data() + off + 6) & 0x1FFF) == 0;
    if (first_fragment) l4 = off + ihl;
  } else if (type == wire::ethertype::ipv6 && off + 40 <= f.size() && (f[off] >> 4) == 6) {
    const auto tc = static_cast<std::uint8_t>(((f[off] & 0x0Fu) << 4) | (f[off + 1] >> 4));
    out.ip_version = 6;
    out.ip_offset = static_cast<std::uint16_t>(off);
    out.dscp = static_cast<std::uint8_t>(tc >> 2);
    out.ecn = static_cast<ecn_codepoint>(tc & 3u);
    proto = f[off + 6];
    l4 = off + 40;
  } else {
    return;
  }
  constexpr std::uint8_t udp = 17;
  if (proto != udp || l4 == 0 || l4 + 8 + 12 > f.size()) return;
  if (wire::load_be16(f.data() + l4 + 2) != wire::roce_v2_udp_port) return;
  const std::size_t bth = l4 + 8;
  out.is_roce = true;
  out.bth_opcode = f[bth];
  out.dest_qp = wire::load_be24(f.data() + bth + 5);
  out.psn = wire::load_be24(f.data() + bth + 9);
}

std::uint16_t checksum_update(std::uint16_t checksum, std::uint16_t old_word, std::uint16_t new_word) noexcept {
  // RFC 1624 section 3, eqn. 3, in 32-bit one's complement arithmetic with the carries
  // folded back in (eqn. 2 can produce -0 where eqn. 3 cannot).
  std::uint32_t sum = static_cast<std::uint16_t>(~checksum);
  sum += static_cast<std::uint16_t>(~old_word);
  sum += new_word;
  sum = (sum & 0xFFFFu) + (sum >> 16);
  sum = (sum & 0xFFFFu) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

bool set_ce(std::span<std::uint8_t> f, const frame_info& info) noexcept {
  const std::size_t off = info.ip_offset;
  if (info.ip_version == 4 && off + 20 <= f.size()) {
    std::uint8_t* ip = f.data() + off;
    // The TOS byte is the low half of the header's first 16-bit word.
    const std::uint16_t old_word = wire::load_be16(ip);
    ip[1] |= 0x03;
    const std::uint16_t new_word = wire::load_be16(ip);
    wire::store_be16(ip + 10, checksum_update(wire::load_be16(ip + 10), old_word, new_word));
    return true;
  }
  if (info.ip_version == 6 && off + 40 <= f.size()) {
    // Version(4) | Traffic Class(8) | Flow Label(20): the ECN bits (traffic class bits
    // 1..0) are bits 5..4 of the second byte (RFC 8200 section 3, RFC 3168 section 5).
    f[off + 1] |= 0x30;
    return true;
  }
  return false;
}

priority_map priority_map::roce_default() noexcept {
  priority_map m;
  for (int d = 24; d <= 31; ++d) m.dscp_to_tc[d] = 3;
  m.dscp_to_tc[48] = 6;
  return m;
}

std::uint8_t priority_map::classify(const frame_info& info) const noexcept {
  if (info.vlan_count > 0 && trust_pcp) return pcp_to_tc[info.pcp & 7u];
  if (info.ip_version != 0) return dscp_to_tc[info.dscp & 63u];
  return default_tc;
}

}  // namespace rocelab::fabric::soft_switch

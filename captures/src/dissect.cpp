#include "rocelab/captures/dissect.hpp"

#include <cstring>

#include "rocelab/captures/wire/byte_order.hpp"
#include "rocelab/captures/wire/erspan.hpp"
#include "rocelab/captures/wire/ethernet.hpp"
#include "rocelab/captures/wire/gre.hpp"
#include "rocelab/captures/wire/ip.hpp"
#include "rocelab/captures/wire/ipv4.hpp"
#include "rocelab/captures/wire/ipv6.hpp"
#include "rocelab/captures/wire/mac_control.hpp"
#include "rocelab/captures/wire/roce.hpp"
#include "rocelab/captures/wire/udp.hpp"
#include "rocelab/captures/wire/vlan.hpp"

// Performance: this runs once per captured packet and `rocelab analyze` budgets ~10-15 ns
// for it. Everything is offset arithmetic on the captured bytes with the free
// load_be*() helpers (byte loads the compiler merges), one function per layer that the
// compiler inlines into a straight line for the common Ethernet/VLAN/IPv4/UDP/BTH path,
// and no data-dependent table other than the 1 KiB opcode layout.
//
// Bounds: every read is preceded by a check against `limit`, the end of what the enclosing
// layer says is there and what was captured, whichever is smaller. `cut` tells whether
// `limit` is the capture's end (a header past it means the frame was snapped: truncated)
// or a length field's (a header past it contradicts that field: malformed).

namespace rocelab::captures {
namespace {

using namespace wire;

// More tags than any real network stacks; a frame with more is treated as malformed so
// a hostile run of TPIDs cannot make the loop long.
constexpr int max_vlan_tags_dissected = 8;

// Resetting by copying a constant compiles to a dozen SSE moves; `out = {}` becomes
// `rep stos`, whose start-up cost alone was a third of the per-frame budget.
constexpr dissected_frame empty_frame{};

// Stops at a header that does not fit before `limit`.
inline void short_header(dissected_frame& out, bool cut) noexcept {
  if (cut) {
    out.truncated = true;
  } else {
    out.malformed = true;
  }
}

inline bool fits(std::size_t off, std::size_t bytes, std::size_t limit) noexcept {
  return off <= limit && limit - off >= bytes;
}

struct frame {
  const std::uint8_t* p;
  std::size_t size;  // captured bytes
};

// The outer frame (Mirror = true) and an ERSPAN inner frame (false) are separate
// instantiations, so the inner one cannot decapsulate again and the hot outer path has no
// recursion that would stop the compiler from inlining it into one function.
template <bool Mirror>
void dissect_ethernet(const frame& f, std::size_t off, std::size_t limit,
                      dissected_frame& out) noexcept;

// RoCEv2: BTH at `off` (after UDP), the UDP datagram ending at `udp_end`.
[[gnu::always_inline]] inline void dissect_bth(const frame& f, std::size_t off, std::size_t limit, bool cut,
                        std::size_t udp_end, dissected_frame& out) noexcept {
  // A17.4: RoCEv2 is decided by the destination port alone, and a BTH that is not all
  // there is not taken as one.
  if (!fits(off, sizeof(bth), limit)) return short_header(out, cut);
  const std::uint8_t* b = f.p + off;
  out.is_roce = true;
  const std::uint8_t opcode = b[0];
  const std::uint8_t flags = b[1];
  out.bth_opcode = opcode;
  out.bth_solicited = (flags & 0x80) != 0;
  out.bth_migreq = (flags & 0x40) != 0;
  out.bth_pad_count = (flags >> 4) & 0x3;
  out.bth_tver = flags & 0x0F;
  out.bth_pkey = load_be16(b + 2);
  out.bth_fecn = (b[4] & bth::fecn_bit) != 0;
  out.bth_becn = (b[4] & bth::becn_bit) != 0;
  out.dest_qp = load_be24(b + 5);
  out.ack_req = (b[8] & 0x80) != 0;
  out.psn = load_be24(b + 9);

  const opcode_layout& layout = layout_of(opcode);
  const std::size_t ext = off + sizeof(bth);
  if (layout.known) {
    // The UDP length holds even when the capture was snapped, so the payload length is
    // the sender's, not what happened to be captured.
    const std::size_t overhead = layout.header_bytes + out.bth_pad_count + sizeof(icrc_trailer);
    if (udp_end - ext < overhead) {
      out.malformed = true;
    } else {
      out.roce_payload_length = static_cast<std::uint32_t>(udp_end - ext - overhead);
    }
  }
  if (layout.reth_offset != opcode_layout::absent) {
    const std::size_t at = ext + layout.reth_offset;
    if (!fits(at, sizeof(reth), limit)) return short_header(out, cut);
    out.has_reth = true;
    out.reth_va = load_be64(f.p + at);
    out.reth_rkey = load_be32(f.p + at + 8);
    out.reth_dma_length = load_be32(f.p + at + 12);
  }
  if (layout.aeth_offset != opcode_layout::absent) {
    const std::size_t at = ext + layout.aeth_offset;
    if (!fits(at, sizeof(aeth), limit)) return short_header(out, cut);
    out.has_aeth = true;
    out.aeth_syndrome = f.p[at];
    out.aeth_msn = load_be24(f.p + at + 1);
  }
}

[[gnu::always_inline]] inline void dissect_udp(const frame& f, std::size_t off, std::size_t limit, bool cut,
                        std::size_t ip_end, dissected_frame& out) noexcept {
  if (!fits(off, sizeof(udp_header), limit)) return short_header(out, cut);
  const std::uint8_t* u = f.p + off;
  out.has_udp = true;
  out.udp_src_port = load_be16(u);
  out.udp_dst_port = load_be16(u + 2);
  const std::size_t udp_length = load_be16(u + 4);
  if (udp_length < sizeof(udp_header) || udp_length > ip_end - off) {
    out.malformed = true;
    return;
  }
  if (out.udp_dst_port != roce_v2_udp_port) return;
  // The BTH must lie inside the datagram: when the UDP length ends it before the capture
  // does, running past it is a contradiction, not a snap.
  if (off + udp_length <= limit) {
    limit = off + udp_length;
    cut = false;
  }
  dissect_bth(f, off + sizeof(udp_header), limit, cut, off + udp_length, out);
}

// GRE carrying ERSPAN (draft-foschiano-erspan): records the mirror session and replaces
// everything dissected so far with the inner frame. Other GRE payloads, including 0x6558
// transparent bridging, stay plain IP protocol 47.
[[gnu::noinline]] void dissect_gre(const frame& f, std::size_t off, std::size_t limit, bool cut,
                 dissected_frame& out) noexcept {
  if (!fits(off, sizeof(gre_header), limit)) return short_header(out, cut);
  const std::uint16_t flags = load_be16(f.p + off);
  const std::uint16_t protocol = load_be16(f.p + off + 2);
  // RFC 2784 section 2.1: version 0 only; the RFC 1701 routing field is not supported.
  if ((flags & 0x7) != 0 || (flags & gre_header::flag_routing) != 0) return;
  if (protocol != ethertype::erspan_type2 && protocol != ethertype::erspan_type3) return;

  const std::size_t gre_bytes = sizeof(gre_header) + ((flags & gre_header::flag_checksum) ? 4 : 0) +
                                ((flags & gre_header::flag_key) ? 4 : 0) +
                                ((flags & gre_header::flag_sequence) ? 4 : 0);
  const std::size_t erspan_at = off + gre_bytes;
  std::uint8_t type = 0;
  std::uint16_t session = 0;
  bool egress = false;
  std::uint32_t timestamp = 0;
  std::uint8_t granularity = 0;
  std::size_t inner = erspan_at;
  bool inner_is_ethernet = true;
  bool header_missing = !fits(off, gre_bytes, limit);
  if (protocol == ethertype::erspan_type2) {
    if ((flags & gre_header::flag_sequence) == 0) {
      type = 1;  // section 4.1: no ERSPAN header at all
    } else {
      type = 2;
      if (!header_missing && fits(erspan_at, sizeof(erspan2_header), limit)) {
        session = load_be16(f.p + erspan_at + 2) & 0x03FF;
      } else {
        header_missing = true;
      }
      inner = erspan_at + sizeof(erspan2_header);
    }
  } else {
    type = 3;
    if (!header_missing && fits(erspan_at, sizeof(erspan3_header), limit)) {
      session = load_be16(f.p + erspan_at + 2) & 0x03FF;
      timestamp = load_be32(f.p + erspan_at + 4);
      const std::uint16_t word = load_be16(f.p + erspan_at + 10);
      egress = (word & 0x0008) != 0;
      granularity = static_cast<std::uint8_t>((word >> 1) & 0x3);
      inner_is_ethernet = ((word >> 10) & 0x1F) == erspan_frame_type::ethernet;
      inner = erspan_at + sizeof(erspan3_header) +
              ((word & 1) ? sizeof(erspan3_platform_subheader) : 0);
    } else {
      header_missing = true;
    }
  }

  // From here every field describes the mirrored frame, so the outer layers are dropped;
  // when there is no inner Ethernet frame they stay empty rather than describe the
  // mirror's own GRE packet.
  const bool was_truncated = out.truncated;
  out = empty_frame;
  out.truncated = was_truncated;
  out.erspan_type = type;
  out.erspan_session = session;
  out.erspan_egress = egress;
  out.erspan_timestamp = timestamp;
  out.erspan_granularity = granularity;
  if (header_missing) return short_header(out, cut);
  if (!inner_is_ethernet) return;
  if (inner > limit) return short_header(out, cut);
  // The inner frame is treated like a capture of its own ending at `limit`: a switch may
  // cut mirrored frames (ERSPAN T bit), which is truncation, not malformation.
  dissect_ethernet<false>(f, inner, limit, out);
  out.erspan_inner_parsed = out.has_ethernet;
}

// IP payload dispatch, shared by IPv4 and IPv6. `ip_end` is where the IP length field says
// the packet ends; the capture may end earlier (truncated) or later (Ethernet padding).
template <bool Mirror>
[[gnu::always_inline]] inline void dissect_l4(const frame& f, std::size_t l4, std::size_t ip_end,
                                              std::size_t limit, dissected_frame& out) noexcept {
  bool cut = false;
  if (ip_end > limit) {
    out.truncated = true;
    cut = true;
  } else {
    limit = ip_end;
  }
  if (l4 > limit) return short_header(out, cut);
  if (out.ip_protocol == ip_protocol::udp) {
    dissect_udp(f, l4, limit, cut, ip_end, out);
  } else if (Mirror && out.ip_protocol == ip_protocol::gre) {
    dissect_gre(f, l4, limit, cut, out);
  }
}

template <bool Mirror>
[[gnu::always_inline]] inline void dissect_ipv4(const frame& f, std::size_t off, std::size_t limit,
                                                dissected_frame& out) noexcept {
  if (!fits(off, sizeof(ipv4_header), limit)) {
    out.truncated = true;
    return;
  }
  const std::uint8_t* ip = f.p + off;
  const std::size_t header_bytes = std::size_t{ip[0] & 0x0Fu} * 4;
  const std::size_t total_length = load_be16(ip + ipv4_offset::total_length);
  if ((ip[0] >> 4) != ipv4_header::version_number || header_bytes < sizeof(ipv4_header) ||
      total_length < header_bytes) {
    out.malformed = true;
    return;
  }
  out.ip_version = 4;
  out.ip_offset = static_cast<std::uint16_t>(off);
  out.dscp = ip[ipv4_offset::tos] >> 2;
  out.ecn = ip[ipv4_offset::tos] & 0x3;
  out.ip_protocol = ip[9];
  // IPv4-mapped form ::ffff:a.b.c.d (RFC 4291 2.5.5.2); bytes 0..9 are already zero.
  out.ip_src[10] = out.ip_src[11] = 0xFF;
  out.ip_dst[10] = out.ip_dst[11] = 0xFF;
  std::memcpy(out.ip_src.data() + 12, ip + 12, 4);
  std::memcpy(out.ip_dst.data() + 12, ip + 16, 4);
  // Only an unfragmented packet is taken apart: a later fragment has no transport header,
  // and the first one's UDP length covers bytes in other fragments (RFC 791 MF/offset).
  // RoCEv2 is never fragmented (A17.5: DF set).
  if ((load_be16(ip + 6) & (ipv4_header::flag_more_fragments | 0x1FFF)) != 0) {
    if (off + total_length > limit) out.truncated = true;
    return;
  }
  dissect_l4<Mirror>(f, off + header_bytes, off + total_length, limit, out);
}

template <bool Mirror>
[[gnu::always_inline]] inline void dissect_ipv6(const frame& f, std::size_t off, std::size_t limit,
                                                dissected_frame& out) noexcept {
  if (!fits(off, sizeof(ipv6_header), limit)) {
    out.truncated = true;
    return;
  }
  const std::uint8_t* ip = f.p + off;
  if ((ip[0] >> 4) != ipv6_header::version_number) {
    out.malformed = true;
    return;
  }
  const auto traffic_class = static_cast<std::uint8_t>((load_be16(ip) >> 4) & 0xFF);
  out.ip_version = 6;
  out.ip_offset = static_cast<std::uint16_t>(off);
  out.dscp = traffic_class >> 2;
  out.ecn = traffic_class & 0x3;
  out.ip_protocol = ip[6];
  std::memcpy(out.ip_src.data(), ip + 8, 16);
  std::memcpy(out.ip_dst.data(), ip + 24, 16);
  const std::size_t ip_end = off + sizeof(ipv6_header) + load_be16(ip + 4);
  dissect_l4<Mirror>(f, off + sizeof(ipv6_header), ip_end, limit, out);
}

[[gnu::noinline]] void dissect_mac_control(const frame& f, std::size_t off, std::size_t frame_start, std::size_t limit,
                         dissected_frame& out) noexcept {
  out.is_mac_control = true;
  // Annex 31B: MAC control frames are always padded to the minimum size, so a shorter
  // one was cut by the capture.
  if (limit - frame_start < min_frame_bytes) out.truncated = true;
  if (!fits(off, 2, limit)) return;
  const std::uint16_t opcode = load_be16(f.p + off);
  out.mac_control_opcode = opcode;
  if (opcode == mac_control_opcode::pause) {
    if (fits(off, sizeof(pause_frame), limit)) out.pause_quanta = load_be16(f.p + off + 2);
  } else if (opcode == mac_control_opcode::pfc) {
    if (!fits(off, sizeof(pfc_frame), limit)) return;
    out.pfc_class_enable = load_be16(f.p + off + 2);
    for (std::size_t i = 0; i < pfc_priorities; ++i)
      out.pfc_quanta[i] = load_be16(f.p + off + 4 + 2 * i);
  }
}

template <bool Mirror>
void dissect_ethernet(const frame& f, std::size_t off, std::size_t limit,
                      dissected_frame& out) noexcept {
  const std::size_t start = off;
  if (!fits(off, sizeof(ethernet_header), limit)) {
    out.truncated = true;
    return;
  }
  const std::uint8_t* e = f.p + off;
  out.has_ethernet = true;
  std::memcpy(out.dst_mac.data(), e, 6);
  std::memcpy(out.src_mac.data(), e + 6, 6);
  std::uint16_t type = load_be16(e + 12);
  off += sizeof(ethernet_header);

  if (ethertype::is_vlan_tpid(type)) [[unlikely]] {
    for (int i = 0;; ++i) {
      if (i == max_vlan_tags_dissected) {
        out.malformed = true;
        return;
      }
      if (!fits(off, sizeof(vlan_tag), limit)) {
        out.truncated = true;
        return;
      }
      const std::uint16_t tci = load_be16(f.p + off);
      const auto pcp = static_cast<std::uint8_t>(tci >> 13);
      const auto vid = static_cast<std::uint16_t>(tci & 0x0FFF);
      if (i == 0) {
        out.vlan_id = vid;
        out.vlan_pcp = pcp;
        out.vlan_dei = (tci & 0x1000) != 0;
      }
      out.inner_vlan_id = vid;
      out.inner_vlan_pcp = pcp;
      out.vlan_count = static_cast<std::uint8_t>(i + 1);
      type = load_be16(f.p + off + 2);
      off += sizeof(vlan_tag);
      if (!ethertype::is_vlan_tpid(type)) break;
    }
  }
  out.ethertype = type;

  switch (type) {
    case ethertype::ipv4: return dissect_ipv4<Mirror>(f, off, limit, out);
    case ethertype::ipv6: return dissect_ipv6<Mirror>(f, off, limit, out);
    case ethertype::mac_control: return dissect_mac_control(f, off, start, limit, out);
    default: return;
  }
}

}  // namespace

void dissect(link_type link, std::span<const std::uint8_t> bytes, dissected_frame& out) noexcept {
  out = empty_frame;
  const frame f{bytes.data(), bytes.size()};
  switch (link) {
    case link_type::ethernet: return dissect_ethernet<true>(f, 0, f.size, out);
    case link_type::ipv4: return dissect_ipv4<true>(f, 0, f.size, out);
    case link_type::ipv6: return dissect_ipv6<true>(f, 0, f.size, out);
    case link_type::raw:
      if (f.size == 0) {
        out.truncated = true;
        return;
      }
      switch (f.p[0] >> 4) {
        case 4: return dissect_ipv4<true>(f, 0, f.size, out);
        case 6: return dissect_ipv6<true>(f, 0, f.size, out);
        default: out.malformed = true; return;
      }
    default: out.unsupported_link = true; return;
  }
}

bool dissect_common(std::span<const std::uint8_t> bytes, common_frame& out) noexcept {
  const std::uint8_t* p = bytes.data();
  const std::size_t size = bytes.size();
  if (size < sizeof(ethernet_header)) return false;
  std::size_t off = sizeof(ethernet_header);
  std::uint16_t type = load_be16(p + 12);
  if (ethertype::is_vlan_tpid(type)) {
    if (size < off + sizeof(vlan_tag)) return false;
    type = load_be16(p + off + 2);
    off += sizeof(vlan_tag);
  }
  if (type == ethertype::ipv4) {
    // The checks dissect_ipv4, dissect_l4, dissect_udp and dissect_bth make, each one
    // that would flag the frame malformed or stop short sending it to dissect() instead.
    if (size - off < sizeof(ipv4_header)) return false;
    const std::uint8_t* ip = p + off;
    constexpr std::uint8_t version4_no_options = 0x45;
    if (ip[0] != version4_no_options || ip[9] != ip_protocol::udp) return false;
    const std::size_t total_length = load_be16(ip + ipv4_offset::total_length);
    if (total_length < sizeof(ipv4_header)) return false;
    if ((load_be16(ip + 6) & (ipv4_header::flag_more_fragments | 0x1FFF)) != 0) return false;
    const std::size_t ip_end = off + total_length;
    const bool truncated = ip_end > size;
    std::size_t limit = truncated ? size : ip_end;
    const std::size_t l4 = off + sizeof(ipv4_header);
    // Offsets here are below 2^17, so `at + n <= limit` is fits(at, n, limit) without its
    // overflow guard.
    if (l4 + sizeof(udp_header) > limit) return false;
    const std::uint8_t* u = p + l4;
    const std::size_t udp_length = load_be16(u + 4);
    if (load_be16(u + 2) != roce_v2_udp_port || udp_length < sizeof(udp_header) || udp_length > ip_end - l4)
      return false;
    if (l4 + udp_length <= limit) limit = l4 + udp_length;
    const std::size_t bth_at = l4 + sizeof(udp_header);
    if (bth_at + sizeof(bth) > limit) return false;
    const std::uint8_t* b = p + bth_at;
    const std::uint8_t opcode = b[0];
    const opcode_layout& layout = layout_of(opcode);
    const std::size_t ext = bth_at + sizeof(bth);
    if (layout.known) {
      const std::size_t overhead = layout.header_bytes + ((b[1] >> 4) & 0x3) + sizeof(icrc_trailer);
      if (l4 + udp_length - ext < overhead) return false;
    }
    if (layout.reth_offset != opcode_layout::absent && ext + layout.reth_offset + sizeof(reth) > limit) return false;
    out.has_aeth = layout.aeth_offset != opcode_layout::absent;
    if (out.has_aeth) {
      const std::size_t at = ext + layout.aeth_offset;
      if (at + sizeof(aeth) > limit) return false;
      out.aeth_syndrome = p[at];
    }
    out.what = common_frame::kind::roce;
    out.truncated = truncated;
    out.ecn = ip[ipv4_offset::tos] & 0x3;
    out.bth_opcode = opcode;
    // One 32-bit load each, the byte before each 24-bit field masked off.
    out.dest_qp = load_be32(b + 4) & 0xFFFFFF;
    out.psn = load_be32(b + 8) & 0xFFFFFF;
    std::memcpy(out.ip_src.data(), ip + 12, 4);
    std::memcpy(out.ip_dst.data(), ip + 16, 4);
    return true;
  }
  // Untagged and at least the minimum frame: dissect_mac_control flags neither.
  if (type != ethertype::mac_control || off != sizeof(ethernet_header) || size < min_frame_bytes) return false;
  if (load_be16(p + off) != mac_control_opcode::pfc) return false;
  out.what = common_frame::kind::pfc;
  std::memcpy(out.src_mac.data(), p + 6, 6);
  out.pfc_class_enable = load_be16(p + off + 2);
  for (std::size_t i = 0; i < pfc_priorities; ++i) out.pfc_quanta[i] = load_be16(p + off + 4 + 2 * i);
  return true;
}

}  // namespace rocelab::captures

#include "rocelab/captures/frame_builder.hpp"

#include <algorithm>
#include <cstring>

#include "rocelab/captures/icrc.hpp"
#include "rocelab/captures/wire/erspan.hpp"
#include "rocelab/captures/wire/gre.hpp"
#include "rocelab/captures/wire/ipv4.hpp"
#include "rocelab/captures/wire/ipv6.hpp"
#include "rocelab/captures/wire/udp.hpp"
#include "rocelab/captures/wire/vlan.hpp"

namespace rocelab::captures {
namespace {

using namespace wire;

constexpr std::size_t max_ipv4_options_bytes = 40;
constexpr std::size_t max_ip_packet_bytes = 0xFFFF;

template <typename Header>
std::uint8_t* put(std::uint8_t* p, const Header& h) noexcept {
  std::memcpy(p, &h, sizeof(Header));
  return p + sizeof(Header);
}

bool valid(const ethernet_spec& e) noexcept { return e.vlan_count <= max_vlan_tags; }

bool valid(const ip_spec& ip) noexcept {
  if (ip.version == 6) return true;
  return ip.version == 4 && ip.ipv4_options.size() <= max_ipv4_options_bytes &&
         ip.ipv4_options.size() % 4 == 0;
}

std::size_t ethernet_bytes(const ethernet_spec& e) noexcept {
  return sizeof(ethernet_header) + sizeof(vlan_tag) * e.vlan_count;
}

std::size_t ip_header_bytes(const ip_spec& ip) noexcept {
  return ip.version == 6 ? sizeof(ipv6_header) : sizeof(ipv4_header) + ip.ipv4_options.size();
}

std::size_t padded(const ethernet_spec& e, std::size_t length) noexcept {
  return e.pad_to_minimum ? std::max(length, min_frame_bytes) : length;
}

// Ethernet header and tags; `type` is the EtherType after the last tag.
std::uint8_t* write_ethernet(const ethernet_spec& e, std::uint16_t type, std::uint8_t* p) noexcept {
  ethernet_header eth;
  eth.set_dst(e.dst_mac);
  eth.set_src(e.src_mac);
  eth.set_type(e.vlan_count > 0 ? e.vlans[0].tpid : type);
  p = put(p, eth);
  for (std::size_t i = 0; i < e.vlan_count; ++i) {
    vlan_tag tag;
    tag.set(e.vlans[i].pcp, e.vlans[i].dei, e.vlans[i].vid);
    tag.set_type(i + 1 < e.vlan_count ? e.vlans[i + 1].tpid : type);
    p = put(p, tag);
  }
  return p;
}

// IP header for a payload of `payload_bytes`; the IPv4 checksum is filled in.
std::uint8_t* write_ip(const ip_spec& s, std::uint8_t protocol, std::size_t payload_bytes,
                       std::uint8_t* p) noexcept {
  if (s.version == 6) {
    ipv6_header h;
    h.set_version_class_flow(traffic_class(s.dscp, s.ecn), s.ipv6_flow_label);
    h.set_payload_length(static_cast<std::uint16_t>(payload_bytes));
    h.set_next_header(protocol);
    h.set_hop_limit(s.ttl);
    h.set_src(s.src);
    h.set_dst(s.dst);
    return put(p, h);
  }
  const std::size_t header_bytes = ip_header_bytes(s);
  ipv4_header h;
  h.set_version_ihl(4, static_cast<std::uint8_t>(header_bytes / 4));
  h.set_dscp_ecn(s.dscp, s.ecn);
  h.set_total_length(static_cast<std::uint16_t>(header_bytes + payload_bytes));
  h.set_identification(s.ipv4_identification);
  h.set_flags_fragment(s.dont_fragment, false, 0);
  h.set_ttl(s.ttl);
  h.set_protocol(protocol);
  h.set_src({s.src[12], s.src[13], s.src[14], s.src[15]});
  h.set_dst({s.dst[12], s.dst[13], s.dst[14], s.dst[15]});
  std::uint8_t* start = p;
  p = put(p, h);
  if (!s.ipv4_options.empty()) {
    std::memcpy(p, s.ipv4_options.data(), s.ipv4_options.size());
    p += s.ipv4_options.size();
  }
  store_be16(start + ipv4_offset::checksum, internet_checksum({start, header_bytes}));
  return p;
}

std::size_t pad_bytes_for(std::size_t payload_bytes) noexcept { return (4 - payload_bytes % 4) % 4; }

// Bytes from the start of UDP to the end of the ICRC.
std::size_t roce_udp_bytes(const roce_frame_spec& s) noexcept {
  const opcode_layout& l = layout_of(s.opcode);
  return sizeof(udp_header) + sizeof(bth) + l.header_bytes + s.payload.size() +
         pad_bytes_for(s.payload.size()) + sizeof(icrc_trailer);
}

// Fills the extended transport headers the opcode carries (IBTA 9.2 table 35).
void write_extended_headers(const roce_frame_spec& s, std::uint8_t* p) noexcept {
  const opcode_layout& l = layout_of(s.opcode);
  std::memset(p, 0, l.header_bytes);
  std::size_t immediate_at = l.header_bytes;  // past the end: none
  if (l.reth_offset != opcode_layout::absent) {
    reth r;
    r.set_virtual_address(s.reth_va);
    r.set_rkey(s.reth_rkey);
    r.set_dma_length(s.reth_dma_length);
    put(p + l.reth_offset, r);
  }
  if (l.aeth_offset != opcode_layout::absent) {
    aeth a;
    a.set_syndrome(s.aeth_syndrome);
    a.set_msn(s.aeth_msn);
    put(p + l.aeth_offset, a);
  }
  const std::uint8_t op = s.opcode & roce_opcode::operation_mask;
  const bool with_immediate_or_invalidate =
      op == 0x03 || op == 0x05 || op == 0x09 || op == 0x0B || op == 0x16 || op == 0x17;
  if (service_of(s.opcode) == transport_service::ud && l.header_bytes >= deth_bytes) {
    store_be32(p, s.deth_qkey);
    store_be24(p + 5, s.deth_src_qp);
    if (op == 0x05) immediate_at = deth_bytes;
  } else if (with_immediate_or_invalidate && l.known) {
    // ImmDt and IETH are the last extended header before the payload.
    immediate_at = l.header_bytes - immdt_bytes;
  }
  if (immediate_at + immdt_bytes <= l.header_bytes) store_be32(p + immediate_at, s.immediate);
}

std::size_t finish(std::vector<std::uint8_t>& out, std::size_t old_size, std::size_t written) {
  out.resize(old_size + written);
  return written;
}

}  // namespace

std::size_t roce_frame_length(const roce_frame_spec& s) noexcept {
  if (!valid(s.eth) || !valid(s.ip)) return 0;
  const std::size_t ip_bytes = ip_header_bytes(s.ip) + roce_udp_bytes(s);
  if (ip_bytes > max_ip_packet_bytes) return 0;
  return padded(s.eth, ethernet_bytes(s.eth) + ip_bytes);
}

std::size_t build_roce_frame(const roce_frame_spec& s, std::span<std::uint8_t> out) noexcept {
  const std::size_t length = roce_frame_length(s);
  if (length == 0 || out.size() < length) return 0;
  const std::uint16_t type = s.ip.version == 6 ? ethertype::ipv6 : ethertype::ipv4;
  const std::size_t udp_bytes = roce_udp_bytes(s);

  std::uint8_t* const start = out.data();
  std::uint8_t* p = write_ethernet(s.eth, type, start);
  std::uint8_t* const ip = p;
  p = write_ip(s.ip, ip_protocol::udp, udp_bytes, p);

  udp_header u;
  u.set_src_port(s.udp_src_port);
  u.set_dst_port(s.udp_dst_port);
  u.set_length(static_cast<std::uint16_t>(udp_bytes));
  u.set_checksum(0);  // A17.3.3 permits zero; RoCEv2 NICs send zero
  p = put(p, u);

  const std::size_t pad = pad_bytes_for(s.payload.size());
  bth b;
  b.set_opcode(s.opcode);
  b.set_flags(s.solicited, s.migreq, static_cast<std::uint8_t>(pad), s.tver);
  b.set_pkey(s.pkey);
  b.set_fecn_becn(s.fecn, s.becn);
  b.set_dest_qp(s.dest_qp);
  b.set_ack_req(s.ack_req);
  b.set_psn(s.psn);
  p = put(p, b);

  write_extended_headers(s, p);
  p += layout_of(s.opcode).header_bytes;
  if (!s.payload.empty()) std::memcpy(p, s.payload.data(), s.payload.size());
  p += s.payload.size();
  std::memset(p, 0, pad);
  p += pad;

  const auto icrc_at = static_cast<std::size_t>(p - start);
  const auto crc = compute_icrc(out, static_cast<std::size_t>(ip - start), icrc_at);
  icrc_trailer trailer;
  trailer.set(crc.value_or(0));
  p = put(p, trailer);
  std::memset(p, 0, length - static_cast<std::size_t>(p - start));
  return length;
}

namespace {
constexpr std::array<std::uint8_t, cnp_reserved_bytes> cnp_reserved{};

roce_frame_spec to_roce(const cnp_frame_spec& c) noexcept {
  roce_frame_spec s;
  s.eth = c.eth;
  s.ip = c.ip;
  s.udp_src_port = c.udp_src_port;
  s.opcode = roce_opcode::cnp;
  s.pkey = c.pkey;
  s.becn = true;
  s.dest_qp = c.dest_qp;
  s.psn = c.psn;
  s.payload = cnp_reserved;
  return s;
}
}  // namespace

std::size_t build_cnp_frame(const cnp_frame_spec& spec, std::span<std::uint8_t> out) noexcept {
  return build_roce_frame(to_roce(spec), out);
}

std::size_t build_pfc_frame(const pfc_frame_spec& s, std::span<std::uint8_t> out) noexcept {
  if (out.size() < min_frame_bytes) return 0;
  ethernet_spec e;
  e.dst_mac = s.dst_mac;
  e.src_mac = s.src_mac;
  std::uint8_t* p = write_ethernet(e, ethertype::mac_control, out.data());
  pfc_frame f;
  f.set_class_enable(s.class_enable);
  for (std::size_t i = 0; i < pfc_priorities; ++i) f.set_quanta(i, s.quanta[i]);
  p = put(p, f);
  std::memset(p, 0, min_frame_bytes - static_cast<std::size_t>(p - out.data()));
  return min_frame_bytes;
}

std::size_t build_pause_frame(const pause_frame_spec& s, std::span<std::uint8_t> out) noexcept {
  if (out.size() < min_frame_bytes) return 0;
  ethernet_spec e;
  e.dst_mac = s.dst_mac;
  e.src_mac = s.src_mac;
  std::uint8_t* p = write_ethernet(e, ethertype::mac_control, out.data());
  pause_frame f;
  f.set_quanta(s.quanta);
  p = put(p, f);
  std::memset(p, 0, min_frame_bytes - static_cast<std::size_t>(p - out.data()));
  return min_frame_bytes;
}

namespace {
std::size_t erspan_header_bytes(const erspan_spec& s) noexcept {
  switch (s.type) {
    case 1: return sizeof(gre_header);
    case 2: return sizeof(gre_header) + 4 + sizeof(erspan2_header);
    case 3:
      return sizeof(gre_header) + 4 + sizeof(erspan3_header) +
             (s.platform_subheader ? sizeof(erspan3_platform_subheader) : 0);
    default: return 0;
  }
}
}  // namespace

std::size_t erspan_frame_length(const erspan_spec& s, std::size_t inner_bytes) noexcept {
  const std::size_t encapsulation = erspan_header_bytes(s);
  if (encapsulation == 0 || !valid(s.outer_eth) || !valid(s.outer_ip)) return 0;
  const std::size_t ip_bytes = ip_header_bytes(s.outer_ip) + encapsulation + inner_bytes;
  if (ip_bytes > max_ip_packet_bytes) return 0;
  return padded(s.outer_eth, ethernet_bytes(s.outer_eth) + ip_bytes);
}

std::size_t build_erspan_frame(const erspan_spec& s, std::span<const std::uint8_t> inner,
                               std::span<std::uint8_t> out) noexcept {
  const std::size_t length = erspan_frame_length(s, inner.size());
  if (length == 0 || out.size() < length) return 0;
  const std::uint16_t type = s.outer_ip.version == 6 ? ethertype::ipv6 : ethertype::ipv4;
  std::uint8_t* const start = out.data();
  std::uint8_t* p = write_ethernet(s.outer_eth, type, start);
  p = write_ip(s.outer_ip, ip_protocol::gre, erspan_header_bytes(s) + inner.size(), p);

  gre_header g;
  g.set(false, false, s.type != 1, s.type == 3 ? ethertype::erspan_type3 : ethertype::erspan_type2);
  p = put(p, g);
  if (s.type != 1) {
    store_be32(p, s.gre_sequence);
    p += 4;
  }
  if (s.type == 2) {
    erspan2_header h;
    // En = 3 (VLAN preserved in the mirrored frame), as Cisco and Linux senders use.
    h.set(s.vlan, s.cos, 3, false, s.session_id, s.index);
    p = put(p, h);
  } else if (s.type == 3) {
    erspan3_header h;
    h.set(s.vlan, s.cos, false, s.session_id);
    h.set_timestamp(s.timestamp);
    h.set_flags(s.frame_type, s.hardware_id, s.egress, s.granularity, s.platform_subheader);
    p = put(p, h);
    if (s.platform_subheader) p = put(p, be64::from(s.platform_subheader_value));
  }
  if (!inner.empty()) std::memcpy(p, inner.data(), inner.size());
  p += inner.size();
  std::memset(p, 0, length - static_cast<std::size_t>(p - start));
  return length;
}

std::size_t append_roce_frame(const roce_frame_spec& spec, std::vector<std::uint8_t>& out) {
  const std::size_t old = out.size();
  out.resize(old + roce_frame_length(spec));
  return finish(out, old, build_roce_frame(spec, std::span(out).subspan(old)));
}

std::size_t append_cnp_frame(const cnp_frame_spec& spec, std::vector<std::uint8_t>& out) {
  return append_roce_frame(to_roce(spec), out);
}

std::size_t append_pfc_frame(const pfc_frame_spec& spec, std::vector<std::uint8_t>& out) {
  const std::size_t old = out.size();
  out.resize(old + min_frame_bytes);
  return finish(out, old, build_pfc_frame(spec, std::span(out).subspan(old)));
}

std::size_t append_pause_frame(const pause_frame_spec& spec, std::vector<std::uint8_t>& out) {
  const std::size_t old = out.size();
  out.resize(old + min_frame_bytes);
  return finish(out, old, build_pause_frame(spec, std::span(out).subspan(old)));
}

std::size_t append_erspan_frame(const erspan_spec& spec, std::span<const std::uint8_t> inner,
                                std::vector<std::uint8_t>& out) {
  const std::size_t old = out.size();
  out.resize(old + erspan_frame_length(spec, inner.size()));
  return finish(out, old, build_erspan_frame(spec, inner, std::span(out).subspan(old)));
}

}  // namespace rocelab::captures

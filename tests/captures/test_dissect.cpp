// dissect(): table-driven cases per layer, truncation at every length, and the real
// captures in shared/pcaps with the counts shared/pcaps/INDEX.md states.
#include "rocelab/captures/dissect.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "rocelab/captures/capture_file.hpp"
#include "rocelab/captures/frame_builder.hpp"
#include "rocelab/captures/icrc.hpp"
#include "rocelab/captures/wire/byte_order.hpp"
#include "rocelab/captures/wire/roce.hpp"

namespace rocelab::captures {
namespace {

using bytes = std::vector<std::uint8_t>;
namespace op = wire::roce_opcode;

dissected_frame run(const bytes& f, link_type link = link_type::ethernet) {
  dissected_frame d;
  d.is_roce = true;  // stale state from a previous frame must not survive
  d.truncated = true;
  d.pfc_quanta[3] = 9;
  dissect(link, f, d);
  return d;
}

const wire::mac_address mac_a{0x0C, 0x42, 0xA1, 0xAA, 0x00, 0x01};
const wire::mac_address mac_b{0x0C, 0x42, 0xA1, 0xBB, 0x00, 0x02};

roce_frame_spec roce(std::uint8_t opcode = op::rc_send_only) {
  roce_frame_spec s;
  s.eth.dst_mac = mac_b;
  s.eth.src_mac = mac_a;
  s.ip.src = ipv4_mapped(10, 0, 0, 1);
  s.ip.dst = ipv4_mapped(10, 0, 0, 2);
  s.ip.dscp = 26;
  s.ip.ecn = wire::ecn_codepoint::ect0;
  s.udp_src_port = 49152;
  s.opcode = opcode;
  s.dest_qp = 0x45;
  s.psn = 0x123456;
  return s;
}

const bytes payload_100(100, 0x5A);

bytes build(roce_frame_spec s) {
  bytes f;
  EXPECT_GT(append_roce_frame(s, f), 0u);
  return f;
}

bytes with_payload(roce_frame_spec s, const bytes& payload = payload_100) {
  s.payload = payload;
  return build(s);
}

bytes erspan(std::uint8_t type, const bytes& inner, std::uint8_t frame_type = 0,
             bool platform = false) {
  erspan_spec e;
  e.type = type;
  e.outer_eth.dst_mac = {2, 0, 0, 0, 0, 0xEE};
  e.outer_eth.src_mac = {2, 0, 0, 0, 0, 0xFF};
  e.outer_ip.src = ipv4_mapped(192, 168, 1, 1);
  e.outer_ip.dst = ipv4_mapped(192, 168, 1, 2);
  e.outer_ip.dscp = 8;
  e.outer_ip.ecn = wire::ecn_codepoint::ce;
  e.session_id = 101;
  e.gre_sequence = 5;
  e.frame_type = frame_type;
  e.platform_subheader = platform;
  e.platform_subheader_value = 0x0400000000000000;
  bytes f;
  EXPECT_GT(append_erspan_frame(e, inner, f), 0u);
  return f;
}

bytes pfc(std::uint16_t enable, std::array<std::uint16_t, 8> quanta) {
  pfc_frame_spec p;
  p.src_mac = mac_a;
  p.class_enable = enable;
  p.quanta = quanta;
  bytes f;
  EXPECT_EQ(append_pfc_frame(p, f), 60u);
  return f;
}

bytes pause(std::uint16_t quanta) {
  pause_frame_spec p;
  p.src_mac = mac_a;
  p.quanta = quanta;
  bytes f;
  EXPECT_EQ(append_pause_frame(p, f), 60u);
  return f;
}

// Replaces the bytes at `at` (used to hand-break an otherwise valid frame).
bytes patched(bytes f, std::size_t at, std::initializer_list<std::uint8_t> values) {
  for (auto v : values) f.at(at++) = v;
  return f;
}

// A frame with `tags` 802.1Q tags in front of an IPv4 RoCE packet.
bytes tagged(std::size_t tags) {
  bytes inner = with_payload(roce());
  bytes f(inner.begin(), inner.begin() + 12);
  for (std::size_t i = 0; i < tags; ++i) {
    f.insert(f.end(), {0x81, 0x00, static_cast<std::uint8_t>(0x20 | (i >> 8)), static_cast<std::uint8_t>(i + 1)});
  }
  f.insert(f.end(), inner.begin() + 12, inner.end());
  return f;
}

struct dissect_case {
  std::string name;
  std::function<bytes()> make;
  std::function<void(const dissected_frame&)> check;
  link_type link = link_type::ethernet;
};

class Dissect : public ::testing::TestWithParam<dissect_case> {};

TEST_P(Dissect, Fields) {
  const auto& c = GetParam();
  const bytes f = c.make();
  c.check(run(f, c.link));
}

std::array<std::uint8_t, 16> mapped(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  return ipv4_mapped(a, b, c, d);
}

const std::vector<dissect_case> cases = {
    {"roce_ipv4_untagged_every_layer", [] { return with_payload(roce()); },
     [](const dissected_frame& d) {
       EXPECT_FALSE(d.truncated);
       EXPECT_FALSE(d.malformed);
       EXPECT_FALSE(d.unsupported_link);
       EXPECT_EQ(d.erspan_type, 0);
       EXPECT_TRUE(d.has_ethernet);
       EXPECT_EQ(d.dst_mac, mac_b);
       EXPECT_EQ(d.src_mac, mac_a);
       EXPECT_EQ(d.ethertype, 0x0800);
       EXPECT_EQ(d.vlan_count, 0);
       EXPECT_EQ(d.ip_version, 4);
       EXPECT_EQ(d.ip_offset, 14);
       EXPECT_EQ(d.dscp, 26);
       EXPECT_EQ(d.ecn, 2);
       EXPECT_EQ(d.ip_protocol, 17);
       EXPECT_EQ(d.ip_src, mapped(10, 0, 0, 1));
       EXPECT_EQ(d.ip_dst, mapped(10, 0, 0, 2));
       EXPECT_TRUE(d.has_udp);
       EXPECT_EQ(d.udp_src_port, 49152);
       EXPECT_EQ(d.udp_dst_port, 4791);
       EXPECT_TRUE(d.is_roce);
       EXPECT_EQ(d.bth_opcode, op::rc_send_only);
       EXPECT_EQ(d.bth_pkey, 0xFFFF);
       EXPECT_EQ(d.dest_qp, 0x45u);
       EXPECT_EQ(d.psn, 0x123456u);
       EXPECT_FALSE(d.has_reth);
       EXPECT_FALSE(d.has_aeth);
       EXPECT_EQ(d.roce_payload_length, 100u);
       EXPECT_FALSE(d.is_mac_control);
       EXPECT_EQ(d.pfc_quanta[3], 0);
     }},
    {"bth_flags_and_pad_count",
     [] {
       auto s = roce(op::rc_send_last);
       s.solicited = true;
       s.migreq = true;
       s.ack_req = true;
       s.fecn = true;
       s.pkey = 0x8001;
       return with_payload(s, bytes(7, 1));
     },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.bth_solicited);
       EXPECT_TRUE(d.bth_migreq);
       EXPECT_TRUE(d.ack_req);
       EXPECT_TRUE(d.bth_fecn);
       EXPECT_FALSE(d.bth_becn);
       EXPECT_EQ(d.bth_pad_count, 1);
       EXPECT_EQ(d.bth_tver, 0);
       EXPECT_EQ(d.bth_pkey, 0x8001);
       EXPECT_EQ(d.roce_payload_length, 7u);
     }},
    {"single_vlan_tag_pcp_dei_vid",
     [] {
       auto s = roce();
       s.eth.vlan_count = 1;
       s.eth.vlans[0] = {wire::ethertype::vlan, 3, true, 100};
       return with_payload(s);
     },
     [](const dissected_frame& d) {
       EXPECT_EQ(d.vlan_count, 1);
       EXPECT_EQ(d.vlan_id, 100);
       EXPECT_EQ(d.vlan_pcp, 3);
       EXPECT_TRUE(d.vlan_dei);
       EXPECT_EQ(d.inner_vlan_id, 100);
       EXPECT_EQ(d.inner_vlan_pcp, 3);
       EXPECT_EQ(d.ethertype, 0x0800);
       EXPECT_EQ(d.ip_offset, 18);
       EXPECT_TRUE(d.is_roce);
     }},
    {"qinq_keeps_outer_and_inner_tag",
     [] {
       auto s = roce();
       s.eth.vlan_count = 2;
       s.eth.vlans[0] = {wire::ethertype::qinq, 7, false, 300};
       s.eth.vlans[1] = {wire::ethertype::vlan, 5, false, 10};
       return with_payload(s);
     },
     [](const dissected_frame& d) {
       EXPECT_EQ(d.vlan_count, 2);
       EXPECT_EQ(d.vlan_id, 300);
       EXPECT_EQ(d.vlan_pcp, 7);
       EXPECT_FALSE(d.vlan_dei);
       EXPECT_EQ(d.inner_vlan_id, 10);
       EXPECT_EQ(d.inner_vlan_pcp, 5);
       EXPECT_TRUE(d.is_roce);
     }},
    {"eight_stacked_tags_are_the_limit", [] { return tagged(8); },
     [](const dissected_frame& d) {
       EXPECT_FALSE(d.malformed);
       EXPECT_EQ(d.vlan_count, 8);
       EXPECT_EQ(d.vlan_id, 1);
       EXPECT_EQ(d.inner_vlan_id, 8);
       EXPECT_EQ(d.vlan_pcp, 1);
       EXPECT_TRUE(d.is_roce);
     }},
    {"nine_stacked_tags_are_malformed", [] { return tagged(9); },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.malformed);
       EXPECT_FALSE(d.truncated);
       EXPECT_EQ(d.ip_version, 0);
       EXPECT_FALSE(d.is_roce);
     }},
    {"ipv4_options_ihl6_is_valid_roce",
     [] {
       static const bytes options{0x94, 0x04, 0x00, 0x00};
       auto s = roce();
       s.ip.ipv4_options = options;
       return with_payload(s);
     },
     [](const dissected_frame& d) {
       EXPECT_FALSE(d.malformed);
       EXPECT_EQ(d.ip_version, 4);
       EXPECT_TRUE(d.is_roce);
       EXPECT_EQ(d.udp_dst_port, 4791);
       EXPECT_EQ(d.psn, 0x123456u);
     }},
    {"ipv6_roce_write_first_with_reth",
     [] {
       auto s = roce(op::rc_rdma_write_first);
       s.ip.version = 6;
       s.ip.src = {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
       s.ip.dst = {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
       s.ip.ecn = wire::ecn_codepoint::ce;
       s.reth_va = 0x00007F0000001000;
       s.reth_rkey = 0x1234;
       s.reth_dma_length = 65536;
       return with_payload(s);
     },
     [](const dissected_frame& d) {
       EXPECT_EQ(d.ethertype, 0x86DD);
       EXPECT_EQ(d.ip_version, 6);
       EXPECT_EQ(d.ecn, 3);
       EXPECT_EQ(d.dscp, 26);
       EXPECT_EQ(d.ip_src[0], 0xFD);
       EXPECT_EQ(d.ip_dst[15], 2);
       EXPECT_TRUE(d.is_roce);
       EXPECT_TRUE(d.has_reth);
       EXPECT_EQ(d.reth_va, 0x00007F0000001000u);
       EXPECT_EQ(d.reth_rkey, 0x1234u);
       EXPECT_EQ(d.reth_dma_length, 65536u);
       EXPECT_EQ(d.roce_payload_length, 100u);
     }},
    {"write_only_with_immediate_has_reth",
     [] {
       auto s = roce(op::rc_rdma_write_only_with_immediate);
       s.reth_dma_length = 100;
       return with_payload(s);
     },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.has_reth);
       EXPECT_EQ(d.reth_dma_length, 100u);
       EXPECT_EQ(d.roce_payload_length, 100u);
     }},
    {"write_middle_has_no_reth", [] { return with_payload(roce(op::rc_rdma_write_middle)); },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.is_roce);
       EXPECT_FALSE(d.has_reth);
       EXPECT_FALSE(d.has_aeth);
     }},
    {"read_request_has_reth",
     [] {
       auto s = roce(op::rc_rdma_read_request);
       s.reth_dma_length = 1 << 20;
       return build(s);
     },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.has_reth);
       EXPECT_EQ(d.reth_dma_length, 1u << 20);
       EXPECT_EQ(d.roce_payload_length, 0u);
     }},
    {"read_response_first_has_aeth",
     [] {
       auto s = roce(op::rc_rdma_read_response_first);
       s.aeth_msn = 77;
       return with_payload(s);
     },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.has_aeth);
       EXPECT_FALSE(d.has_reth);
       EXPECT_EQ(d.aeth_msn, 77u);
       EXPECT_EQ(d.roce_payload_length, 100u);
     }},
    {"read_response_middle_has_no_aeth", [] { return with_payload(roce(op::rc_rdma_read_response_middle)); },
     [](const dissected_frame& d) { EXPECT_FALSE(d.has_aeth); }},
    {"read_response_only_has_aeth", [] { return with_payload(roce(op::rc_rdma_read_response_only)); },
     [](const dissected_frame& d) { EXPECT_TRUE(d.has_aeth); }},
    {"ack_syndrome_and_msn",
     [] {
       auto s = roce(op::rc_acknowledge);
       s.aeth_syndrome = 0x1F;
       s.aeth_msn = 0xABCDEF;
       return build(s);
     },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.has_aeth);
       EXPECT_EQ(d.aeth_syndrome, 0x1F);
       EXPECT_EQ(wire::aeth_kind_of(d.aeth_syndrome), wire::aeth_kind::ack);
       EXPECT_EQ(d.aeth_msn, 0xABCDEFu);
       EXPECT_EQ(d.roce_payload_length, 0u);
     }},
    {"nak_psn_sequence_error",
     [] {
       auto s = roce(op::rc_acknowledge);
       s.aeth_syndrome = 0x60;
       return build(s);
     },
     [](const dissected_frame& d) {
       EXPECT_EQ(wire::aeth_kind_of(d.aeth_syndrome), wire::aeth_kind::nak);
       EXPECT_EQ(d.aeth_syndrome & 0x1F, 0);
     }},
    {"rnr_nak_with_timer",
     [] {
       auto s = roce(op::rc_acknowledge);
       s.aeth_syndrome = 0x20 | 12;
       return build(s);
     },
     [](const dissected_frame& d) {
       EXPECT_EQ(wire::aeth_kind_of(d.aeth_syndrome), wire::aeth_kind::rnr_nak);
       EXPECT_EQ(d.aeth_syndrome & 0x1F, 12);
     }},
    {"atomic_ack_has_aeth", [] { return build(roce(op::rc_atomic_acknowledge)); },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.has_aeth);
       EXPECT_EQ(d.roce_payload_length, 0u);
     }},
    {"cnp_sets_becn_and_carries_16_bytes",
     [] {
       cnp_frame_spec c;
       c.ip.src = ipv4_mapped(10, 0, 0, 2);
       c.ip.dst = ipv4_mapped(10, 0, 0, 1);
       c.dest_qp = 0x118;
       bytes f;
       EXPECT_GT(append_cnp_frame(c, f), 0u);
       return f;
     },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.is_roce);
       EXPECT_EQ(d.bth_opcode, 0x81);
       EXPECT_TRUE(d.bth_becn);
       EXPECT_FALSE(d.bth_fecn);
       EXPECT_EQ(d.dest_qp, 0x118u);
       EXPECT_EQ(d.dscp, 48);
       EXPECT_EQ(d.udp_src_port, 0);
       EXPECT_EQ(d.roce_payload_length, 16u);
     }},
    {"udp_source_port_4791_to_another_port_is_not_roce",
     [] {
       auto s = roce();
       s.udp_src_port = 4791;
       s.udp_dst_port = 9999;
       return with_payload(s);
     },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.has_udp);
       EXPECT_EQ(d.udp_src_port, 4791);
       EXPECT_FALSE(d.is_roce);
       EXPECT_EQ(d.bth_opcode, 0);
       EXPECT_FALSE(d.malformed);
     }},
    {"udp_low_source_port_to_4791_is_roce",
     [] {
       auto s = roce(op::rc_acknowledge);
       s.udp_src_port = 69;  // TFTP's port: dissecting by the lower port gets this wrong
       return build(s);
     },
     [](const dissected_frame& d) { EXPECT_TRUE(d.is_roce); }},
    {"udp_to_4791_too_short_for_a_bth_is_malformed_not_roce",
     [] {
       auto f = build(roce());
       f.resize(14 + 20 + 8 + 6);
       // IPv4 total length 34 and UDP length 14: six bytes where the BTH needs twelve.
       f = patched(f, 16, {0x00, 34});
       f = patched(f, 24, {0, 0});
       wire::store_be16(f.data() + 24, wire::internet_checksum(std::span(f).subspan(14, 20)));
       return patched(f, 38, {0x00, 14});
     },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.has_udp);
       EXPECT_FALSE(d.is_roce);
       EXPECT_TRUE(d.malformed);
       EXPECT_FALSE(d.truncated);
     }},
    {"udp_length_shorter_than_bth_inside_a_longer_ip_packet_is_malformed",
     [] { return patched(with_payload(roce()), 38, {0x00, 14}); },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.malformed);
       EXPECT_FALSE(d.truncated);
       EXPECT_FALSE(d.is_roce);
       EXPECT_EQ(d.roce_payload_length, 0u);
     }},
    {"udp_length_ending_inside_the_extended_headers_is_malformed",
     [] { return patched(with_payload(roce(op::rc_rdma_write_first)), 38, {0x00, 8 + 12 + 4}); },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.malformed);
       EXPECT_TRUE(d.is_roce);
       EXPECT_FALSE(d.has_reth);
       EXPECT_EQ(d.roce_payload_length, 0u);
     }},
    {"udp_length_beyond_ip_length_is_malformed",
     [] { return patched(with_payload(roce()), 38, {0xFF, 0xFF}); },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.malformed);
       EXPECT_FALSE(d.is_roce);
     }},
    {"ethernet_padding_after_a_short_packet_is_not_read_as_payload",
     [] { return build(roce()); },  // 58 bytes padded to 60
     [](const dissected_frame& d) {
       EXPECT_FALSE(d.truncated);
       EXPECT_FALSE(d.malformed);
       EXPECT_TRUE(d.is_roce);
       EXPECT_EQ(d.roce_payload_length, 0u);
     }},
    {"ipv4_fragment_has_no_transport",
     [] { return patched(with_payload(roce()), 14 + 6, {0x20, 0x00}); },  // MF set
     [](const dissected_frame& d) {
       EXPECT_EQ(d.ip_version, 4);
       EXPECT_FALSE(d.has_udp);
       EXPECT_FALSE(d.is_roce);
     }},
    {"ipv4_ihl_below_5_is_malformed", [] { return patched(with_payload(roce()), 14, {0x44}); },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.malformed);
       EXPECT_EQ(d.ip_version, 0);
       EXPECT_FALSE(d.has_udp);
     }},
    {"ipv4_ethertype_with_version_6_is_malformed", [] { return patched(with_payload(roce()), 14, {0x65}); },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.malformed);
       EXPECT_EQ(d.ip_version, 0);
     }},
    {"ipv4_total_length_below_header_is_malformed",
     [] { return patched(with_payload(roce()), 16, {0x00, 0x10}); },
     [](const dissected_frame& d) { EXPECT_TRUE(d.malformed); }},
    {"ipv4_total_length_ending_inside_udp_is_malformed",
     [] { return patched(with_payload(roce()), 16, {0x00, 24}); },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.malformed);
       EXPECT_FALSE(d.truncated);
       EXPECT_FALSE(d.has_udp);
     }},
    {"ipv6_ethertype_with_version_4_is_malformed",
     [] {
       auto s = roce();
       s.ip.version = 6;
       return patched(with_payload(s), 14, {0x45});
     },
     [](const dissected_frame& d) { EXPECT_TRUE(d.malformed); }},
    {"arp_is_ethernet_only", [] { return patched(build(roce()), 12, {0x08, 0x06}); },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.has_ethernet);
       EXPECT_EQ(d.ethertype, 0x0806);
       EXPECT_EQ(d.ip_version, 0);
       EXPECT_FALSE(d.truncated);
       EXPECT_FALSE(d.malformed);
     }},
    {"pfc_class_enable_and_quanta",
     [] { return pfc(0x0188, {1, 2, 3, 0xFFFF, 5, 6, 7, 0x0807}); },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.is_mac_control);
       EXPECT_EQ(d.ethertype, 0x8808);
       EXPECT_EQ(d.dst_mac, wire::mac_control_multicast);
       EXPECT_EQ(d.mac_control_opcode, 0x0101);
       EXPECT_EQ(d.pfc_class_enable, 0x0188);  // reserved high bit kept as captured
       EXPECT_EQ(d.pfc_quanta, (std::array<std::uint16_t, 8>{1, 2, 3, 0xFFFF, 5, 6, 7, 0x0807}));
       EXPECT_EQ(d.pause_quanta, 0);
       EXPECT_FALSE(d.truncated);
     }},
    {"pause_quanta", [] { return pause(0xFFFF); },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.is_mac_control);
       EXPECT_EQ(d.mac_control_opcode, 0x0001);
       EXPECT_EQ(d.pause_quanta, 0xFFFF);
       EXPECT_EQ(d.pfc_class_enable, 0);
     }},
    {"mac_control_other_opcode_has_no_pause_fields", [] { return patched(pause(0xFFFF), 14, {0x00, 0x02}); },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.is_mac_control);
       EXPECT_EQ(d.mac_control_opcode, 0x0002);
       EXPECT_EQ(d.pause_quanta, 0);
     }},
    {"erspan_type_ii_decapsulates_roce",
     [] {
       auto s = roce(op::rc_rdma_write_first);
       s.eth.vlan_count = 1;
       s.eth.vlans[0] = {wire::ethertype::vlan, 3, false, 100};
       return erspan(2, with_payload(s));
     },
     [](const dissected_frame& d) {
       EXPECT_EQ(d.erspan_type, 2);
       EXPECT_EQ(d.erspan_session, 101);
       EXPECT_TRUE(d.erspan_inner_parsed);
       EXPECT_EQ(d.dst_mac, mac_b);  // inner, not the mirror's
       EXPECT_EQ(d.vlan_pcp, 3);
       EXPECT_EQ(d.ip_src, mapped(10, 0, 0, 1));
       EXPECT_EQ(d.ip_offset, 14 + 20 + 8 + 8 + 18);
       EXPECT_EQ(d.dscp, 26);
       EXPECT_EQ(d.ecn, 2);
       EXPECT_TRUE(d.is_roce);
       EXPECT_TRUE(d.has_reth);
       EXPECT_FALSE(d.truncated);
     }},
    {"erspan_type_i_has_no_erspan_header", [] { return erspan(1, with_payload(roce())); },
     [](const dissected_frame& d) {
       EXPECT_EQ(d.erspan_type, 1);
       EXPECT_EQ(d.erspan_session, 0);
       EXPECT_TRUE(d.erspan_inner_parsed);
       EXPECT_EQ(d.ip_offset, 14 + 20 + 4 + 14);
       EXPECT_TRUE(d.is_roce);
     }},
    {"erspan_type_iii_decapsulates", [] { return erspan(3, pfc(0x08, {0, 0, 0, 100, 0, 0, 0, 0})); },
     [](const dissected_frame& d) {
       EXPECT_EQ(d.erspan_type, 3);
       EXPECT_EQ(d.erspan_session, 101);
       EXPECT_TRUE(d.erspan_inner_parsed);
       EXPECT_TRUE(d.is_mac_control);
       EXPECT_EQ(d.pfc_quanta[3], 100);
     }},
    {"erspan_type_iii_with_platform_subheader",
     [] { return erspan(3, with_payload(roce()), 0, true); },
     [](const dissected_frame& d) {
       EXPECT_EQ(d.erspan_type, 3);
       EXPECT_TRUE(d.erspan_inner_parsed);
       EXPECT_EQ(d.ip_offset, 14 + 20 + 8 + 12 + 8 + 14);
       EXPECT_TRUE(d.is_roce);
     }},
    {"erspan_type_iii_frame_type_not_ethernet_is_erspan_without_inner",
     [] { return erspan(3, with_payload(roce()), 7); },
     [](const dissected_frame& d) {
       EXPECT_EQ(d.erspan_type, 3);
       EXPECT_EQ(d.erspan_session, 101);
       EXPECT_FALSE(d.erspan_inner_parsed);
       EXPECT_FALSE(d.has_ethernet);  // outer layers are not reported as the frame's
       EXPECT_EQ(d.ip_version, 0);
       EXPECT_FALSE(d.is_roce);
       EXPECT_FALSE(d.malformed);
     }},
    {"erspan_over_ipv6",
     [] {
       erspan_spec e;
       e.type = 2;
       e.outer_ip.version = 6;
       e.session_id = 7;
       bytes f;
       EXPECT_GT(append_erspan_frame(e, with_payload(roce()), f), 0u);
       return f;
     },
     [](const dissected_frame& d) {
       EXPECT_EQ(d.erspan_type, 2);
       EXPECT_EQ(d.erspan_session, 7);
       EXPECT_EQ(d.ip_version, 4);
       EXPECT_TRUE(d.is_roce);
     }},
    {"erspan_inside_erspan_is_decapsulated_once",
     [] { return erspan(2, erspan(3, with_payload(roce()))); },
     [](const dissected_frame& d) {
       EXPECT_EQ(d.erspan_type, 2);
       EXPECT_TRUE(d.erspan_inner_parsed);
       EXPECT_EQ(d.ip_protocol, 47);
       EXPECT_EQ(d.ip_src, mapped(192, 168, 1, 1));
       EXPECT_FALSE(d.is_roce);
     }},
    {"gre_transparent_bridging_is_not_erspan",
     [] { return patched(erspan(1, with_payload(roce())), 36, {0x65, 0x58}); },
     [](const dissected_frame& d) {
       EXPECT_EQ(d.erspan_type, 0);
       EXPECT_FALSE(d.erspan_inner_parsed);
       EXPECT_EQ(d.ip_protocol, 47);
       EXPECT_EQ(d.ip_src, mapped(192, 168, 1, 1));
       EXPECT_EQ(d.ecn, 3);
       EXPECT_FALSE(d.is_roce);
     }},
    {"gre_version_1_is_not_erspan", [] { return patched(erspan(2, with_payload(roce())), 34, {0x10, 0x01}); },
     [](const dissected_frame& d) { EXPECT_EQ(d.erspan_type, 0); }},
    {"raw_link_ipv4", [] { auto f = with_payload(roce()); return bytes(f.begin() + 14, f.end()); },
     [](const dissected_frame& d) {
       EXPECT_FALSE(d.has_ethernet);
       EXPECT_EQ(d.ip_version, 4);
       EXPECT_EQ(d.ip_offset, 0);
       EXPECT_TRUE(d.is_roce);
     },
     link_type::raw},
    {"raw_link_ipv6",
     [] {
       auto s = roce();
       s.ip.version = 6;
       auto f = with_payload(s);
       return bytes(f.begin() + 14, f.end());
     },
     [](const dissected_frame& d) {
       EXPECT_EQ(d.ip_version, 6);
       EXPECT_TRUE(d.is_roce);
     },
     link_type::raw},
    {"raw_link_version_5_is_malformed", [] { return bytes{0x50, 0, 0, 0}; },
     [](const dissected_frame& d) { EXPECT_TRUE(d.malformed); }, link_type::raw},
    {"raw_link_empty_is_truncated", [] { return bytes{}; },
     [](const dissected_frame& d) { EXPECT_TRUE(d.truncated); }, link_type::raw},
    {"ipv4_link_type", [] { auto f = with_payload(roce()); return bytes(f.begin() + 14, f.end()); },
     [](const dissected_frame& d) { EXPECT_TRUE(d.is_roce); }, link_type::ipv4},
    {"ipv4_link_type_with_ipv6_packet_is_malformed",
     [] {
       auto s = roce();
       s.ip.version = 6;
       auto f = with_payload(s);
       return bytes(f.begin() + 14, f.end());
     },
     [](const dissected_frame& d) { EXPECT_TRUE(d.malformed); }, link_type::ipv4},
    {"ipv6_link_type",
     [] {
       auto s = roce();
       s.ip.version = 6;
       auto f = with_payload(s);
       return bytes(f.begin() + 14, f.end());
     },
     [](const dissected_frame& d) { EXPECT_TRUE(d.is_roce); }, link_type::ipv6},
    {"bsd_loopback_link_is_unsupported", [] { return with_payload(roce()); },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.unsupported_link);
       EXPECT_FALSE(d.has_ethernet);
       EXPECT_FALSE(d.truncated);
     },
     link_type::null_bsd},
    {"empty_ethernet_frame_is_truncated", [] { return bytes{}; },
     [](const dissected_frame& d) {
       EXPECT_TRUE(d.truncated);
       EXPECT_FALSE(d.has_ethernet);
     }},
};

INSTANTIATE_TEST_SUITE_P(Layers, Dissect, ::testing::ValuesIn(cases),
                         [](const auto& info) { return info.param.name; });

// Every proper prefix of a full frame is flagged truncated, never malformed, and nothing
// past the prefix is read (the copies are exactly sized so ASan sees any overread).
struct truncation_case {
  std::string name;
  std::function<bytes()> make;
};

class TruncatedAtEveryLength : public ::testing::TestWithParam<truncation_case> {};

TEST_P(TruncatedAtEveryLength, IsFlaggedAndStaysInBounds) {
  const bytes full = GetParam().make();
  const dissected_frame whole = run(full);
  ASSERT_FALSE(whole.truncated);
  ASSERT_FALSE(whole.malformed);
  for (std::size_t n = 0; n < full.size(); ++n) {
    const bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    const dissected_frame d = run(cut);
    EXPECT_TRUE(d.truncated) << "length " << n;
    EXPECT_FALSE(d.malformed) << "length " << n;
    // What is reported from a prefix agrees with the whole frame.
    if (d.is_roce) {
      EXPECT_EQ(d.psn, whole.psn) << "length " << n;
      EXPECT_EQ(d.roce_payload_length, whole.roce_payload_length) << "length " << n;
    }
    // (A prefix that ends before the GRE header cannot know it is a mirror: its IP
    // layer is the outer one.)
    if (d.ip_version != 0 && d.erspan_type == whole.erspan_type) {
      EXPECT_EQ(d.ip_src, whole.ip_src) << "length " << n;
    }
    EXPECT_EQ(d.erspan_type == 0, whole.erspan_type == 0 || n < 34 + 4) << "length " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Frames, TruncatedAtEveryLength,
    ::testing::Values(
        truncation_case{"roce_vlan_ipv4_write_first",
                        [] {
                          auto s = roce(op::rc_rdma_write_first);
                          s.eth.vlan_count = 2;
                          s.eth.vlans[0].tpid = wire::ethertype::qinq;
                          return with_payload(s, bytes(20, 1));
                        }},
        truncation_case{"roce_ipv4_options_ack",
                        [] {
                          static const bytes options{1, 1, 1, 0};
                          auto s = roce(op::rc_acknowledge);
                          s.ip.ipv4_options = options;
                          return build(s);
                        }},
        truncation_case{"roce_ipv6_read_response_first",
                        [] {
                          auto s = roce(op::rc_rdma_read_response_first);
                          s.ip.version = 6;
                          return with_payload(s, bytes(8, 1));
                        }},
        truncation_case{"cnp",
                        [] {
                          bytes f;
                          EXPECT_GT(append_cnp_frame(cnp_frame_spec{}, f), 0u);
                          return f;
                        }},
        truncation_case{"pfc", [] { return pfc(0xFF, {1, 2, 3, 4, 5, 6, 7, 8}); }},
        truncation_case{"pause", [] { return pause(0xFFFF); }},
        truncation_case{"erspan_ii_roce", [] { return erspan(2, with_payload(roce(), bytes(8, 1))); }},
        truncation_case{"erspan_i_roce", [] { return erspan(1, with_payload(roce(), bytes(8, 1))); }},
        truncation_case{"erspan_iii_platform_pfc",
                        [] { return erspan(3, pfc(1, {1, 0, 0, 0, 0, 0, 0, 0}), 0, true); }}),
    [](const auto& info) { return info.param.name; });

TEST(Dissect, RoundTripsEveryBuiltOpcodeWithValidIcrc) {
  for (unsigned opcode = 0; opcode < 256; ++opcode) {
    const auto& layout = wire::layout_of(static_cast<std::uint8_t>(opcode));
    if (!layout.known) continue;
    auto s = roce(static_cast<std::uint8_t>(opcode));
    s.reth_dma_length = 4096;
    s.aeth_msn = opcode;
    const bytes f = with_payload(s, bytes(opcode % 9, 3));
    const auto d = run(f);
    EXPECT_TRUE(d.is_roce) << opcode;
    EXPECT_FALSE(d.malformed) << opcode;
    EXPECT_EQ(d.bth_opcode, opcode);
    EXPECT_EQ(d.has_reth, wire::has_reth(static_cast<std::uint8_t>(opcode))) << opcode;
    EXPECT_EQ(d.has_aeth, wire::has_aeth(static_cast<std::uint8_t>(opcode))) << opcode;
    if (d.has_reth) {
      EXPECT_EQ(d.reth_dma_length, 4096u);
    }
    if (d.has_aeth) {
      EXPECT_EQ(d.aeth_msn, opcode);
    }
    EXPECT_EQ(d.roce_payload_length, opcode % 9) << opcode;
    EXPECT_EQ(verify_icrc(f, d.ip_offset), icrc_check::valid) << opcode;
  }
}

TEST(Dissect, SurvivesEverySingleByteCorruption) {
  // Not a fuzzer, but every byte of an ERSPAN-wrapped RoCE frame set to each of a few
  // values: no crash, no overread (run under the sanitizer build).
  const bytes base = erspan(3, with_payload(roce(op::rc_rdma_write_first), bytes(8, 1)), 0, true);
  for (std::size_t at = 0; at < base.size(); ++at) {
    for (std::uint8_t v : {0x00, 0x01, 0x0F, 0x45, 0x81, 0xFF}) {
      bytes f = base;
      f[at] = v;
      (void)run(f);
    }
  }
}

// ---- Real captures (shared/pcaps, counts from INDEX.md) ----

struct capture {
  std::vector<bytes> frames;
  std::vector<link_type> links;
};

capture read_capture(const std::string& name) {
  capture c;
  const std::string path = std::string(ROCELAB_SHARED_DIR) + "/pcaps/" + name;
  auto reader = capture_file_reader::open(path);
  if (!reader.ok()) {
    ADD_FAILURE() << "cannot open " << path;
    return c;
  }
  packet_view p;
  while (reader->next(p)) {
    c.frames.emplace_back(p.bytes.begin(), p.bytes.end());
    c.links.push_back(reader->interfaces().at(p.interface_id).link);
  }
  return c;
}

std::vector<dissected_frame> dissect_capture(const std::string& name) {
  const capture c = read_capture(name);
  std::vector<dissected_frame> out;
  for (std::size_t i = 0; i < c.frames.size(); ++i) out.push_back(run(c.frames[i], c.links[i]));
  return out;
}

template <typename Pred>
std::size_t count(const std::vector<dissected_frame>& v, Pred p) {
  std::size_t n = 0;
  for (const auto& d : v) n += p(d) ? 1 : 0;
  return n;
}

TEST(RealCaptures, Rocev2RcSendAckHuawei) {
  const auto v = dissect_capture("rocev2-rc-send-ack_oferby-proxy.pcap");
  ASSERT_EQ(v.size(), 123u);
  EXPECT_EQ(count(v, [](auto& d) { return d.is_roce; }), 105u);
  EXPECT_EQ(count(v, [](auto& d) { return d.is_roce && d.dest_qp == 0x45; }), 68u);
  EXPECT_EQ(count(v, [](auto& d) { return d.is_roce && d.dest_qp == 0x48; }), 37u);
  EXPECT_EQ(count(v, [](auto& d) { return d.is_roce && d.bth_opcode == op::rc_acknowledge; }), 37u);
  EXPECT_EQ(count(v, [](auto& d) { return d.is_roce && d.ecn == 2; }), 105u);
  EXPECT_EQ(count(v, [](auto& d) { return d.is_roce && d.udp_src_port == 69; }), 37u);
  EXPECT_EQ(count(v, [](auto& d) { return d.malformed; }), 0u);
}

TEST(RealCaptures, ConnectX4LxCnp) {
  const auto v = dissect_capture("rocev2-cnp-connectx4lx_scapy-hexdump.pcap");
  ASSERT_EQ(v.size(), 1u);
  const auto& d = v[0];
  EXPECT_TRUE(d.is_roce);
  EXPECT_EQ(d.bth_opcode, op::cnp);
  EXPECT_TRUE(d.bth_becn);
  EXPECT_EQ(d.dscp, 48);
  EXPECT_EQ(d.ecn, 2);
  EXPECT_EQ(d.udp_src_port, 0);
  EXPECT_EQ(d.dest_qp, 0x118u);
  EXPECT_FALSE(d.truncated);
}

TEST(RealCaptures, RoceV1IsNotRocev2) {
  const auto v = dissect_capture("rocev1-rc-write-ack_scapy-hexdump.pcap");
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(count(v, [](auto& d) { return d.is_roce; }), 0u);
  EXPECT_EQ(count(v, [](auto& d) { return d.ethertype == 0x8915; }), v.size());
}

TEST(RealCaptures, HandcraftedVlanEcnCnp) {
  const auto v = dissect_capture("rocev2-vlan-ecn-cnp_handcrafted.pcap");
  ASSERT_EQ(v.size(), 9u);
  auto roce_with = [&](auto pred) { return count(v, [&](auto& d) { return d.is_roce && pred(d); }); };
  EXPECT_EQ(roce_with([](auto&) { return true; }), 8u);
  EXPECT_EQ(roce_with([](auto& d) { return d.bth_opcode == op::cnp; }), 2u);
  EXPECT_EQ(roce_with([](auto& d) { return d.bth_opcode == op::rc_acknowledge; }), 1u);
  EXPECT_EQ(roce_with([](auto& d) { return d.ecn == 0; }), 2u);
  EXPECT_EQ(roce_with([](auto& d) { return d.ecn == 1; }), 1u);
  EXPECT_EQ(roce_with([](auto& d) { return d.ecn == 2; }), 2u);
  EXPECT_EQ(roce_with([](auto& d) { return d.ecn == 3; }), 3u);
  EXPECT_FALSE(v[7].is_roce);  // source port 4791, destination 9999
  EXPECT_TRUE(v[7].has_udp);
  EXPECT_TRUE(v[6].is_roce);   // IPv4 options
  EXPECT_EQ(v[0].vlan_id, 100);
  EXPECT_EQ(v[0].vlan_pcp, 3);
  EXPECT_EQ(count(v, [](auto& d) { return d.malformed || d.truncated; }), 0u);
}

TEST(RealCaptures, PfcAndPauseHandcrafted) {
  const auto v = dissect_capture("pfc-pause_handcrafted.pcap");
  ASSERT_EQ(v.size(), 10u);
  EXPECT_EQ(count(v, [](auto& d) { return d.is_mac_control && d.mac_control_opcode == 0x0101; }), 7u);
  EXPECT_EQ(count(v, [](auto& d) { return d.is_mac_control && d.mac_control_opcode == 0x0001; }), 2u);
  // By priority: frames that enable the class and the sum of their quanta (INDEX.md).
  const std::array<std::uint32_t, 8> frames{1, 1, 1, 6, 2, 1, 1, 1};
  const std::array<std::uint64_t, 8> quanta{256, 513, 770, 197887, 5944, 1541, 1798, 2055};
  for (std::size_t p = 0; p < 8; ++p) {
    std::uint32_t n = 0;
    std::uint64_t q = 0;
    for (const auto& d : v) {
      if (d.mac_control_opcode != 0x0101 || ((d.pfc_class_enable >> p) & 1) == 0) continue;
      ++n;
      q += d.pfc_quanta[p];
    }
    EXPECT_EQ(n, frames[p]) << "priority " << p;
    EXPECT_EQ(q, quanta[p]) << "priority " << p;
  }
}

TEST(RealCaptures, Pause8023xAx88772) {
  const auto v = dissect_capture("pause-8023x-ax88772_netdev-hexdump.pcap");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].mac_control_opcode, 0x0001);
  EXPECT_EQ(v[0].pause_quanta + v[1].pause_quanta, 0xFFFF);
}

struct erspan_file {
  const char* file;
  std::size_t erspan_frames;
  std::size_t inner_parsed;
};

class RealErspan : public ::testing::TestWithParam<erspan_file> {};

TEST_P(RealErspan, CountsMirroredFrames) {
  const auto v = dissect_capture(GetParam().file);
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(count(v, [](auto& d) { return d.erspan_type != 0; }), GetParam().erspan_frames);
  EXPECT_EQ(count(v, [](auto& d) { return d.erspan_inner_parsed; }), GetParam().inner_parsed);
  EXPECT_EQ(count(v, [](auto& d) { return d.is_roce; }), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    SharedPcaps, RealErspan,
    ::testing::Values(erspan_file{"erspan-typeI_tcpdump-erspan-type-i-4.pcap", 88, 88},
                      erspan_file{"erspan-typeII_tcpdump-erspan-type-ii-3.pcap", 108, 108},
                      erspan_file{"erspan-typeIII_tcpdump-erspan-type-iii-ft-0.pcap", 9, 9},
                      erspan_file{"erspan-typeIII-ft7_tcpdump-erspan-type-iii-ft-7.pcap", 58, 0},
                      erspan_file{"erspan-typeIII-dot1q_zeek-gre-erspan3-dot1q.pcap", 2, 2},
                      erspan_file{"erspan-typeII-vxlan_arkime-gre-erspan-vxlan.pcap", 7, 7},
                      erspan_file{"gre-teb-mirror-not-erspan_zeek-erspan.pcap", 0, 0}),
    [](const auto& info) {
      std::string n = info.param.file;
      n = n.substr(0, n.find('_'));
      for (auto& ch : n) if (ch == '-') ch = '_';
      return n;
    });

TEST(RealCaptures, HostileErspanTypeIIIOnRawIpv6DoesNotCrash) {
  const std::string name = "erspan-typeIII-pb_tcpdump-erspan-type-iii-pb-1.pcap";
  const auto c = read_capture(name);
  for (std::size_t i = 0; i < c.frames.size(); ++i) {
    const auto d = run(c.frames[i], c.links[i]);
    EXPECT_TRUE(d.truncated || d.malformed);
  }
  // The one record's bytes straight from the file (24-byte file header, 16-byte record
  // header), in case the reader refuses the file, under every link type.
  std::ifstream in(std::string(ROCELAB_SHARED_DIR) + "/pcaps/" + name, std::ios::binary);
  const bytes file{std::istreambuf_iterator<char>(in), {}};
  ASSERT_EQ(file.size(), 119u);
  const bytes record(file.begin() + 40, file.end());
  for (auto link : {link_type::raw, link_type::ipv6, link_type::ipv4}) {
    const auto d = run(record, link);
    EXPECT_TRUE(d.truncated || d.malformed) << static_cast<int>(link);
  }
  // Read as Ethernet it is an unknown EtherType: nothing to flag, nothing to crash on.
  const auto as_ethernet = run(record, link_type::ethernet);
  EXPECT_EQ(as_ethernet.ip_version, 0);
}

TEST(RealCaptures, ErspanTypeIIIDot1qInnerVlan) {
  const auto v = dissect_capture("erspan-typeIII-dot1q_zeek-gre-erspan3-dot1q.pcap");
  ASSERT_EQ(v.size(), 2u);
  for (const auto& d : v) {
    EXPECT_EQ(d.vlan_count, 1);
    EXPECT_EQ(d.vlan_id, 10);
  }
}

TEST(RealCaptures, VlanPriorityTagsPcp5Dei1) {
  const auto v = dissect_capture("vlan-pcp5_zeek-http-vlan-0.pcap");
  ASSERT_EQ(v.size(), 14u);
  EXPECT_EQ(count(v, [](auto& d) { return d.vlan_count == 1 && d.vlan_id == 0 && d.vlan_pcp == 5 && d.vlan_dei; }),
            14u);
}

TEST(RealCaptures, QinqPcpDeiPcapng) {
  const auto v = dissect_capture("vlan-qinq-pcp-dei_zeek.pcapng");
  ASSERT_EQ(v.size(), 9u);
  EXPECT_EQ(count(v, [](auto& d) { return d.vlan_count == 2 && d.vlan_pcp == 7; }), 3u);
  EXPECT_EQ(count(v, [](auto& d) { return d.vlan_count == 1 && d.vlan_pcp == 5; }), 3u);
  EXPECT_EQ(count(v, [](auto& d) { return d.vlan_count == 0; }), 3u);
}

TEST(RealCaptures, EcnOnTcp) {
  const auto v = dissect_capture("ecn-ce-tcp_tcp-ecn-sample.pcap");
  EXPECT_EQ(count(v, [](auto& d) { return d.ip_version != 0 && d.ecn == 3; }), 52u);
  EXPECT_EQ(count(v, [](auto& d) { return d.ip_version != 0 && d.ecn == 2; }), 117u);
  EXPECT_EQ(count(v, [](auto& d) { return d.ip_version != 0 && d.ecn == 0; }), 310u);
  const auto w = dissect_capture("ecn-ect1-tcp_tcpdump-accecn-handshake.pcap");
  EXPECT_EQ(count(w, [](auto& d) { return d.ip_version != 0 && d.ecn == 1; }), 2u);
  EXPECT_EQ(count(w, [](auto& d) { return d.ip_version != 0 && d.ecn == 2; }), 1u);
  EXPECT_EQ(count(w, [](auto& d) { return d.ip_version != 0 && d.ecn == 0; }), 3u);
}

}  // namespace
}  // namespace rocelab::captures

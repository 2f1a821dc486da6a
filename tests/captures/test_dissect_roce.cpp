// dissect() on RoCEv2 frames: every BTH, RETH and AETH field, by opcode, over Ethernet
// with and without 802.1Q/QinQ tags, IPv4 (with options) and IPv6; ACK, NAK and CNP.
#include "rocelab/captures/dissect.hpp"

#include "capture_test_support.hpp"

#include <gtest/gtest.h>

namespace rocelab::captures {
namespace {

using namespace test;

class DissectRoce : public ::testing::TestWithParam<dissect_case> {};

TEST_P(DissectRoce, Fields) { check_case(GetParam()); }

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
};

INSTANTIATE_TEST_SUITE_P(Layers, DissectRoce, ::testing::ValuesIn(cases),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace rocelab::captures

// dissect() at the IP and UDP layers and on MAC control: what is RoCEv2 and what is not
// (UDP ports, lengths, fragments, ethertypes), malformed IPv4/IPv6 headers, PFC and PAUSE.
#include "rocelab/captures/dissect.hpp"

#include "capture_test_support.hpp"

#include <gtest/gtest.h>

namespace rocelab::captures {
namespace {

using namespace test;

class DissectIpUdp : public ::testing::TestWithParam<dissect_case> {};

TEST_P(DissectIpUdp, Fields) { check_case(GetParam()); }

const std::vector<dissect_case> cases = {
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
};

INSTANTIATE_TEST_SUITE_P(Layers, DissectIpUdp, ::testing::ValuesIn(cases),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace rocelab::captures

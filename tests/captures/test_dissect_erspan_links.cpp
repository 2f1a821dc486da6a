// dissect() of mirrored frames (ERSPAN types I, II, III over IPv4 and IPv6, and GRE that
// is not ERSPAN) and of the other link types (raw IP, IPv4, IPv6, BSD loopback).
#include "rocelab/captures/dissect.hpp"

#include "capture_test_support.hpp"

#include <gtest/gtest.h>

namespace rocelab::captures {
namespace {

using namespace test;

class DissectErspanLinks : public ::testing::TestWithParam<dissect_case> {};

TEST_P(DissectErspanLinks, Fields) { check_case(GetParam()); }

const std::vector<dissect_case> cases = {
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

INSTANTIATE_TEST_SUITE_P(Layers, DissectErspanLinks, ::testing::ValuesIn(cases),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace rocelab::captures

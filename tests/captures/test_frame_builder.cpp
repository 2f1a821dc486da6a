// Frame builders: exact bytes against a real NIC frame, checksums, layout rules, limits.
#include "rocelab/captures/frame_builder.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "rocelab/captures/icrc.hpp"
#include "rocelab/captures/wire/byte_order.hpp"
#include "rocelab/captures/wire/ip.hpp"

namespace rocelab::captures {
namespace {

using bytes = std::vector<std::uint8_t>;

roce_frame_spec basic_spec() {
  roce_frame_spec s;
  s.eth.dst_mac = {0x0C, 0x42, 0xA1, 0xBB, 0x00, 0x02};
  s.eth.src_mac = {0x0C, 0x42, 0xA1, 0xAA, 0x00, 0x01};
  s.ip.src = ipv4_mapped(10, 0, 0, 1);
  s.ip.dst = ipv4_mapped(10, 0, 0, 2);
  s.dest_qp = 0x45;
  s.psn = 7;
  return s;
}

TEST(CnpBuilder, ReproducesTheRealConnectX4LxCnpByteForByte) {
  // shared/pcaps/rocev2-cnp-connectx4lx_scapy-hexdump.pcap, the one frame.
  const bytes real{0xE4, 0x1D, 0x2D, 0xAB, 0x2B, 0xC2, 0x7C, 0xFE, 0x90, 0x64, 0x3B, 0x32, 0x08, 0x00,
                   0x45, 0xC2, 0x00, 0x3C, 0x71, 0x8C, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61, 0x0A, 0x00,
                   0x11, 0x01, 0x0A, 0x00, 0x12, 0x01, 0x00, 0x00, 0x12, 0xB7, 0x00, 0x28, 0x00, 0x00,
                   0x81, 0x00, 0xFF, 0xFF, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                   0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                   0x82, 0xFD, 0x00, 0x2A};
  cnp_frame_spec c;
  c.eth.dst_mac = {0xE4, 0x1D, 0x2D, 0xAB, 0x2B, 0xC2};
  c.eth.src_mac = {0x7C, 0xFE, 0x90, 0x64, 0x3B, 0x32};
  c.ip.src = ipv4_mapped(10, 0, 17, 1);
  c.ip.dst = ipv4_mapped(10, 0, 18, 1);
  c.ip.ipv4_identification = 0x718C;
  c.dest_qp = 0x118;
  bytes built;
  EXPECT_EQ(append_cnp_frame(c, built), real.size());
  EXPECT_EQ(built, real);

  std::array<std::uint8_t, 128> buffer{};
  ASSERT_EQ(build_cnp_frame(c, buffer), real.size());
  EXPECT_TRUE(std::equal(real.begin(), real.end(), buffer.begin()));
}

TEST(RoceBuilder, ChecksumsAreValidAndUdpChecksumIsZero) {
  auto s = basic_spec();
  const bytes payload(1000, 0xAB);
  s.payload = payload;
  bytes f;
  ASSERT_EQ(append_roce_frame(s, f), 14 + 20 + 8 + 12 + 1000 + 4u);
  EXPECT_EQ(wire::internet_checksum(std::span(f).subspan(14, 20)), 0);
  EXPECT_EQ(wire::load_be16(f.data() + 14 + 20 + 6), 0);
  EXPECT_EQ(wire::load_be16(f.data() + 14 + 2), 20 + 8 + 12 + 1000 + 4);
  EXPECT_EQ(wire::load_be16(f.data() + 14 + 20 + 4), 8 + 12 + 1000 + 4);
  EXPECT_EQ(verify_icrc(f, 14), icrc_check::valid);
  EXPECT_EQ(roce_frame_length(s), f.size());
}

TEST(RoceBuilder, PadsPayloadToFourBytesAndSetsPadCount) {
  auto s = basic_spec();
  const bytes payload{1, 2, 3, 4, 5};
  s.payload = payload;
  bytes f;
  ASSERT_GT(append_roce_frame(s, f), 0u);
  const std::size_t bth = 14 + 20 + 8;
  EXPECT_EQ((f[bth + 1] >> 4) & 3, 3);
  EXPECT_EQ(f[bth + 12 + 5], 0);
  EXPECT_EQ(f[bth + 12 + 7], 0);
  EXPECT_EQ(f.size(), bth + 12 + 8 + 4);
  EXPECT_EQ(verify_icrc(f, 14), icrc_check::valid);
}

TEST(RoceBuilder, ShortFramesArePaddedToSixtyBytesUnlessAsked) {
  auto s = basic_spec();  // SEND only, no payload: 58 bytes of headers and ICRC
  bytes f;
  ASSERT_EQ(append_roce_frame(s, f), 60u);
  EXPECT_EQ(f[58], 0);
  EXPECT_EQ(f[59], 0);
  EXPECT_EQ(verify_icrc(f, 14), icrc_check::valid);
  s.eth.pad_to_minimum = false;
  bytes g;
  EXPECT_EQ(append_roce_frame(s, g), 58u);
}

TEST(RoceBuilder, WritesVlanTagsOutermostFirst) {
  auto s = basic_spec();
  s.eth.vlan_count = 2;
  s.eth.vlans[0] = {wire::ethertype::qinq, 7, false, 200};
  s.eth.vlans[1] = {wire::ethertype::vlan, 3, true, 100};
  bytes f;
  ASSERT_GT(append_roce_frame(s, f), 0u);
  EXPECT_EQ(wire::load_be16(f.data() + 12), 0x88A8);
  EXPECT_EQ(wire::load_be16(f.data() + 14), (7 << 13) | 200);
  EXPECT_EQ(wire::load_be16(f.data() + 16), 0x8100);
  EXPECT_EQ(wire::load_be16(f.data() + 18), (3 << 13) | 0x1000 | 100);
  EXPECT_EQ(wire::load_be16(f.data() + 20), 0x0800);
  EXPECT_EQ(verify_icrc(f, 22), icrc_check::valid);
}

TEST(RoceBuilder, Ipv4OptionsSetIhlAndStayInTheChecksum) {
  auto s = basic_spec();
  const bytes options{0x94, 0x04, 0x00, 0x00};  // router alert
  s.ip.ipv4_options = options;
  bytes f;
  ASSERT_GT(append_roce_frame(s, f), 0u);
  EXPECT_EQ(f[14], 0x46);
  EXPECT_EQ(wire::internet_checksum(std::span(f).subspan(14, 24)), 0);
  EXPECT_EQ(wire::load_be16(f.data() + 14 + 24 + 2), wire::roce_v2_udp_port);
  EXPECT_EQ(verify_icrc(f, 14), icrc_check::valid);
}

TEST(RoceBuilder, Ipv6Header) {
  auto s = basic_spec();
  s.ip.version = 6;
  s.ip.src = {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  s.ip.dscp = 26;
  s.ip.ecn = wire::ecn_codepoint::ce;
  s.ip.ttl = 9;
  bytes f;
  ASSERT_GT(append_roce_frame(s, f), 0u);
  EXPECT_EQ(wire::load_be16(f.data() + 12), 0x86DD);
  EXPECT_EQ(f[14] >> 4, 6);
  EXPECT_EQ(((wire::load_be16(f.data() + 14) >> 4) & 0xFF), (26 << 2) | 3);
  EXPECT_EQ(wire::load_be16(f.data() + 14 + 4), 8 + 12 + 4);
  EXPECT_EQ(f[14 + 6], 17);
  EXPECT_EQ(f[14 + 7], 9);
  EXPECT_EQ(f[14 + 8], 0xFD);
  EXPECT_EQ(verify_icrc(f, 14), icrc_check::valid);
}

struct extended_case {
  const char* name;
  std::uint8_t opcode;
  std::size_t reth_at;  // after the BTH, or SIZE_MAX
  std::size_t aeth_at;
  std::size_t immediate_at;
  std::size_t headers;
};

class ExtendedHeaders : public ::testing::TestWithParam<extended_case> {};

TEST_P(ExtendedHeaders, FollowTheOpcode) {
  const auto& c = GetParam();
  auto s = basic_spec();
  s.opcode = c.opcode;
  s.reth_va = 0x1122334455667788;
  s.reth_rkey = 0xA1A2A3A4;
  s.reth_dma_length = 0x10000;
  s.aeth_syndrome = 0x61;
  s.aeth_msn = 0x0B0C0D;
  s.immediate = 0xFEEDF00D;
  const bytes payload(64, 0xCC);
  s.payload = payload;
  bytes f;
  ASSERT_GT(append_roce_frame(s, f), 0u);
  const std::size_t ext = 14 + 20 + 8 + 12;
  if (c.reth_at != SIZE_MAX) {
    EXPECT_EQ(wire::load_be64(f.data() + ext + c.reth_at), 0x1122334455667788u);
    EXPECT_EQ(wire::load_be32(f.data() + ext + c.reth_at + 8), 0xA1A2A3A4u);
    EXPECT_EQ(wire::load_be32(f.data() + ext + c.reth_at + 12), 0x10000u);
  }
  if (c.aeth_at != SIZE_MAX) {
    EXPECT_EQ(f[ext + c.aeth_at], 0x61);
    EXPECT_EQ(wire::load_be24(f.data() + ext + c.aeth_at + 1), 0x0B0C0Du);
  }
  if (c.immediate_at != SIZE_MAX) {
    EXPECT_EQ(wire::load_be32(f.data() + ext + c.immediate_at), 0xFEEDF00Du);
  }
  EXPECT_EQ(f[ext + c.headers], 0xCC);
  EXPECT_EQ(f.size(), ext + c.headers + 64 + 4);
  EXPECT_EQ(verify_icrc(f, 14), icrc_check::valid);
}

INSTANTIATE_TEST_SUITE_P(
    Ibta9_2, ExtendedHeaders,
    ::testing::Values(
        extended_case{"send_middle_has_none", 0x01, SIZE_MAX, SIZE_MAX, SIZE_MAX, 0},
        extended_case{"send_only_imm", 0x05, SIZE_MAX, SIZE_MAX, 0, 4},
        extended_case{"write_first_reth", 0x06, 0, SIZE_MAX, SIZE_MAX, 16},
        extended_case{"write_only_imm_reth_then_imm", 0x0B, 0, SIZE_MAX, 16, 20},
        extended_case{"read_request_reth", 0x0C, 0, SIZE_MAX, SIZE_MAX, 16},
        extended_case{"read_response_first_aeth", 0x0D, SIZE_MAX, 0, SIZE_MAX, 4},
        extended_case{"acknowledge_aeth", 0x11, SIZE_MAX, 0, SIZE_MAX, 4},
        extended_case{"send_only_invalidate_ieth", 0x17, SIZE_MAX, SIZE_MAX, 0, 4},
        extended_case{"ud_send_only_imm_after_deth", 0x65, SIZE_MAX, SIZE_MAX, 8, 12},
        extended_case{"xrc_write_first_reth_after_xrceth", 0xA6, 4, SIZE_MAX, SIZE_MAX, 20}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(RoceBuilder, BthFields) {
  auto s = basic_spec();
  s.opcode = wire::roce_opcode::rc_rdma_write_middle;
  s.solicited = true;
  s.migreq = true;
  s.pkey = 0x8001;
  s.fecn = true;
  s.dest_qp = 0x123456;
  s.ack_req = true;
  s.psn = 0xFFFFFF;
  bytes f;
  ASSERT_GT(append_roce_frame(s, f), 0u);
  const std::size_t b = 14 + 20 + 8;
  EXPECT_EQ(bytes(f.begin() + b, f.begin() + b + 12),
            (bytes{0x07, 0xC0, 0x80, 0x01, 0x80, 0x12, 0x34, 0x56, 0x80, 0xFF, 0xFF, 0xFF}));
}

TEST(RoceBuilder, RejectsInvalidSpecsAndSmallBuffers) {
  bytes f{9, 9};
  auto too_many_tags = basic_spec();
  too_many_tags.eth.vlan_count = max_vlan_tags + 1;
  EXPECT_EQ(append_roce_frame(too_many_tags, f), 0u);
  auto bad_version = basic_spec();
  bad_version.ip.version = 5;
  EXPECT_EQ(append_roce_frame(bad_version, f), 0u);
  const bytes three(3), forty_four(44);
  auto odd_options = basic_spec();
  odd_options.ip.ipv4_options = three;
  EXPECT_EQ(append_roce_frame(odd_options, f), 0u);
  auto long_options = basic_spec();
  long_options.ip.ipv4_options = forty_four;
  EXPECT_EQ(append_roce_frame(long_options, f), 0u);
  const bytes huge(70000);
  auto too_big = basic_spec();
  too_big.payload = huge;
  EXPECT_EQ(append_roce_frame(too_big, f), 0u);
  EXPECT_EQ(f, (bytes{9, 9}));  // untouched

  std::array<std::uint8_t, 59> small{};
  EXPECT_EQ(build_roce_frame(basic_spec(), small), 0u);
  std::array<std::uint8_t, 60> exact{};
  EXPECT_EQ(build_roce_frame(basic_spec(), exact), 60u);
}

TEST(RoceBuilder, AppendsAfterExistingBytes) {
  bytes f{1, 2, 3};
  const std::size_t n = append_roce_frame(basic_spec(), f);
  ASSERT_EQ(n, 60u);
  EXPECT_EQ(f.size(), 63u);
  EXPECT_EQ(f[0], 1);
  EXPECT_EQ(verify_icrc(std::span(f).subspan(3), 14), icrc_check::valid);
}

TEST(PfcBuilder, Writes802_1QbbFramePaddedToSixty) {
  pfc_frame_spec p;
  p.src_mac = {0x02, 0, 0, 0, 0, 0x10};
  p.class_enable = 0x0088;
  p.quanta = {0, 0, 0, 0xFFFF, 0, 0, 0, 0x1234};
  bytes f;
  ASSERT_EQ(append_pfc_frame(p, f), 60u);
  bytes expected{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 0x02, 0, 0, 0, 0, 0x10, 0x88, 0x08,
                 0x01, 0x01, 0x00, 0x88, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0x12, 0x34};
  expected.resize(60, 0);
  EXPECT_EQ(f, expected);
  std::array<std::uint8_t, 59> small{};
  EXPECT_EQ(build_pfc_frame(p, small), 0u);
}

TEST(PauseBuilder, Writes802_3xFrame) {
  pause_frame_spec p;
  p.quanta = 0;
  bytes f;
  ASSERT_EQ(append_pause_frame(p, f), 60u);
  // Same bytes as the second frame of the AX88772 capture in shared/pcaps (XON).
  bytes expected{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0x88, 0x08, 0x00, 0x01, 0x00, 0x00};
  expected.resize(60, 0);
  EXPECT_EQ(f, expected);
}

erspan_spec erspan_base(std::uint8_t type) {
  erspan_spec e;
  e.type = type;
  e.outer_ip.src = ipv4_mapped(192, 168, 1, 1);
  e.outer_ip.dst = ipv4_mapped(192, 168, 1, 2);
  e.gre_sequence = 0x01020304;
  e.session_id = 101;
  return e;
}

TEST(ErspanBuilder, TypeIIHasGreSequenceAndEightByteHeader) {
  const bytes inner(64, 0x77);
  auto e = erspan_base(2);
  e.index = 0x12345;
  bytes f;
  ASSERT_EQ(append_erspan_frame(e, inner, f), 14 + 20 + 8 + 8 + 64u);
  EXPECT_EQ(f[14 + 9], 47);
  EXPECT_EQ(wire::internet_checksum(std::span(f).subspan(14, 20)), 0);
  const std::size_t gre = 34;
  EXPECT_EQ(wire::load_be16(f.data() + gre), 0x1000);
  EXPECT_EQ(wire::load_be16(f.data() + gre + 2), 0x88BE);
  EXPECT_EQ(wire::load_be32(f.data() + gre + 4), 0x01020304u);
  EXPECT_EQ(f[gre + 8] >> 4, 1);
  EXPECT_EQ(wire::load_be16(f.data() + gre + 10) & 0x3FF, 101);
  EXPECT_EQ(wire::load_be32(f.data() + gre + 12) & 0xFFFFF, 0x12345u);
  EXPECT_EQ(f[gre + 16], 0x77);
  EXPECT_EQ(erspan_frame_length(e, inner.size()), f.size());
}

TEST(ErspanBuilder, TypeIHasNoSequenceAndNoHeader) {
  const bytes inner(64, 0x77);
  bytes f;
  ASSERT_EQ(append_erspan_frame(erspan_base(1), inner, f), 14 + 20 + 4 + 64u);
  EXPECT_EQ(wire::load_be16(f.data() + 34), 0x0000);
  EXPECT_EQ(wire::load_be16(f.data() + 36), 0x88BE);
  EXPECT_EQ(f[38], 0x77);
}

TEST(ErspanBuilder, TypeIIIWithPlatformSubheader) {
  const bytes inner(64, 0x77);
  auto e = erspan_base(3);
  e.timestamp = 0xCAFEBABE;
  e.frame_type = 0;
  e.platform_subheader = true;
  e.platform_subheader_value = 0x0C00000000000001;
  bytes f;
  ASSERT_EQ(append_erspan_frame(e, inner, f), 14 + 20 + 8 + 12 + 8 + 64u);
  const std::size_t gre = 34;
  EXPECT_EQ(wire::load_be16(f.data() + gre + 2), 0x22EB);
  EXPECT_EQ(f[gre + 8] >> 4, 2);
  EXPECT_EQ(wire::load_be32(f.data() + gre + 12), 0xCAFEBABEu);
  EXPECT_EQ(wire::load_be16(f.data() + gre + 18) & 1, 1);
  EXPECT_EQ(wire::load_be64(f.data() + gre + 20), 0x0C00000000000001u);
  EXPECT_EQ(f[gre + 28], 0x77);
}

TEST(ErspanBuilder, RejectsUnknownType) {
  const bytes inner(64);
  bytes f;
  EXPECT_EQ(append_erspan_frame(erspan_base(4), inner, f), 0u);
  EXPECT_TRUE(f.empty());
}

}  // namespace
}  // namespace rocelab::captures

// Wire structs: sizes, byte order, accessors, and build -> parse round trips.
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

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <type_traits>
#include <vector>

namespace rocelab::captures::wire {
namespace {

template <typename H>
std::vector<std::uint8_t> bytes_of(const H& h) {
  std::vector<std::uint8_t> v(sizeof(H));
  std::memcpy(v.data(), &h, sizeof(H));
  return v;
}

template <typename H>
H from_bytes(const std::vector<std::uint8_t>& v, std::size_t offset = 0) {
  H h;
  EXPECT_TRUE(load(v, offset, h));
  return h;
}

// A forgotten swap must not compile: no implicit conversion either way.
static_assert(!std::is_convertible_v<be16, std::uint16_t>);
static_assert(!std::is_convertible_v<std::uint16_t, be16>);
static_assert(!std::is_convertible_v<be32, std::uint32_t>);
static_assert(!std::is_convertible_v<std::uint64_t, be64>);

TEST(ByteOrder, StoresMostSignificantByteFirst) {
  EXPECT_EQ(bytes_of(be16::from(0x1234)), (std::vector<std::uint8_t>{0x12, 0x34}));
  EXPECT_EQ(bytes_of(be24::from(0xABCDEF)), (std::vector<std::uint8_t>{0xAB, 0xCD, 0xEF}));
  EXPECT_EQ(bytes_of(be32::from(0x01020304)), (std::vector<std::uint8_t>{1, 2, 3, 4}));
  EXPECT_EQ(bytes_of(be64::from(0x0102030405060708)),
            (std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(ByteOrder, Be24DropsBitsAbove24) {
  EXPECT_EQ(be24::from(0xFF123456).value(), 0x123456u);
}

TEST(ByteOrder, LoadsAreConstexpr) {
  static_assert(be32::from(0xDEADBEEF).value() == 0xDEADBEEF);
  constexpr std::array<std::uint8_t, 3> b{0x01, 0x02, 0x03};
  static_assert(load_be24(b.data()) == 0x010203);
}

TEST(ByteOrder, LoadRejectsHeaderPastTheEnd) {
  const std::vector<std::uint8_t> v(13);
  ethernet_header h;
  EXPECT_FALSE(load(v, 0, h));
  EXPECT_FALSE(load(v, 14, h));
  std::vector<std::uint8_t> w(14);
  EXPECT_TRUE(load(w, 0, h));
  EXPECT_FALSE(store(std::span<std::uint8_t>(w).subspan(1), 0, h));
}

TEST(ByteOrder, LoadsFromUnalignedOffsets) {
  std::vector<std::uint8_t> v(64);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::uint8_t>(i);
  const auto h = from_bytes<udp_header>(v, 3);
  EXPECT_EQ(h.src_port(), 0x0304);
  EXPECT_EQ(h.dst_port(), 0x0506);
}

TEST(WireSizes, MatchTheSpecifications) {
  EXPECT_EQ(sizeof(ethernet_header), 14u);
  EXPECT_EQ(sizeof(vlan_tag), 4u);
  EXPECT_EQ(sizeof(ipv4_header), 20u);
  EXPECT_EQ(sizeof(ipv6_header), 40u);
  EXPECT_EQ(sizeof(udp_header), 8u);
  EXPECT_EQ(sizeof(bth), 12u);
  EXPECT_EQ(sizeof(reth), 16u);
  EXPECT_EQ(sizeof(aeth), 4u);
  EXPECT_EQ(sizeof(icrc_trailer), 4u);
  EXPECT_EQ(sizeof(pause_frame), 4u);
  EXPECT_EQ(sizeof(pfc_frame), 20u);
  EXPECT_EQ(sizeof(gre_header), 4u);
  EXPECT_EQ(sizeof(erspan2_header), 8u);
  EXPECT_EQ(sizeof(erspan3_header), 12u);
  EXPECT_EQ(sizeof(erspan3_platform_subheader), 8u);
}

TEST(Ethernet, RoundTripsAddressesAndType) {
  ethernet_header h;
  h.set_dst({0x01, 0x80, 0xC2, 0, 0, 1});
  h.set_src({2, 3, 4, 5, 6, 7});
  h.set_type(ethertype::vlan);
  const auto v = bytes_of(h);
  EXPECT_EQ(v, (std::vector<std::uint8_t>{0x01, 0x80, 0xC2, 0, 0, 1, 2, 3, 4, 5, 6, 7, 0x81, 0x00}));
  const auto back = from_bytes<ethernet_header>(v);
  EXPECT_EQ(back.type(), ethertype::vlan);
  EXPECT_TRUE(is_multicast(back.dst()));
  EXPECT_FALSE(is_multicast(back.src()));
}

TEST(Ethertypes, HaveTheRegisteredValues) {
  EXPECT_EQ(ethertype::ipv4, 0x0800);
  EXPECT_EQ(ethertype::ipv6, 0x86DD);
  EXPECT_EQ(ethertype::vlan, 0x8100);
  EXPECT_EQ(ethertype::qinq, 0x88A8);
  EXPECT_EQ(ethertype::mac_control, 0x8808);
  EXPECT_EQ(ethertype::roce_v1, 0x8915);
  EXPECT_EQ(ethertype::erspan_type2, 0x88BE);
  EXPECT_EQ(ethertype::erspan_type3, 0x22EB);
  EXPECT_EQ(ethertype::transparent_ethernet_bridging, 0x6558);
  EXPECT_TRUE(ethertype::is_vlan_tpid(0x8100));
  EXPECT_TRUE(ethertype::is_vlan_tpid(0x88A8));
  EXPECT_FALSE(ethertype::is_vlan_tpid(0x0800));
}

TEST(Vlan, PacksPcpDeiVid) {
  vlan_tag t;
  t.set(5, true, 0x123);
  t.set_type(ethertype::ipv4);
  EXPECT_EQ(bytes_of(t), (std::vector<std::uint8_t>{0xB1, 0x23, 0x08, 0x00}));
  const auto back = from_bytes<vlan_tag>(bytes_of(t));
  EXPECT_EQ(back.pcp(), 5);
  EXPECT_TRUE(back.dei());
  EXPECT_EQ(back.vid(), 0x123);
  EXPECT_EQ(back.type(), ethertype::ipv4);
  t.set(9, false, 0xFFFF);  // too wide: masked
  EXPECT_EQ(t.pcp(), 1);
  EXPECT_EQ(t.vid(), 0xFFF);
}

TEST(Ipv4, FieldsAndChecksum) {
  ipv4_header h;
  h.set_version_ihl(4, 5);
  h.set_dscp_ecn(26, ecn_codepoint::ce);
  h.set_total_length(60);
  h.set_identification(0x718C);
  h.set_flags_fragment(true, false, 0);
  h.set_ttl(64);
  h.set_protocol(ip_protocol::udp);
  h.set_src({10, 0, 17, 1});
  h.set_dst({10, 0, 18, 1});
  auto v = bytes_of(h);
  EXPECT_EQ(v[0], 0x45);
  EXPECT_EQ(v[1], (26 << 2) | 3);
  EXPECT_EQ(v[6], 0x40);
  const std::uint16_t sum = internet_checksum(v);
  store_be16(v.data() + ipv4_offset::checksum, sum);
  EXPECT_EQ(internet_checksum(v), 0);
  const auto back = from_bytes<ipv4_header>(v);
  EXPECT_EQ(back.version(), 4);
  EXPECT_EQ(back.ihl(), 5);
  EXPECT_EQ(back.header_bytes(), 20u);
  EXPECT_EQ(back.dscp(), 26);
  EXPECT_EQ(back.ecn(), ecn_codepoint::ce);
  EXPECT_EQ(back.total_length(), 60);
  EXPECT_EQ(back.identification(), 0x718C);
  EXPECT_TRUE(back.dont_fragment());
  EXPECT_FALSE(back.more_fragments());
  EXPECT_EQ(back.fragment_offset(), 0);
  EXPECT_EQ(back.ttl(), 64);
  EXPECT_EQ(back.protocol(), ip_protocol::udp);
  EXPECT_EQ(back.checksum(), sum);
  EXPECT_EQ(back.src(), (ipv4_address{10, 0, 17, 1}));
  EXPECT_EQ(back.dst(), (ipv4_address{10, 0, 18, 1}));
}

TEST(Ipv4, ChecksumOfTheRealConnectX4LxCnpHeader) {
  // IPv4 header of the ConnectX-4 Lx CNP in shared/pcaps (checksum 0x9161).
  const std::vector<std::uint8_t> v{0x45, 0xC2, 0x00, 0x3C, 0x71, 0x8C, 0x40, 0x00, 0x40, 0x11,
                                    0x91, 0x61, 0x0A, 0x00, 0x11, 0x01, 0x0A, 0x00, 0x12, 0x01};
  EXPECT_EQ(internet_checksum(v), 0);
  const auto h = from_bytes<ipv4_header>(v);
  EXPECT_EQ(h.dscp(), 48);
  EXPECT_EQ(h.ecn(), ecn_codepoint::ect0);
}

TEST(Ecn, CodepointsFollowRfc3168) {
  EXPECT_EQ(static_cast<int>(ecn_codepoint::not_ect), 0);
  EXPECT_EQ(static_cast<int>(ecn_codepoint::ect1), 1);
  EXPECT_EQ(static_cast<int>(ecn_codepoint::ect0), 2);
  EXPECT_EQ(static_cast<int>(ecn_codepoint::ce), 3);
  EXPECT_EQ(traffic_class(48, ecn_codepoint::ect0), 0xC2);
}

TEST(Ipv6, FieldsRoundTrip) {
  ipv6_header h;
  h.set_version_class_flow(traffic_class(46, ecn_codepoint::ect1), 0xABCDE);
  h.set_payload_length(1234);
  h.set_next_header(ip_protocol::udp);
  h.set_hop_limit(7);
  ipv6_address src{};
  src[0] = 0xFE;
  src[15] = 1;
  h.set_src(src);
  const auto v = bytes_of(h);
  EXPECT_EQ(v[0], 0x6B);  // version 6, traffic class 0xB9 split across nibbles
  EXPECT_EQ(v[1], 0x9A);
  const auto back = from_bytes<ipv6_header>(v);
  EXPECT_EQ(back.version(), 6);
  EXPECT_EQ(back.traffic_class(), 0xB9);
  EXPECT_EQ(back.dscp(), 46);
  EXPECT_EQ(back.ecn(), ecn_codepoint::ect1);
  EXPECT_EQ(back.flow_label(), 0xABCDEu);
  EXPECT_EQ(back.payload_length(), 1234);
  EXPECT_EQ(back.next_header(), ip_protocol::udp);
  EXPECT_EQ(back.hop_limit(), 7);
  EXPECT_EQ(back.src(), src);
}

TEST(Udp, FieldsRoundTrip) {
  udp_header u;
  u.set_src_port(49152);
  u.set_dst_port(roce_v2_udp_port);
  u.set_length(40);
  u.set_checksum(0);
  const auto v = bytes_of(u);
  EXPECT_EQ(v, (std::vector<std::uint8_t>{0xC0, 0x00, 0x12, 0xB7, 0x00, 0x28, 0, 0}));
  const auto back = from_bytes<udp_header>(v);
  EXPECT_EQ(back.dst_port(), 4791);
  EXPECT_EQ(back.length(), 40);
}

TEST(Bth, ParsesTheRealConnectX4LxCnp) {
  const std::vector<std::uint8_t> v{0x81, 0x00, 0xFF, 0xFF, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00};
  const auto b = from_bytes<bth>(v);
  EXPECT_EQ(b.opcode(), roce_opcode::cnp);
  EXPECT_EQ(service_of(b.opcode()), transport_service::cnp);
  EXPECT_EQ(b.pkey(), 0xFFFF);
  EXPECT_TRUE(b.becn());
  EXPECT_FALSE(b.fecn());
  EXPECT_EQ(b.dest_qp(), 0x118u);
  EXPECT_FALSE(b.ack_req());
  EXPECT_EQ(b.psn(), 0u);
}

TEST(Bth, EveryFieldRoundTrips) {
  bth b;
  b.set_opcode(roce_opcode::rc_rdma_write_first);
  b.set_flags(true, true, 3, 0);
  b.set_pkey(0x8001);
  b.set_fecn_becn(true, false);
  b.set_dest_qp(0xABCDEF);
  b.set_ack_req(true);
  b.set_psn(0xFFFFFF);
  const auto v = bytes_of(b);
  EXPECT_EQ(v, (std::vector<std::uint8_t>{0x06, 0xF0, 0x80, 0x01, 0x80, 0xAB, 0xCD, 0xEF, 0x80, 0xFF, 0xFF, 0xFF}));
  const auto back = from_bytes<bth>(v);
  EXPECT_TRUE(back.solicited());
  EXPECT_TRUE(back.migreq());
  EXPECT_EQ(back.pad_count(), 3);
  EXPECT_EQ(back.tver(), 0);
  EXPECT_TRUE(back.fecn());
  EXPECT_FALSE(back.becn());
  EXPECT_EQ(back.dest_qp(), 0xABCDEFu);
  EXPECT_TRUE(back.ack_req());
  EXPECT_EQ(back.psn(), 0xFFFFFFu);
}

TEST(Reth, FieldsRoundTrip) {
  reth r;
  r.set_virtual_address(0x00007F0012345678);
  r.set_rkey(0xCAFE);
  r.set_dma_length(1 << 20);
  const auto back = from_bytes<reth>(bytes_of(r));
  EXPECT_EQ(back.virtual_address(), 0x00007F0012345678u);
  EXPECT_EQ(back.rkey(), 0xCAFEu);
  EXPECT_EQ(back.dma_length(), 1u << 20);
}

struct syndrome_case {
  const char* name;
  std::uint8_t syndrome;
  aeth_kind kind;
  std::uint8_t value;
};

class AethSyndrome : public ::testing::TestWithParam<syndrome_case> {};

TEST_P(AethSyndrome, DecodesKindAndValue) {
  const auto& c = GetParam();
  aeth a;
  a.set_syndrome(c.syndrome);
  a.set_msn(0x123456);
  const auto back = from_bytes<aeth>(bytes_of(a));
  EXPECT_EQ(back.kind(), c.kind);
  EXPECT_EQ(back.syndrome_value(), c.value);
  EXPECT_EQ(back.msn(), 0x123456u);
  aeth rebuilt;
  rebuilt.set(c.kind, c.value);
  if (c.kind != aeth_kind::reserved) {
    EXPECT_EQ(rebuilt.syndrome(), c.syndrome);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ibta9_3_5, AethSyndrome,
    ::testing::Values(syndrome_case{"ack_credits_0", 0x00, aeth_kind::ack, 0},
                      syndrome_case{"ack_credit_count_invalid", 0x1F, aeth_kind::ack, 0x1F},
                      syndrome_case{"rnr_nak_timer_14", 0x2E, aeth_kind::rnr_nak, 14},
                      syndrome_case{"reserved_010", 0x40, aeth_kind::reserved, 0},
                      syndrome_case{"nak_psn_sequence_error", 0x60, aeth_kind::nak, 0},
                      syndrome_case{"nak_remote_access_error", 0x62, aeth_kind::nak, 2},
                      syndrome_case{"nak_remote_operational_error", 0x63, aeth_kind::nak, 3},
                      syndrome_case{"reserved_1xx", 0x80, aeth_kind::reserved, 0}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Aeth, NakCodes) {
  aeth a;
  a.set(aeth_kind::nak, static_cast<std::uint8_t>(nak_code::invalid_request));
  EXPECT_EQ(a.syndrome(), 0x61);
  EXPECT_EQ(a.nak(), nak_code::invalid_request);
}

TEST(IcrcTrailer, IsLittleEndian) {
  icrc_trailer t;
  t.set(0x2A00FD82);
  EXPECT_EQ(bytes_of(t), (std::vector<std::uint8_t>{0x82, 0xFD, 0x00, 0x2A}));
  EXPECT_EQ(from_bytes<icrc_trailer>(bytes_of(t)).value(), 0x2A00FD82u);
}

struct layout_case {
  const char* name;
  std::uint8_t opcode;
  bool reth;
  bool aeth;
  std::uint8_t header_bytes;
};

class OpcodeLayout : public ::testing::TestWithParam<layout_case> {};

TEST_P(OpcodeLayout, NamesTheExtendedHeaders) {
  const auto& c = GetParam();
  const auto& l = layout_of(c.opcode);
  EXPECT_TRUE(l.known);
  EXPECT_EQ(has_reth(c.opcode), c.reth);
  EXPECT_EQ(has_aeth(c.opcode), c.aeth);
  EXPECT_EQ(l.header_bytes, c.header_bytes);
}

INSTANTIATE_TEST_SUITE_P(
    Ibta9_2Table35, OpcodeLayout,
    ::testing::Values(
        layout_case{"rc_send_first", roce_opcode::rc_send_first, false, false, 0},
        layout_case{"rc_send_middle", roce_opcode::rc_send_middle, false, false, 0},
        layout_case{"rc_send_last", roce_opcode::rc_send_last, false, false, 0},
        layout_case{"rc_send_only", roce_opcode::rc_send_only, false, false, 0},
        layout_case{"rc_send_only_imm", roce_opcode::rc_send_only_with_immediate, false, false, 4},
        layout_case{"rc_write_first", roce_opcode::rc_rdma_write_first, true, false, 16},
        layout_case{"rc_write_middle", roce_opcode::rc_rdma_write_middle, false, false, 0},
        layout_case{"rc_write_last", roce_opcode::rc_rdma_write_last, false, false, 0},
        layout_case{"rc_write_last_imm", roce_opcode::rc_rdma_write_last_with_immediate, false, false, 4},
        layout_case{"rc_write_only", roce_opcode::rc_rdma_write_only, true, false, 16},
        layout_case{"rc_write_only_imm", roce_opcode::rc_rdma_write_only_with_immediate, true, false, 20},
        layout_case{"rc_read_request", roce_opcode::rc_rdma_read_request, true, false, 16},
        layout_case{"rc_read_response_first", roce_opcode::rc_rdma_read_response_first, false, true, 4},
        layout_case{"rc_read_response_middle", roce_opcode::rc_rdma_read_response_middle, false, false, 0},
        layout_case{"rc_read_response_last", roce_opcode::rc_rdma_read_response_last, false, true, 4},
        layout_case{"rc_read_response_only", roce_opcode::rc_rdma_read_response_only, false, true, 4},
        layout_case{"rc_acknowledge", roce_opcode::rc_acknowledge, false, true, 4},
        layout_case{"rc_atomic_acknowledge", roce_opcode::rc_atomic_acknowledge, false, true, 12},
        layout_case{"rc_compare_swap", roce_opcode::rc_compare_swap, false, false, 28},
        layout_case{"uc_write_only", roce_opcode::uc_rdma_write_only, true, false, 16},
        layout_case{"ud_send_only", roce_opcode::ud_send_only, false, false, 8},
        layout_case{"xrc_write_first", 0xA6, true, false, 20},
        layout_case{"xrc_acknowledge", 0xB1, false, true, 4},
        layout_case{"cnp", roce_opcode::cnp, false, false, 0}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(OpcodeLayout, ReservedOpcodesAreUnknown) {
  EXPECT_FALSE(layout_of(0x15).known);
  EXPECT_FALSE(layout_of(0x2C).known);  // UC has no READ
  EXPECT_FALSE(layout_of(0x80).known);
  EXPECT_FALSE(layout_of(0xFF).known);
}

TEST(MacControl, PauseFrameLayout) {
  pause_frame p;
  EXPECT_EQ(p.opcode(), mac_control_opcode::pause);
  p.set_quanta(0xFFFF);
  EXPECT_EQ(bytes_of(p), (std::vector<std::uint8_t>{0x00, 0x01, 0xFF, 0xFF}));
  EXPECT_EQ(mac_control_multicast, (mac_address{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01}));
  EXPECT_EQ(min_frame_bytes, 60u);
}

TEST(MacControl, PfcFrameLayout) {
  pfc_frame p;
  EXPECT_EQ(p.opcode(), 0x0101);
  p.set_class_enable(0x0108);  // priority 3 plus a reserved high bit
  p.set_quanta(3, 0xFFFF);
  p.set_quanta(7, 0x0807);
  const auto v = bytes_of(p);
  EXPECT_EQ(v[0], 0x01);
  EXPECT_EQ(v[1], 0x01);
  EXPECT_EQ(v[2], 0x01);
  EXPECT_EQ(v[3], 0x08);
  EXPECT_EQ(v[4 + 2 * 3], 0xFF);
  EXPECT_EQ(v[4 + 2 * 7], 0x08);
  const auto back = from_bytes<pfc_frame>(v);
  EXPECT_TRUE(back.enabled(3));
  EXPECT_FALSE(back.enabled(0));
  EXPECT_FALSE(back.enabled(8));  // reserved bits are not priorities
  EXPECT_EQ(back.class_enable(), 0x0108);
  EXPECT_EQ(back.quanta(3), 0xFFFF);
  EXPECT_EQ(back.quanta(7), 0x0807);
}

TEST(Gre, OptionalFieldsFollowTheFlags) {
  gre_header g;
  g.set(false, false, false, ethertype::erspan_type2);
  EXPECT_EQ(g.header_bytes(), 4u);
  g.set(false, false, true, ethertype::erspan_type2);
  EXPECT_EQ(bytes_of(g), (std::vector<std::uint8_t>{0x10, 0x00, 0x88, 0xBE}));
  EXPECT_EQ(g.header_bytes(), 8u);
  EXPECT_EQ(g.sequence_offset(), 4u);
  g.set(true, true, true, ethertype::transparent_ethernet_bridging);
  EXPECT_EQ(g.header_bytes(), 16u);
  EXPECT_EQ(g.key_offset(), 8u);
  EXPECT_EQ(g.sequence_offset(), 12u);
  EXPECT_EQ(g.version(), 0);
  EXPECT_EQ(g.protocol(), 0x6558);
}

TEST(Erspan, TypeIIFields) {
  erspan2_header h;
  h.set(100, 5, 3, true, 0x3FF, 0xABCDE);
  const auto back = from_bytes<erspan2_header>(bytes_of(h));
  EXPECT_EQ(back.version(), 1);
  EXPECT_EQ(back.vlan(), 100);
  EXPECT_EQ(back.cos(), 5);
  EXPECT_EQ(back.encapsulation(), 3);
  EXPECT_TRUE(back.truncated());
  EXPECT_EQ(back.session_id(), 0x3FF);
  EXPECT_EQ(back.index(), 0xABCDEu);
}

TEST(Erspan, TypeIIIFields) {
  erspan3_header h;
  h.set(10, 7, false, 101);
  h.set_timestamp(0xDEADBEEF);
  h.set_security_group_tag(0x1234);
  h.set_flags(erspan_frame_type::ip, 0x2A, true, 3, true);
  const auto back = from_bytes<erspan3_header>(bytes_of(h));
  EXPECT_EQ(back.version(), 2);
  EXPECT_EQ(back.vlan(), 10);
  EXPECT_EQ(back.cos(), 7);
  EXPECT_EQ(back.session_id(), 101);
  EXPECT_EQ(back.timestamp(), 0xDEADBEEFu);
  EXPECT_EQ(back.security_group_tag(), 0x1234);
  EXPECT_EQ(back.frame_type(), 2);
  EXPECT_EQ(back.hardware_id(), 0x2A);
  EXPECT_TRUE(back.direction());
  EXPECT_EQ(back.granularity(), 3);
  EXPECT_TRUE(back.has_platform_subheader());
  EXPECT_FALSE(back.p());

  erspan3_platform_subheader ps;
  ps.set(3, 0x123456789);
  const auto psb = from_bytes<erspan3_platform_subheader>(bytes_of(ps));
  EXPECT_EQ(psb.platform_id(), 3);
  EXPECT_EQ(psb.platform_info(), 0x123456789u);
}

}  // namespace
}  // namespace rocelab::captures::wire

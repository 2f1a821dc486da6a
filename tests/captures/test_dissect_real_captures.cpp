// dissect() on the real captures in shared/pcaps, with the counts shared/pcaps/INDEX.md states.
#include "rocelab/captures/dissect.hpp"

#include "capture_test_support.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rocelab::captures {
namespace {

using namespace test;

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

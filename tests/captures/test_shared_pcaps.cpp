// `rocelab analyze` counts on real captures from public projects and two hand-made ones,
// against the counts in shared/pcaps/INDEX.md (checked there with TShark 4.0.17).
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "rocelab/captures/analyze_capture.hpp"

namespace rocelab::captures {
namespace {

std::string pcap_path(const std::string& name) {
  return std::string(ROCELAB_SHARED_DIR) + "/pcaps/" + name;
}

capture_file_analysis analyze(const std::string& name, double link_gbps = 100) {
  auto r = analyze_capture_file(pcap_path(name), {.link_gbps = link_gbps});
  EXPECT_TRUE(r.ok()) << name << ": " << r.error().message();
  if (!r.ok()) return {};
  return std::move(r).value();
}

TEST(shared_pcaps, rocev2_rc_send_ack_between_two_nics) {
  const auto a = analyze("rocev2-rc-send-ack_oferby-proxy.pcap");
  EXPECT_TRUE(a.read_status.ok()) << a.read_status.message();
  const auto& c = a.analysis;
  EXPECT_EQ(c.frames, 123u);
  EXPECT_EQ(c.roce.packets, 105u);
  EXPECT_EQ(c.roce.data, 68u);
  EXPECT_EQ(c.roce.ack, 37u);
  EXPECT_EQ(c.roce.nak, 0u);
  EXPECT_EQ(c.roce.cnp, 0u);
  EXPECT_EQ(c.roce.ecn.ect0, 105u);
  EXPECT_EQ(c.roce.ecn.ce, 0u);
  ASSERT_EQ(c.flows.size(), 2u);
  // 68 from .6 to .4 on dest QP 0x45, 37 back on 0x48 (whose UDP source port 69 makes
  // port-based dissectors call them TFTP); data PSNs 0..66 contiguous: no retransmits.
  const roce_flow* forward = nullptr;
  const roce_flow* back = nullptr;
  for (const auto& f : c.flows) (f.dest_qp == 0x45 ? forward : back) = &f;
  ASSERT_NE(forward, nullptr);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(forward->packets, 68u);
  EXPECT_EQ(back->packets, 37u);
  EXPECT_EQ(back->dest_qp, 0x48u);
  EXPECT_EQ(forward->retransmits, 0u);
  EXPECT_EQ(back->retransmits, 0u);
  EXPECT_TRUE(format_ip(forward->src).ends_with(".6")) << format_ip(forward->src);
  EXPECT_TRUE(format_ip(forward->dst).ends_with(".4")) << format_ip(forward->dst);
}

TEST(shared_pcaps, real_connectx4lx_cnp) {
  const auto& c = analyze("rocev2-cnp-connectx4lx_scapy-hexdump.pcap").analysis;
  EXPECT_EQ(c.roce.packets, 1u);
  EXPECT_EQ(c.roce.cnp, 1u);
  EXPECT_EQ(c.roce.ecn.ect0, 1u);
  ASSERT_EQ(c.flows.size(), 1u);
  EXPECT_EQ(c.flows[0].dest_qp, 0x118u);
  EXPECT_EQ(c.flows[0].cnp, 1u);
}

TEST(shared_pcaps, rocev1_is_not_rocev2) {
  const auto& c = analyze("rocev1-rc-write-ack_scapy-hexdump.pcap").analysis;
  EXPECT_GT(c.frames, 0u);
  EXPECT_EQ(c.roce.packets, 0u);
}

TEST(shared_pcaps, two_real_8023x_pause_frames) {
  const auto& c = analyze("pause-8023x-ax88772_netdev-hexdump.pcap").analysis;
  EXPECT_EQ(c.pause.frames, 2u);
  EXPECT_EQ(c.pause.quanta, 65535u);
  EXPECT_EQ(c.pfc.frames, 0u);
}

TEST(shared_pcaps, handcrafted_pfc_edge_cases) {
  const auto& c = analyze("pfc-pause_handcrafted.pcap").analysis;
  EXPECT_EQ(c.pfc.frames, 7u);
  EXPECT_EQ(c.pause.frames, 2u);
  EXPECT_EQ(c.pause.quanta, 65535u);
  struct expected { std::uint64_t frames, xoff, xon, quanta; };
  const expected by_priority[8] = {{1, 1, 0, 256},  {1, 1, 0, 513},  {1, 1, 0, 770},
                                   {6, 5, 1, 197887}, {2, 2, 0, 5944}, {1, 1, 0, 1541},
                                   {1, 1, 0, 1798}, {1, 1, 0, 2055}};
  for (int p = 0; p < 8; ++p) {
    SCOPED_TRACE("priority " + std::to_string(p));
    EXPECT_EQ(c.pfc.by_priority[p].frames, by_priority[p].frames);
    EXPECT_EQ(c.pfc.by_priority[p].xoff, by_priority[p].xoff);
    EXPECT_EQ(c.pfc.by_priority[p].xon, by_priority[p].xon);
    EXPECT_EQ(c.pfc.by_priority[p].quanta, by_priority[p].quanta);
  }
  // Every enabled XOFF opens an interval; every interval ends at or after it starts.
  EXPECT_FALSE(c.pauses.empty());
  for (const auto& p : c.pauses) EXPECT_LE(p.start_ns, p.end_ns);
}

TEST(shared_pcaps, handcrafted_roce_vlan_ecn_cnp) {
  const auto& c = analyze("rocev2-vlan-ecn-cnp_handcrafted.pcap").analysis;
  EXPECT_EQ(c.frames, 9u);
  EXPECT_EQ(c.roce.packets, 8u);  // frame 8 has source port 4791, destination 9999
  EXPECT_EQ(c.roce.cnp, 2u);
  EXPECT_EQ(c.roce.ack, 1u);
  EXPECT_EQ(c.roce.data, 5u);
  EXPECT_EQ(c.roce.ecn.not_ect, 2u);
  EXPECT_EQ(c.roce.ecn.ect1, 1u);
  EXPECT_EQ(c.roce.ecn.ect0, 2u);
  EXPECT_EQ(c.roce.ecn.ce, 3u);
  EXPECT_EQ(c.malformed, 0u);
}

TEST(shared_pcaps, tcp_ecn_codepoints_are_not_roce) {
  EXPECT_EQ(analyze("ecn-ce-tcp_tcp-ecn-sample.pcap").analysis.roce.packets, 0u);
  EXPECT_EQ(analyze("ecn-ect1-tcp_tcpdump-accecn-handshake.pcap").analysis.roce.packets, 0u);
}

struct erspan_case {
  const char* file;
  std::uint64_t erspan_packets;
};

class shared_erspan : public ::testing::TestWithParam<erspan_case> {};

TEST_P(shared_erspan, mirror_packets_counted_by_type) {
  const auto a = analyze(GetParam().file);
  EXPECT_EQ(a.analysis.erspan_packets, GetParam().erspan_packets);
  EXPECT_EQ(a.analysis.roce.packets, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    index_counts, shared_erspan,
    ::testing::Values(erspan_case{"erspan-typeI_tcpdump-erspan-type-i-4.pcap", 88},
                      erspan_case{"erspan-typeII_tcpdump-erspan-type-ii-3.pcap", 108},
                      erspan_case{"erspan-typeIII_tcpdump-erspan-type-iii-ft-0.pcap", 9},
                      erspan_case{"erspan-typeIII-ft7_tcpdump-erspan-type-iii-ft-7.pcap", 58},
                      erspan_case{"erspan-typeIII-dot1q_zeek-gre-erspan3-dot1q.pcap", 2},
                      erspan_case{"erspan-typeII-vxlan_arkime-gre-erspan-vxlan.pcap", 7},
                      erspan_case{"gre-teb-mirror-not-erspan_zeek-erspan.pcap", 0}));

TEST(shared_pcaps, hostile_erspan_file_ends_cleanly) {
  // Raw IPv6 link type, absurd snaplen, truncated: must not crash; whatever was read is
  // counted and the reason for stopping names the place.
  auto r = analyze_capture_file(pcap_path("erspan-typeIII-pb_tcpdump-erspan-type-iii-pb-1.pcap"), {});
  if (!r.ok()) {
    EXPECT_FALSE(r.error().message().empty());
    return;
  }
  EXPECT_EQ(r->analysis.roce.packets, 0u);
  if (!r->read_status.ok()) {
    EXPECT_NE(r->read_status.message().find("offset"), std::string::npos);
  }
}

TEST(shared_pcaps, vlan_priority_tags_and_qinq_pcapng) {
  const auto a = analyze("vlan-qinq-pcp-dei_zeek.pcapng");
  EXPECT_EQ(a.format, capture_format::pcapng);
  EXPECT_EQ(a.analysis.frames, 9u);
  EXPECT_EQ(analyze("vlan-pcp5_zeek-http-vlan-0.pcap").analysis.frames, 14u);
}

}  // namespace
}  // namespace rocelab::captures

#include "rocelab/captures/congestion_analyzer.hpp"
#include "rocelab/captures/capture_summary.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace rocelab::captures {
namespace {

constexpr std::array<std::uint8_t, 6> mac_a{0x02, 0, 0, 0, 0, 0xaa};
constexpr std::array<std::uint8_t, 6> mac_b{0x02, 0, 0, 0, 0, 0xbb};

dissected_frame pfc(std::uint16_t enable, std::array<std::uint16_t, 8> quanta,
                    std::array<std::uint8_t, 6> src = mac_a) {
  dissected_frame f;
  f.has_ethernet = true;
  f.src_mac = src;
  f.ethertype = 0x8808;
  f.is_mac_control = true;
  f.mac_control_opcode = 0x0101;
  f.pfc_class_enable = enable;
  f.pfc_quanta = quanta;
  return f;
}

dissected_frame roce(std::uint8_t opcode, std::uint32_t psn, std::uint8_t ecn = 2,
                     std::uint32_t qp = 0x45, std::uint8_t last_ip_byte = 1) {
  dissected_frame f;
  f.has_ethernet = true;
  f.ip_version = 4;
  f.ip_src = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, last_ip_byte};
  f.ip_dst = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 100};
  f.ecn = ecn;
  f.has_udp = true;
  f.udp_dst_port = 4791;
  f.is_roce = true;
  f.bth_opcode = opcode;
  f.dest_qp = qp;
  f.psn = psn;
  return f;
}

packet_view at(std::int64_t t_ns, std::uint32_t length = 64, std::uint32_t interface_id = 0) {
  return {.timestamp_ns = t_ns, .interface_id = interface_id, .original_length = length, .bytes = {}};
}

constexpr std::uint8_t write_only = 0x0a;
constexpr std::uint8_t ack = 0x11;
constexpr std::uint8_t cnp = 0x81;

TEST(pause_intervals, xoff_then_xon_closes_at_the_xon) {
  congestion_analyzer a({.link_gbps = 100});
  a.add(at(1000), pfc(1u << 3, {0, 0, 0, 0xffff, 0, 0, 0, 0}));
  a.add(at(5000), pfc(1u << 3, {}));
  const auto r = a.finish();
  ASSERT_EQ(r.pauses.size(), 1u);
  EXPECT_EQ(port_name(r, r.pauses[0]), "02:00:00:00:00:aa");
  EXPECT_EQ(r.pauses[0].priority, 3);
  EXPECT_EQ(r.pauses[0].start_ns, 1000);
  EXPECT_EQ(r.pauses[0].end_ns, 5000);
  EXPECT_EQ(r.pfc.by_priority[3].xoff, 1u);
  EXPECT_EQ(r.pfc.by_priority[3].xon, 1u);
  EXPECT_EQ(r.pfc.by_priority[3].quanta, 0xffffu);
}

TEST(pause_intervals, expiry_is_quanta_times_512_bit_times) {
  // 1000 quanta at 100 Gb/s: 1000 x 5.12 ns = 5120 ns; at 25 Gb/s: 20480 ns.
  for (auto [gbps, expected_ns] : {std::pair{100.0, 5120}, {25.0, 20480}, {400.0, 1280}}) {
    congestion_analyzer a({.link_gbps = gbps});
    a.add(at(0), pfc(1u << 0, {1000, 0, 0, 0, 0, 0, 0, 0}));
    const auto r = a.finish();
    ASSERT_EQ(r.pauses.size(), 1u) << gbps;
    EXPECT_EQ(r.pauses[0].end_ns, expected_ns) << gbps;
  }
}

TEST(pause_intervals, refresh_before_expiry_merges_into_one_interval) {
  congestion_analyzer a({.link_gbps = 100});
  // Each XOFF pauses 5120 ns; refreshed every 4000 ns three times, then left to expire.
  for (int i = 0; i < 3; ++i) a.add(at(i * 4000), pfc(1u << 3, {0, 0, 0, 1000, 0, 0, 0, 0}));
  const auto r = a.finish();
  ASSERT_EQ(r.pauses.size(), 1u);
  EXPECT_EQ(r.pauses[0].start_ns, 0);
  EXPECT_EQ(r.pauses[0].end_ns, 8000 + 5120);
  EXPECT_EQ(r.pauses[0].frames, 3u);
}

TEST(pause_intervals, xoff_after_expiry_starts_a_new_interval) {
  congestion_analyzer a({.link_gbps = 100});
  a.add(at(0), pfc(1u << 3, {0, 0, 0, 1000, 0, 0, 0, 0}));
  a.add(at(10000), pfc(1u << 3, {0, 0, 0, 1000, 0, 0, 0, 0}));
  const auto r = a.finish();
  ASSERT_EQ(r.pauses.size(), 2u);
  EXPECT_EQ(r.pauses[0].end_ns, 5120);
  EXPECT_EQ(r.pauses[1].start_ns, 10000);
  EXPECT_EQ(r.pauses[1].end_ns, 15120);
}

TEST(pause_intervals, xon_after_expiry_ends_at_the_expiry) {
  congestion_analyzer a({.link_gbps = 100});
  a.add(at(0), pfc(1u << 3, {0, 0, 0, 1000, 0, 0, 0, 0}));
  a.add(at(9000), pfc(1u << 3, {}));
  const auto r = a.finish();
  ASSERT_EQ(r.pauses.size(), 1u);
  EXPECT_EQ(r.pauses[0].end_ns, 5120);
}

TEST(pause_intervals, ports_and_priorities_are_independent) {
  congestion_analyzer a({.link_gbps = 100});
  a.add(at(0), pfc((1u << 3) | (1u << 4), {0, 0, 0, 1000, 1000, 0, 0, 0}, mac_a));
  a.add(at(100), pfc(1u << 3, {0, 0, 0, 1000, 0, 0, 0, 0}, mac_b));
  a.add(at(200), pfc(1u << 3, {}, mac_a));
  const auto r = a.finish();
  ASSERT_EQ(r.pauses.size(), 3u);
  // Ordered by start time: a/3 and a/4 at 0, then b/3 at 100.
  EXPECT_EQ(r.pauses[0].priority, 3);
  EXPECT_EQ(r.pauses[0].end_ns, 200);
  EXPECT_EQ(r.pauses[1].priority, 4);
  EXPECT_EQ(r.pauses[1].end_ns, 5120);
  EXPECT_EQ(port_name(r, r.pauses[2]), "02:00:00:00:00:bb");
}

TEST(pause_intervals, several_interfaces_key_by_interface_name) {
  congestion_analyzer a({.link_gbps = 100});
  interface_info named, unnamed;
  named.name = "Ethernet0";
  a.set_interfaces({named, unnamed});
  a.add(at(0, 64, 0), pfc(1u << 3, {0, 0, 0, 10, 0, 0, 0, 0}, mac_a));
  a.add(at(0, 64, 1), pfc(1u << 3, {0, 0, 0, 10, 0, 0, 0, 0}, mac_a));
  const auto r = a.finish();
  ASSERT_EQ(r.pauses.size(), 2u);
  EXPECT_EQ(port_name(r, r.pauses[0]), "Ethernet0");
  EXPECT_EQ(port_name(r, r.pauses[1]), "if1");
  EXPECT_EQ(r.ports, (std::vector<std::string>{"Ethernet0", "if1"}));
}

TEST(pause_intervals, expiry_saturates_at_the_end_of_time) {
  // Found by fuzz_capture_file: a pcapng timestamp clamped to INT64_MAX plus a pause.
  congestion_analyzer a({.link_gbps = 100});
  a.add(at(std::numeric_limits<std::int64_t>::max()), pfc(1u << 3, {0, 0, 0, 0xffff, 0, 0, 0, 0}));
  const auto r = a.finish();
  ASSERT_EQ(r.pauses.size(), 1u);
  EXPECT_EQ(r.pauses[0].end_ns, std::numeric_limits<std::int64_t>::max());
}

TEST(pfc_counts, disabled_classes_are_ignored_and_reserved_bits_do_not_count) {
  congestion_analyzer a;
  // Class 5 carries quanta but is not enabled; bit 8 (reserved) is set.
  a.add(at(0), pfc((1u << 8) | (1u << 3), {0, 0, 0, 7, 0, 99, 0, 0}));
  a.add(at(1), pfc(0, {1, 1, 1, 1, 1, 1, 1, 1}));
  const auto r = a.finish();
  EXPECT_EQ(r.pfc.frames, 2u);
  EXPECT_EQ(r.pfc.by_priority[3].frames, 1u);
  EXPECT_EQ(r.pfc.by_priority[3].quanta, 7u);
  EXPECT_EQ(r.pfc.by_priority[5].frames, 0u);
  EXPECT_EQ(r.pfc.by_priority[0].frames, 0u);
}

TEST(roce_counts, kinds_and_ecn_codepoints) {
  congestion_analyzer a;
  a.add(at(0), roce(write_only, 0, 0));
  a.add(at(1), roce(write_only, 1, 1));
  a.add(at(2), roce(write_only, 2, 2));
  a.add(at(3), roce(write_only, 3, 3));
  auto nak = roce(ack, 3, 2, 0x48, 100);
  nak.has_aeth = true;
  nak.aeth_syndrome = 0x60;  // NAK, PSN sequence error
  a.add(at(4), nak);
  auto rnr = nak;
  rnr.aeth_syndrome = 0x20 | 0x0e;  // RNR NAK with a timer value
  a.add(at(5), rnr);
  auto good_ack = nak;
  good_ack.aeth_syndrome = 0x1f;  // ACK with credit count 31
  a.add(at(6), good_ack);
  a.add(at(7), roce(cnp, 0, 2, 0x48, 100));
  const auto r = a.finish();
  EXPECT_EQ(r.roce.packets, 8u);
  EXPECT_EQ(r.roce.data, 4u);
  EXPECT_EQ(r.roce.nak, 2u);
  EXPECT_EQ(r.roce.rnr_nak, 1u);
  EXPECT_EQ(r.roce.ack, 1u);
  EXPECT_EQ(r.roce.cnp, 1u);
  EXPECT_EQ(r.roce.ecn.not_ect, 1u);
  EXPECT_EQ(r.roce.ecn.ect1, 1u);
  EXPECT_EQ(r.roce.ecn.ect0, 5u);
  EXPECT_EQ(r.roce.ecn.ce, 1u);
  ASSERT_EQ(r.flows.size(), 2u);
  EXPECT_EQ(r.flows[0].ce, 1u);
  EXPECT_EQ(r.flows[1].cnp, 1u);
}

TEST(flows, psn_going_backwards_counts_the_resent_packets) {
  congestion_analyzer a;
  // Go-back-N: 0..9 sent, 5..9 resent after a NAK, then 10 and 11.
  std::int64_t t = 0;
  for (std::uint32_t psn = 0; psn < 10; ++psn) a.add(at(t++, 1000), roce(write_only, psn));
  for (std::uint32_t psn = 5; psn < 12; ++psn) a.add(at(t++, 1000), roce(write_only, psn));
  const auto r = a.finish();
  ASSERT_EQ(r.flows.size(), 1u);
  EXPECT_EQ(r.flows[0].packets, 17u);
  EXPECT_EQ(r.flows[0].bytes, 17000u);
  EXPECT_EQ(r.flows[0].retransmits, 5u);
  EXPECT_EQ(r.flows[0].psn_rewinds, 1u);
  EXPECT_EQ(r.flows[0].first_ns, 0);
  EXPECT_EQ(r.flows[0].last_ns, 16);
  EXPECT_EQ(format_ip(r.flows[0].src), "198.18.0.1");
}

TEST(flows, psn_wraps_around_24_bits_without_counting_a_retransmit) {
  congestion_analyzer a;
  for (std::uint32_t psn : {0xfffffeu, 0xffffffu, 0u, 1u}) a.add(at(0), roce(write_only, psn));
  EXPECT_EQ(a.finish().flows[0].retransmits, 0u);
}

TEST(flows, ack_psn_gaps_are_not_retransmits) {
  congestion_analyzer a;
  for (std::uint32_t psn : {10u, 4u, 20u}) {
    auto f = roce(ack, psn);
    f.has_aeth = true;
    a.add(at(0), f);
  }
  EXPECT_EQ(a.finish().flows[0].retransmits, 0u);
}

TEST(flows, many_flows_are_kept_apart) {
  congestion_analyzer a;
  for (std::uint32_t qp = 0; qp < 5000; ++qp)
    for (int i = 0; i < 3; ++i) a.add(at(qp), roce(write_only, i, 2, qp));
  const auto r = a.finish();
  ASSERT_EQ(r.flows.size(), 5000u);
  for (const auto& f : r.flows) {
    EXPECT_EQ(f.packets, 3u);
    EXPECT_EQ(f.retransmits, 0u);
  }
}

TEST(format, ip_addresses) {
  std::array<std::uint8_t, 16> v6{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  EXPECT_EQ(format_ip(v6), "2001:db8::1");
  std::array<std::uint8_t, 16> v6b{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(format_ip(v6b), "fe80::211:0:0:0");
}

}  // namespace
}  // namespace rocelab::captures

namespace rocelab::captures {
namespace {

// A storm's summary: per (port, priority) the intervals and time paused, the longest
// first among the ten, and the flows with most retransmissions.
TEST(capture_summary, aggregates_per_port_and_priority_and_ranks_the_worst) {
  capture_analysis a;
  a.ports = {"02:00:00:00:00:aa", "02:00:00:00:00:bb"};
  a.pauses = {{0, 3, 0, 100, 1}, {1, 3, 50, 60, 2}, {0, 3, 200, 500, 1}, {0, 4, 300, 310, 1}};
  const auto s = summarize_pauses(a);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].port, 0u);
  EXPECT_EQ(s[0].priority, 3);
  EXPECT_EQ(s[0].intervals, 2u);
  EXPECT_EQ(s[0].paused_ns, 400);
  EXPECT_EQ(s[0].longest_ns, 300);
  EXPECT_EQ(s[1].priority, 4);
  EXPECT_EQ(s[2].port, 1u);
  EXPECT_EQ(s[2].frames, 2u);
  EXPECT_EQ(longest_pauses(a, 2), (std::vector<std::size_t>{2, 0}));
  EXPECT_EQ(longest_pauses(a, 10).size(), 4u);

  a.flows.resize(4);
  a.flows[0].retransmits = 5;
  a.flows[2].retransmits = 9;
  a.flows[3].retransmits = 5;
  a.flows[1].ce = 7;
  EXPECT_EQ(flows_by_retransmits(a, 10), (std::vector<std::size_t>{2, 0, 3})) << "ties keep the flows' order";
  EXPECT_EQ(flows_by_retransmits(a, 1), (std::vector<std::size_t>{2}));
  EXPECT_EQ(flows_by_ce(a, 10), (std::vector<std::size_t>{1}));
}

}  // namespace
}  // namespace rocelab::captures

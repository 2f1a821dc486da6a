// The capture's witness of the senders' starts: their first data packets (experiments/run/capture_starts.hpp).
#include "rocelab/experiments/run/capture_starts.hpp"

#include <gtest/gtest.h>

#include "rocelab/captures/congestion_analyzer.hpp"

namespace rocelab::experiments {
namespace {

std::array<std::uint8_t, 16> mapped(std::uint8_t last) {
  return {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, last};
}

captures::roce_flow flow(std::uint8_t src_last, std::uint32_t dest_qp, std::int64_t first_ns) {
  captures::roce_flow f;
  f.src = mapped(src_last);
  f.dest_qp = dest_qp;
  f.packets = 10;
  f.first_ns = first_ns;
  return f;
}

const std::vector<std::string> hosts{"h1", "h2", "h3"};
const std::vector<std::string> ipv4{"198.18.0.1", "198.18.0.2", "198.18.0.3"};

// h1 (198.18.0.1) receives; h2 and h3 send, h2's first message scheduled at 0, h3's at
// 100 us. T0 is at capture time 1'000'000'000.
const std::map<std::string, std::int64_t> scheduled{{"h2", 0}, {"h3", 100'000}};

TEST(capture_starts, each_senders_first_data_packet_against_its_schedule) {
  captures::capture_analysis a;
  a.flows = {flow(2, 0x201, 1'000'080'000),   // h2's data to h1's QP for h2
             flow(2, 0x201, 1'000'050'000),   // an earlier flow of h2's: its first
             flow(3, 0x202, 1'000'130'000),   // h3's data
             flow(2, 0x100, 1'000'001'000)};  // h2's ACK to someone: not its start
  const auto seen = capture_start_offsets(a, hosts, ipv4, 1'000'000'000, scheduled).offsets_ns;
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen.at("h2"), 50'000);
  EXPECT_EQ(seen.at("h3"), 30'000) << "against its own scheduled start";
}

TEST(capture_starts, a_sender_the_capture_missed_is_left_out) {
  captures::capture_analysis a;
  a.flows = {flow(3, 0x202, 1'000'130'000), flow(2, 0x203, 1'000'010'000)};  // h2's data, but to h3's QP
  const auto seen = capture_start_offsets(a, hosts, ipv4, 1'000'000'000, scheduled).offsets_ns;
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen.at("h3"), 30'000);
  EXPECT_TRUE(capture_start_offsets(captures::capture_analysis{}, hosts, ipv4, 1'000'000'000, scheduled).offsets_ns.empty());
  EXPECT_TRUE(capture_start_offsets(a, hosts, ipv4, 1'000'000'000, {{"h9", 0}}).offsets_ns.empty()) << "not a host of the run";
}

TEST(capture_starts, the_switchs_arrival_copies_are_the_witness_where_the_capture_has_them) {
  captures::capture_analysis a;
  a.flows = {flow(2, 0x201, 1'000'480'000), flow(3, 0x202, 1'000'560'000)};  // behind the egress queue
  captures::message_arrival h2;
  h2.src = mapped(2);
  h2.dest_qp = 0x201;
  h2.first_ns = 1'000'004'000;
  captures::message_arrival h3 = h2;
  h3.src = mapped(3);
  h3.dest_qp = 0x202;
  h3.first_ns = 1'000'109'000;
  captures::message_arrival ack = h2;  // h2 to h3's QP for h1: not a start of h2's data
  ack.dest_qp = 0x100;
  ack.first_ns = 1'000'000'500;
  a.arrivals = {ack, h2, h3};
  const auto seen = capture_start_offsets(a, hosts, ipv4, 1'000'000'000, scheduled);
  EXPECT_TRUE(seen.at_ingress);
  ASSERT_EQ(seen.offsets_ns.size(), 2u);
  EXPECT_EQ(seen.offsets_ns.at("h2"), 4'000);
  EXPECT_EQ(seen.offsets_ns.at("h3"), 9'000);
  a.arrivals.clear();
  const auto behind = capture_start_offsets(a, hosts, ipv4, 1'000'000'000, scheduled);
  EXPECT_FALSE(behind.at_ingress);
  EXPECT_EQ(behind.offsets_ns.at("h2"), 480'000);
}

}  // namespace
}  // namespace rocelab::experiments

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
  const auto seen = capture_start_offsets(a, hosts, ipv4, 1'000'000'000, scheduled);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen.at("h2"), 50'000);
  EXPECT_EQ(seen.at("h3"), 30'000) << "against its own scheduled start";
}

TEST(capture_starts, a_sender_the_capture_missed_is_left_out) {
  captures::capture_analysis a;
  a.flows = {flow(3, 0x202, 1'000'130'000), flow(2, 0x203, 1'000'010'000)};  // h2's data, but to h3's QP
  const auto seen = capture_start_offsets(a, hosts, ipv4, 1'000'000'000, scheduled);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen.at("h3"), 30'000);
  EXPECT_TRUE(capture_start_offsets(captures::capture_analysis{}, hosts, ipv4, 1'000'000'000, scheduled).empty());
  EXPECT_TRUE(capture_start_offsets(a, hosts, ipv4, 1'000'000'000, {{"h9", 0}}).empty()) << "not a host of the run";
}

}  // namespace
}  // namespace rocelab::experiments

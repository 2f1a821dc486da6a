// The senders' starts from the capture's first data packets (experiments/run/capture_starts.hpp).
#include <gtest/gtest.h>

#include "rocelab/captures/congestion_analyzer.hpp"
#include "rocelab/experiments/run/capture_starts.hpp"

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

flow_record sent(std::uint32_t src, std::int64_t start_ns) {
  flow_record f;
  f.src = src;
  f.dst = 0;
  f.start_ns = start_ns;
  f.end_ns = start_ns + 1'000'000;
  f.fct_ns = 1'000'000;
  return f;
}

// h1 (198.18.0.1) receives; h2 and h3 send, scheduled at 0, their NICs started them 50 us
// and 20 us late. T0 is at capture time 1'000'000'000.
run_records two_senders() {
  run_records r;
  r.hosts = {"h1", "h2", "h3"};
  r.flows = {sent(1, 50'000), sent(2, 20'000)};
  r.start_offsets_ns = {{"h2", 50'000}, {"h3", 20'000}};
  r.start_source = "nic";
  return r;
}

const std::vector<std::string> ipv4{"198.18.0.1", "198.18.0.2", "198.18.0.3"};

TEST(capture_starts, the_first_data_packet_on_the_wire_replaces_the_nics_time) {
  captures::capture_analysis a;
  a.flows = {flow(2, 0x201, 1'000'080'000),   // h2's data to h1's QP for h2
             flow(3, 0x202, 1'000'030'000),   // h3's data
             flow(2, 0x100, 1'000'001'000)};  // h2's ACK to someone: not its start
  run_records r = two_senders();
  capture_start_offsets(a, ipv4, 1'000'000'000, r);
  EXPECT_EQ(r.start_source, "capture");
  EXPECT_EQ(r.start_offsets_ns.at("h2"), 80'000);
  EXPECT_EQ(r.start_offsets_ns.at("h3"), 30'000);
}

TEST(capture_starts, a_sender_the_capture_missed_keeps_its_nic_offset_and_says_so) {
  captures::capture_analysis a;
  a.flows = {flow(3, 0x202, 1'000'030'000)};
  run_records r = two_senders();
  capture_start_offsets(a, ipv4, 1'000'000'000, r);
  EXPECT_EQ(r.start_source, "capture+nic");
  EXPECT_EQ(r.start_offsets_ns.at("h2"), 50'000);
  EXPECT_EQ(r.start_offsets_ns.at("h3"), 30'000);

  run_records none = two_senders();
  capture_start_offsets(captures::capture_analysis{}, ipv4, 1'000'000'000, none);
  EXPECT_EQ(none.start_source, "nic") << "nothing on the wire: the NICs' times stand";
}

}  // namespace
}  // namespace rocelab::experiments

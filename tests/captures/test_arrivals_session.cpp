// The arrivals session (congestion_analyzer.hpp: arrivals_session): a switch's ERSPAN III
// ingress copies of the packets that begin messages witness when each flow's messages
// reached the switch, at the switch's timestamp, and are not packets of the flows; an
// egress copy, another session or the option off counts as before.
#include "rocelab/captures/congestion_analyzer.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "rocelab/captures/dissect.hpp"
#include "rocelab/captures/frame_builder.hpp"

namespace rocelab::captures {
namespace {

namespace op = wire::roce_opcode;

constexpr std::int64_t second = 1'000'000'000;
// A capture clock in 2026, and the switch's stamp 37.2 us earlier.
constexpr std::int64_t captured_at = 1'795'000'000LL * second + 123'456'700;
constexpr std::int64_t arrived_at = captured_at - 37'200;

std::vector<std::uint8_t> first_packet(std::uint8_t host) {
  roce_frame_spec r;
  r.ip.src = ipv4_mapped(198, 18, 0, host);
  r.ip.dst = ipv4_mapped(198, 18, 0, 1);
  r.opcode = op::rc_rdma_write_first;
  r.dest_qp = 0x200 + host;
  r.reth_dma_length = 65536;
  std::vector<std::uint8_t> frame;
  append_roce_frame(r, frame);
  return frame;
}

std::vector<std::uint8_t> copy_of(const std::vector<std::uint8_t>& inner, std::uint16_t session, bool egress,
                                  std::int64_t stamp_ns) {
  erspan_spec e;
  e.type = 3;
  e.outer_ip.src = ipv4_mapped(198, 18, 1, 254);
  e.outer_ip.dst = ipv4_mapped(198, 18, 1, 1);
  e.session_id = session;
  e.egress = egress;
  e.granularity = 1;  // 100 ns
  e.timestamp = static_cast<std::uint32_t>(stamp_ns / 100);
  std::vector<std::uint8_t> frame;
  append_erspan_frame(e, inner, frame);
  return frame;
}

capture_analysis analyze(const std::vector<std::vector<std::uint8_t>>& frames, analyzer_options o = {}) {
  congestion_analyzer a(o);
  for (const auto& f : frames)
    a.add(packet_view{captured_at, 0, static_cast<std::uint32_t>(f.size()), std::span<const std::uint8_t>(f)});
  return a.finish();
}

TEST(dissect, an_erspan_iii_copy_names_its_direction_timestamp_and_granularity) {
  const auto frame = copy_of(first_packet(2), arrivals_session, false, arrived_at);
  dissected_frame f;
  dissect(link_type::ethernet, frame, f);
  EXPECT_EQ(f.erspan_type, 3);
  EXPECT_EQ(f.erspan_session, arrivals_session);
  EXPECT_FALSE(f.erspan_egress);
  EXPECT_EQ(f.erspan_granularity, 1);
  EXPECT_EQ(f.erspan_timestamp, static_cast<std::uint32_t>(arrived_at / 100));
  EXPECT_TRUE(f.is_roce);
  dissect(link_type::ethernet, copy_of(first_packet(2), 5, true, arrived_at), f);
  EXPECT_TRUE(f.erspan_egress);
  EXPECT_EQ(f.erspan_session, 5);
}

TEST(arrivals_session, an_ingress_copy_is_an_arrival_at_the_switchs_time_and_not_a_packet) {
  const auto inner = first_packet(3);
  // The copy at arrival, then the packet as the receiver's egress mirror shows it.
  const auto a = analyze({copy_of(inner, arrivals_session, false, arrived_at), inner});
  EXPECT_EQ(a.frames, 2u);
  EXPECT_EQ(a.erspan_packets, 1u);
  EXPECT_EQ(a.arrival_copies, 1u);
  ASSERT_EQ(a.flows.size(), 1u);
  EXPECT_EQ(a.flows[0].packets, 1u) << "the copy is not a second packet of the flow";
  EXPECT_EQ(a.flows[0].retransmits, 0u) << "nor does it make the packet a retransmission";
  EXPECT_EQ(a.roce.data, 1u);
  ASSERT_EQ(a.arrivals.size(), 1u);
  EXPECT_EQ(a.arrivals[0].src, ipv4_mapped(198, 18, 0, 3));
  EXPECT_EQ(a.arrivals[0].dest_qp, 0x203u);
  EXPECT_EQ(a.arrivals[0].first_ns, arrived_at) << "the switch's stamp, placed by the capture's later one";
  EXPECT_EQ(a.arrivals[0].copies, 1u);
}

TEST(arrivals_session, the_earliest_copy_of_a_flow_is_its_arrival_and_flows_are_ordered_by_it) {
  const auto a = analyze({copy_of(first_packet(4), arrivals_session, false, arrived_at - 1'000),
                          copy_of(first_packet(2), arrivals_session, false, arrived_at),
                          copy_of(first_packet(4), arrivals_session, false, arrived_at - 5'000)});
  ASSERT_EQ(a.arrivals.size(), 2u);
  EXPECT_EQ(a.arrivals[0].dest_qp, 0x204u);
  EXPECT_EQ(a.arrivals[0].first_ns, arrived_at - 5'000);
  EXPECT_EQ(a.arrivals[0].copies, 2u);
  EXPECT_EQ(a.arrivals[1].dest_qp, 0x202u);
  EXPECT_TRUE(a.flows.empty());
}

TEST(arrivals_session, a_stamp_from_before_the_timestamps_last_wrap_is_placed_before_it) {
  // 2^32 x 100 ns is ~429.5 s: a copy stamped 1 us before the counter wrapped and
  // captured 3 us after it.
  constexpr std::int64_t wrap_ns = (std::int64_t{1} << 32) * 100;
  const std::int64_t wrapped = (captured_at / wrap_ns) * wrap_ns;  // the counter's last 0
  congestion_analyzer an;
  const auto frame = copy_of(first_packet(2), arrivals_session, false, wrapped - 1'000);
  an.add(packet_view{wrapped + 3'000, 0, static_cast<std::uint32_t>(frame.size()), frame});
  const auto a = an.finish();
  ASSERT_EQ(a.arrivals.size(), 1u);
  EXPECT_EQ(a.arrivals[0].first_ns, wrapped - 1'000);
}

TEST(arrivals_session, egress_copies_other_sessions_and_the_option_off_count_as_packets) {
  const auto inner = first_packet(2);
  for (const auto& [frame, options, why] :
       std::vector<std::tuple<std::vector<std::uint8_t>, analyzer_options, const char*>>{
           {copy_of(inner, arrivals_session, true, arrived_at), {}, "an egress copy"},
           {copy_of(inner, 7, false, arrived_at), {}, "another session's ingress copy"},
           {copy_of(inner, arrivals_session, false, arrived_at), [] {
              analyzer_options o;
              o.arrivals_session = 0;
              return o;
            }(), "the option off"}}) {
    const auto a = analyze({frame}, options);
    EXPECT_EQ(a.arrival_copies, 0u) << why;
    EXPECT_TRUE(a.arrivals.empty()) << why;
    ASSERT_EQ(a.flows.size(), 1u) << why;
    EXPECT_EQ(a.flows[0].packets, 1u) << why;
  }
}

}  // namespace
}  // namespace rocelab::captures

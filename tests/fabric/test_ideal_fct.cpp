// The ideal FCT every backend records (fabric/ideal_fct.hpp): store and forward on every
// hop, by hand on small cases and against the closed form on long flows.

#include "rocelab/fabric/ideal_fct.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace rocelab::fabric {
namespace {

// 8 Gb/s: one byte per ns, so frame times are their wire bytes.
constexpr std::int64_t byte_per_ns = 8'000'000'000;

ideal_frames roce(std::uint32_t mtu) {
  ideal_frames f;
  f.mtu_bytes = mtu;
  f.data_overhead_bytes = 62;
  f.first_extra_bytes = 16;
  f.ack_bytes = 66;
  f.wire_overhead_bytes = 20;
  return f;
}

TEST(ideal_fct, one_hop_serializes_every_frame_then_the_ack) {
  const std::vector<ideal_hop> path{{byte_per_ns, 0}};
  // 1000+62+16+20, then two of 1000+62+20, then the ACK's 66+20.
  EXPECT_EQ(ideal_fct_ns(path, 3000, roce(1000)), 1098 + 1082 + 1082 + 86);
  // The last frame carries the rest.
  EXPECT_EQ(ideal_fct_ns(path, 2500, roce(1000)), 1098 + 1082 + 582 + 86);
}

TEST(ideal_fct, two_hops_store_and_forward_the_frame_and_the_ack_comes_back_over_both) {
  const std::vector<ideal_hop> path{{byte_per_ns, 100}, {byte_per_ns, 100}};
  // One frame: serialized on the NIC, travels, serialized again by the switch, travels;
  // the ACK the same way back.
  EXPECT_EQ(ideal_fct_ns(path, 1000, roce(1000)), (1098 + 100) * 2 + (86 + 100) * 2);
  // A second frame follows the first one hop behind: one more frame time in all.
  EXPECT_EQ(ideal_fct_ns(path, 2000, roce(1000)), (1098 + 100) * 2 + 1082 + (86 + 100) * 2);
}

// Equal frames (no RETH, whole packets): every hop's delay, all frames at the bottleneck,
// one frame per further hop, the ACK back. Long flows take the steady-state shortcut and
// must land exactly on it.
TEST(ideal_fct, long_flows_match_the_closed_form_at_the_bottleneck) {
  ideal_frames f = roce(4096);
  f.first_extra_bytes = 0;
  const std::int64_t w = 4096 + 62 + 20, ack = 66 + 20;
  // 8 Gb/s, then a 4 Gb/s bottleneck (2 ns a byte), then 8 Gb/s.
  const std::vector<ideal_hop> path{{byte_per_ns, 1000}, {byte_per_ns / 2, 1500}, {byte_per_ns, 1000}};
  for (const std::uint64_t n : {1ull, 2ull, 7ull, 1000ull, 30000ull}) {
    const std::int64_t expect = (1000 + 1500 + 1000) + static_cast<std::int64_t>(n) * 2 * w + w + w +
                                (ack + 1000) + (2 * ack + 1500) + (ack + 1000);
    EXPECT_EQ(ideal_fct_ns(path, n * 4096, f), expect) << n << " packets";
  }
}

// HPCC ns-3 serializes in whole ns, truncated: 1048 bytes at 100 Gb/s is 83 ns, not 83.84.
TEST(ideal_fct, ns3_truncation_is_whole_nanoseconds) {
  ideal_frames f;
  f.mtu_bytes = 1000;
  f.data_overhead_bytes = 48;
  f.ack_bytes = 60;
  f.wire_overhead_bytes = 0;
  f.truncate_to_ns = true;
  const std::vector<ideal_hop> path{{100'000'000'000, 0}};
  EXPECT_EQ(ideal_fct_ns(path, 1000, f), 83 + 4);
  f.truncate_to_ns = false;
  EXPECT_EQ(ideal_fct_ns(path, 1000, f), 84 + 5);  // 83.84 and 4.8 ns, each rounded up
}

}  // namespace
}  // namespace rocelab::fabric

#include "rocelab/fabric/switch_model.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "fabric_test_support.hpp"

namespace rocelab::fabric {
namespace {

using testing::make_packet;
using testing::plain_config;

// Kmin 10 000 B, Kmax 50 000 B, Pmax 0.2; packets of 1000 B; the queue is held at
// `depth_packets` x 1000 B and 100 000 ECT packets pass through it.
// p(depth) = 0 at <= Kmin, 0.2 x (depth - 10000) / 40000 between, 1 above Kmax:
//   10 -> 0; 11 -> 0.005; 20 -> 0.05; 30 -> 0.1; 50 -> 0.2 (at Kmax); 51 -> 1.
// Bounds: 5 standard deviations of a binomial mean over N = 100 000,
// sqrt(p (1-p) / N): 0.1 -> 0.00095, so +-0.0048; exact 0 and 1 are exact.
struct ecn_case {
  const char* name;
  int depth_packets;
  double want_p;
};
const ecn_case ecn_cases[] = {
    {"at_kmin", 10, 0.0},   {"just_above_kmin", 11, 0.005}, {"quarter", 20, 0.05},
    {"half", 30, 0.1},      {"at_kmax", 50, 0.2},           {"above_kmax", 51, 1.0},
};
constexpr int samples = 100'000;

switch_config ecn_switch(bool on_dequeue) {
  auto cfg = plain_config(2);
  cfg.buffer_bytes = 64 * 1024 * 1024;
  cfg.ecn_mark_on_dequeue = on_dequeue;
  cfg.ecn_seed = 12345;
  cfg.ports[1].queues[0].ecn = {true, 10'000, 50'000, 0.2};
  return cfg;
}

double measured_p(bool on_dequeue, int depth, ecn_codepoint ecn) {
  virtual_clock clk;
  auto sw = switch_model::create(ecn_switch(on_dequeue), clk).value();
  // On enqueue the depth seen is the queue before the packet joins; on dequeue it is the
  // queue after the packet left. Either way hold `depth` packets besides the one measured.
  for (int i = 0; i < depth; ++i) EXPECT_TRUE(sw->admit(make_packet(0, 1, 0, 1000, ecn_codepoint::not_ect), 0).accepted);
  std::int64_t now = 0;
  std::uint64_t marks = 0;
  for (int i = 0; i < samples; ++i) {
    const admission a = sw->admit(make_packet(0, 1, 0, 1000, ecn), now);
    EXPECT_TRUE(a.accepted);
    now = sw->next_transmit_time_ns(1);
    auto d = sw->dequeue(1, now);
    // The departing packet is the oldest; count marks via the queue counter instead.
    EXPECT_TRUE(d.has_value());
  }
  marks = sw->queue(1, 0).ecn_marked;
  return static_cast<double>(marks) / samples;
}

TEST(EcnMarking, ProbabilityIsRedRampBetweenKminAndKmaxOnEnqueue) {
  for (const auto& c : ecn_cases) {
    SCOPED_TRACE(c.name);
    const double p = measured_p(false, c.depth_packets, ecn_codepoint::ect0);
    if (c.want_p == 0.0 || c.want_p == 1.0) {
      EXPECT_EQ(p, c.want_p);
    } else {
      EXPECT_NEAR(p, c.want_p, 5 * std::sqrt(c.want_p * (1 - c.want_p) / samples));
    }
  }
}

TEST(EcnMarking, ProbabilityIsRedRampBetweenKminAndKmaxOnDequeue) {
  for (const auto& c : ecn_cases) {
    SCOPED_TRACE(c.name);
    // On dequeue the departing packet is one of the measured ones only after the
    // `depth` fillers have left; fillers are not ECT so they are never marked.
    const double p = measured_p(true, c.depth_packets, ecn_codepoint::ect1);
    const double n_marked_max = static_cast<double>(samples - c.depth_packets) / samples;
    if (c.want_p == 0.0) {
      EXPECT_EQ(p, 0.0);
    } else if (c.want_p == 1.0) {
      EXPECT_EQ(p, n_marked_max);
    } else {
      EXPECT_NEAR(p, c.want_p, 5 * std::sqrt(c.want_p * (1 - c.want_p) / samples) + 0.001);
    }
  }
}

TEST(EcnMarking, NonEctPacketsAreNeverMarked) {
  EXPECT_EQ(measured_p(false, 60, ecn_codepoint::not_ect), 0.0);
  EXPECT_EQ(measured_p(true, 60, ecn_codepoint::not_ect), 0.0);
}

TEST(EcnMarking, MarkedPacketLeavesWithCeAndAdmissionSaysSo) {
  virtual_clock clk;
  auto sw = switch_model::create(ecn_switch(false), clk).value();
  for (int i = 0; i < 51; ++i) ASSERT_TRUE(sw->admit(make_packet(0, 1, 0, 1000), 0).accepted);
  const admission a = sw->admit(make_packet(0, 1, 0, 1000, ecn_codepoint::ect0), 0);
  EXPECT_TRUE(a.ce_marked);
  for (int i = 0; i < 51; ++i) ASSERT_TRUE(sw->dequeue(1, sw->next_transmit_time_ns(1)).has_value());
  auto d = sw->dequeue(1, sw->next_transmit_time_ns(1));
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->pkt.ecn, ecn_codepoint::ce);
}

TEST(EcnMarking, SameSeedSameMarks) {
  EXPECT_EQ(measured_p(false, 30, ecn_codepoint::ect0), measured_p(false, 30, ecn_codepoint::ect0));
}

}  // namespace
}  // namespace rocelab::fabric

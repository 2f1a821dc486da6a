#include "rocelab/fabric/switch_model.hpp"

#include <gtest/gtest.h>

#include "fabric_test_support.hpp"

namespace rocelab::fabric {
namespace {

using testing::make_packet;
using testing::plain_config;

TEST(StrictPriority, HigherQueueFirstUnlessLowIndexFirst) {
  for (bool low_first : {false, true}) {
    SCOPED_TRACE(low_first);
    virtual_clock clk;
    auto cfg = plain_config(2);
    cfg.strict_low_index_first = low_first;
    auto sw = switch_model::create(cfg, clk).value();
    for (std::uint8_t p : {2, 5, 0}) ASSERT_TRUE(sw->admit(make_packet(0, 1, p, 500), 0).accepted);
    std::vector<int> order;
    std::int64_t now = 0;
    while (auto d = sw->dequeue(1, now)) {
      order.push_back(d->pkt.priority);
      now = d->tx_end_ns;
    }
    EXPECT_EQ(order, low_first ? std::vector<int>({0, 2, 5}) : std::vector<int>({5, 2, 0}));
  }
}

TEST(Dwrr, BytesServedFollowTheWeights) {
  // Weights 1:3 with 1000 B packets and a 1000 B quantum: in every round queue 1 sends
  // 1 packet and queue 2 sends 3, so of the first 400 packets 100 and 300.
  virtual_clock clk;
  auto cfg = plain_config(2);
  cfg.dwrr_quantum_bytes = 1000;
  cfg.ports[1].queues[1].dwrr_weight = 1;
  cfg.ports[1].queues[2].dwrr_weight = 3;
  auto sw = switch_model::create(cfg, clk).value();
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(sw->admit(make_packet(0, 1, 1, 1000), 0).accepted);
    ASSERT_TRUE(sw->admit(make_packet(0, 1, 2, 1000), 0).accepted);
  }
  int counts[8] = {};
  std::int64_t now = 0;
  for (int i = 0; i < 400; ++i) {
    auto d = sw->dequeue(1, now);
    ASSERT_TRUE(d.has_value());
    ++counts[d->pkt.priority];
    now = d->tx_end_ns;
  }
  EXPECT_EQ(counts[1], 100);
  EXPECT_EQ(counts[2], 300);
}

TEST(Dwrr, StrictQueuesPreemptWeightedOnes) {
  virtual_clock clk;
  auto cfg = plain_config(2);
  cfg.ports[1].queues[1].dwrr_weight = 1;
  auto sw = switch_model::create(cfg, clk).value();
  ASSERT_TRUE(sw->admit(make_packet(0, 1, 1, 1000), 0).accepted);
  ASSERT_TRUE(sw->admit(make_packet(0, 1, 0, 1000), 0).accepted);  // queue 0 is strict (weight 0)
  EXPECT_EQ(sw->dequeue(1, 0)->pkt.priority, 0);
}

struct serialization_case {
  const char* name;
  std::int64_t rate_bps;
  std::uint32_t bytes;
  std::int64_t overhead;
  std::int64_t want_ps;
};
// (bytes + overhead) x 8 bits / rate:
//  100G, 1048 B, no overhead (HPCC ns-3): 8384 bits / 100 Gb/s = 83.84 ns
//  100G, 1500 + 20 B: 12160 bits -> 121.6 ns;  25G, 64 + 20 B: 672 bits -> 26.88 ns
//  400G, 9000 + 20 B: 72160 bits -> 180.4 ns
const serialization_case ser_cases[] = {
    {"100G_hpcc_1048", 100'000'000'000, 1048, 0, 83'840},
    {"100G_1500", 100'000'000'000, 1500, 20, 121'600},
    {"25G_64", 25'000'000'000, 64, 20, 26'880},
    {"400G_9000", 400'000'000'000, 9000, 20, 180'400},
};

TEST(LineRate, SerializationTimeIsBitsOverRate) {
  for (const auto& c : ser_cases) {
    SCOPED_TRACE(c.name);
    virtual_clock clk;
    auto cfg = plain_config(2, c.rate_bps);
    cfg.wire_overhead_bytes = c.overhead;
    auto sw = switch_model::create(cfg, clk).value();
    EXPECT_EQ(sw->serialization_ps(1, c.bytes), c.want_ps);
  }
}

TEST(LineRate, BackToBackFramesKeepExactRateDespiteNanosecondRounding) {
  // 1000 frames of 83.84 ns back to back end at 83840 ns exactly, not 84000.
  virtual_clock clk;
  auto cfg = plain_config(2);
  cfg.wire_overhead_bytes = 0;
  auto sw = switch_model::create(cfg, clk).value();
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(sw->admit(make_packet(0, 1, 0, 1048), 0).accepted);
  std::int64_t now = 0, end = 0;
  while (auto d = sw->dequeue(1, now)) {
    end = d->tx_end_ns;
    now = sw->next_transmit_time_ns(1);
  }
  EXPECT_EQ(end, 83'840);
  EXPECT_FALSE(sw->dequeue(1, 0).has_value()) << "empty";
}

TEST(LineRate, WholeNanosecondFramesTruncateAsNs3Does) {
  // HPCC ns-3 compat: 8384 bits at 100 Gb/s hold the link 83 ns (83.84 truncated), a
  // 60-byte ACK 4 ns (4.8), and at 400 Gb/s 20 ns (20.96); 1000 frames end at 83,000 ns.
  virtual_clock clk;
  auto cfg = plain_config(2);
  cfg.wire_overhead_bytes = 0;
  cfg.frame_time_whole_ns = true;
  auto sw = switch_model::create(cfg, clk).value();
  EXPECT_EQ(sw->serialization_ps(1, 1048), 83'000);
  EXPECT_EQ(sw->serialization_ps(1, 60), 4'000);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(sw->admit(make_packet(0, 1, 0, 1048), 0).accepted);
  std::int64_t now = 0, end = 0;
  while (auto d = sw->dequeue(1, now)) {
    end = d->tx_end_ns;
    now = sw->next_transmit_time_ns(1);
  }
  EXPECT_EQ(end, 83'000);
  auto fast = plain_config(2, 400'000'000'000);
  fast.wire_overhead_bytes = 0;
  fast.frame_time_whole_ns = true;
  EXPECT_EQ(switch_model::create(fast, clk).value()->serialization_ps(1, 1048), 20'000);
  // A rate that does not divide 8e12 takes the division: 1048 B at 30 Gb/s = 279.47 ns.
  auto odd = plain_config(2, 30'000'000'000);
  odd.wire_overhead_bytes = 0;
  odd.frame_time_whole_ns = true;
  EXPECT_EQ(switch_model::create(odd, clk).value()->serialization_ps(1, 1048), 279'000);
}

TEST(LineRate, PortBusyUntilTheFrameEnds) {
  virtual_clock clk;
  auto sw = switch_model::create(plain_config(2), clk).value();
  ASSERT_TRUE(sw->admit(make_packet(0, 1, 0, 1500), 0).accepted);
  ASSERT_TRUE(sw->admit(make_packet(0, 1, 0, 1500), 0).accepted);
  auto d = sw->dequeue(1, 100);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->tx_start_ns, 100);
  EXPECT_EQ(d->tx_end_ns, 222);  // 100 + 121.6, rounded up
  EXPECT_FALSE(sw->dequeue(1, 221).has_value());
  EXPECT_TRUE(sw->dequeue(1, 222).has_value());
}

}  // namespace
}  // namespace rocelab::fabric

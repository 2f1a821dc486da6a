#include "rocelab/fabric/switch_model.hpp"

#include <gtest/gtest.h>

#include "fabric_test_support.hpp"

namespace rocelab::fabric {
namespace {

using testing::make_packet;
using testing::plain_config;

packet trimmable(std::uint16_t in, std::uint16_t out, std::uint8_t prio, std::uint32_t size) {
  packet p = make_packet(in, out, prio, size, ecn_codepoint::ect0);
  p.flags = packet_flag_trimmable;
  return p;
}

// Port 2, queue 1 trims past 10,000 bytes; 4,000-byte packets: two fit (8,000), the
// third would leave 12,000 queued and is cut to 64 bytes on queue 7.
switch_config trim_config_3ports() {
  auto cfg = plain_config(3);
  cfg.cell_bytes = 64;
  cfg.ports[2].queues[1].trim_threshold_bytes = 10'000;
  return cfg;
}

TEST(Trimming, PacketPastTheThresholdIsCutToItsHeaderOnTheTrimQueue) {
  virtual_clock clk;
  auto sw = switch_model::create(trim_config_3ports(), clk).value();
  EXPECT_FALSE(sw->admit(trimmable(0, 2, 1, 4000), 0).trimmed);
  EXPECT_FALSE(sw->admit(trimmable(0, 2, 1, 4000), 0).trimmed);
  const admission a = sw->admit(trimmable(0, 2, 1, 4000), 0);
  EXPECT_TRUE(a.accepted);
  EXPECT_TRUE(a.trimmed);
  EXPECT_EQ(sw->queue(2, 1).depth_bytes, 8000u);
  EXPECT_EQ(sw->queue(2, 1).trimmed_packets, 1u);
  EXPECT_EQ(sw->queue(2, 7).depth_bytes, 64u);
  // The trimmed header leaves first (strict priority 7 over 1) and says what it is.
  const auto d = sw->dequeue(2, 0);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->pkt.size_bytes, 64u);
  EXPECT_EQ(d->pkt.priority, 7);
  EXPECT_EQ(d->pkt.flags & packet_flag_trimmed, packet_flag_trimmed);
  EXPECT_EQ(d->pkt.flags & packet_flag_trimmable, 0);
}

TEST(Trimming, PacketsWithoutTheTrimmableFlagAreNeverTrimmed) {
  virtual_clock clk;
  auto sw = switch_model::create(trim_config_3ports(), clk).value();
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(sw->admit(make_packet(0, 2, 1, 4000), 0).trimmed);
  EXPECT_EQ(sw->queue(2, 1).depth_bytes, 20'000u);
  EXPECT_EQ(sw->queue(2, 1).trimmed_packets, 0u);
}

TEST(Trimming, QueueWithoutAThresholdAdmitsAsBefore) {
  virtual_clock clk;
  auto sw = switch_model::create(trim_config_3ports(), clk).value();
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(sw->admit(trimmable(0, 1, 1, 4000), 0).trimmed);
  EXPECT_EQ(sw->queue(1, 1).depth_bytes, 20'000u);
}

TEST(Trimming, BufferDropBelowTheThresholdBecomesATrimCountedOnce) {
  virtual_clock clk;
  auto cfg = trim_config_3ports();
  cfg.ports[2].queues[1].shared = buffer_threshold::fixed(6'400);  // egress limit: 100 cells
  auto sw = switch_model::create(cfg, clk).value();
  EXPECT_FALSE(sw->admit(trimmable(0, 2, 1, 4000), 0).trimmed);
  const admission a = sw->admit(trimmable(0, 2, 1, 4000), 0);  // 8,000 > 6,400: would drop
  EXPECT_TRUE(a.accepted);
  EXPECT_TRUE(a.trimmed);
  EXPECT_EQ(sw->queue(2, 1).dropped_packets[static_cast<int>(drop_reason::egress_limit)], 0u);
  EXPECT_EQ(sw->port(2).dropped_packets[static_cast<int>(drop_reason::egress_limit)], 0u);
  EXPECT_EQ(sw->priority_group(0, 1).rx_packets, 1u);  // the cut one counts on its trim PG
  EXPECT_EQ(sw->priority_group(0, 7).rx_packets, 1u);
  EXPECT_EQ(sw->queue(2, 1).trimmed_packets, 1u);
}

TEST(Trimming, ConfigRejectsATrimPriorityOutOfRange) {
  auto cfg = trim_config_3ports();
  cfg.trim.priority = 8;
  EXPECT_FALSE(validate(cfg).ok());
  cfg.trim.priority = 7;
  cfg.ports[0].queues[0].trim_threshold_bytes = -1;
  EXPECT_FALSE(validate(cfg).ok());
}

}  // namespace
}  // namespace rocelab::fabric

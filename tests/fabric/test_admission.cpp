#include "rocelab/fabric/switch_model.hpp"

#include <gtest/gtest.h>

#include "fabric_test_support.hpp"

namespace rocelab::fabric {
namespace {

using testing::make_packet;
using testing::plain_config;

struct dt_case {
  const char* name;
  int alpha_log2;
  std::int64_t want_limit_cells;  // alpha x free at the start
  int want_accepted;              // 1-cell packets admitted before the first drop
};

// Buffer 1000 cells of 100 B, no reserves: the ingress pool is 1000 cells. Another PG
// (port 1, unlimited) holds 200 cells, so free = 800. Packet n (1 cell) is admitted while
//   n <= alpha x (free - (n - 1))  (shared + cells <= alpha x free, free shrinking as we fill)
//  alpha 1:     n <= 801 - n        -> n = 400
//  alpha 1/8:   n <= (801 - n) / 8  -> n = 89  (89 <= 712/8 = 89; 90 > 711/8 = 88)
//  alpha 8:     n <= 8 (801 - n)    -> n = 712 (712 <= 8 x 89; 713 > 8 x 88)
//  alpha 1/128: n <= (801 - n)/128  -> n = 6   (6 <= 795/128 = 6; 7 > 794/128 = 6)
const dt_case dt_cases[] = {
    {"alpha_1", 0, 800, 400},
    {"alpha_1_8", -3, 100, 89},
    {"alpha_8", 3, 6400, 712},
    {"alpha_1_128", -7, 6, 6},
};

TEST(DynamicThreshold, IngressLimitIsAlphaTimesFreeSharedBuffer) {
  for (const auto& c : dt_cases) {
    SCOPED_TRACE(c.name);
    virtual_clock clk;
    auto cfg = plain_config(3);
    cfg.cell_bytes = 100;
    cfg.buffer_bytes = 100'000;
    cfg.ports[0].pgs[1].shared = buffer_threshold::dynamic(c.alpha_log2);
    auto sw = switch_model::create(cfg, clk).value();
    for (int i = 0; i < 200; ++i) ASSERT_TRUE(sw->admit(make_packet(1, 2, 1, 100), 0).accepted);
    EXPECT_EQ(sw->pg_shared_limit_cells(0, 1), c.want_limit_cells);
    int accepted = 0;
    admission a;
    while ((a = sw->admit(make_packet(0, 2, 1, 100), 0)).accepted) ++accepted;
    EXPECT_EQ(accepted, c.want_accepted);
    EXPECT_EQ(a.reason, drop_reason::ingress_limit);
    EXPECT_EQ(sw->priority_group(0, 1).dropped_packets[static_cast<int>(drop_reason::ingress_limit)], 1u);
  }
}

TEST(DynamicThreshold, EgressLimitDropsWithItsOwnReason) {
  // Egress pool 1000 cells, queue (2,1) alpha 1/2: n <= (1001 - n)/2 -> n = 333.
  virtual_clock clk;
  auto cfg = plain_config(3);
  cfg.cell_bytes = 100;
  cfg.buffer_bytes = 100'000;
  cfg.ports[2].queues[1].shared = buffer_threshold::dynamic(-1);
  auto sw = switch_model::create(cfg, clk).value();
  int accepted = 0;
  admission a;
  while ((a = sw->admit(make_packet(0, 2, 1, 100), 0)).accepted) ++accepted;
  EXPECT_EQ(accepted, 333);
  EXPECT_EQ(a.reason, drop_reason::egress_limit);
  EXPECT_EQ(sw->queue(2, 1).dropped_packets[static_cast<int>(drop_reason::egress_limit)], 1u);
  EXPECT_EQ(sw->port(2).dropped_packets[static_cast<int>(drop_reason::egress_limit)], 1u);
}

// A port's receive counters count every frame that arrived on it, on every priority,
// admitted or dropped (they are kept per priority group and summed by port()).
TEST(PortCounters, ReceiveCountsEveryArrivalOnEveryPriority) {
  virtual_clock clk;
  auto cfg = plain_config(3);
  cfg.cell_bytes = 100;
  cfg.buffer_bytes = 100'000;
  cfg.ports[2].queues[1].shared = buffer_threshold::dynamic(-1);  // 333 cells, then egress drops
  auto sw = switch_model::create(cfg, clk).value();
  for (int i = 0; i < 340; ++i) sw->admit(make_packet(0, 2, 1, 100), 0);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(sw->admit(make_packet(0, 2, 3, 60), 0).accepted);
  ASSERT_FALSE(sw->admit(make_packet(1, 2, 1, 100), 0).accepted);  // the queue is full
  EXPECT_EQ(sw->port(0).rx_packets, 345u);
  EXPECT_EQ(sw->port(0).rx_bytes, 340u * 100 + 5 * 60);
  EXPECT_EQ(sw->port(1).rx_packets, 1u);
  EXPECT_EQ(sw->port(2).rx_packets, 0u);
  EXPECT_EQ(sw->port(2).dropped_packets[static_cast<int>(drop_reason::egress_limit)], 8u);
}

TEST(Reserve, ReserveIsUsedBeforeSharedAndReleasedLast) {
  // PG reserve 4 cells, static shared limit 2 cells: 6 one-cell packets fit, the 7th drops.
  virtual_clock clk;
  auto cfg = plain_config(2);
  cfg.cell_bytes = 100;
  cfg.buffer_bytes = 100'000;
  cfg.ports[0].pgs[0].reserve_bytes = 400;
  cfg.ports[0].pgs[0].shared = buffer_threshold::fixed(200);
  auto sw = switch_model::create(cfg, clk).value();
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(sw->admit(make_packet(0, 1, 0, 100), 0).accepted) << i;
  EXPECT_FALSE(sw->admit(make_packet(0, 1, 0, 100), 0).accepted);
  auto pg = sw->priority_group(0, 0);
  EXPECT_EQ(pg.reserve_cells, 4);
  EXPECT_EQ(pg.shared_cells, 2);
  ASSERT_TRUE(sw->dequeue(1, 0).has_value());
  pg = sw->priority_group(0, 0);
  EXPECT_EQ(pg.shared_cells, 1);  // shared is released before the reserve
  EXPECT_EQ(pg.reserve_cells, 4);
}

TEST(Cells, PacketsRoundUpToWholeCells) {
  virtual_clock clk;
  auto cfg = plain_config(2);
  cfg.cell_bytes = 256;
  auto sw = switch_model::create(cfg, clk).value();
  ASSERT_TRUE(sw->admit(make_packet(0, 1, 0, 257), 0).accepted);  // 2 cells
  ASSERT_TRUE(sw->admit(make_packet(0, 1, 0, 64), 0).accepted);   // 1 cell
  EXPECT_EQ(sw->buffer().used_cells, 3);
}

TEST(Config, RejectsReservesLargerThanTheBuffer) {
  virtual_clock clk;
  auto cfg = plain_config(2);
  cfg.buffer_bytes = 10'000;
  cfg.cell_bytes = 100;
  cfg.ports[0].pgs[0].reserve_bytes = 20'000;
  auto sw = switch_model::create(cfg, clk);
  ASSERT_FALSE(sw.ok());
  EXPECT_EQ(sw.error().code(), error_code::invalid_argument);
  cfg.ports[0].pgs[0].reserve_bytes = 0;
  cfg.ports[0].pgs[0].shared = buffer_threshold::dynamic(5);  // alpha 32: outside SONiC's 1/128..8
  EXPECT_FALSE(switch_model::create(cfg, clk).ok());
}

}  // namespace
}  // namespace rocelab::fabric

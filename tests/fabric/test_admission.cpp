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

struct static_case {
  const char* name;
  std::int64_t cell_bytes;
  std::int64_t limit_bytes;
  std::uint32_t packet_bytes;
  int want_accepted;  // packets admitted before the first drop
};

// A fixed per-queue limit (static_th; spec switch.queue_limit_bytes, the fixed queues of
// ns-3 and htsim): in cells, limit / cell rounded down, a packet's bytes rounded up, and a
// packet joins while the queue with it stays within the limit, whatever is free.
//   bytes, exact:   10 x 1000 = 10,000 <= 10,000; the 11th makes 11,000
//   bytes, over:    6 x 1500 = 9,000; the 7th makes 10,500
//   256-B cells:    limit 39 cells, 1086 B = 5 cells: 7 make 35, the 8th 40
//   htsim's queue:  101 frames of 4160 B in 64-byte cells (65 each): 6565 cells exactly
const static_case static_cases[] = {
    {"bytes_exact", 1, 10'000, 1'000, 10},
    {"bytes_over", 1, 10'000, 1'500, 6},
    {"cells_256", 256, 10'000, 1'086, 7},
    {"htsim_101_frames", 64, 101 * 4160, 4160, 101},
};

TEST(StaticThreshold, AnEgressQueueHoldsAtMostItsLimitAndDropsBeyond) {
  for (const auto& c : static_cases) {
    SCOPED_TRACE(c.name);
    virtual_clock clk;
    auto cfg = plain_config(3);
    cfg.cell_bytes = c.cell_bytes;
    cfg.buffer_bytes = std::int64_t{1} << 30;  // far from binding
    cfg.ports[2].queues[1].shared = buffer_threshold::fixed(c.limit_bytes);
    auto sw = switch_model::create(cfg, clk).value();
    int accepted = 0;
    admission a;
    while ((a = sw->admit(make_packet(0, 2, 1, c.packet_bytes), 0)).accepted) ++accepted;
    EXPECT_EQ(accepted, c.want_accepted);
    EXPECT_EQ(a.reason, drop_reason::egress_limit);
    EXPECT_EQ(sw->queue(2, 1).dropped_packets[static_cast<int>(drop_reason::egress_limit)], 1u);
    EXPECT_LE(sw->queue(2, 1).depth_bytes, static_cast<std::uint64_t>(c.limit_bytes));
    // The limit is the queue's alone: another queue of the port still takes packets.
    EXPECT_TRUE(sw->admit(make_packet(0, 2, 0, c.packet_bytes), 0).accepted);
    // One packet out makes room for one packet in, and no more.
    ASSERT_TRUE(sw->dequeue(2, 0).has_value());
    EXPECT_TRUE(sw->admit(make_packet(1, 2, 1, c.packet_bytes), 0).accepted);
    EXPECT_FALSE(sw->admit(make_packet(1, 2, 1, c.packet_bytes), 0).accepted);
  }
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

// Two ports, 100-byte cells in a 100 kB buffer: 100-byte packets take one cell each.
switch_config one_cell_packets() {
  auto cfg = plain_config(2);
  cfg.cell_bytes = 100;
  cfg.buffer_bytes = 100'000;
  return cfg;
}

TEST(Reserve, ReserveIsUsedBeforeSharedAndReleasedLast) {
  // PG reserve 4 cells, static shared limit 2 cells: 6 one-cell packets fit, the 7th drops.
  virtual_clock clk;
  auto cfg = one_cell_packets();
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

TEST(Reserve, AQueueFillsItsReserveFirstAndEmptiesItLast) {
  // Queue reserve 3 cells: the first three one-cell packets take it, the next two are
  // shared; departures give back shared cells before reserved ones.
  virtual_clock clk;
  auto cfg = one_cell_packets();
  cfg.ports[1].queues[0].reserve_bytes = 300;
  auto sw = switch_model::create(cfg, clk).value();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(sw->admit(make_packet(0, 1, 0, 100), 0).accepted) << i;
  auto q = sw->queue(1, 0);
  EXPECT_EQ(q.reserve_cells, 3);
  EXPECT_EQ(q.shared_cells, 2);
  EXPECT_EQ(sw->buffer().egress_shared_used_cells, 2);
  for (int left = 4; left >= 0; --left) {
    ASSERT_TRUE(sw->dequeue(1, sw->next_transmit_time_ns(1)).has_value());
    q = sw->queue(1, 0);
    EXPECT_EQ(q.reserve_cells, std::min(left, 3)) << left;
    EXPECT_EQ(q.shared_cells, std::max(left - 3, 0)) << left;
    EXPECT_EQ(sw->buffer().egress_shared_used_cells, std::max(left - 3, 0)) << left;
  }
}

TEST(QueueCounters, TheWatermarkIsTheHighestDepthThroughLongClimbsAndDrains) {
  // The queue keeps its watermark off the per-packet path behind a bound of at most
  // 64 KiB on its distance from the depth; climbs far past that bound, drains, and
  // climbs that stop short of the mark must all leave the exact highest depth.
  virtual_clock clk;
  auto cfg = plain_config(2);
  cfg.buffer_bytes = 16 << 20;
  auto sw = switch_model::create(cfg, clk).value();
  std::uint64_t depth = 0, highest = 0, arrived = 0, left = 0;
  std::uint64_t packets_in = 0, packets_out = 0;
  auto fill = [&](std::uint64_t to, std::uint32_t size) {
    while (depth + size <= to) {
      ASSERT_TRUE(sw->admit(make_packet(0, 1, 0, size), 0).accepted);
      depth += size;
      arrived += size;
      ++packets_in;
      highest = std::max(highest, depth);
    }
  };
  auto drain = [&](std::uint64_t to) {
    while (depth > to) {
      auto d = sw->dequeue(1, sw->next_transmit_time_ns(1));
      ASSERT_TRUE(d.has_value());
      depth -= d->pkt.size_bytes;
      left += d->pkt.size_bytes;
      ++packets_out;
    }
  };
  auto expect = [&](const char* when) {
    const queue_stats q = sw->queue(1, 0);
    EXPECT_EQ(q.depth_bytes, depth) << when;
    EXPECT_EQ(q.watermark_bytes, highest) << when;
    EXPECT_EQ(q.enqueued_bytes, arrived) << when;
    EXPECT_EQ(q.dequeued_bytes, left) << when;
    EXPECT_EQ(q.enqueued_packets, packets_in) << when;
    EXPECT_EQ(q.dequeued_packets, packets_out) << when;
  };
  fill(200'000, 1500);
  expect("first climb");
  drain(50'000);
  expect("drained");
  fill(120'000, 9000);  // short of the mark by more than 64 KiB
  expect("short climb");
  fill(199'000, 1000);  // just short of it
  expect("just short");
  fill(260'000, 64);  // past it in small steps
  expect("past the mark");
  drain(0);
  fill(250'000, 1500);
  expect("after a full drain");
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

TEST(Config, RejectsQueueFieldsBeyondTheir32Bits) {
  // A queue keeps its reserve (cells) and Kmin (bytes) in 32 bits: refused, not wrapped.
  virtual_clock clk;
  auto cfg = plain_config(2);
  cfg.buffer_bytes = std::int64_t{8} << 30;
  cfg.cell_bytes = 1;
  cfg.ports[1].queues[0].reserve_bytes = std::int64_t{3} << 30;
  auto sw = switch_model::create(cfg, clk);
  ASSERT_FALSE(sw.ok());
  EXPECT_NE(sw.error().message().find("port 1 queue 0: reserve of 2^31 cells"), std::string::npos)
      << sw.error().message();
  cfg.ports[1].queues[0].reserve_bytes = 0;
  cfg.ports[1].queues[0].ecn = {true, std::int64_t{2} << 30, std::int64_t{3} << 30, 0.1};
  sw = switch_model::create(cfg, clk);
  ASSERT_FALSE(sw.ok());
  EXPECT_NE(sw.error().message().find("kmin_bytes of 2 GiB"), std::string::npos) << sw.error().message();
  cfg.ports[1].queues[0].ecn.kmin_bytes = (std::int64_t{2} << 30) - 1;  // just fits
  EXPECT_TRUE(switch_model::create(cfg, clk).ok());
}

}  // namespace
}  // namespace rocelab::fabric

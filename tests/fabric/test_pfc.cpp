#include "rocelab/fabric/link_flow_control.hpp"

#include <gtest/gtest.h>

#include "fabric_test_support.hpp"
#include "rocelab/fabric/switch_model.hpp"

namespace rocelab::fabric {
namespace {

using testing::frame_recorder;
using testing::make_packet;
using testing::plain_config;

constexpr std::uint8_t lossless_prio = 3;

// Drains one packet from `port` at the first moment the link allows.
departure drain_one(switch_model& sw, std::uint16_t port, std::int64_t& now) {
  now = std::max(now, sw.next_transmit_time_ns(port));
  auto d = sw.dequeue(port, now);
  EXPECT_TRUE(d.has_value());
  return *d;
}

TEST(PfcStatic, XoffAtTheThresholdCrossingXonAtXoffMinusHysteresis) {
  // Cells of 256 B, packets of 1024 B = 4 cells. PG reserve 2048 B = 8 cells (packets
  // 1-2), static XOFF 10240 B = 40 cells (packets 3-12 take shared 4..40), XON offset
  // 2048 B = 8 cells -> XON at shared <= 32; headroom 8192 B = 32 cells = 8 packets.
  virtual_clock clk;
  frame_recorder rec;
  auto cfg = plain_config(2);
  cfg.cell_bytes = 256;
  cfg.lossless_priorities = 1u << lossless_prio;
  auto& pg = cfg.ports[0].pgs[lossless_prio];
  pg.reserve_bytes = 2048;
  pg.shared = buffer_threshold::fixed(10240);
  pg.xon_offset_bytes = 2048;
  pg.headroom_bytes = 8192;
  auto sw = switch_model::create(cfg, clk, &rec).value();

  for (int n = 1; n <= 11; ++n) ASSERT_TRUE(sw->admit(make_packet(0, 1, lossless_prio, 1024), 0).accepted);
  EXPECT_TRUE(rec.frames.empty()) << "shared 36 cells < 40: no XOFF yet";
  ASSERT_TRUE(sw->admit(make_packet(0, 1, lossless_prio, 1024), 0).accepted);  // shared 40
  ASSERT_EQ(rec.frames.size(), 1u);
  EXPECT_EQ(rec.frames[0].port, 0);
  EXPECT_EQ(rec.frames[0].priority, lossless_prio);
  EXPECT_EQ(rec.frames[0].quanta, 0xffff);
  EXPECT_TRUE(sw->priority_group(0, lossless_prio).xoff);

  for (int n = 13; n <= 20; ++n) ASSERT_TRUE(sw->admit(make_packet(0, 1, lossless_prio, 1024), 0).accepted);
  EXPECT_EQ(sw->priority_group(0, lossless_prio).headroom_cells, 32);
  const admission drop = sw->admit(make_packet(0, 1, lossless_prio, 1024), 0);
  EXPECT_FALSE(drop.accepted);
  EXPECT_EQ(drop.reason, drop_reason::headroom_exhausted);

  // Drain: 8 packets empty the headroom (released first), shared stays 40; then 36;
  // the 10th brings shared to 32 = 40 - 8: XON.
  std::int64_t now = 0;
  for (int n = 1; n <= 9; ++n) drain_one(*sw, 1, now);
  EXPECT_EQ(rec.frames.size(), 1u);
  EXPECT_EQ(sw->priority_group(0, lossless_prio).shared_cells, 36);
  drain_one(*sw, 1, now);
  ASSERT_EQ(rec.frames.size(), 2u);
  EXPECT_EQ(rec.frames[1].quanta, 0);
  EXPECT_FALSE(sw->priority_group(0, lossless_prio).xoff);
  EXPECT_EQ(sw->priority_group(0, lossless_prio).xon_sent, 1u);
}

TEST(PfcDynamic, XoffWhereSharedMeetsAlphaTimesFree) {
  // Cells of 100 B, 1-cell packets, 2 ports with 10 cells of headroom each on the
  // lossless priority: ingress pool 1000 - 20 = 980 cells, alpha 1/8.
  // After packet n (no reserve), XOFF if n >= floor((980 - n)/8):
  //   n = 108: floor(872/8) = 109 > 108, no;  n = 109: floor(871/8) = 108 <= 109, XOFF.
  // Packets 110..119 land in headroom, 120 is dropped. Draining: 10 packets empty the
  // headroom; XON (offset 3 cells) needs shared <= floor((980 - s)/8) - 3:
  //   s = 107: 109 - 3 = 106 < 107 no;  s = 106: floor(874/8) - 3 = 106, XON at drain 13.
  virtual_clock clk;
  frame_recorder rec;
  auto cfg = plain_config(2);
  cfg.cell_bytes = 100;
  cfg.buffer_bytes = 100'000;
  cfg.lossless_priorities = 1u << lossless_prio;
  for (auto& port : cfg.ports) {
    auto& pg = port.pgs[lossless_prio];
    pg.shared = buffer_threshold::dynamic(-3);
    pg.headroom_bytes = 1000;
    pg.xon_offset_bytes = 300;
  }
  auto sw = switch_model::create(cfg, clk, &rec).value();
  for (int n = 1; n <= 108; ++n) ASSERT_TRUE(sw->admit(make_packet(0, 1, lossless_prio, 100), 0).accepted);
  EXPECT_TRUE(rec.frames.empty());
  ASSERT_TRUE(sw->admit(make_packet(0, 1, lossless_prio, 100), 0).accepted);
  ASSERT_EQ(rec.frames.size(), 1u);
  for (int n = 110; n <= 119; ++n) ASSERT_TRUE(sw->admit(make_packet(0, 1, lossless_prio, 100), 0).accepted);
  EXPECT_EQ(sw->priority_group(0, lossless_prio).headroom_cells, 10);
  EXPECT_EQ(sw->admit(make_packet(0, 1, lossless_prio, 100), 0).reason, drop_reason::headroom_exhausted);
  std::int64_t now = 0;
  for (int n = 1; n <= 12; ++n) drain_one(*sw, 1, now);
  EXPECT_EQ(rec.frames.size(), 1u);
  drain_one(*sw, 1, now);
  ASSERT_EQ(rec.frames.size(), 2u);
  EXPECT_EQ(rec.frames[1].quanta, 0);
}

TEST(PfcRefresh, XoffIsRefreshedAtHalfThePauseTimeWhilePaused) {
  // 100G, 65535 quanta = 335539.2 ns; refresh every 335539200 / 2000 = 167769 ns.
  virtual_clock clk;
  frame_recorder rec;
  auto cfg = plain_config(2);
  cfg.cell_bytes = 100;
  cfg.lossless_priorities = 1u << lossless_prio;
  cfg.ports[0].pgs[lossless_prio].shared = buffer_threshold::fixed(100);
  cfg.ports[0].pgs[lossless_prio].headroom_bytes = 1000;
  auto sw = switch_model::create(cfg, clk, &rec).value();
  ASSERT_TRUE(sw->admit(make_packet(0, 1, lossless_prio, 100), 0).accepted);
  ASSERT_EQ(rec.frames.size(), 1u);
  clk.run_until(167768);
  EXPECT_EQ(rec.frames.size(), 1u);
  clk.run_until(167769);
  ASSERT_EQ(rec.frames.size(), 2u);
  EXPECT_TRUE(rec.frames[1].refresh);
  clk.run_until(2 * 167769);
  EXPECT_EQ(rec.frames.size(), 3u);
  std::int64_t now = clk.now_ns();
  drain_one(*sw, 1, now);  // XON cancels the refresh timer
  EXPECT_EQ(rec.frames.back().quanta, 0);
  EXPECT_EQ(clk.pending(), 0u);
}

struct expiry_case {
  const char* name;
  std::int64_t rate_bps;
  std::uint16_t quanta;
  std::int64_t last_paused_ns;  // frame received at 1000 ns
  std::int64_t first_free_ns;
};

// A quantum is 512 bit times: 20.48 ns at 25G, 5.12 ns at 100G, 1.28 ns at 400G.
//  25G x 1     -> 1000 + 20.48 = 1020.48: paused at 1020, free at 1021
//  25G x 1000  -> 1000 + 20480 = 21480 exactly: paused at 21479, free at 21480
//  100G x 1    -> 1005.12: free at 1006
//  100G x 65535-> 1000 + 335539.2 = 336539.2: free at 336540
//  400G x 1    -> 1001.28: free at 1002
//  400G x 65535-> 1000 + 83884.8 = 84884.8: free at 84885
const expiry_case expiry_cases[] = {
    {"25G_1", 25'000'000'000, 1, 1020, 1021},
    {"25G_1000", 25'000'000'000, 1000, 21479, 21480},
    {"100G_1", 100'000'000'000, 1, 1005, 1006},
    {"100G_65535", 100'000'000'000, 65535, 336539, 336540},
    {"400G_1", 400'000'000'000, 1, 1001, 1002},
    {"400G_65535", 400'000'000'000, 65535, 84884, 84885},
};

TEST(PauseExpiry, QuantaTimes512BitTimesAtThePortSpeed) {
  for (const auto& c : expiry_cases) {
    SCOPED_TRACE(c.name);
    pfc_pause_state st(c.rate_bps, false);
    std::array<std::uint16_t, num_priorities> q{};
    q[lossless_prio] = c.quanta;
    st.on_frame(1u << lossless_prio, q, 1000);
    EXPECT_TRUE(st.paused(lossless_prio, c.last_paused_ns));
    EXPECT_FALSE(st.paused(lossless_prio, c.first_free_ns));
    EXPECT_EQ(st.resume_ns(lossless_prio), c.first_free_ns);
    EXPECT_FALSE(st.paused(0, 1000)) << "other priorities are not paused";
  }
}

TEST(PauseExpiry, XonResumesAtOnceAndPauseUntilResumeHoldsForever) {
  std::array<std::uint16_t, num_priorities> q{};
  q[lossless_prio] = 65535;
  pfc_pause_state timed(100'000'000'000, false);
  timed.on_frame(1u << lossless_prio, q, 0);
  std::array<std::uint16_t, num_priorities> zero{};
  timed.on_frame(1u << lossless_prio, zero, 10);
  EXPECT_FALSE(timed.paused(lossless_prio, 10));

  pfc_pause_state held(100'000'000'000, true);  // HPCC ns-3: pause until resume
  held.on_frame(1u << lossless_prio, q, 0);
  EXPECT_TRUE(held.paused(lossless_prio, 1'000'000'000'000));
  EXPECT_EQ(held.resume_ns(lossless_prio), never_ns);
  held.on_frame(1u << lossless_prio, zero, 5);
  EXPECT_FALSE(held.paused(lossless_prio, 5));
}

TEST(PauseHonouring, PausedPriorityWaitsWhileOthersSend) {
  virtual_clock clk;
  auto cfg = plain_config(2);
  auto sw = switch_model::create(cfg, clk).value();
  ASSERT_TRUE(sw->admit(make_packet(0, 1, lossless_prio, 1000), 0).accepted);
  ASSERT_TRUE(sw->admit(make_packet(0, 1, 1, 1000), 0).accepted);
  std::array<std::uint16_t, num_priorities> q{};
  q[lossless_prio] = 1000;  // 5120 ns at 100G
  sw->on_pfc_frame(1, 1u << lossless_prio, q, 0);
  auto d = sw->dequeue(1, 0);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->pkt.priority, 1);
  // (1000 + 20) B x 80 ps/B = 81600 ps: the link is free at 82 ns, but prio 3 resumes at 5120.
  EXPECT_EQ(d->tx_end_ns, 82);
  EXPECT_EQ(sw->next_dequeue_time_ns(1, 82), 5120);
  EXPECT_FALSE(sw->dequeue(1, 5119).has_value());
  auto d2 = sw->dequeue(1, 5120);
  ASSERT_TRUE(d2.has_value());
  EXPECT_EQ(d2->pkt.priority, lossless_prio);
  EXPECT_EQ(sw->port(1).pfc_rx_frames, 1u);
}

}  // namespace
}  // namespace rocelab::fabric

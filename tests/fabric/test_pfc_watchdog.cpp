// The PFC watchdog (switch_config.hpp, pfc_watchdog_config): a lossless queue held by
// received XOFF with packets and no departure for the detection time is a storm; the
// action applies until no XOFF has come for the restoration time.
#include <gtest/gtest.h>

#include "fabric_test_support.hpp"
#include "rocelab/fabric/switch_model.hpp"

namespace rocelab::fabric {
namespace {

using testing::make_packet;
using testing::plain_config;

constexpr std::uint8_t lossless = 3;
constexpr std::array<std::uint16_t, num_priorities> xoff_all = {0xffff, 0xffff, 0xffff, 0xffff,
                                                               0xffff, 0xffff, 0xffff, 0xffff};
constexpr std::int64_t ms = 1'000'000;

struct port_ready_recorder final : pfc_frame_sink {
  std::vector<std::pair<std::uint16_t, std::int64_t>> ready;
  void on_pfc_frame_out(const pfc_frame_out&) override {}
  void on_port_ready(std::uint16_t port, std::int64_t now_ns) override { ready.emplace_back(port, now_ns); }
};

switch_config watchdog_config(pfc_watchdog_config::action_kind action) {
  // 1 Gb/s: an XOFF of 0xffff quanta holds 33.5 ms, so a storm frame every 1 ms holds
  // the queue without a gap.
  auto cfg = plain_config(3, 1'000'000'000);
  cfg.lossless_priorities = 1u << lossless;
  cfg.pfc.watchdog.enabled = true;
  cfg.pfc.watchdog.detection_ns = 100 * ms;
  cfg.pfc.watchdog.restoration_ns = 200 * ms;
  cfg.pfc.watchdog.poll_ns = 10 * ms;
  cfg.pfc.watchdog.action = action;
  return cfg;
}

// The peer on `port` keeps pausing priority 3 every `every_ns` until `until_ns`.
void storm(switch_model& sw, virtual_clock& clk, std::uint16_t port, std::int64_t until_ns, std::int64_t every_ns) {
  while (clk.now_ns() < until_ns) {
    sw.on_pfc_frame(port, 1u << lossless, xoff_all, clk.now_ns());
    clk.run_until(std::min(until_ns, clk.now_ns() + every_ns));
  }
}

TEST(PfcWatchdog, DetectsAStormWithinDetectionPlusOnePollAndDropsTheQueue) {
  virtual_clock clk;
  port_ready_recorder rec;
  auto sw = switch_model::create(watchdog_config(pfc_watchdog_config::action_kind::drop), clk, &rec).value();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(sw->admit(make_packet(0, 1, lossless, 1000), 0).accepted);
  storm(*sw, clk, 1, 300 * ms, 1 * ms);

  const watchdog_stats wd = sw->watchdog(1, lossless);
  ASSERT_EQ(wd.storms_detected, 1u);
  EXPECT_TRUE(wd.stormed);
  // The first poll (10 ms) sees the queue stuck; detection 100 ms later, at a poll.
  EXPECT_GE(wd.last_detected_ns, 100 * ms);
  EXPECT_LE(wd.last_detected_ns, 100 * ms + 2 * 10 * ms);
  ASSERT_EQ(rec.ready.size(), 1u);
  EXPECT_EQ(rec.ready[0].first, 1);

  // The queued packets leave as discards, without link time; new ones are dropped too.
  std::uint64_t discarded = 0;
  while (auto d = sw->dequeue(1, clk.now_ns())) {
    EXPECT_TRUE(d->discarded);
    EXPECT_EQ(d->tx_end_ns, d->tx_start_ns);
    ++discarded;
  }
  EXPECT_EQ(discarded, 10u);
  // Discards are departures but not sends: the queue counts them in, not out.
  const queue_stats qs = sw->queue(1, lossless);
  EXPECT_EQ(qs.enqueued_packets, 10u);
  EXPECT_EQ(qs.enqueued_bytes, 10'000u);
  EXPECT_EQ(qs.dequeued_packets, 0u);
  EXPECT_EQ(qs.dequeued_bytes, 0u);
  EXPECT_EQ(qs.depth_packets, 0u);
  const admission a = sw->admit(make_packet(0, 1, lossless, 1000), clk.now_ns());
  EXPECT_FALSE(a.accepted);
  EXPECT_EQ(a.reason, drop_reason::pfc_watchdog);
  // Packets of the stormed priority arriving on the stormed port are dropped as well.
  EXPECT_EQ(sw->admit(make_packet(1, 2, lossless, 1000), clk.now_ns()).reason, drop_reason::pfc_watchdog);
  // Other priorities and other ports are untouched.
  EXPECT_TRUE(sw->admit(make_packet(0, 2, lossless, 1000), clk.now_ns()).accepted);
  EXPECT_TRUE(sw->admit(make_packet(0, 1, 0, 1000), clk.now_ns()).accepted);
  EXPECT_EQ(sw->watchdog(1, lossless).tx_dropped, 11u);
  EXPECT_EQ(sw->watchdog(1, lossless).rx_dropped, 1u);
  EXPECT_EQ(sw->buffer().resident_packets, 2u);  // only the two accepted above
}

TEST(PfcWatchdog, RestoresOnceNoXoffCameForTheRestorationTime) {
  virtual_clock clk;
  auto sw = switch_model::create(watchdog_config(pfc_watchdog_config::action_kind::drop), clk).value();
  ASSERT_TRUE(sw->admit(make_packet(0, 1, lossless, 1000), 0).accepted);
  storm(*sw, clk, 1, 300 * ms, 1 * ms);
  ASSERT_TRUE(sw->watchdog(1, lossless).stormed);
  const std::int64_t last_xoff = clk.now_ns() - 1 * ms;  // the storm's last frame
  clk.run_until(clk.now_ns() + 400 * ms);
  const watchdog_stats wd = sw->watchdog(1, lossless);
  EXPECT_FALSE(wd.stormed);
  EXPECT_EQ(wd.storms_restored, 1u);
  EXPECT_EQ(wd.last_xoff_rx_ns, last_xoff);  // reported, so a qualification can time from it
  EXPECT_GE(wd.last_restored_ns, last_xoff + 200 * ms);
  EXPECT_LE(wd.last_restored_ns, last_xoff + 200 * ms + 10 * ms);
  // Lossless again, and the last pause long expired: packets are sent, not discarded.
  ASSERT_TRUE(sw->admit(make_packet(0, 1, lossless, 1000), clk.now_ns()).accepted);
  std::int64_t now = clk.now_ns();
  int sent = 0;
  while (auto d = sw->dequeue(1, now)) {
    EXPECT_FALSE(d->discarded);
    now = d->tx_end_ns;
    ++sent;
  }
  EXPECT_EQ(sent, 2);  // the one queued before the storm (nobody drained it) and the new one
  // A quiet switch schedules nothing (the twin ends when its events run out).
  clk.run_until(now + 50 * ms);
  EXPECT_EQ(clk.pending(), 0u);
}

TEST(PfcWatchdog, ForwardSendsThroughThePause) {
  virtual_clock clk;
  auto sw = switch_model::create(watchdog_config(pfc_watchdog_config::action_kind::forward), clk).value();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(sw->admit(make_packet(0, 1, lossless, 1000), 0).accepted);
  storm(*sw, clk, 1, 150 * ms, 1 * ms);
  ASSERT_TRUE(sw->watchdog(1, lossless).stormed);
  int sent = 0;
  std::int64_t now = clk.now_ns();
  while (auto d = sw->dequeue(1, now)) {
    EXPECT_FALSE(d->discarded);
    now = d->tx_end_ns;
    ++sent;
  }
  EXPECT_EQ(sent, 3);
  EXPECT_EQ(sw->watchdog(1, lossless).tx_dropped, 0u);
}

TEST(PfcWatchdog, AlertOnlyCounts) {
  virtual_clock clk;
  auto sw = switch_model::create(watchdog_config(pfc_watchdog_config::action_kind::alert), clk).value();
  ASSERT_TRUE(sw->admit(make_packet(0, 1, lossless, 1000), 0).accepted);
  storm(*sw, clk, 1, 150 * ms, 1 * ms);
  EXPECT_EQ(sw->watchdog(1, lossless).storms_detected, 1u);
  EXPECT_FALSE(sw->dequeue(1, clk.now_ns()).has_value());  // still honouring the pause
  EXPECT_TRUE(sw->admit(make_packet(0, 1, lossless, 1000), clk.now_ns()).accepted);
}

TEST(PfcWatchdog, ACongestedQueueThatKeepsSendingIsNoStorm) {
  // Normal PFC: the peer pauses and resumes; the queue drains a packet between pauses.
  virtual_clock clk;
  auto sw = switch_model::create(watchdog_config(pfc_watchdog_config::action_kind::drop), clk).value();
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(sw->admit(make_packet(0, 1, lossless, 1000), 0).accepted);
  const std::array<std::uint16_t, num_priorities> xon{};
  for (int k = 0; k < 90; ++k) {
    sw->on_pfc_frame(1, 1u << lossless, xoff_all, clk.now_ns());
    clk.run_until(clk.now_ns() + 5 * ms);  // held 5 ms...
    sw->on_pfc_frame(1, 1u << lossless, xon, clk.now_ns());
    ASSERT_TRUE(sw->dequeue(1, std::max(clk.now_ns(), sw->next_transmit_time_ns(1))).has_value());  // ...one leaves
  }
  EXPECT_EQ(sw->watchdog(1, lossless).storms_detected, 0u);
}

TEST(PfcWatchdog, LossyPrioritiesAndADisabledWatchdogAreNotWatched) {
  virtual_clock clk;
  auto cfg = watchdog_config(pfc_watchdog_config::action_kind::drop);
  cfg.pfc.watchdog.enabled = false;
  auto sw = switch_model::create(cfg, clk).value();
  ASSERT_TRUE(sw->admit(make_packet(0, 1, lossless, 1000), 0).accepted);
  storm(*sw, clk, 1, 300 * ms, 1 * ms);
  EXPECT_EQ(sw->watchdog(1, lossless).storms_detected, 0u);
  EXPECT_EQ(clk.pending(), 0u);
}

TEST(PfcWatchdog, ConfigIsValidated) {
  virtual_clock clk;
  auto cfg = watchdog_config(pfc_watchdog_config::action_kind::drop);
  cfg.pfc.watchdog.detection_ns = 0;
  EXPECT_FALSE(switch_model::create(cfg, clk).ok());
  EXPECT_EQ(parse_watchdog_action("forward"), pfc_watchdog_config::action_kind::forward);
  EXPECT_FALSE(parse_watchdog_action("shutdown").has_value());
  EXPECT_STREQ(to_string(pfc_watchdog_config::action_kind::alert), "alert");
}

}  // namespace
}  // namespace rocelab::fabric

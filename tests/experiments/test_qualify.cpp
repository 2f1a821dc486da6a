// Switch qualification against the switch model in virtual time: a switch that does what
// its configuration says passes every check, with measured values where the hand
// calculation puts them; a switch that deviates from its configuration fails exactly the
// checks that cover the deviation.
#include "rocelab/experiments/qualify/qualify.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "../support/chromium.hpp"
#include "../support/forwarding_switch.hpp"
#include "../support/temp_dir.hpp"
#include "rocelab/experiments/qualify/qualify_model.hpp"

namespace rocelab::experiments {
namespace {

using fabric::buffer_threshold;
constexpr std::int64_t ms = 1'000'000;

// 4 ports at 100G, 1 MiB in 256-byte cells; priority 3 lossless (alpha 1, 40 KiB
// headroom, XON 4 KiB below XOFF), priority 0 lossy (alpha 8); ECN on queue 3 from
// 20 to 100 KiB with Pmax 0.2; the watchdog at 10 ms / 20 ms, polled every 2 ms.
fabric::switch_config lab_switch() {
  fabric::switch_config cfg;
  cfg.buffer_bytes = 1 << 20;
  cfg.cell_bytes = 256;
  cfg.lossless_priorities = 1u << 3;
  fabric::port_config port;
  for (int p = 0; p < fabric::num_priorities; ++p) {
    port.pgs[p].shared = buffer_threshold::dynamic(3);
    port.queues[p].shared = buffer_threshold::dynamic(3);
  }
  port.pgs[3].shared = buffer_threshold::dynamic(0);
  port.pgs[3].headroom_bytes = 40 * 1024;
  port.pgs[3].xon_offset_bytes = 4 * 1024;
  port.queues[3].shared = buffer_threshold::unlimited();
  port.queues[3].ecn = {true, 20 * 1024, 100 * 1024, 0.2};
  cfg.ports.assign(4, port);
  cfg.pfc.watchdog = {true, 10 * ms, 20 * ms, 2 * ms, fabric::pfc_watchdog_config::action_kind::drop};
  return cfg;
}

const qualify_check& find(const qualify_result& r, const std::string& name) {
  for (const auto& c : r.checks)
    if (c.name == name) return c;
  ADD_FAILURE() << "no check " << name;
  static qualify_check none;
  return none;
}

TEST(qualify, expected_thresholds_match_the_hand_calculation) {
  // Ingress pool: 4096 cells - 4 ports x 160 cells of headroom = 3456. One PG filling
  // alone with alpha 1 meets its limit at s = 3456 - s: 1728 cells = 442,368 B. XON: the
  // largest s with s <= (3456 - s) - 16 cells: 1720 cells. Lossy (alpha 8): 8/9 x 3456 =
  // 3072 cells ingress; egress pool 4096 cells: 8/9 -> 3641 cells (3640.9 rounded up).
  const auto e = expected_for(lab_switch(), 0, 1, 3);
  EXPECT_EQ(e.xoff_bytes, 1728 * 256);
  EXPECT_EQ(e.headroom_bytes, 40 * 1024);
  EXPECT_EQ(e.xon_bytes, 1720 * 256);
  const auto lossy = expected_for(lab_switch(), 0, 1, 0);
  EXPECT_EQ(lossy.ingress_limit_bytes, 3072 * 256);
  EXPECT_EQ(lossy.egress_limit_bytes, 3641 * 256);
}

TEST(qualify, marking_probability_and_wilson_interval) {
  const fabric::ecn_config ecn{true, 1000, 3000, 0.5};
  EXPECT_EQ(expected_marking(ecn, 1000), 0.0);
  EXPECT_DOUBLE_EQ(expected_marking(ecn, 2000), 0.25);
  EXPECT_DOUBLE_EQ(expected_marking(ecn, 3000), 0.5);
  EXPECT_EQ(expected_marking(ecn, 3001), 1.0);
  // 20 of 200 at z = 1.96: the textbook [0.0660, 0.1497].
  auto [lo, hi] = wilson_interval(20, 200, 1.96);
  EXPECT_NEAR(lo, 0.0660, 5e-4);
  EXPECT_NEAR(hi, 0.1497, 5e-4);
  auto [z0, z1] = wilson_interval(0, 200);
  EXPECT_EQ(z0, 0.0);
  EXPECT_GT(z1, 0.0);
}

TEST(qualify, the_switch_model_passes_every_check_where_its_configuration_says) {
  model_switch_under_test target;
  auto r = qualify_switch(target, lab_switch(), {});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->passed()) << qualify_table(*r);
  const double frame = 5 * 256;  // a 1102-byte frame takes 5 cells
  EXPECT_NEAR(find(*r, "pfc.xoff_threshold").measured, 1728 * 256, frame);
  EXPECT_NEAR(find(*r, "pfc.headroom").measured, 40 * 1024, frame);
  EXPECT_NEAR(find(*r, "pfc.xon_threshold").measured, 1720 * 256, frame);
  EXPECT_NEAR(find(*r, "buffer.shared_limit.queue0").measured, 3072 * 256, frame);
  // Seven depth points of 200 fills each; the middle of the ramp is marked with about
  // Pmax x 3/6 = 0.1.
  ASSERT_EQ(r->ecn_curve.size(), 7u);
  for (const auto& p : r->ecn_curve) EXPECT_EQ(p.samples, 200u);
  EXPECT_EQ(r->ecn_curve.front().marked, 0u);
  EXPECT_EQ(r->ecn_curve.back().marked, 200u);
  EXPECT_NEAR(r->ecn_curve[3].measured, r->ecn_curve[3].expected, 0.07);
  // The storm: detected 10 to 12 ms in, restored 20 ms after its end.
  const auto& det = find(*r, "pfc_watchdog.detection");
  EXPECT_GE(det.measured, 10 * ms - 0.25 * ms);
  EXPECT_LE(det.measured, 12.25 * ms);
  EXPECT_EQ(find(*r, "pfc_watchdog.action").measured, 12);
  EXPECT_EQ(find(*r, "pfc_watchdog.bystander").measured, 8);
  EXPECT_TRUE(find(*r, "pfc_watchdog.restoration").pass);
  EXPECT_TRUE(find(*r, "pfc_watchdog.lossless_after").pass);
  // The outputs carry it all.
  EXPECT_NE(qualify_table(*r).find("PASS: 10 of 10"), std::string::npos) << qualify_table(*r);
  EXPECT_NE(qualify_json(*r).find("\"ecn_curve\""), std::string::npos);
  EXPECT_NE(qualify_html(*r).find("id=\"plot-ecn-curve\""), std::string::npos);
}

// A switch whose data plane deviates from the configuration it reports: the model is
// configured with `deviate`(cfg) while the qualification expects cfg.
class deviating_switch final : public rocelab::testing::forwarding_switch {
 public:
  explicit deviating_switch(std::function<void(fabric::switch_config&)> deviate)
      : forwarding_switch(model_), deviate_(std::move(deviate)) {}
  status configure(const fabric::switch_config& cfg) override {
    auto actual = cfg;
    deviate_(actual);
    return inner_.configure(actual);
  }

 private:
  model_switch_under_test model_;  // the base keeps a reference; built before any call reaches it
  std::function<void(fabric::switch_config&)> deviate_;
};

std::vector<std::string> failed(const qualify_result& r) {
  std::vector<std::string> out;
  for (const auto& c : r.checks)
    if (!c.pass) out.push_back(c.name);
  return out;
}

TEST(qualify, tells_each_procedure_as_it_starts) {
  qualify_plan plan;
  plan.ecn_samples = 200;
  std::vector<std::string> steps;
  plan.on_step = [&](std::size_t i, std::size_t n, const std::string& what) {
    steps.push_back(std::to_string(i) + "/" + std::to_string(n) + " " + what);
  };
  deviating_switch sw([](fabric::switch_config&) {});
  ASSERT_TRUE(qualify_switch(sw, lab_switch(), plan).ok());
  EXPECT_EQ(steps, (std::vector<std::string>{"1/4 PFC XOFF/XON thresholds", "2/4 shared limit of priority 0",
                                             "3/4 ECN marking curve", "4/4 PFC watchdog storm"}));
}

TEST(qualify, a_switch_that_deviates_fails_the_checks_that_cover_it) {
  qualify_plan quick;
  quick.ecn_samples = 200;
  {  // Half the headroom it claims, XOFF at alpha 1/2 instead of 1.
    deviating_switch sw([](fabric::switch_config& c) {
      for (auto& p : c.ports) {
        p.pgs[3].headroom_bytes /= 2;
        p.pgs[3].shared = buffer_threshold::dynamic(-1);
      }
    });
    auto r = qualify_switch(sw, lab_switch(), quick);
    ASSERT_TRUE(r.ok()) << r.error().message();
    // The headroom it does not reserve goes to the ingress pool, so the lossy priority
    // holds more than its configuration allows as well.
    EXPECT_EQ(failed(*r), (std::vector<std::string>{"pfc.xoff_threshold", "pfc.headroom", "pfc.xon_threshold",
                                                    "buffer.shared_limit.queue0"}))
        << qualify_table(*r);
  }
  {  // Marks twice as often as configured.
    deviating_switch sw([](fabric::switch_config& c) {
      for (auto& p : c.ports) p.queues[3].ecn.pmax = 0.4;
    });
    auto r = qualify_switch(sw, lab_switch(), quick);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(failed(*r), std::vector<std::string>{"ecn.curve"}) << qualify_table(*r);
    // The points below Kmin and above Kmax still agree; the ramp does not.
    EXPECT_TRUE(r->ecn_curve.front().pass);
    EXPECT_TRUE(r->ecn_curve.back().pass);
    EXPECT_FALSE(r->ecn_curve[5].pass);
  }
  {  // A lossy queue that holds more than it should (alpha 8 claimed, unlimited in fact).
    deviating_switch sw([](fabric::switch_config& c) {
      for (auto& p : c.ports) {
        p.pgs[0].shared = buffer_threshold::unlimited();
        p.queues[0].shared = buffer_threshold::unlimited();
      }
    });
    auto r = qualify_switch(sw, lab_switch(), quick);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(failed(*r), std::vector<std::string>{"buffer.shared_limit.queue0"}) << qualify_table(*r);
  }
  {  // A watchdog that only alerts, and one that takes four times as long to notice.
    deviating_switch alert([](fabric::switch_config& c) {
      c.pfc.watchdog.action = fabric::pfc_watchdog_config::action_kind::alert;
    });
    auto r = qualify_switch(alert, lab_switch(), quick);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(failed(*r), std::vector<std::string>{"pfc_watchdog.action"}) << qualify_table(*r);
    deviating_switch slow([](fabric::switch_config& c) { c.pfc.watchdog.detection_ns *= 4; });
    auto s = qualify_switch(slow, lab_switch(), quick);
    ASSERT_TRUE(s.ok()) << s.error().message();
    EXPECT_EQ(failed(*s), std::vector<std::string>{"pfc_watchdog.detection"}) << qualify_table(*s);
  }
}

// A switch that reports no watchdog timestamps (as a real switch read through counters
// alone would not): restoration is then timed by reading counters.
class timestamp_free_switch final : public rocelab::testing::forwarding_switch {
 public:
  using forwarding_switch::forwarding_switch;
  result<probe_counters> read(std::uint16_t s, std::uint16_t d, std::uint8_t q) override {
    auto c = inner_.read(s, d, q);
    if (c) c->wd_last_xoff_rx_ns = c->wd_last_restored_ns = -1;
    return c;
  }
};

// Once a storm has started, every read takes `delay` (its counters are the ones at its
// end), as on a busy host where a read or the wake-up after it is late.
class slow_reading_switch final : public rocelab::testing::forwarding_switch {
 public:
  slow_reading_switch(switch_under_test& inner, std::int64_t delay) : forwarding_switch(inner), delay_(delay) {}
  status storm(std::uint16_t p, std::uint8_t q, bool on) override {
    slow_ = slow_ || on;
    return inner_.storm(p, q, on);
  }
  result<probe_counters> read(std::uint16_t s, std::uint16_t d, std::uint8_t q) override {
    if (slow_) ROCELAB_RETURN_IF_ERROR(inner_.wait(delay_));
    return inner_.read(s, d, q);
  }

 private:
  std::int64_t delay_;
  bool slow_ = false;
};

TEST(qualify, watchdog_times_come_from_the_switchs_clock_or_from_bracketing_reads) {
  qualify_plan plan;
  plan.ecn_samples = 20;
  {  // The model reports its timestamps: restoration 20 to 22 ms after its last XOFF.
    model_switch_under_test target;
    auto r = qualify_switch(target, lab_switch(), plan);
    ASSERT_TRUE(r.ok()) << r.error().message();
    const auto& c = find(*r, "pfc_watchdog.restoration");
    EXPECT_TRUE(c.pass) << qualify_table(*r);
    EXPECT_GE(c.measured, 20 * ms);
    EXPECT_LE(c.measured, 22 * ms);
    EXPECT_NE(c.note.find("switch's clock"), std::string::npos) << c.note;
  }
  {  // Without them, timed by reads; and reads that take longer than a poll (3 ms against
     // 2) do not fail a switch that is on time: the bracket they give still meets the window.
    model_switch_under_test model;
    timestamp_free_switch bare(model);
    slow_reading_switch target(bare, 3 * ms);
    auto r = qualify_switch(target, lab_switch(), plan);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_TRUE(r->passed()) << qualify_table(*r);
    EXPECT_NE(find(*r, "pfc_watchdog.restoration").note.find("no timestamps"), std::string::npos);
    EXPECT_NE(find(*r, "pfc_watchdog.detection").note.find("read between"), std::string::npos);
  }
  {  // A watchdog that waits half as long again before restoring fails, timed either way.
    const auto restores_late = [](fabric::switch_config& c) {
      c.pfc.watchdog.restoration_ns += c.pfc.watchdog.restoration_ns / 2;
    };
    deviating_switch late(restores_late);
    auto r = qualify_switch(late, lab_switch(), plan);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_EQ(failed(*r), std::vector<std::string>{"pfc_watchdog.restoration"}) << qualify_table(*r);
    deviating_switch late_too(restores_late);
    timestamp_free_switch bare(late_too);
    auto s = qualify_switch(bare, lab_switch(), plan);
    ASSERT_TRUE(s.ok()) << s.error().message();
    EXPECT_EQ(failed(*s), std::vector<std::string>{"pfc_watchdog.restoration"}) << qualify_table(*s);
  }
}

TEST(qualify, a_configuration_without_a_watchdog_fails_that_check_and_bad_plans_are_refused) {
  auto cfg = lab_switch();
  cfg.pfc.watchdog.enabled = false;
  model_switch_under_test target;
  auto r = qualify_switch(target, cfg, {});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(failed(*r), std::vector<std::string>{"pfc_watchdog.enabled"});

  qualify_plan bad;
  bad.dst = 9;
  EXPECT_NE(qualify_switch(target, lab_switch(), bad).error().message().find("dst port 9"), std::string::npos);
  bad = {};
  bad.lossless_priority = 0;
  EXPECT_NE(qualify_switch(target, lab_switch(), bad).error().message().find("not lossless"), std::string::npos);
  bad = {};
  int polls = 0;
  bad.cancel_requested = [&] { return ++polls > 5; };
  EXPECT_EQ(qualify_switch(target, lab_switch(), bad).error().code(), error_code::cancelled);
}

TEST(qualify, the_report_page_renders_in_chromium_with_its_curve_and_table) {
  if (rocelab::testing::chromium_binary().empty())
    GTEST_SKIP() << "chromium is not installed (scripts/setup installs Debian's chromium)";
  model_switch_under_test target;
  auto r = qualify_switch(target, lab_switch(), {});
  ASSERT_TRUE(r.ok()) << r.error().message();
  rocelab::testing::temp_dir dir("rlq-chromium");
  std::ofstream(dir.path() / "qualify.html") << qualify_html(*r);
  const auto dom = rocelab::testing::chromium_dom(dir.path() / "qualify.html", dir.path());
  ASSERT_TRUE(dom.has_value()) << "chromium failed";
  const auto plot = dom->find("id=\"plot-ecn-curve\"");
  ASSERT_NE(plot, std::string::npos);
  const auto points = dom->find("data-points=\"", plot);
  ASSERT_NE(points, std::string::npos);
  EXPECT_GE(std::stoi(dom->substr(points + 13, 8)), 7) << "the seven measured points at least";
  for (const char* check : {"pfc.xoff_threshold", "ecn.curve", "pfc_watchdog.restoration"})
    EXPECT_NE(dom->find(check), std::string::npos) << check;
  EXPECT_NE(dom->find("id=\"ecn-curve\""), std::string::npos);
}

TEST(qualify, nic_counters_are_checked_against_the_capture) {
  run_records run;
  EXPECT_FALSE(nic_capture_checks(run).has_value());  // no capture, nothing to compare
  // Two NICs and a capture device (2); counters sampled twice, the latest counts.
  run.counters = {{0, 0, "nic.tx_cnps", 10, 3},     {0, 0, "nic.tx_cnps", 20, 5},   {1, 0, "nic.tx_cnps", 20, 7},
                  {0, 0, "nic.rx_cnps", 20, 12},    {1, 0, "nic.rx_ce_marked", 20, 40},
                  {0, 0, "nic.rx_pfc", 20, 9},      {2, 0, "capture.cnp", 20, 12},  {2, 0, "capture.ce", 20, 44},
                  {2, 0, "capture.pfc_frames", 20, 9}, {2, 0, "capture.kernel_dropped", 20, 1}};
  auto checks = nic_capture_checks(run);
  ASSERT_TRUE(checks.has_value());
  ASSERT_EQ(checks->size(), 4u);
  EXPECT_EQ((*checks)[0].name, "nic.np_cnp_sent");
  EXPECT_EQ((*checks)[0].measured, 12);
  EXPECT_TRUE((*checks)[0].pass);
  EXPECT_TRUE((*checks)[1].pass);
  EXPECT_FALSE((*checks)[2].pass) << "40 CE-marked at the NICs against 44 captured, 1 lost: more than the loss";
  EXPECT_TRUE((*checks)[3].pass);
}

}  // namespace
}  // namespace rocelab::experiments

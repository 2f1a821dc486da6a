#include "rocelab/fabric/dcqcn.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "rocelab/fabric/clock.hpp"

namespace rocelab::fabric {
namespace {

constexpr std::int64_t line = 100'000'000'000;
constexpr std::int64_t us = 1000;

TEST(DcqcnPaper, RateAndAlphaFollowTheEquationsForAScriptedCnpSequence) {
  // Paper preset: g = 1/256, alpha starts at 1, K = T = 55 us, F = 5, R_AI = 40 Mb/s,
  // cut on every CNP, R_T = R_C at every CNP. Equations (paper, Algorithm 1 / Fig. 6):
  //   CNP:   R_T = R_C; R_C = R_C (1 - alpha/2); alpha = (1-g) alpha + g
  //   K without CNP: alpha = (1-g) alpha
  //   increase: fast recovery R_C = (R_T + R_C)/2; additive R_T += R_AI, then the same.
  // alpha = 1 exactly (1024): the model takes it, a NIC does not (the preset has 1023).
  virtual_clock clk;
  auto cfg = dcqcn_config::paper();
  cfg.initial_alpha_value = 1024;
  reaction_point rp(cfg, line, clk);
  const double g = 1.0 / 256;
  EXPECT_EQ(rp.rate_bps(), 100e9);

  rp.on_cnp(0);  // alpha 1: R_C = 100G x 1/2; alpha stays (1-g) 1 + g = 1
  EXPECT_DOUBLE_EQ(rp.rate_bps(), 50e9);
  EXPECT_DOUBLE_EQ(rp.target_rate_bps(), 100e9);
  EXPECT_DOUBLE_EQ(rp.alpha(0), 1.0);

  clk.run_until(10 * us);
  rp.on_cnp(10 * us);  // no K elapsed: alpha 1; R_T = 50G, R_C = 25G
  EXPECT_DOUBLE_EQ(rp.target_rate_bps(), 50e9);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), 25e9);

  clk.run_until(65 * us);  // timer T from the last cut (10 + 55): fast recovery 1
  EXPECT_DOUBLE_EQ(rp.rate_bps(), (50e9 + 25e9) / 2);  // 37.5G
  clk.run_until(120 * us);  // fast recovery 2
  EXPECT_DOUBLE_EQ(rp.rate_bps(), (50e9 + 37.5e9) / 2);  // 43.75G

  // 130 us: two K periods (65, 120) since the CNP at 10 us: alpha = (1-g)^2.
  const double a = (1 - g) * (1 - g);
  EXPECT_DOUBLE_EQ(rp.alpha(130 * us), a);
  clk.run_until(130 * us);
  rp.on_cnp(130 * us);
  EXPECT_DOUBLE_EQ(rp.target_rate_bps(), 43.75e9);
  double rc = 43.75e9 * (1 - a / 2);  // 22.0455646514892578125G
  EXPECT_DOUBLE_EQ(rp.rate_bps(), rc);
  const double a3 = (1 - g) * a + g;
  EXPECT_DOUBLE_EQ(rp.alpha(130 * us), a3);

  // Five fast-recovery steps (F = 5) at 185, 240, 295, 350, 405 us, then additive.
  for (int k = 1; k <= 5; ++k) {
    clk.run_until((130 + 55 * k) * us);
    rc = (43.75e9 + rc) / 2;
    EXPECT_DOUBLE_EQ(rp.rate_bps(), rc) << "fast recovery " << k;
    EXPECT_DOUBLE_EQ(rp.alpha((130 + 55 * k) * us), a3 * std::pow(1 - g, k));
  }
  clk.run_until(460 * us);
  const double rt = 43.75e9 + 40e6;
  EXPECT_DOUBLE_EQ(rp.target_rate_bps(), rt);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), (rt + rc) / 2);
  EXPECT_EQ(rp.counters().fast_recovery, 7u);  // 2 before the third CNP, 5 after
  EXPECT_EQ(rp.counters().additive_increase, 1u);
  EXPECT_EQ(rp.counters().rate_decreases, 3u);
}

TEST(DcqcnPaper, ByteCounterDrivesIncreasesLikeTheTimer) {
  // After the first cut (R_C 50G, R_T 100G) each B = 10 MB sent is one increase event:
  // 5 of fast recovery then additive (the timer stage is still 0, so not hyper).
  virtual_clock clk;
  auto cfg = dcqcn_config::paper();
  cfg.initial_alpha_value = 1024;  // alpha = 1: the first cut halves
  reaction_point rp(cfg, line, clk);
  rp.on_cnp(0);
  double rc = 50e9;
  for (int k = 0; k < 5; ++k) {
    rp.on_bytes_sent(1 * us, static_cast<std::uint64_t>(cfg.rpg_byte_reset_bytes));
    rc = (100e9 + rc) / 2;
    EXPECT_DOUBLE_EQ(rp.rate_bps(), rc);
  }
  rp.on_bytes_sent(1 * us, static_cast<std::uint64_t>(cfg.rpg_byte_reset_bytes) - 1);
  EXPECT_EQ(rp.byte_stage(), 5);  // one byte short of the sixth event
  rp.on_bytes_sent(1 * us, 1);
  EXPECT_EQ(rp.counters().additive_increase, 1u);
}

TEST(DcqcnMlx5, CnpsWithinAMonitorPeriodCauseOneCutAtItsEnd) {
  // mlx5 preset: g = 5/1024 (dce_tcp_g 1019), alpha period 1 us, monitor 4 us, first
  // alpha 1023/1024, rpg_time_reset 300 us, F = 1, no clamp except after a timer increase.
  virtual_clock clk;
  reaction_point rp(dcqcn_config::mlx5(), line, clk);
  const double d = 1019.0 / 1024, g = 5.0 / 1024;

  rp.on_cnp(0);  // first CNP cuts at once: 100G x (1 - 1023/2048) = 50.048828125G
  const double a0 = 1023.0 / 1024;
  double rc = 100e9 * (1 - a0 / 2);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), rc);
  EXPECT_DOUBLE_EQ(rp.target_rate_bps(), 100e9);

  clk.run_until(1500);
  rp.on_cnp(1500);  // pending until the period boundary at 4 us
  rp.on_cnp(2500);  // coalesced
  EXPECT_DOUBLE_EQ(rp.rate_bps(), rc);
  clk.run_until(4 * us);
  // Alpha boundaries: 1 us decay (no CNP in [0,1)); 2 us rise (CNP at 1.5);
  // 3 us rise (CNP at 2.5); 4 us decay (alpha first, then the cut at the same instant).
  const double a1 = d * a0;
  const double a2 = d * a1 + g;
  const double a3 = d * a2 + g;
  const double a4 = d * a3;
  EXPECT_DOUBLE_EQ(rp.alpha(4 * us), a4);
  rc = rc * (1 - a4 / 2);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), rc);
  EXPECT_DOUBLE_EQ(rp.target_rate_bps(), 100e9) << "no timer increase yet: target not clamped";
  EXPECT_EQ(rp.counters().rate_decreases, 2u);
  EXPECT_EQ(rp.counters().cnps, 3u);

  clk.run_until(304 * us);  // rpg_time_reset after the cut: stage 0 < F = 1, fast recovery
  rc = (100e9 + rc) / 2;
  EXPECT_DOUBLE_EQ(rp.rate_bps(), rc);

  rp.on_cnp(310 * us);
  clk.run_until(312 * us);  // next 4 us boundary from 0
  // 306 decays (5..310 us), a rise at 311 (CNP in [310,311)), a decay at 312.
  double a = a4;
  for (int i = 0; i < 306; ++i) a *= d;
  a = d * a + g;
  a *= d;
  EXPECT_DOUBLE_EQ(rp.alpha(312 * us), a);
  EXPECT_DOUBLE_EQ(rp.target_rate_bps(), rc) << "a timer increase happened: target clamped";
  EXPECT_DOUBLE_EQ(rp.rate_bps(), rc * (1 - a / 2));
}

TEST(DcqcnHpccNs3, FirstCnpDefersTheCutToTheEndOfItsMonitorPeriod) {
  // HPCC ns-3 cnp_received_mlx: the first CNP sets alpha = 1 and schedules the alpha
  // update (1 us) and the rate-decrease check (4 us + 1 ns); the rate is unchanged until
  // that check, which cuts once with the alpha of that moment, and later checks follow
  // every 4 us from it.
  dcqcn_config c = dcqcn_config::mlx5();
  c.initial_alpha_value = 1024;
  c.dce_tcp_g = 1020;  // g = 1/256
  c.first_cut_after_monitor_period = true;
  virtual_clock clk;
  reaction_point rp(c, line, clk);
  const double d = 1020.0 / 1024, g = 4.0 / 1024;

  rp.on_cnp(0);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), 100e9) << "no cut on the first CNP";
  clk.run_until(2500);
  rp.on_cnp(2500);
  clk.run_until(4 * us);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), 100e9) << "the check is 1 ns after the 4 us alpha update";
  clk.run_until(4 * us + 1);
  // Alpha boundaries: 1 and 2 us decay (the first CNP does not count), 3 us rises (CNP at
  // 2.5 us), 4 us decays.
  const double a = d * (d * d * d + g);
  EXPECT_DOUBLE_EQ(rp.alpha(4 * us + 1), a);
  double rc = 100e9 * (1 - a / 2);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), rc);
  EXPECT_EQ(rp.counters().rate_decreases, 1u);

  // A CNP at 5 us is cut at the next check, 8 us + 1 ns, not at 8 us.
  clk.run_until(5 * us);
  rp.on_cnp(5 * us);
  clk.run_until(8 * us);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), rc);
  clk.run_until(8 * us + 1);
  EXPECT_LT(rp.rate_bps(), rc);
  EXPECT_EQ(rp.counters().rate_decreases, 2u);
}

TEST(DcqcnMlx5, FastRecoveryThenAdditiveThenHyperIncrease) {
  // rate_to_set_on_first_cnp 10 Gb/s, byte counter off (HPCC ns-3), F = 1:
  //  300 us stage 0 < 1: fast recovery, R_C = (10 + 10)/2 = 10G
  //  600 us stage 1 = F: additive, R_T = 10.005G, R_C = 10.0025G
  //  900 us stage 2 > F: hyper,    R_T = 10.055G, R_C = 10.02875G
  // 1200 us hyper,                 R_T = 10.105G, R_C = 10.066875G
  virtual_clock clk;
  auto cfg = dcqcn_config::mlx5();
  cfg.rate_to_set_on_first_cnp_mbps = 10'000;
  cfg.byte_counter_enabled = false;
  reaction_point rp(cfg, line, clk);
  rp.on_cnp(0);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), 10e9);
  struct step { std::int64_t t; double rt, rc; } steps[] = {
      {300 * us, 10e9, 10e9},
      {600 * us, 10.005e9, 10.0025e9},
      {900 * us, 10.055e9, 10.02875e9},
      {1200 * us, 10.105e9, 10.066875e9},
  };
  for (const auto& s : steps) {
    clk.run_until(s.t);
    EXPECT_NEAR(rp.target_rate_bps(), s.rt, 1e-3) << s.t;
    EXPECT_NEAR(rp.rate_bps(), s.rc, 1e-3) << s.t;
  }
  EXPECT_EQ(rp.counters().fast_recovery, 1u);
  EXPECT_EQ(rp.counters().additive_increase, 1u);
  EXPECT_EQ(rp.counters().hyper_increase, 2u);
}

TEST(DcqcnMlx5, CutIsBoundedByMinDecFacAndMinRate) {
  virtual_clock clk;
  auto cfg = dcqcn_config::mlx5();
  cfg.initial_alpha_value = 1024;     // would halve
  cfg.rpg_min_dec_fac_percent = 80;   // but a cut keeps >= 80 %
  reaction_point rp(cfg, line, clk);
  rp.on_cnp(0);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), 80e9);

  cfg.rpg_min_dec_fac_percent = 0;
  cfg.rpg_min_rate_mbps = 60'000;     // and never below 60G
  reaction_point rp2(cfg, line, clk);
  rp2.on_cnp(0);
  EXPECT_DOUBLE_EQ(rp2.rate_bps(), 60e9);
}

TEST(DcqcnRateTimer, StopsAtLineRateAndCancelsOnDestruction) {
  virtual_clock clk;
  {
    reaction_point rp(dcqcn_config::mlx5(), line, clk);
    rp.on_cnp(0);
    clk.run_until(100'000 * us);  // 100 ms: fully recovered
    EXPECT_DOUBLE_EQ(rp.rate_bps(), 100e9);
    EXPECT_EQ(clk.pending(), 0u);
    rp.on_cnp(clk.now_ns());
    EXPECT_GT(clk.pending(), 0u);
  }
  EXPECT_EQ(clk.pending(), 0u);
}

struct np_case {
  const char* name;
  std::int64_t gap_us;
  std::int64_t t_ns[5];
  bool ce[5];
  bool want[5];
};
const np_case np_cases[] = {
    // mlx5 4 us: CE at 0 -> CNP; 1 us too soon; unmarked never; 4 us -> CNP; 7.999 us too soon.
    {"mlx5_4us", 4, {0, 1000, 2000, 4000, 7999}, {true, true, false, true, true}, {true, false, false, true, false}},
    // paper 50 us
    {"paper_50us", 50, {0, 49'999, 50'000, 60'000, 100'000}, {true, true, true, true, true},
     {true, false, true, false, true}},
    // HPCC ns-3 compat: a congestion flag for every CE packet
    {"every_ce", 0, {0, 1, 1, 2, 3}, {true, true, true, false, true}, {true, true, true, false, true}},
};

TEST(NotificationPoint, AtMostOneCnpPerMinTimeBetweenCnps) {
  for (const auto& c : np_cases) {
    SCOPED_TRACE(c.name);
    auto cfg = dcqcn_config::mlx5();
    cfg.min_time_between_cnps_us = c.gap_us;
    notification_point np(cfg);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(np.on_packet(c.t_ns[i], c.ce[i]), c.want[i]) << i;
  }
}

TEST(NotificationPoint, CnpCarriesConfiguredDscpAndPriority) {
  notification_point np(dcqcn_config::mlx5());
  EXPECT_EQ(np.cnp_dscp(), 48);
  EXPECT_EQ(np.cnp_802p_prio(), 6);
}

struct preset_case {
  const char* key;
  std::int64_t mlx5, paper;
};
const preset_case preset_cases[] = {
    {"rate_to_set_on_first_cnp", 0, 0}, {"rpg_min_rate", 1, 1}, {"rpg_max_rate", 0, 0},
    {"initial_alpha_value", 1023, 1023}, {"dce_tcp_g", 1019, 1020}, {"dce_tcp_rtt", 1, 55},
    {"rate_reduce_monitor_period", 4, 0}, {"rpg_time_reset", 300, 55}, {"rpg_byte_reset", 32767, 10485760},
    {"rpg_threshold", 1, 5}, {"rpg_ai_rate", 5, 40}, {"rpg_hai_rate", 50, 50}, {"rpg_min_dec_fac", 50, 50},
    {"clamp_tgt_rate", 0, 1}, {"clamp_tgt_rate_after_time_inc", 1, 1}, {"min_time_between_cnps", 4, 50},
    {"cnp_dscp", 48, 48}, {"cnp_802p_prio", 6, 6},
};

TEST(DcqcnConfig, PresetsByMlx5Name) {
  const auto m = dcqcn_config::mlx5(), p = dcqcn_config::paper();
  for (const auto& c : preset_cases) {
    SCOPED_TRACE(c.key);
    EXPECT_EQ(m.get(c.key), c.mlx5);
    EXPECT_EQ(p.get(c.key), c.paper);
  }
  EXPECT_TRUE(m.validate().ok());
  EXPECT_TRUE(p.validate().ok());
}

// Every preset must be something a ConnectX NIC accepts when the lab applies it.
TEST(DcqcnConfig, PresetsStayInsideTheMlx5FirmwareRanges) {
  for (const auto& [name, c] : {std::pair{"mlx5", dcqcn_config::mlx5()}, std::pair{"paper", dcqcn_config::paper()}}) {
    SCOPED_TRACE(name);
    EXPECT_GE(c.initial_alpha_value, 0);
    EXPECT_LE(c.initial_alpha_value, dcqcn_config::mlx5_max_initial_alpha_value);
  }
}

TEST(DcqcnConfig, SetByNameValidates) {
  auto c = dcqcn_config::mlx5();
  EXPECT_TRUE(c.set("rpg_time_reset", 100).ok());
  EXPECT_EQ(c.rpg_time_reset_us, 100);
  EXPECT_EQ(c.set("no_such_knob", 1).code(), error_code::invalid_argument);
  EXPECT_FALSE(c.set("dce_tcp_g", 2000).ok());
  EXPECT_FALSE(c.set("clamp_tgt_rate", 2).ok());
  EXPECT_FALSE(c.set("cnp_802p_prio", 9).ok());
}

}  // namespace
}  // namespace rocelab::fabric

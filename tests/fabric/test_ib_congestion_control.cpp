// InfiniBand congestion control (IBA annex A10) at the source, and the IB wire overhead
// beside RoCEv2's: CCTI rises per BECN up to its limit, falls one step per CCTI_Timer,
// and the pacing it implies leaves exactly the CCT's injection rate delay between packets.
#include "rocelab/fabric/ib_congestion_control.hpp"

#include <gtest/gtest.h>

#include <cstdint>

#include "rocelab/fabric/twin/frames.hpp"

namespace rocelab::fabric {
namespace {

ib_cc_config small_table() {
  ib_cc_config c;
  c.cct = {{0, 0}, {0, 100}, {1, 100}, {2, 100}, {3, 100}};  // IRD 0, 100, 200, 400, 800 ns
  c.ccti_limit = 4;
  c.ccti_increase = 2;
  c.ccti_timer_ns = 1000;
  return c;
}

TEST(IbCongestionControl, BecnRaisesCctiToItsLimitAndTheTimerLowersItToItsMinimum) {
  virtual_clock clk;
  ib_cc_reaction_point rp(small_table(), 400'000'000'000, clk);
  EXPECT_EQ(rp.ccti(), 0u);
  EXPECT_DOUBLE_EQ(rp.rate_bps(), 400e9) << "CCTI 0 is IRD 0: line rate";
  rp.on_cnp(0);
  EXPECT_EQ(rp.ccti(), 2u);
  EXPECT_EQ(rp.ird_ns(), 200);
  rp.on_cnp(10);
  rp.on_cnp(20);  // 6 capped at the limit 4
  EXPECT_EQ(rp.ccti(), 4u);
  EXPECT_EQ(rp.counters().becns, 3u);
  EXPECT_EQ(rp.counters().ccti_increases, 2u);
  // The timer started with the first BECN (t = 0) and is not restarted by later ones.
  clk.run_until(999);
  EXPECT_EQ(rp.ccti(), 4u);
  clk.run_until(1000);
  EXPECT_EQ(rp.ccti(), 3u);
  clk.run_until(10'000);
  EXPECT_EQ(rp.ccti(), 0u);
  EXPECT_EQ(rp.counters().timer_decreases, 4u);
  EXPECT_EQ(clk.pending(), 0u) << "no timer at the minimum";
}

TEST(IbCongestionControl, PacingAtTheRateLeavesExactlyTheIrdBetweenPackets) {
  virtual_clock clk;
  constexpr std::uint32_t framing = twin::ib_framing_bytes;
  ib_cc_reaction_point rp(small_table(), 400'000'000'000, clk, framing);
  rp.on_cnp(0);  // CCTI 2: IRD 200 ns
  const std::uint64_t frame = 4096 + twin::ib_data_overhead_bytes(false);
  rp.on_bytes_sent(0, frame);
  // A 4122-byte frame + 2 framing bytes at 400 Gb/s takes 82.48 ns; the pacer waits one
  // frame time at rate_bps after each start: 82.48 + 200 ns.
  const double pkt_ns = (frame + framing) * 8 / 400.0;
  EXPECT_NEAR(pkt_ns, 82.48, 1e-9);
  const double gap_ns = (frame + framing) * 8 * 1e9 / rp.rate_bps();
  EXPECT_NEAR(gap_ns, pkt_ns + 200, 1e-6);
}

TEST(IbCongestionControl, KnobsByOpenSmNamesAndValidation) {
  ib_cc_config c;
  EXPECT_TRUE(c.set("ccti_timer", 20).ok());
  EXPECT_EQ(c.ccti_timer_ns, 20 * 1024);
  EXPECT_TRUE(c.set("ccti_increase", 4).ok());
  EXPECT_EQ(c.ccti_increase, 4u);
  EXPECT_FALSE(c.set("ccti_limit", 500).ok()) << "beyond the 128-entry default table";
  const status unknown = c.set("ccti_incrase", 1);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("ccti_increase"), std::string::npos) << "lists the valid knobs";
  EXPECT_TRUE(ib_cc_config{}.validate().ok());
  const auto t = ib_cc_config::default_cct();
  ASSERT_EQ(t.size(), 128u);
  EXPECT_EQ(t[0].ird_units(), 0);
  EXPECT_EQ(t[127].ird_units(), 64 * 127);
}

TEST(RateControl, FactoryPicksTheFabricsAlgorithm) {
  virtual_clock clk;
  const auto d = make_rate_control(congestion_control_kind::dcqcn, dcqcn_config::mlx5(), {}, 100'000'000'000, clk, 20);
  ASSERT_NE(d, nullptr);
  EXPECT_DOUBLE_EQ(d->rate_bps(), 100e9);
  d->on_cnp(0);
  EXPECT_LT(d->rate_bps(), 100e9) << "DCQCN cuts on the CNP (no monitor-period deferral by default)";
  const auto i = make_rate_control(congestion_control_kind::ib_cc, dcqcn_config::mlx5(), {}, 100'000'000'000, clk, 2);
  ASSERT_NE(i, nullptr);
  i->on_bytes_sent(0, 1000);
  i->on_cnp(0);
  EXPECT_LT(i->rate_bps(), 100e9);
  EXPECT_EQ(make_rate_control(congestion_control_kind::none, dcqcn_config::mlx5(), {}, 1, clk, 0), nullptr);
}

// Wire overhead per packet, to the byte, and the serialization it implies.
struct overhead_case {
  const char* name;
  twin::frame_sizes sizes;
  std::uint32_t framing;  // preamble+IFG (Ethernet) or delimiters (IB)
  std::uint32_t data, ack, cnp, first_extra;
};

TEST(WireOverhead, HeadersPerFabricAreExact) {
  const overhead_case cases[] = {
      // Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4; + preamble/SFD 8 + IFG 12.
      {"rocev2", twin::frame_sizes_for(false), 20, 62, 66, 78, 16},
      // LRH 8 + BTH 12 + ICRC 4 + VCRC 2; ACK + AETH 4; CN packet BTH only.
      {"infiniband", twin::frame_sizes_for_ib(false), 2, 26, 30, 26, 16},
      // The same with a GRH (40).
      {"infiniband_grh", twin::frame_sizes_for_ib(true), 2, 66, 70, 66, 16},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.sizes.data_overhead, c.data);
    EXPECT_EQ(c.sizes.ack, c.ack);
    EXPECT_EQ(c.sizes.cnp, c.cnp);
    EXPECT_EQ(c.sizes.first_extra, c.first_extra);
  }
  // A 4096-byte payload at 400 Gb/s: RoCEv2 (4096 + 62 + 20) x 8 / 400 = 83.56 ns;
  // InfiniBand (4096 + 26 + 2) x 8 / 400 = 82.48 ns: 1.3% more goodput per packet.
  auto ser_ps = [](std::int64_t bytes, std::int64_t rate_bps) { return bytes * 8 * 1'000'000'000'000 / rate_bps; };
  EXPECT_EQ(ser_ps(4096 + 62 + 20, 400'000'000'000), 83'560);
  EXPECT_EQ(ser_ps(4096 + 26 + 2, 400'000'000'000), 82'480);
  EXPECT_TRUE(twin::is_ib_mtu(2048));
  EXPECT_TRUE(twin::is_ib_mtu(4096));
  EXPECT_FALSE(twin::is_ib_mtu(9000));
}

}  // namespace
}  // namespace rocelab::fabric

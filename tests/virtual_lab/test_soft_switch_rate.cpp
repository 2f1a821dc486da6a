// Unit tests of the soft switch's rate pieces: the packet-rate shaper (packet_pacer) and
// the per-cause drop counters (port_drop_causes).
#include "rocelab/fabric/soft_switch/packet_pacer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "rocelab/fabric/soft_switch/drop_causes.hpp"

namespace rocelab::fabric::soft_switch {
namespace {

// Departures a loop that looks every `poll_ns` makes in `duration_ns`, sending every frame
// the pacer allows at each look (as service_ports does). `stall` pauses the loop once.
struct loop_case {
  std::string name;
  std::int64_t rate_pps, poll_ns, duration_ns;
  std::int64_t stall_at_ns, stall_ns;  // stall_ns 0: none
  std::int64_t want_departures;
};

std::int64_t departures(const loop_case& c, std::int64_t catchup_ns) {
  packet_pacer p(c.rate_pps, catchup_ns);
  std::int64_t n = 0;
  bool stalled = false;
  for (std::int64_t now = 1'000'000; now < 1'000'000 + c.duration_ns; now += c.poll_ns) {
    if (c.stall_ns > 0 && !stalled && now >= 1'000'000 + c.stall_at_ns) {
      stalled = true;
      now += c.stall_ns;
    }
    for (int k = 0; k < 64 && p.ready(now); ++k) {
      p.on_departure(now);
      ++n;
    }
  }
  return n;
}

class PacerRate : public ::testing::TestWithParam<loop_case> {};

TEST_P(PacerRate, DeparturesMatchTheRate) {
  EXPECT_EQ(departures(GetParam(), 50'000), GetParam().want_departures);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PacerRate,
    ::testing::Values(
        // 100 kpps for 10 ms: 1000 departures whether the loop looks every 1 us or every
        // 30 us (late wake-ups inside the catch-up window send back to back).
        loop_case{"FineLoopKeepsTheRate", 100'000, 1'000, 10'000'000, 0, 0, 1000},
        loop_case{"CoarseLoopCatchesUpWithinTheWindow", 100'000, 30'000, 10'000'000, 0, 0, 1000},
        // A rate that does not divide a second (30 kpps, 33.333 us) does not drift.
        loop_case{"NonDividingRateDoesNotDrift", 30'000, 1'000, 100'000'000, 0, 0, 3000},
        // A 5 ms stall past the 50 us window saves no credit: the 500 slots it covered
        // are gone, not sent as a burst afterwards.
        loop_case{"StallBeyondTheWindowSavesNoBurst", 100'000, 1'000, 10'000'000, 2'000'000, 5'000'000, 500}),
    [](const auto& i) { return i.param.name; });

TEST(Pacer, ZeroRateIsUnlimited) {
  packet_pacer p(0, 50'000);
  EXPECT_FALSE(p.limited());
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(p.ready(5));
    p.on_departure(5);
  }
}

TEST(Pacer, NextSlotIsOneIntervalAfterAnIdleDeparture) {
  packet_pacer p(250'000, 50'000);  // 4 us
  EXPECT_TRUE(p.ready(10'000'000));
  p.on_departure(10'000'000);
  EXPECT_FALSE(p.ready(10'003'999));
  EXPECT_EQ(p.next_ns(), 10'004'000);
  EXPECT_TRUE(p.ready(10'004'000));
}

TEST(Pacer, NoBurstAtTheFirstDepartureAfterStart) {
  // The first departure at a large clock value must not count as "late" against slot 0.
  packet_pacer p(1'000, 50'000);
  p.on_departure(5'000'000'000);
  EXPECT_FALSE(p.ready(5'000'000'001));
  EXPECT_EQ(p.next_ns(), 5'001'000'000);
}

// After the switch's loop was away for 5 ms (a stall it measured in its rings), the port
// may use the slots of those 5 ms, back to back, and no more; without a stall, one.
struct stall_case {
  std::string name;
  std::int64_t last_departure_ns, now_ns, stall_ns;
  int want_departures;
};

class PacerStall : public ::testing::TestWithParam<stall_case> {};

TEST_P(PacerStall, SendsTheSlotsTheStallCoveredAndNoMore) {
  const stall_case& c = GetParam();
  packet_pacer p(100'000, 50'000);  // 10 us slots
  p.on_departure(c.last_departure_ns);
  int sent = 0;
  while (p.ready(c.now_ns) && sent < 10'000) {
    p.on_departure(c.now_ns, c.stall_ns);
    ++sent;
  }
  EXPECT_EQ(sent, c.want_departures);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PacerStall,
    ::testing::Values(
        // Busy until the stall (last departure 1 ms, back at 6 ms after 5 ms away): the
        // 500 slots 1.01 .. 6.00 ms.
        stall_case{"BusyPortUsesTheStallsSlots", 1'000'000, 6'000'000, 5'000'000, 500},
        // Idle long before the stall: only the stall's own 5 ms (15.00 .. 20.00 ms), not
        // the idle time before it.
        stall_case{"IdlePortGetsOnlyTheStallNotTheIdleTime", 1'000'000, 20'000'000, 5'000'000, 501},
        stall_case{"NoStallNoBurst", 1'000'000, 6'000'000, 0, 1}),
    [](const auto& i) { return i.param.name; });

struct cause_case {
  std::string name;
  std::uint64_t port_drop_causes::*field;
  bool forwarder, shaper;
};

class DropCause : public ::testing::TestWithParam<cause_case> {};

TEST_P(DropCause, CountsInItsKindAndTheTotalOnly) {
  port_drop_causes d;
  d.*(GetParam().field) = 7;
  EXPECT_EQ(d.forwarder(), GetParam().forwarder ? 7u : 0u);
  EXPECT_EQ(d.shaper(), GetParam().shaper ? 7u : 0u);
  EXPECT_EQ(d.total(), 7u);
  port_drop_causes sum;
  sum += d;
  sum += d;
  EXPECT_EQ(sum.*(GetParam().field), 14u);
  EXPECT_EQ(sum.total(), 14u);
  const auto j = d.to_json();
  EXPECT_EQ(j["total"].get<std::uint64_t>(), 7u);
  EXPECT_EQ(j["forwarder"]["total"].get<std::uint64_t>(), d.forwarder());
  EXPECT_EQ(j["shaper"]["total"].get<std::uint64_t>(), d.shaper());
}

INSTANTIATE_TEST_SUITE_P(
    Causes, DropCause,
    ::testing::Values(cause_case{"RingOverflow", &port_drop_causes::ring, true, false},
                      cause_case{"LinkRx", &port_drop_causes::link_rx, true, false},
                      cause_case{"LinkTx", &port_drop_causes::link_tx, true, false},
                      cause_case{"TxRefused", &port_drop_causes::tx_refused, true, false},
                      cause_case{"Pool", &port_drop_causes::pool, true, false},
                      cause_case{"Oversize", &port_drop_causes::oversize, true, false},
                      cause_case{"IngressLimit", &port_drop_causes::ingress_limit, false, true},
                      cause_case{"EgressLimit", &port_drop_causes::egress_limit, false, true},
                      cause_case{"Headroom", &port_drop_causes::headroom, false, true},
                      cause_case{"PfcWatchdog", &port_drop_causes::pfc_watchdog, false, true},
                      cause_case{"Fault", &port_drop_causes::fault, false, false},
                      cause_case{"Reconfig", &port_drop_causes::reconfig, false, false}),
    [](const auto& i) { return i.param.name; });

}  // namespace
}  // namespace rocelab::fabric::soft_switch

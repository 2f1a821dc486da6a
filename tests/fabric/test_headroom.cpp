#include "rocelab/fabric/headroom.hpp"

#include <gtest/gtest.h>

namespace rocelab::fabric {
namespace {

struct headroom_case {
  const char* name;
  headroom_inputs in;
  std::int64_t want_total;
};

// Each expectation spelled out:
//  100G, 100 m: cable 2 x 500 ns x 12.5 B/ns = 12500; MTU 2 x (1518 + 20) = 3076;
//   PFC 64 + 20 = 84; response 0 -> 15660.
//  25G, 10 m: 2 x 50 ns x 3.125 B/ns = 312.5 -> 313; MTU 2 x (9216 + 20) = 18472; PFC 84;
//   response 16 quanta x 64 B = 1024 -> 19893.
//  400G, 3 m, PHY 100 ns: cable 2 x 15 ns x 50 B/ns = 1500; MTU 3076; PFC 84;
//   PHY 2 x 100 ns x 50 B/ns = 10000 -> 14660.
const headroom_case cases[] = {
    {"100G_100m_std_mtu", {100'000'000'000, 100.0, 1518, 0, 0, 20}, 15660},
    {"25G_10m_jumbo_16quanta", {25'000'000'000, 10.0, 9216, 16, 0, 20}, 19893},
    {"400G_3m_phy100ns", {400'000'000'000, 3.0, 1518, 0, 100, 20}, 14660},
};

TEST(HeadroomCalculator, TwoCableDelaysTwoMtusPfcFrameAndResponse) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(headroom_calculator(c.in).total_bytes, c.want_total);
  }
}

TEST(HeadroomCalculator, CellsRoundEveryMtuFrameUp) {
  // 15660 B of 1518 B frames = 11 frames (10.3 rounded up); ceil(1518/256) = 6 cells each.
  EXPECT_EQ(headroom_cells(cases[0].in, 256), 66);
}

}  // namespace
}  // namespace rocelab::fabric

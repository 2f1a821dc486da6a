// Adaptive routing's choice on its own: least-loaded port, ties rotated.
#include "rocelab/fabric/adaptive_routing.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

namespace rocelab::fabric {
namespace {

TEST(AdaptiveRouter, PicksTheLeastLoadedPort) {
  adaptive_router r;
  const std::array<std::uint64_t, 4> load{3000, 1000, 5000, 2000};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(r.pick(load), 1u);
}

TEST(AdaptiveRouter, RotatesAmongEquallyLoadedPorts) {
  adaptive_router r;
  const std::array<std::uint64_t, 4> idle{};
  std::vector<std::uint32_t> picks;
  for (int i = 0; i < 8; ++i) picks.push_back(r.pick(idle));
  EXPECT_EQ(picks, (std::vector<std::uint32_t>{0, 1, 2, 3, 0, 1, 2, 3}));
  const std::array<std::uint64_t, 3> two_idle{0, 900, 0};
  adaptive_router s;
  EXPECT_EQ(s.pick(two_idle), 0u);
  EXPECT_EQ(s.pick(two_idle), 2u);  // start 1: port 1 is loaded, port 2 ties port 0 and comes first
}

TEST(AdaptiveRouter, ParsesModes) {
  EXPECT_EQ(parse_routing_mode("adaptive").value(), routing_mode::adaptive);
  EXPECT_EQ(parse_routing_mode("ecmp").value(), routing_mode::ecmp);
  EXPECT_FALSE(parse_routing_mode("spray").ok());
}

}  // namespace
}  // namespace rocelab::fabric

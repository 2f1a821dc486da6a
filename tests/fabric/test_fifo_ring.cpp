// fifo_ring: the FIFO under the switch model's egress queues and the twin's links.
#include "rocelab/fabric/fifo_ring.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>

namespace rocelab::fabric {
namespace {

// Order and size against std::deque over pushes and pops that wrap the ring, grow it
// while it is wrapped (the copy must unroll the wrap), drain it to empty (the restart at
// slot 0) and fill it again.
TEST(FifoRing, KeepsOrderAcrossWrapGrowthAndDrain) {
  fifo_ring<std::uint64_t, 4> ring;
  std::deque<std::uint64_t> ref;
  std::uint64_t rng = 7, next_value = 0;
  for (int step = 0; step < 100'000; ++step) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    const unsigned r = static_cast<unsigned>(rng >> 33) % 16;
    // Phases of net growth, net drain and balance, so the depth sweeps 0..hundreds.
    const int phase = (step / 2000) % 3;
    const bool push = ref.empty() || (phase == 0 ? r < 11 : phase == 1 ? r < 5 : r < 8);
    if (push) {
      if (step % 2 == 0)
        ring.push_back(next_value);
      else
        ring.append() = next_value;
      ref.push_back(next_value++);
    } else {
      ASSERT_EQ(ring.front(), ref.front()) << "step " << step;
      ASSERT_EQ(ring.pop_front(), ref.front()) << "step " << step;
      ref.pop_front();
    }
    ASSERT_EQ(ring.size(), ref.size()) << "step " << step;
    ASSERT_EQ(ring.empty(), ref.empty()) << "step " << step;
  }
}

TEST(FifoRing, StartsEmptyAndAllocatesOnFirstPush) {
  fifo_ring<int> ring;
  EXPECT_TRUE(ring.empty());
  EXPECT_EQ(ring.size(), 0u);
  ring.push_back(42);
  EXPECT_EQ(ring.front(), 42);
  EXPECT_EQ(ring.pop_front(), 42);
  EXPECT_TRUE(ring.empty());
}

}  // namespace
}  // namespace rocelab::fabric

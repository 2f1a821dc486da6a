// NIC timestamps onto the wall clock: real-time stamps (mlx5 REAL_TIME_CLOCK_ENABLE) are
// kept as they are, counter stamps are mapped by a line fitted over samples taken during
// the capture, which holds where one 50 ms two-point calibration drifts.
#include "rocelab/captures/nic_clock.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

namespace rocelab::captures {
namespace {

constexpr std::int64_t epoch_2026_ns = 1'795'000'000'000'000'000;

TEST(nic_clock_map, real_time_stamps_are_taken_as_they_are) {
  nic_clock_map map;
  const std::int64_t now = epoch_2026_ns;
  // Before any sample, and with a counter fit that would move them by decades.
  EXPECT_EQ(map.to_realtime_ns(static_cast<std::uint64_t>(now - 3'000), now), now - 3'000);
  map.sample(5'000'000'000, now - 100'000'000);
  map.sample(5'100'000'000, now);
  ASSERT_TRUE(map.calibrated());
  EXPECT_EQ(map.to_realtime_ns(static_cast<std::uint64_t>(now - 3'000), now), now - 3'000);
  EXPECT_EQ(map.to_realtime_ns(static_cast<std::uint64_t>(now + 1'000'000), now), now + 1'000'000);
  // A counter value (seconds since the NIC started) is not wall-clock time.
  EXPECT_FALSE(nic_clock_map::is_realtime(5'100'000'000, now));
  EXPECT_EQ(map.to_realtime_ns(5'100'000'000, now), now);
}

// A PHC disciplined by ptp4l runs TAI: its real-time stamps are 37 s ahead of UTC (the
// TAI - UTC offset since 2017). With the host's offset they come back to UTC; a PHC kept
// on UTC (phc2sys -O 0) is still taken as it is.
TEST(nic_clock_map, tai_stamps_are_brought_back_to_utc_with_the_hosts_offset) {
  constexpr std::int64_t tai_utc_ns = 37'000'000'000;
  const std::int64_t now = epoch_2026_ns;
  const auto tai_stamp = static_cast<std::uint64_t>(now - 3'000 + tai_utc_ns);  // stamped 3 us before `now`
  const auto utc_stamp = static_cast<std::uint64_t>(now - 3'000);

  nic_clock_map unknown;  // the kernel's tai is 0: nobody told it
  EXPECT_EQ(unknown.tai_utc_offset_s(), 0);
  EXPECT_EQ(unknown.to_realtime_ns(tai_stamp, now), now - 3'000 + tai_utc_ns) << "no offset, no conversion";
  EXPECT_TRUE(nic_clock_map::looks_like_tai(tai_stamp, now)) << "so the caller can say the times are off";
  EXPECT_FALSE(nic_clock_map::looks_like_tai(utc_stamp, now));

  nic_clock_map map;
  map.set_tai_utc_offset_s(37);
  EXPECT_EQ(map.to_realtime_ns(tai_stamp, now), now - 3'000);
  EXPECT_EQ(map.to_realtime_ns(utc_stamp, now), now - 3'000) << "a PHC on UTC";
  // A stamp read late (a full ring, 100 ms) is still TAI; a UTC stamp 1 ms ahead (clock
  // steps between stamp and read) is still UTC.
  EXPECT_EQ(map.to_realtime_ns(static_cast<std::uint64_t>(now - 100'000'000 + tai_utc_ns), now), now - 100'000'000);
  EXPECT_EQ(map.to_realtime_ns(static_cast<std::uint64_t>(now + 1'000'000), now), now + 1'000'000);
  map.set_tai_utc_offset_s(-5);
  EXPECT_EQ(map.tai_utc_offset_s(), 0);
}

TEST(nic_clock_map, counter_stamps_wait_for_calibration) {
  nic_clock_map map;
  EXPECT_FALSE(map.to_realtime_ns(1'000, epoch_2026_ns).has_value());
  map.sample(1'000, epoch_2026_ns);
  EXPECT_FALSE(map.calibrated());
  map.sample(2'000, epoch_2026_ns + 1'000);
  EXPECT_TRUE(map.calibrated());
  EXPECT_EQ(map.to_realtime_ns(1'500, epoch_2026_ns + 2'000), epoch_2026_ns + 500);
}

TEST(nic_clock_map, a_counter_reset_restarts_the_fit) {
  nic_clock_map map;
  map.sample(10'000, epoch_2026_ns);
  map.sample(20'000, epoch_2026_ns + 10'000);
  map.sample(500, epoch_2026_ns + 20'000);  // went backwards
  EXPECT_FALSE(map.calibrated());
  map.sample(1'500, epoch_2026_ns + 21'000);
  EXPECT_EQ(map.to_realtime_ns(1'000, epoch_2026_ns + 30'000), epoch_2026_ns + 20'500);
}

// A NIC oscillator 37 ppm fast whose rate wanders by 1 ppm in 20 s; each
// sample's wall-clock read is late by 0-4 us (the read latency). Sampled every 100 ms.
// A packet stamped 1 s after the latest sample maps within 2 us; the two-point
// calibration over 50 ms at the start (what the capture used to do) is off by far more
// after 10 s of capture.
TEST(nic_clock_map, fitted_samples_hold_where_one_short_calibration_drifts) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> latency_ns(0, 4'000);
  const auto true_ns = [](double t_s) {  // wall clock at capture time t_s
    return static_cast<double>(epoch_2026_ns) + t_s * 1e9;
  };
  const auto ticks_at = [](double t_s) {  // NIC counter (1 GHz nominal) at t_s
    const double ppm = 37 + t_s / 20;
    return static_cast<std::uint64_t>(3e12 + t_s * 1e9 * (1 + ppm * 1e-6));
  };
  // The old calibration: two samples 50 ms apart at the start.
  const double t0 = 0, t1 = 0.05;
  const double n0 = true_ns(t0) + latency_ns(rng), n1 = true_ns(t1) + latency_ns(rng);
  const double old_rate = (n1 - n0) / static_cast<double>(ticks_at(t1) - ticks_at(t0));
  const auto old_map = [&](std::uint64_t ticks) {
    return n1 + static_cast<double>(static_cast<std::int64_t>(ticks - ticks_at(t1))) * old_rate;
  };

  nic_clock_map map(64);
  for (double t = 0; t <= 10.0; t += 0.1) map.sample(ticks_at(t), static_cast<std::int64_t>(true_ns(t) + latency_ns(rng)));
  const double packet_t = 11.0;
  const auto mapped = map.to_realtime_ns(ticks_at(packet_t), static_cast<std::int64_t>(true_ns(packet_t)));
  ASSERT_TRUE(mapped.has_value());
  // The samples' mean latency (2 us) is a constant offset no fit can see; beyond it:
  const double error_ns = static_cast<double>(*mapped) - true_ns(packet_t) - 2'000;
  EXPECT_LT(std::abs(error_ns), 2'000) << "fitted map off by " << error_ns << " ns";
  const double old_error_ns = old_map(ticks_at(packet_t)) - true_ns(packet_t);
  EXPECT_GT(std::abs(old_error_ns), 20'000) << "the two-point calibration is off by " << old_error_ns << " ns";
  EXPECT_NEAR(map.ns_per_tick(), 1 / (1 + 37.7e-6), 1e-6);
}

}  // namespace
}  // namespace rocelab::captures

// cpu_pin: the thread runs on the one CPU while held and gets back exactly the CPUs it had;
// a CPU it may not use is refused without touching its CPUs; leaving a start CPU that a
// higher real-time thread holds (the soft switch's) never strands the thread there.
#include "rocelab/traffic/soft_nic/cpu_pin.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "rocelab/common/realtime_section.hpp"

namespace rocelab::traffic::soft_nic {
namespace {

cpu_set_t cpus_now() {
  cpu_set_t s;
  CPU_ZERO(&s);
  EXPECT_EQ(::sched_getaffinity(0, sizeof s, &s), 0);
  return s;
}

TEST(cpu_pin, held_the_thread_runs_on_that_cpu_alone_and_released_it_has_its_cpus_back) {
  const cpu_set_t before = cpus_now();
  const int cpu = ::sched_getcpu();
  ASSERT_GE(cpu, 0);
  {
    cpu_pin pin(cpu);
    ASSERT_TRUE(pin.hold());
    const cpu_set_t held = cpus_now();
    EXPECT_EQ(CPU_COUNT(&held), 1);
    EXPECT_TRUE(CPU_ISSET(cpu, &held));
    EXPECT_EQ(::sched_getcpu(), cpu);
    EXPECT_TRUE(pin.hold()) << "holding twice keeps the first hold's CPUs to give back";
    pin.release();
    EXPECT_FALSE(pin.held());
    cpu_set_t after = cpus_now();
    EXPECT_TRUE(CPU_EQUAL(&after, &before));
    ASSERT_TRUE(pin.hold());
  }
  cpu_set_t after = cpus_now();
  EXPECT_TRUE(CPU_EQUAL(&after, &before)) << "a pin going out of scope gives the CPUs back";
}

TEST(cpu_pin, a_cpu_the_thread_may_not_use_is_refused_and_its_cpus_stay) {
  const cpu_set_t before = cpus_now();
  int absent = -1;
  for (int c = CPU_SETSIZE - 1; c >= 0; --c)
    if (!CPU_ISSET(c, &before)) {
      absent = c;
      break;
    }
  ASSERT_GE(absent, 0);
  for (const int cpu : {absent, -1, CPU_SETSIZE}) {
    cpu_pin pin(cpu);
    EXPECT_FALSE(pin.hold()) << cpu;
    cpu_set_t after = cpus_now();
    EXPECT_TRUE(CPU_EQUAL(&after, &before)) << cpu;
  }
}

// A soft NIC pinned for an armed start to the CPU of the soft switch (SCHED_FIFO 50),
// boosted above it (60), goes back to its own CPU and to its priority below the switch
// (40) while the switch keeps that CPU busy. It must be gone before the switch gives the
// CPU up: the spinner standing for the switch spins until the thread has left or for at
// most 2 s, and reports which came first.
TEST(cpu_pin, leaving_the_switchs_cpu_needs_no_pause_of_the_switch) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (SCHED_FIFO)";
  const cpu_set_t original = cpus_now();
  int start_cpu = -1, own_cpu = -1;
  for (int c = 0; c < CPU_SETSIZE && own_cpu < 0; ++c)
    if (CPU_ISSET(c, &original)) (start_cpu < 0 ? start_cpu : own_cpu) = c;
  if (own_cpu < 0) GTEST_SKIP() << "needs two CPUs";
  cpu_set_t own;
  CPU_ZERO(&own);
  CPU_SET(own_cpu, &own);
  ASSERT_EQ(::sched_setaffinity(0, sizeof own, &own), 0);
  if (!set_thread_priority(60)) GTEST_SKIP() << "SCHED_FIFO refused";

  std::atomic<bool> spinning{false}, left{false}, gave_up{false};
  {
    cpu_pin pin(start_cpu);
    ASSERT_TRUE(pin.hold());
    // Created on start_cpu (the pin's), below this thread until it raises itself.
    std::thread switch_like([&] {
      if (!set_thread_priority(50)) {
        gave_up = true;
        spinning = true;
        return;
      }
      spinning = true;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (!left.load()) {
        if (std::chrono::steady_clock::now() > deadline) {
          gave_up = true;
          break;
        }
      }
    });
    // Sleep so the spinner gets start_cpu, bounded (it needs this thread off the CPU once).
    for (int i = 0; i < 20'000 && !spinning.load(); ++i) std::this_thread::sleep_for(std::chrono::microseconds(100));
    ASSERT_TRUE(spinning.load());
    leave_start_cpu(pin, 40);
    const bool back = ::sched_getcpu() == own_cpu;
    left = true;  // the spinner stops in any case
    switch_like.join();
    EXPECT_TRUE(back) << "not back on its own CPU";
    EXPECT_FALSE(gave_up.load()) << "the thread stayed on the switch's CPU until the switch gave it up";
    EXPECT_FALSE(pin.held());
  }
  (void)set_thread_priority(0);
  ASSERT_EQ(::sched_setaffinity(0, sizeof original, &original), 0);
}

}  // namespace
}  // namespace rocelab::traffic::soft_nic

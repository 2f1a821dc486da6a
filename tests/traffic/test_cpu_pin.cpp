// cpu_pin: the thread runs on the one CPU while held and gets back exactly the CPUs it had;
// a CPU it may not use is refused without touching its CPUs.
#include "rocelab/traffic/soft_nic/cpu_pin.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace rocelab::traffic::soft_nic

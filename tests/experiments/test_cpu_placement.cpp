// Where a virtual lab run puts its switch and its NICs (experiments/lab/cpu_placement.hpp).
#include "rocelab/experiments/lab/cpu_placement.hpp"

#include <gtest/gtest.h>

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rocelab::experiments {
namespace {

TEST(cpu_placement, the_switch_takes_the_last_cpu_and_the_nics_the_rest) {
  struct row {
    const char* name;
    std::vector<int> cpus;
    int switch_cpu;
    std::vector<int> nic_cpus;
  };
  for (const row& r : {row{"two cores", {0, 1}, 1, {0}}, row{"four", {0, 1, 2, 3}, 3, {0, 1, 2}},
                       row{"a cpuset with gaps", {2, 5, 7}, 7, {2, 5}}}) {
    const auto s = split_cpus(r.cpus);
    ASSERT_TRUE(s.has_value()) << r.name;
    EXPECT_EQ(s->switch_cpu, r.switch_cpu) << r.name;
    EXPECT_EQ(s->nic_cpus, r.nic_cpus) << r.name;
  }
  EXPECT_FALSE(split_cpus({0}).has_value()) << "one CPU: nothing to separate";
  EXPECT_FALSE(split_cpus({}).has_value());
}

std::vector<int> my_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

// This process as the "switch" of a placement is not possible (the placement moves its
// own process too), so a child stands in: it is held to the switch's CPU while the
// placement lives, this process to the NICs', and both get their masks back.
TEST(cpu_placement, holds_both_while_it_lives_and_puts_them_back) {
  const auto before = my_cpus();
  const auto split = split_cpus(before);
  if (!split) GTEST_SKIP() << "one CPU here: nothing to place";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  auto cpus_of = [](pid_t pid) {
    cpu_set_t set;
    CPU_ZERO(&set);
    (void)::sched_getaffinity(pid, sizeof set, &set);
    std::vector<int> out;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) out.push_back(c);
    return out;
  };
  {
    cpu_placement p(child, *split);
    EXPECT_TRUE(p.placed());
    EXPECT_EQ(cpus_of(child), std::vector<int>{split->switch_cpu});
    EXPECT_EQ(my_cpus(), split->nic_cpus);
    p.release_self();
    EXPECT_EQ(my_cpus(), before) << "the run's own threads are free again once the NICs started";
    EXPECT_EQ(cpus_of(child), std::vector<int>{split->switch_cpu}) << "the switch stays placed";
  }
  EXPECT_EQ(cpus_of(child), before);
  EXPECT_EQ(my_cpus(), before);
  ::kill(child, SIGKILL);
  (void)::waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace rocelab::experiments

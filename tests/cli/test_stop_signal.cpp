// The stop_signal guard: the first SIGINT or SIGTERM sets the flag a command polls; a
// second one ends the process at once with status 130, whatever the command is doing.
#include "../../cli/src/stop_signal.hpp"

#include <gtest/gtest.h>

#include <csignal>

namespace rocelab::cli {
namespace {

TEST(stop_signal, the_first_signal_asks_to_stop) {
  for (int sig : {SIGINT, SIGTERM}) {
    stop_signal stop;
    EXPECT_FALSE(stop.requested());
    ASSERT_EQ(::raise(sig), 0);
    EXPECT_TRUE(stop.requested());
  }
}

TEST(stop_signal_death, a_second_signal_exits_at_once) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (int second : {SIGINT, SIGTERM}) {
    EXPECT_EXIT(
        {
          stop_signal stop;
          (void)::raise(SIGINT);
          (void)::raise(second);
          // A command that does not poll (a long store, a stuck backend) never gets here.
          std::_Exit(0);
        },
        ::testing::ExitedWithCode(stop_signal::exit_status), "");
  }
}

}  // namespace
}  // namespace rocelab::cli

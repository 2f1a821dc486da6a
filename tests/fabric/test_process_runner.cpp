// The process runner the SONiC driver runs ssh with: argv as given, stdin beyond a pipe
// buffer, exit codes, stderr, missing programs and deadlines.
#include "rocelab/fabric/drivers/process_runner.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace rocelab::fabric::drivers {
namespace {

// ---- the process runner ssh goes through ----

TEST(process_runner, passes_argv_as_is_with_no_shell_in_between) {
  auto r = run_process({"printf", "%s|", "a b", "$HOME", ";reboot"}, "", std::chrono::seconds(10));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->out, "a b|$HOME|;reboot|");
}

TEST(process_runner, feeds_stdin_beyond_a_pipe_buffer_and_reads_everything_back) {
  const std::string input(3 << 20, 'x');
  auto r = run_process({"cat"}, input, std::chrono::seconds(30));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->out.size(), input.size());
}

TEST(process_runner, a_child_that_ignores_its_stdin_does_not_take_us_down) {
  auto r = run_process({"true"}, std::string(3 << 20, 'x'), std::chrono::seconds(30));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->exit_code, 0);
}

TEST(process_runner, reports_exit_codes_stderr_missing_programs_and_deadlines) {
  auto failed = run_process({"ls", "/nonexistent-rocelab-path"}, "", std::chrono::seconds(10));
  ASSERT_TRUE(failed.ok());
  EXPECT_NE(failed->exit_code, 0);
  EXPECT_NE(failed->err.find("nonexistent-rocelab-path"), std::string::npos);
  auto missing = run_process({"/nonexistent/program"}, "", std::chrono::seconds(10));
  EXPECT_EQ(missing.error().code(), error_code::not_found);
  auto slow = run_process({"sleep", "30"}, "", std::chrono::milliseconds(200));
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.error().code(), error_code::cancelled);
  EXPECT_NE(slow.error().message().find("sleep 30"), std::string::npos);
}

}  // namespace
}  // namespace rocelab::fabric::drivers

// The CLI's status line: drawn in place on a terminal, silent in a pipe and with --quiet.
// stderr is pointed at a pseudo-terminal or a pipe for each case and restored after.
#include "../../cli/src/progress_line.hpp"
#include "../../cli/src/run_progress_text.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <unistd.h>

#include <string>

namespace rocelab::cli {
namespace {

// Runs `body` with stderr on `fd`, then reads what reached `read_fd`.
template <typename Body>
std::string with_stderr_on(int fd, int read_fd, Body body) {
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(fd, STDERR_FILENO);
  body();
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::fcntl(read_fd, F_SETFL, O_NONBLOCK);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(read_fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

TEST(progress_line, on_a_terminal_it_redraws_in_place_and_ends_the_line) {
  int master = -1, slave = -1;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  const std::string out = with_stderr_on(slave, master, [] {
    progress_line p(false, std::chrono::hours(1));
    EXPECT_TRUE(p.shown());
    p.update("step 1 of 3", true);
    p.update("step 2 of 3");  // within the interval: not drawn
    p.update("step 3 of 3", true);
  });
  ::close(master);
  ::close(slave);
  EXPECT_NE(out.find("\r\033[Kstep 1 of 3"), std::string::npos) << out;
  EXPECT_EQ(out.find("step 2 of 3"), std::string::npos) << out;
  EXPECT_NE(out.find("\r\033[Kstep 3 of 3"), std::string::npos) << out;
  EXPECT_NE(out.find('\n'), std::string::npos) << "finish ends the line";
}

TEST(progress_line, in_a_pipe_or_quiet_it_writes_nothing) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string piped = with_stderr_on(fds[1], fds[0], [] {
    progress_line p;
    EXPECT_FALSE(p.shown());
    EXPECT_FALSE(p.due());
    p.update("step 1 of 3", true);
  });
  EXPECT_EQ(piped, "");
  ::close(fds[0]);
  ::close(fds[1]);

  int master = -1, slave = -1;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  const std::string quiet = with_stderr_on(slave, master, [] {
    progress_line p(true);
    EXPECT_FALSE(p.shown());
    p.update("step 1 of 3", true);
  });
  ::close(master);
  ::close(slave);
  EXPECT_EQ(quiet, "");
}

TEST(progress_line, a_virtual_run_shows_flows_elapsed_and_pauses_so_far) {
  EXPECT_EQ(virtual_run_progress_text({.completed = 3, .posted = 8, .pause_frames = 1234}, 2.25),
            "flows done 3 of 8 started, 2.2 s, pauses so far 1234");
  EXPECT_EQ(virtual_run_progress_text({.completed = 0, .posted = 8, .pause_frames = 0}, 0),
            "flows done 0 of 8 started, 0.0 s, pauses so far 0");
  EXPECT_EQ(virtual_run_progress_text({.completed = 8, .posted = 8, .pause_frames = std::nullopt}, 10), "flows done 8 of 8 started, 10.0 s")
      << "no pause count before the switch has answered";
}

}  // namespace
}  // namespace rocelab::cli

// `rocelab compare` and `rocelab buffers` with the built CLI: on a terminal their status
// line says "step i of n" up to "step n of n"; in a pipe, and with --quiet on a terminal,
// stderr carries no progress at all. stderr is a pseudo-terminal or a pipe the test reads.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

#include "../support/temp_dir.hpp"

namespace rocelab::cli {
namespace {

const std::string source = ROCELAB_SOURCE_DIR;

struct ran {
  int exit_code = -1;
  std::string err;  // everything written to stderr
};

// Runs the CLI with `args`, stdout to /dev/null and stderr on a pseudo-terminal (`tty`)
// or a pipe, and collects stderr until the command exits.
ran run_rocelab(const std::vector<std::string>& args, bool tty) {
  int read_fd = -1, write_fd = -1;
  if (tty) {
    if (::openpty(&read_fd, &write_fd, nullptr, nullptr, nullptr) != 0) return {};
  } else {
    int fds[2];
    if (::pipe(fds) != 0) return {};
    read_fd = fds[0];
    write_fd = fds[1];
  }
  std::vector<std::string> argv_text{std::string(ROCELAB_BINARY_DIR) + "/rocelab"};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null_fd = ::open("/dev/null", O_WRONLY);
    ::dup2(null_fd, STDOUT_FILENO);
    ::dup2(write_fd, STDERR_FILENO);
    ::close(read_fd);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(write_fd);
  ran out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(read_fd, buf, sizeof buf);
    if (n > 0) {
      out.err.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;  // end of the pipe, or EIO once the terminal's last writer has gone
  }
  ::close(read_fd);
  int status = 0;
  if (pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  return out;
}

struct command_case {
  const char* name;
  std::vector<std::string> args;  // the report directory is appended
  std::string first;              // the first step's line starts with this
  std::string last;
};

class step_progress : public ::testing::TestWithParam<command_case> {};

TEST_P(step_progress, a_terminal_sees_every_step_and_a_pipe_or_quiet_sees_none) {
  const command_case& c = GetParam();
  testing::temp_dir dir("step-progress");
  std::vector<std::string> args = c.args;
  // The same command three times into one directory: --force replaces the report.
  args.insert(args.end(), {"--out", dir.file("report"), "--force"});

  const ran on_tty = run_rocelab(args, true);
  ASSERT_EQ(on_tty.exit_code, 0) << on_tty.err;
  EXPECT_NE(on_tty.err.find("\r\033[K" + c.first), std::string::npos) << on_tty.err;
  EXPECT_NE(on_tty.err.find("\r\033[K" + c.last), std::string::npos) << on_tty.err;

  const ran piped = run_rocelab(args, false);
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(piped.err, "") << "a pipe gets no progress";

  args.push_back("--quiet");
  const ran quiet = run_rocelab(args, true);
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("step "), std::string::npos) << quiet.err;
}

INSTANTIATE_TEST_SUITE_P(
    commands, step_progress,
    ::testing::Values(
        // One fabric: the example's three workloads and its two scale points, five steps.
        command_case{"compare",
                     {"compare", source + "/examples/compare-fabrics.yaml", "--fabrics", "roce-default", "--no-store"},
                     "step 1 of 5: roce-default: allreduce",
                     "step 5 of 5: roce-default: scale 32 hosts"},
        // One profile, the two degree searches (no p99 target): two steps.
        command_case{"buffers",
                     {"buffers", source + "/examples/incast-16to1.yaml", "--profile",
                      source + "/examples/fabric-profiles/roce-shallow-buffer.yaml", "--max-degree", "4"},
                     "step 1 of 2: RoCEv2 shallow-buffer Ethernet: PFC on, 4-to-1",
                     "step 2 of 2: RoCEv2 shallow-buffer Ethernet: PFC off, 4-to-1"}),
    [](const ::testing::TestParamInfo<command_case>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace rocelab::cli

// spawn(): exit status, PATH lookup, redirection, which descriptors the program keeps,
// the parent-death signal, detaching, and the errors of each step. No privileges: joining
// a namespace is in lab_spawn.cpp.
#include "rocelab/common/spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "rocelab/common/unique_fd.hpp"

namespace rocelab {
namespace {

// Waits for `pid` (our child) at most about `limit`, then kills it; nullopt if it had to.
std::optional<int> wait_status(pid_t pid, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  int st = 0;
  for (auto left = limit; left.count() > 0; left -= std::chrono::milliseconds(10)) {
    const pid_t r = ::waitpid(pid, &st, WNOHANG);
    if (r == pid) return st;
    if (r < 0) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  (void)::waitpid(pid, &st, 0);
  return std::nullopt;
}

struct pipe_pair {
  unique_fd read_end, write_end;
  static pipe_pair make() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    return {unique_fd(fds[0]), unique_fd(fds[1])};
  }
};

// Everything until end-of-file (the write end must be closed here first).
std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return out;
  }
}

// Runs `script` with sh, its stdout captured; returns (exit status, stdout).
std::pair<std::optional<int>, std::string> run_sh(const std::string& script, spawn_options o = {}) {
  auto out = pipe_pair::make();
  o.argv = {"/bin/sh", "-c", script};
  o.stdout_fd = out.write_end.get();
  auto pid = spawn(o);
  EXPECT_TRUE(pid.ok()) << pid.error().message();
  if (!pid.ok()) return {std::nullopt, ""};
  out.write_end.reset();
  std::string text = read_all(out.read_end.get());
  return {wait_status(*pid), text};
}

TEST(spawn, exit_status_is_the_programs_own) {
  auto pid = spawn({.argv = {"/bin/sh", "-c", "exit 7"}});
  ASSERT_TRUE(pid.ok()) << pid.error().message();
  const auto st = wait_status(*pid);
  ASSERT_TRUE(st.has_value());
  ASSERT_TRUE(WIFEXITED(*st));
  EXPECT_EQ(WEXITSTATUS(*st), 7);
}

TEST(spawn, search_path_looks_the_program_up_on_path) {
  auto pid = spawn({.argv = {"sh", "-c", "exit 3"}, .search_path = true});
  ASSERT_TRUE(pid.ok()) << pid.error().message();
  const auto st = wait_status(*pid);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(WEXITSTATUS(*st), 3);
  // Without the lookup a bare name is a path relative to the working directory.
  auto bare = spawn({.argv = {"rl-spawn-no-such-program"}});
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.error().sys_errno(), ENOENT);
}

TEST(spawn, stdin_stdout_and_stderr_go_where_asked) {
  auto in = pipe_pair::make();
  auto out = pipe_pair::make();
  auto err = pipe_pair::make();
  auto pid = spawn({.argv = {"/bin/sh", "-c", "read line; echo \"out $line\"; echo \"err $line\" >&2"},
                    .stdin_fd = in.read_end.get(),
                    .stdout_fd = out.write_end.get(),
                    .stderr_fd = err.write_end.get()});
  ASSERT_TRUE(pid.ok()) << pid.error().message();
  in.read_end.reset();
  out.write_end.reset();
  err.write_end.reset();
  ASSERT_EQ(::write(in.write_end.get(), "x\n", 2), 2);
  in.write_end.reset();
  EXPECT_EQ(read_all(out.read_end.get()), "out x\n");
  EXPECT_EQ(read_all(err.read_end.get()), "err x\n");
  const auto st = wait_status(*pid);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(WEXITSTATUS(*st), 0);
}

TEST(spawn, only_the_descriptors_asked_for_survive) {
  // `leaked` has no O_CLOEXEC, so a plain exec would pass it on; `kept` has O_CLOEXEC, so
  // only keep_fds passes it on.
  // Numbers far above what a shell or its pipes use, so the check never mistakes one of
  // the shell's own descriptors for ours.
  const unique_fd opened(::open("/dev/null", O_RDONLY));
  const unique_fd leaked(::fcntl(opened.get(), F_DUPFD, 200));
  const unique_fd kept(::fcntl(opened.get(), F_DUPFD_CLOEXEC, 201));
  ASSERT_TRUE(leaked.valid());
  ASSERT_TRUE(kept.valid());
  const std::string leaked_fd = std::to_string(leaked.get()), kept_fd = std::to_string(kept.get());
  const auto [st, text] =
      run_sh("[ -e /proc/self/fd/" + leaked_fd + " ] && echo leaked; [ -e /proc/self/fd/" + kept_fd +
                 " ] && echo kept; exit 0",
             {.keep_fds = {kept.get()}});
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(text, "kept\n");
  // Without keep_fds nothing above stderr survives.
  const auto [st2, text2] = run_sh("ls /proc/$$/fd | sort -n | tr '\\n' ' '");
  ASSERT_TRUE(st2.has_value());
  for (const std::string& fd : {leaked_fd, kept_fd})
    EXPECT_EQ((" " + text2).find(" " + fd + " "), std::string::npos) << text2;
}

TEST(spawn, death_signal_reaches_the_program_when_the_spawning_thread_ends) {
  pid_t pid = -1;
  std::thread spawner([&] {
    auto p = spawn({.argv = {"/bin/sleep", "30"}, .death_signal = SIGTERM});
    ASSERT_TRUE(p.ok()) << p.error().message();
    pid = *p;
  });
  spawner.join();
  ASSERT_GT(pid, 0);
  const auto st = wait_status(pid);
  ASSERT_TRUE(st.has_value()) << "sleep 30 was still running: no death signal";
  ASSERT_TRUE(WIFSIGNALED(*st));
  EXPECT_EQ(WTERMSIG(*st), SIGTERM);
}

TEST(spawn, without_death_signal_the_program_outlives_the_spawning_thread) {
  pid_t pid = -1;
  std::thread spawner([&] {
    auto p = spawn({.argv = {"/bin/sleep", "30"}});
    ASSERT_TRUE(p.ok()) << p.error().message();
    pid = *p;
  });
  spawner.join();
  ASSERT_GT(pid, 0);
  EXPECT_FALSE(wait_status(pid, std::chrono::milliseconds(300)).has_value());  // killed by the helper
}

TEST(spawn, exec_failure_names_the_step_and_carries_errno) {
  auto pid = spawn({.argv = {"/nonexistent/rl-spawn-program", "arg"}});
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.error().code(), error_code::not_found);
  EXPECT_EQ(pid.error().sys_errno(), ENOENT);
  EXPECT_NE(pid.error().message().find("starting /nonexistent/rl-spawn-program: execv"), std::string::npos)
      << pid.error().message();
  // The failed child was reaped: no child is left.
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);

  auto not_executable = spawn({.argv = {"/dev/null"}});
  ASSERT_FALSE(not_executable.ok());
  EXPECT_EQ(not_executable.error().sys_errno(), EACCES);
}

TEST(spawn, a_missing_namespace_is_an_error_naming_its_path) {
  auto pid = spawn({.argv = {"/bin/true"}, .netns = "rl-spawn-missing"});
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.error().sys_errno(), ENOENT);
  EXPECT_NE(pid.error().message().find("/run/netns/rl-spawn-missing"), std::string::npos) << pid.error().message();
}

TEST(spawn, a_bad_descriptor_to_redirect_names_the_step) {
  auto pid = spawn({.argv = {"/bin/true"}, .stdout_fd = 100000});
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.error().code(), error_code::io_error);
  EXPECT_EQ(pid.error().sys_errno(), EBADF);
  EXPECT_NE(pid.error().message().find("on stdout"), std::string::npos) << pid.error().message();
}

TEST(spawn, invalid_requests_are_refused_before_forking) {
  EXPECT_EQ(spawn({}).error().code(), error_code::invalid_argument);
  EXPECT_EQ(spawn({.argv = {"/bin/true"}, .death_signal = SIGTERM, .detach = true}).error().code(),
            error_code::invalid_argument);
}

TEST(spawn, detached_program_is_in_its_own_session_and_not_our_child) {
  char dir_template[] = "/tmp/rl-spawn-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template, file = dir + "/pid";
  auto pid = spawn({.argv = {"/bin/sh", "-c", "echo $$ > " + file + ".tmp; mv " + file + ".tmp " + file + "; sleep 30"},
                    .detach = true});
  ASSERT_TRUE(pid.ok()) << pid.error().message();
  std::string seen;
  for (int i = 0; i < 2000 && seen.empty(); ++i) {
    std::ifstream in(file);
    std::getline(in, seen);
    if (seen.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(seen, std::to_string(*pid));
  EXPECT_NE(::getsid(*pid), ::getsid(0));  // setsid ran before it
  EXPECT_EQ(::waitpid(*pid, nullptr, WNOHANG), -1);  // init's child, not ours
  EXPECT_EQ(errno, ECHILD);
  ::kill(*pid, SIGKILL);
  std::remove(file.c_str());
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace rocelab

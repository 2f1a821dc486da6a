// spawn() into a named network namespace: the program runs in the namespace asked for,
// its own or a detached one, and a namespace that exists but cannot be joined is an error
// naming the step. The namespace is created here (rl-spawn-<pid>) and removed afterwards.
#include "rocelab/common/spawn.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "../support/test_netns.hpp"

namespace rocelab {
namespace {

using test::run_program;

class named_netns {
 public:
  named_netns() : name_("rl-spawn-" + std::to_string(::getpid())) {
    created_ = run_program({"ip", "netns", "add", name_});
  }
  named_netns(const named_netns&) = delete;
  named_netns& operator=(const named_netns&) = delete;
  ~named_netns() {
    if (created_.ok()) (void)run_program({"ip", "netns", "del", name_});
  }
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const status& created() const { return created_; }

 private:
  std::string name_;
  status created_;
};

// "net:[<inode>]" of a namespace file, as readlink(/proc/<pid>/ns/net) shows it.
std::string net_link_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "stat failed: " + path;
  return "net:[" + std::to_string(st.st_ino) + "]";
}

std::string read_all(int fd) {
  std::string out;
  char buf[512];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<std::size_t>(n));
  return out;
}

TEST(lab_spawn, program_runs_in_the_named_namespace) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const named_netns ns;
  ASSERT_TRUE(ns.created().ok()) << ns.created().message();
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  unique_fd rd(fds[0]), wr(fds[1]);
  auto pid = spawn({.argv = {"/bin/readlink", "/proc/self/ns/net"}, .netns = ns.name(), .stdout_fd = wr.get()});
  ASSERT_TRUE(pid.ok()) << pid.error().message();
  wr.reset();
  const std::string inside = read_all(rd.get());
  int st = 0;
  ASSERT_EQ(::waitpid(*pid, &st, 0), *pid);
  EXPECT_EQ(WEXITSTATUS(st), 0);
  EXPECT_EQ(inside, net_link_of(std::string(netns_directory) + "/" + ns.name()) + "\n");
  EXPECT_NE(inside, net_link_of("/proc/self/ns/net") + "\n");
}

TEST(lab_spawn, detached_program_runs_in_the_named_namespace) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const named_netns ns;
  ASSERT_TRUE(ns.created().ok()) << ns.created().message();
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  unique_fd rd(fds[0]), wr(fds[1]);
  auto pid = spawn({.argv = {"/bin/readlink", "/proc/self/ns/net"}, .netns = ns.name(), .stdout_fd = wr.get(),
                    .detach = true});
  ASSERT_TRUE(pid.ok()) << pid.error().message();
  wr.reset();
  EXPECT_EQ(read_all(rd.get()), net_link_of(std::string(netns_directory) + "/" + ns.name()) + "\n");
}

TEST(lab_spawn, a_file_that_is_not_a_namespace_fails_at_joining) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (writes /run/netns)";
  ASSERT_TRUE(run_program({"mkdir", "-p", netns_directory}).ok());
  const std::string name = "rl-spawn-file-" + std::to_string(::getpid());
  const std::string path = std::string(netns_directory) + "/" + name;
  {
    const unique_fd f(::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    ASSERT_TRUE(f.valid());
  }
  auto pid = spawn({.argv = {"/bin/true"}, .netns = name});
  ::unlink(path.c_str());
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.error().sys_errno(), EINVAL);
  EXPECT_NE(pid.error().message().find("joining network namespace " + name), std::string::npos)
      << pid.error().message();
}

}  // namespace
}  // namespace rocelab

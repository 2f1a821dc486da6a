// A controller under abuse: finished client runs are reaped as they end (the address space
// stays flat over remote runs), connections that have not authenticated are capped in total
// and per source with the oldest silent one shed at once (and one mid-handshake once it has
// had its grace, so a crowd of agents beyond the cap all get in),
// and running out of file descriptors neither spins nor locks clients out.
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <future>

#include "controller_test_support.hpp"
#include "rocelab/controller/client.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::controller {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::temp_dir;

const char* const tiny_spec =
    "name: ctl-tiny\nbackend: twin\nseed: 9\ntopology: {hosts: 3, link_gbps: 100}\n"
    "workload: {incast: {receiver: 0, senders: 2, flow_bytes: 16KiB}}\n";

std::size_t lines_of(const std::string& path) {
  std::ifstream f(path);
  std::size_t n = 0;
  for (std::string line; std::getline(f, line);) ++n;
  return n;
}

// A TCP connection to `port` on loopback that says nothing; -1 when it could not connect.
int idle_connection(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The peer closed it: a read sees end of stream (or a reset) at once.
bool closed_by_peer(int fd) {
  char b;
  const auto n = ::recv(fd, &b, 1, MSG_DONTWAIT | MSG_PEEK);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

result<protocol::run_finished> tiny_run(const std::string& address) {
  submit_options o;
  o.controller = address;
  o.token = test::test_token;
  o.reconnect_window = 0ms;
  return submit_spec(o, tiny_spec, "tiny.yaml", {});
}

TEST(client_sessions, finished_runs_are_reaped_so_remote_runs_leave_the_address_space_flat) {
  temp_dir dir("reap");
  auto c = controller::start(test::quick_controller_options(dir));
  ASSERT_TRUE(c.ok()) << c.error().message();
  const std::string address = (*c)->address();
  for (int i = 0; i < 10; ++i) {
    auto done = tiny_run(address);
    ASSERT_TRUE(done.ok()) << done.error().message();
    ASSERT_EQ(done->status, "completed") << done->error;
  }
  const std::size_t maps_before = lines_of("/proc/self/maps");
  constexpr int runs = 40;
  for (int i = 0; i < runs; ++i) {
    auto done = tiny_run(address);
    ASSERT_TRUE(done.ok()) << done.error().message();
    ASSERT_EQ(done->status, "completed") << done->error;
  }
  // A run thread left unjoined keeps its stack and guard page: two maps each, 80 here.
  EXPECT_TRUE(eventually([&] { return lines_of("/proc/self/maps") < maps_before + runs / 2; }, 5s))
      << lines_of("/proc/self/maps") << " maps after " << runs << " runs, " << maps_before << " before";
}

TEST(client_sessions, connections_that_do_not_authenticate_are_capped_oldest_shed_first) {
  temp_dir dir("cap");
  auto o = test::quick_controller_options(dir);
  o.max_unauthenticated = 4;
  o.unauthenticated_grace = 100ms;
  o.handshake_timeout = 60s;  // only the cap ends them in this test
  auto c = controller::start(o);
  ASSERT_TRUE(c.ok()) << c.error().message();
  std::vector<int> idle;
  for (int i = 0; i < 10; ++i) {
    idle.push_back(idle_connection((*c)->port()));
    ASSERT_GE(idle.back(), 0);
    // Accepted in this order, so "oldest" is well defined.
    ASSERT_TRUE(eventually([&] { return i < 4 || closed_by_peer(idle[static_cast<std::size_t>(i) - 4]); }, 5s)) << i;
  }
  for (std::size_t i = 0; i < idle.size(); ++i) EXPECT_EQ(closed_by_peer(idle[i]), i < 6) << "connection " << i;
  // An authenticating client gets in past the idle ones (shedding the oldest of them).
  auto done = tiny_run((*c)->address());
  ASSERT_TRUE(done.ok()) << done.error().message();
  EXPECT_EQ(done->status, "completed") << done->error;
  EXPECT_TRUE(closed_by_peer(idle[6]));
  for (int fd : idle) ::close(fd);
}

// Idle TCP connections (no byte sent for silent_grace) are the first shed at the cap:
// hundreds of them queued ahead of a token holder do not make its handshake wait past its
// 5 s (at one unauthenticated_grace per cap's worth of them it would wait 600 / 64 s).
TEST(client_sessions, idle_connections_ahead_of_a_token_holder_do_not_keep_it_out) {
  temp_dir dir("idle-flood");
  auto o = test::quick_controller_options(dir);
  o.max_unauthenticated = 64;
  auto c = controller::start(o);
  ASSERT_TRUE(c.ok()) << c.error().message();
  std::vector<int> idle;
  for (int i = 0; i < 600; ++i) {
    idle.push_back(idle_connection((*c)->port()));
    ASSERT_GE(idle.back(), 0);
  }
  auto done = tiny_run((*c)->address());
  ASSERT_TRUE(done.ok()) << done.error().message();
  EXPECT_EQ(done->status, "completed") << done->error;
  std::size_t shed = 0;
  for (int fd : idle) shed += closed_by_peer(fd) ? 1 : 0;
  EXPECT_GE(shed, 600u - 64u) << "idle connections left open past the cap";
  for (int fd : idle) ::close(fd);
}

// One address may hold at most max_unauthenticated_per_source of them, its oldest silent
// one shed first, however far below the total cap.
TEST(client_sessions, one_source_past_its_own_cap_loses_its_oldest_silent_connections) {
  temp_dir dir("per-source");
  auto o = test::quick_controller_options(dir);
  o.max_unauthenticated = 64;
  o.max_unauthenticated_per_source = 4;
  o.handshake_timeout = 60s;  // only the cap ends them in this test
  auto c = controller::start(o);
  ASSERT_TRUE(c.ok()) << c.error().message();
  std::vector<int> idle;
  for (int i = 0; i < 10; ++i) {
    idle.push_back(idle_connection((*c)->port()));
    ASSERT_GE(idle.back(), 0);
    ASSERT_TRUE(eventually([&] { return i < 4 || closed_by_peer(idle[static_cast<std::size_t>(i) - 4]); }, 5s)) << i;
  }
  for (std::size_t i = 0; i < idle.size(); ++i) EXPECT_EQ(closed_by_peer(idle[i]), i < 6) << "connection " << i;
  auto done = tiny_run((*c)->address());
  ASSERT_TRUE(done.ok()) << done.error().message();
  EXPECT_EQ(done->status, "completed") << done->error;
  for (int fd : idle) ::close(fd);
}

// A controller restarting in a lab has every agent reconnecting at once, far beyond the
// cap: they wait in the listen backlog and each handshake begun is let finish, so every
// agent gets in on its first connection. (Shedding the oldest at once, as for idle
// connections, closed the handshakes furthest along: few agents got in per round.)
TEST(client_sessions, a_crowd_of_agents_beyond_the_cap_all_get_in_without_being_shed) {
  temp_dir dir("crowd");
  auto o = test::quick_controller_options(dir);
  o.max_unauthenticated = 4;
  o.unauthenticated_grace = 30s;  // no handshake here needs long; none may be cut short
  auto c = controller::start(o);
  ASSERT_TRUE(c.ok()) << c.error().message();
  test::agent_pool pool;
  // The agents' thread is held until all 48 are made, so they connect together.
  std::promise<void> all_made;
  boost::asio::post(pool.io(), [made = all_made.get_future().share()] { made.wait(); });
  std::vector<std::string> names;
  std::vector<std::shared_ptr<agents::agent::agent>> crowd;
  for (int i = 0; i < 48; ++i) {
    names.push_back("crowd" + std::to_string(i));
    crowd.push_back(pool.add((*c)->address(), names.back()));
    if (!crowd.back()) all_made.set_value();
    ASSERT_TRUE(crowd.back()) << names.back();
  }
  all_made.set_value();
  ASSERT_TRUE((*c)->wait_for_agents(names, 60s));
  for (std::size_t i = 0; i < crowd.size(); ++i) {
    const auto st = crowd[i]->stats();
    EXPECT_EQ(st.connect_failures, 0u) << names[i] << ": " << st.last_error;
    EXPECT_EQ(st.connects, 1u) << names[i];
  }
}

// CPU seconds (user + system) of a process, from /proc/PID/stat.
double cpu_seconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(f, line);
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// The child: a controller limited to 40 descriptors whose idle connections time out only
// after a minute.
[[noreturn]] void small_fd_table_controller(const temp_dir& dir, int to_parent) {
  rlimit limit{40, 40};
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) ::_exit(10);
  auto o = test::quick_controller_options(dir);
  o.handshake_timeout = 60s;
  auto c = controller::start(o);
  if (!c) ::_exit(11);
  const std::string port = std::to_string((*c)->port()) + "\n";
  if (::write(to_parent, port.data(), port.size()) < 0) ::_exit(12);
  while (true) ::pause();  // the parent kills us
}

TEST(client_sessions, out_of_descriptors_the_controller_backs_off_and_still_serves_a_client) {
  temp_dir dir("emfile");
  const auto forked = test::fork_controller([&](int to_parent) { small_fd_table_controller(dir, to_parent); });
  const pid_t child = forked.pid;
  ASSERT_GT(forked.port, 0) << "controller did not start";
  const std::uint16_t port = forked.port;

  // 60 idle connections: more than the controller's descriptors; the kernel queues the rest.
  std::vector<int> idle;
  for (int i = 0; i < 60; ++i) {
    idle.push_back(idle_connection(port));
    ASSERT_GE(idle.back(), 0);
  }
  std::this_thread::sleep_for(300ms);
  // A controller retrying a failing accept at once burns a core; one that backs off, none.
  const double cpu_before = cpu_seconds(child);
  const auto window = 2s;
  std::this_thread::sleep_for(window);
  const double cpu_used = cpu_seconds(child) - cpu_before;
  EXPECT_LT(cpu_used, 0.1 * std::chrono::duration<double>(window).count()) << cpu_used << " s of CPU while idle";

  auto done = tiny_run("127.0.0.1:" + std::to_string(port));
  EXPECT_TRUE(done.ok()) << done.error().message();
  if (done) {
    EXPECT_EQ(done->status, "completed") << done->error;
  }

  for (int fd : idle) ::close(fd);
  ::kill(child, SIGKILL);
  int wstatus = 0;
  ::waitpid(child, &wstatus, 0);
}

}  // namespace
}  // namespace rocelab::controller

// A controller fed 1,000 garbage connections and 100 idle ones still serves a run, and its
// resident memory, threads, descriptors and maps stay flat over remote runs: after 200 runs
// within 10% of after 20. Resident, not virtual: glibc reserves 64 MiB of address space
// for each malloc arena and opens another whenever two threads allocate at once (a run's
// thread ending as the next one starts), which is reservation, not growth; a leak shows
// in the pages it fills. Loopback only; the controller runs in a forked child so /proc shows it
// alone. Label lab: 201 twin runs of the smallest spec, about 7 s on 2 shared cores.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "controller_test_support.hpp"
#include "rocelab/controller/client.hpp"
#include "rocelab/protocol/messages.hpp"

namespace rocelab::controller {
namespace {

using namespace std::chrono_literals;
using test::eventually;
using test::temp_dir;

const char* const tiny_spec =
    "name: ctl-soak\nbackend: twin\nseed: 9\ntopology: {hosts: 3, link_gbps: 100}\n"
    "workload: {incast: {receiver: 0, senders: 2, flow_bytes: 16KiB}}\n";

struct footprint {
  long rss_kb = 0;
  long threads = 0;
  std::size_t fds = 0;
  std::size_t maps = 0;
};

footprint footprint_of(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  footprint f;
  std::ifstream status(proc + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0)
      f.rss_kb = std::stol(line.substr(6));
    else if (line.rfind("Threads:", 0) == 0)
      f.threads = std::stol(line.substr(8));
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(proc + "/fd")) ++f.fds;
  std::ifstream maps(proc + "/maps");
  for (std::string line; std::getline(maps, line);) ++f.maps;
  return f;
}

int connect_loopback(std::uint16_t port) {
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

// Garbage of several shapes: random bytes, a rocelab frame header announcing a huge body,
// a TLS record header announcing a huge record, plain text.
std::vector<std::uint8_t> garbage(std::mt19937& rng, int i) {
  std::vector<std::uint8_t> b;
  switch (i % 4) {
    case 0: b = {0xff, 0xff, 0xff, 0xff, 0, protocol::protocol_version, 0, 1}; break;
    case 1: b = {0x16, 0x03, 0x01, 0xff, 0xff}; break;
    case 2: for (char c : std::string("GET / HTTP/1.0\r\n\r\n")) b.push_back(static_cast<std::uint8_t>(c)); break;
    default: break;
  }
  const std::size_t extra = rng() % 2048;
  for (std::size_t k = 0; k < extra; ++k) b.push_back(static_cast<std::uint8_t>(rng()));
  return b;
}

result<protocol::run_finished> tiny_run(const std::string& address) {
  submit_options o;
  o.controller = address;
  o.token = test::test_token;
  o.reconnect_window = 0ms;
  return submit_spec(o, tiny_spec, "soak.yaml", {});
}

[[noreturn]] void controller_child(const temp_dir& dir, int to_parent) {
  auto o = test::quick_controller_options(dir);
  o.handshake_timeout = 2s;
  auto c = controller::start(o);
  if (!c) ::_exit(10);
  const std::string port = std::to_string((*c)->port()) + "\n";
  if (::write(to_parent, port.data(), port.size()) < 0) ::_exit(11);
  while (true) ::pause();
}

TEST(controller_soak, garbage_and_idle_connections_and_200_runs_leave_the_controller_flat) {
  temp_dir dir("soak");
  const auto forked = test::fork_controller([&](int to_parent) { controller_child(dir, to_parent); });
  const pid_t child = forked.pid;
  ASSERT_GT(forked.port, 0) << "controller did not start";
  const std::uint16_t port = forked.port;
  const std::string address = "127.0.0.1:" + std::to_string(port);

  std::mt19937 rng(23);
  for (int i = 0; i < 1000; ++i) {
    const int fd = connect_loopback(port);
    ASSERT_GE(fd, 0) << "garbage connection " << i;
    const auto bytes = garbage(rng, i);
    if (!bytes.empty()) (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    ::close(fd);
  }
  std::vector<int> idle;
  for (int i = 0; i < 100; ++i) {
    idle.push_back(connect_loopback(port));
    ASSERT_GE(idle.back(), 0) << "idle connection " << i;
  }
  auto served = tiny_run(address);
  ASSERT_TRUE(served.ok()) << served.error().message();
  EXPECT_EQ(served->status, "completed") << served->error;
  for (int fd : idle) ::close(fd);

  const auto runs = [&](int n) {
    for (int i = 0; i < n; ++i) {
      auto done = tiny_run(address);
      ASSERT_TRUE(done.ok()) << done.error().message();
      ASSERT_EQ(done->status, "completed") << done->error;
    }
  };
  // Settled: the last run's thread joined, the closed connections gone.
  const auto settled = [&] {
    std::this_thread::sleep_for(200ms);
    return footprint_of(child);
  };
  runs(20);
  const footprint after_20 = settled();
  runs(180);
  const footprint after_200 = settled();
  std::cout << "after 20 runs: VmRSS " << after_20.rss_kb << " kB, " << after_20.threads << " threads, "
            << after_20.fds << " fds, " << after_20.maps << " maps; after 200: " << after_200.rss_kb << " kB, "
            << after_200.threads << " threads, " << after_200.fds << " fds, " << after_200.maps << " maps\n";
  const auto within_10_percent = [](double later, double earlier) { return std::abs(later - earlier) <= 0.1 * earlier; };
  EXPECT_TRUE(within_10_percent(after_200.rss_kb, after_20.rss_kb)) << after_200.rss_kb << " vs " << after_20.rss_kb;
  EXPECT_EQ(after_200.threads, after_20.threads) << "a run's thread outlived its run";
  EXPECT_TRUE(within_10_percent(after_200.fds, after_20.fds)) << after_200.fds << " vs " << after_20.fds;
  EXPECT_TRUE(within_10_percent(after_200.maps, after_20.maps)) << after_200.maps << " vs " << after_20.maps;

  ::kill(child, SIGKILL);
  int wstatus = 0;
  ::waitpid(child, &wstatus, 0);
}

}  // namespace
}  // namespace rocelab::controller

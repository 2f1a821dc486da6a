#include "rocelab/agents/nic/ethtool_stats.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

namespace rocelab::agents::nic {
namespace {

// Runs `body` in a child process inside a fresh network namespace of its own (gone when
// the child exits, with every interface made in it); returns the child's exit code.
template <typename F>
int in_private_netns(F&& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::unshare(CLONE_NEWNET) != 0) ::_exit(100);
    ::_exit(body());
  }
  int wstatus = 0;
  if (::waitpid(pid, &wstatus, 0) != pid || !WIFEXITED(wstatus)) return 101;
  return WEXITSTATUS(wstatus);
}

int run(const std::vector<const char*>& argv) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execvp(argv[0], const_cast<char* const*>(argv.data()));
    ::_exit(127);
  }
  int wstatus = 0;
  ::waitpid(pid, &wstatus, 0);
  return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128;
}

class ethtool_stats_lab : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (a network namespace and a veth pair)";
  }
};

TEST_F(ethtool_stats_lab, reads_a_veth_drivers_statistics_by_name) {
  const int rc = in_private_netns([] {
    if (run({"ip", "link", "add", "rld-e0", "type", "veth", "peer", "name", "rld-e1", nullptr}) != 0) return 10;
    auto stats = read_ethtool_stats("rld-e0");
    if (!stats.ok()) return 11;
    // veth reports its peer's ifindex and per-queue XDP counters.
    const bool has_peer = std::any_of(stats->begin(), stats->end(), [](const nic_counter& c) {
      return c.name == "peer_ifindex" && c.value > 0;
    });
    return has_peer ? 0 : 12;
  });
  EXPECT_EQ(rc, 0) << "10: ip link add failed, 11: read failed, 12: no peer_ifindex";
}

TEST_F(ethtool_stats_lab, a_missing_interface_is_not_found) {
  const int rc = in_private_netns([] {
    auto stats = read_ethtool_stats("rld-nothing");
    return !stats.ok() && stats.error().code() == error_code::not_found ? 0 : 1;
  });
  EXPECT_EQ(rc, 0);
}

TEST(ethtool_stats, selects_the_congestion_counters) {
  for (const char* name : {"rx_prio3_pause", "tx_prio3_pause_duration", "rx_pause_ctrl_phy", "rx_discards_phy",
                           "rx_out_of_buffer", "rx_prio0_bytes"})
    EXPECT_TRUE(is_congestion_counter(name)) << name;
  for (const char* name : {"rx_bytes", "tx_packets", "link_down_events_phy", "peer_ifindex"})
    EXPECT_FALSE(is_congestion_counter(name)) << name;
}

}  // namespace
}  // namespace rocelab::agents::nic

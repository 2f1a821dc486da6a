// kill -9 of the controller in the middle of a run: the database passes
// PRAGMA integrity_check, the run is marked interrupted when the store is next opened, and
// the agent puts its settings back by itself (dead-man switch). The controller runs in a
// forked child (forked before this process starts any thread); the agent runs here.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>

#include "controller_test_support.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::controller {
namespace {

using namespace std::chrono_literals;

std::string read_knob(const std::filesystem::path& p) {
  std::string v;
  std::ifstream(p) >> v;
  return v;
}

// The child: a controller that applies a setting on h1 and then runs a long twin spec.
[[noreturn]] void controller_child(const test::temp_dir& dir, int to_parent) {
  auto c = controller::start(test::quick_controller_options(dir));
  if (!c) ::_exit(10);
  const std::string port = std::to_string((*c)->port()) + "\n";
  if (::write(to_parent, port.data(), port.size()) < 0) ::_exit(11);
  if (!(*c)->wait_for_agents({"h1"}, 20s, 1)) ::_exit(12);
  if (!(*c)->apply_settings("h1", "mlx5", {{test::mlx5_port, "roce_np/min_time_between_cnps", "50"}}, 5s)) ::_exit(13);
  auto spec = experiments::load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/leafspine-websearch.yaml");
  if (!spec) ::_exit(14);
  (void)experiments::apply_override(*spec, "twin.stop_ns=10s");
  if (::write(to_parent, "run\n", 4) < 0) ::_exit(11);
  (void)(*c)->run_spec(*spec, {});
  ::_exit(0);  // not reached in the test: the parent kills us first
}

TEST(crash, kill_9_mid_run_leaves_a_consistent_store_and_agents_restore_by_themselves) {
  test::temp_dir dir("crash");
  const auto knob = test::recorded_mlx5_sysfs(dir, "roce_np/min_time_between_cnps");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    controller_child(dir, fds[1]);
  }
  ::close(fds[1]);
  FILE* from_child = ::fdopen(fds[0], "r");
  char line[64] = {};
  ASSERT_TRUE(std::fgets(line, sizeof line, from_child)) << "controller did not start";
  const std::string address = "127.0.0.1:" + std::to_string(std::atoi(line));

  auto pool = std::make_unique<test::agent_pool>();
  auto agent = pool->add(address, "h1", 0, test::test_token, 800ms, (dir.path / "sys").string());
  ASSERT_TRUE(std::fgets(line, sizeof line, from_child)) << "controller did not reach the run";
  EXPECT_EQ(read_knob(knob), "50");

  // Wait (bounded) until the run is in the store as running, then kill -9.
  const std::string db = (dir.path / "runs.db").string();
  bool running = test::eventually([&] {
    auto s = store::run_store::open(db, store::open_mode::read_only);
    if (!s) return false;
    auto runs = s->runs();
    return runs && !runs->empty() && runs->back().status == store::run_status::running;
  });
  ASSERT_TRUE(running);
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int wstatus = 0;
  ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wstatus));
  std::fclose(from_child);

  // The database as the dead controller left it.
  EXPECT_EQ(test::integrity_check(db), "ok");

  // The next start marks the run interrupted.
  auto store = store::run_store::open(db);
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto runs = store->runs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->front().status, store::run_status::interrupted);

  // And the agent restored its setting without anyone asking.
  EXPECT_TRUE(test::eventually([&] { return read_knob(knob) == "4"; }));
  EXPECT_EQ(agent->stats().deadman_restores, 1u);
}

}  // namespace
}  // namespace rocelab::controller

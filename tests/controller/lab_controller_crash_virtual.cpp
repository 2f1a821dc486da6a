// kill -9 of a `rocelab controller` process in the middle of a virtual-lab run that its
// agents carry (root): the lab's agents (`lab up --controller`) stop their soft NICs by
// themselves once the controller is gone for the dead-man time, the store passes
// PRAGMA integrity_check, and the run is marked interrupted when the store is next opened.
// Everything runs as separate processes, as on a lab: controller, agents, `rocelab run
// --controller` as the client.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "controller_test_support.hpp"
#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/lab/virtual_backend.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::controller {
namespace {

using namespace std::chrono_literals;
namespace lab = agents::lab;

// fork + exec with stdout (and stderr) to `out_fd`.
pid_t spawn(std::vector<std::string> args, int out_fd) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_fd, 1);
    ::dup2(out_fd, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

TEST(lab_controller_crash, kill_9_mid_virtual_run_agents_stop_their_nics_and_the_store_is_sound) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth, AF_PACKET)";
  const std::string binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
  const std::string name = "rlk" + std::to_string(::getpid() % 100000);
  test::temp_dir dir("crashv");
  const std::string token_file = test::write_token_file(dir);
  const std::string db = (dir.path / "runs.db").string();
  const std::string controller_log = (dir.path / "controller.log").string();
  const int log_fd = ::open(controller_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(log_fd, 0);
  const pid_t controller = spawn({binary, "controller", "--listen", "127.0.0.1:0", "--db", db, "--token-file",
                                  token_file, "--lab", name, "--deadman-ms", "1500", "--heartbeat-ms", "100"},
                                 log_fd);
  ::close(log_fd);
  ASSERT_GT(controller, 0);
  // On a failed assertion before the test kills it, the controller must not outlive the
  // test (it would hold the lab's lock and the client's port).
  struct process_guard {
    pid_t pid;
    ~process_guard() {
      if (pid > 0 && ::kill(pid, SIGKILL) == 0) ::waitpid(pid, nullptr, 0);
    }
  } controller_guard{controller};
  std::string address;
  ASSERT_TRUE(test::eventually([&] {
    std::smatch m;
    const std::string text = slurp(controller_log);
    if (!std::regex_search(text, m, std::regex("listening on (127\\.0\\.0\\.1:[0-9]+)"))) return false;
    address = m[1];
    return true;
  })) << slurp(controller_log);

  auto spec = experiments::load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/virtual-incast-8to1.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  auto lo = experiments::lab_options_for(*spec, name, lab::default_state_root, binary);
  lo.controller = address;
  lo.token_file = token_file;
  auto up = lab::lab_up(lo);
  ASSERT_TRUE(up.ok()) << up.error().message();
  struct lab_guard {
    std::string name;
    ~lab_guard() { (void)lab::lab_down(name); }
  } guard{name};
  for (const auto& h : up->hosts)
    ASSERT_TRUE(test::eventually([&] { return slurp(h.agent_log).find("registered with") != std::string::npos; }, 20s))
        << h.name << ": " << slurp(h.agent_log);

  // The client: flows that outlast the kill and the dead-man time: 8 x 32 MiB through one
  // 0.5 Gb/s port take 4.3 s at line rate. Flows that end on their own before an agent's
  // dead-man switch fires leave it nothing to stop.
  const std::string client_log = (dir.path / "client.log").string();
  const int client_fd = ::open(client_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const pid_t client = spawn({binary, "run", std::string(ROCELAB_SOURCE_DIR) + "/examples/virtual-incast-8to1.yaml",
                              "--set", "workload.incast.flow_bytes=32MiB", "--set", "workload.incast.rounds=1",
                              "--controller", address, "--token-file", token_file, "--reconnect-s", "3"},
                             client_fd);
  ::close(client_fd);
  // Mid-run: every agent runs its NIC (a child of the agent) and the run is in the store.
  ASSERT_TRUE(test::eventually(
      [&] {
        for (const auto& h : up->hosts)
          if (test::children_of(h.agent_pid).empty()) return false;
        return true;
      },
      20s))
      << "the agents' NICs never started; client: " << slurp(client_log);
  std::this_thread::sleep_for(500ms);
  ASSERT_EQ(::kill(controller, SIGKILL), 0);
  int ws = 0;
  ASSERT_EQ(::waitpid(controller, &ws, 0), controller);
  controller_guard.pid = 0;

  // The agents' dead-man switch (1.5 s, from the controller's welcome) stops their NICs.
  for (const auto& h : up->hosts)
    EXPECT_TRUE(test::eventually([&] { return test::children_of(h.agent_pid).empty(); }, 15s))
        << h.name << "'s NIC still runs without a controller; agent log: " << slurp(h.agent_log);
  EXPECT_NE(slurp(up->hosts[1].agent_log).find("dead-man switch"), std::string::npos) << slurp(up->hosts[1].agent_log);

  // The client learns its controller is gone and, when it does not come back within the
  // client's reconnect window (3 s here), fails.
  EXPECT_TRUE(test::eventually([&] { return ::waitpid(client, &ws, WNOHANG) == client; }, 15s));
  EXPECT_TRUE(WIFEXITED(ws) && WEXITSTATUS(ws) != 0) << slurp(client_log);

  EXPECT_EQ(test::integrity_check(db), "ok");
  auto store = store::run_store::open(db);  // the next start marks the run interrupted
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto runs = store->runs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->front().status, store::run_status::interrupted);
}

}  // namespace
}  // namespace rocelab::controller

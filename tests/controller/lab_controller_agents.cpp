// backend virtual through controller and agents (root), as a lab engineer runs it:
//   rocelab controller ...; rocelab lab up --controller ADDR --token-file F; rocelab run SPEC
// `lab up --controller` starts one `rocelab agent` process per host; the controller runs
// each host's soft NIC as a soft job on that host's agent and relays its lines. Pinned here:
//   - a spec runs to completion through the agents, its records land in the store, and
//     the switch settings the run changed on the (reused) lab are put back afterwards;
//   - kill -9 of one agent mid-run: the run is partial and names it, the other hosts'
//     flows complete and are stored, the other agents stay registered, and the dead
//     agent's NIC stops by itself (it reads EOF).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "controller_test_support.hpp"
#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/common/realtime_section.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/lab/virtual_backend.hpp"
#include "rocelab/fabric/soft_switch/control_client.hpp"
#include "rocelab/store/run_store.hpp"
#include "rocelab/traffic/soft_nic/nic_fleet.hpp"

namespace rocelab::controller {
namespace {

using namespace std::chrono_literals;
namespace lab = agents::lab;

bool process_alive(pid_t pid) { return ::kill(pid, 0) == 0; }

class lab_controller_agents : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth, AF_PACKET)";
    name_ = "rla" + std::to_string(::getpid() % 100000);
    auto spec = experiments::load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/virtual-incast-8to1.yaml");
    ASSERT_TRUE(spec.ok()) << spec.error().message();
    spec_ = *spec;
    auto o = test::lab_controller_options(dir_);
    o.virtual_options.lab_name = name_;
    o.virtual_options.rocelab_binary = binary_;
    o.virtual_options.capture_dpdk = std::getenv("ROCELAB_TEST_PCAP") == nullptr;
    auto c = controller::start(o);
    ASSERT_TRUE(c.ok()) << c.error().message();
    controller_ = std::move(*c);
    const std::string token_file = test::write_token_file(dir_);
    auto lo = experiments::lab_options_for(spec_, name_, lab::default_state_root, binary_);
    lo.controller = controller_->address();
    lo.token_file = token_file;
    auto up = lab::lab_up(lo);
    ASSERT_TRUE(up.ok()) << up.error().message();
    state_ = *up;
    for (const auto& h : state_.hosts) hosts_.push_back(h.name);
    ASSERT_TRUE(controller_->wait_for_agents(hosts_, 20s)) << "the lab's agents did not register";
  }
  void TearDown() override {
    if (!name_.empty()) {
      EXPECT_TRUE(lab::lab_down(name_).ok());
    }
  }

  nlohmann::json switch_config() {
    auto c = fabric::soft_switch::control_client::connect(state_.control_socket);
    if (!c) return {};
    auto r = c->call({{"op", "config"}});
    return r ? (*r)["config"] : nlohmann::json();
  }
  std::uint64_t switch_rx_packets(std::size_t port) {
    auto c = fabric::soft_switch::control_client::connect(state_.control_socket);
    if (!c) return 0;
    auto r = c->call({{"op", "counters"}});
    if (!r || !r->contains("ports") || (*r)["ports"].size() <= port) return 0;
    return (*r)["ports"][port].value("rx_packets", std::uint64_t{0});
  }

  const std::string binary_ = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
  test::temp_dir dir_{"agents"};
  std::string name_;
  experiments::experiment_spec spec_;
  std::unique_ptr<controller> controller_;
  lab::lab_state state_;
  std::vector<std::string> hosts_;
};

TEST_F(lab_controller_agents, spec_runs_through_the_lab_agents_and_the_switch_is_restored) {
  // A setting that differs from the lab's, so restoring it is visible.
  ASSERT_TRUE(experiments::apply_override(spec_, "switch.ecn.kmin_bytes=12KiB").ok());
  ASSERT_TRUE(experiments::apply_override(spec_, "workload.incast.rounds=1").ok());
  const auto before = switch_config();
  ASSERT_FALSE(before.is_null());
  auto out =
      controller_->run_spec(spec_, {"virtual-incast-8to1.yaml", {"switch.ecn.kmin_bytes=12KiB"}, {}, {}, {}, {}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->status, "completed") << out->error;
  EXPECT_EQ(switch_config(), before) << "the run's switch settings must be put back on a lab it did not bring up";
  EXPECT_TRUE(lab::lab_inspect(name_).switch_alive) << "a lab the run did not bring up stays up";

  // Through the agents: each ran its host's NIC as a soft job (its log is the agent's).
  for (const auto& h : state_.hosts) {
    bool found = false;
    for (const auto& e : std::filesystem::directory_iterator(state_.state_dir))
      found = found || e.path().filename().string().starts_with("nic-" + h.name + "-");
    EXPECT_TRUE(found) << "no soft job log of " << h.name << "'s agent in " << state_.state_dir;
  }

  auto store = store::run_store::open(controller_->db_path(), store::open_mode::read_only);
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto info = store->run(out->run);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->status, store::run_status::completed);
  auto records = store->load(out->run);
  ASSERT_TRUE(records.ok()) << records.error().message();
  ASSERT_EQ(records->flows.size(), 8u);
  for (const auto& f : records->flows) {
    EXPECT_TRUE(f.completed());
    EXPECT_GT(f.fct_ns, 0);
  }
}

TEST_F(lab_controller_agents, an_agent_killed_mid_run_makes_it_partial_and_keeps_the_rest) {
  // Flows long enough (8 x 16 MiB through one 0.5 Gb/s port: over two seconds, each
  // sender's share of it too) to kill an agent while its host sends, however evenly the
  // NICs share the port.
  ASSERT_TRUE(experiments::apply_override(spec_, "workload.incast.flow_bytes=16MiB").ok());
  ASSERT_TRUE(experiments::apply_override(spec_, "workload.incast.rounds=1").ok());
  const std::uint32_t victim = 3;  // h4, a sender
  const pid_t agent_pid = state_.hosts[victim].agent_pid;
  ASSERT_GT(agent_pid, 0);
  auto running = std::async(std::launch::async, [&] {
    return controller_->run_spec(spec_, {"virtual-incast-8to1.yaml", {}, {}, {}, {}, {}});
  });
  // Its NIC is the agent's child; kill the agent once that host's frames reach the switch.
  // The watch runs above the NICs, as the agents' relay does: a normal thread gets only
  // the RT-throttling remainder of the CPUs through the incast, and once killed the agent
  // after its flow had ended (every flow done, 2-3 s in).
  pid_t nic_pid = 0;
  bool sending = false;
  {
    const realtime_section watch(traffic::soft_nic::lab_relay_rt_priority);
    for (int i = 0; i < 1000 && !sending; ++i) {  // 20 s
      if (running.wait_for(20ms) == std::future_status::ready) break;
      if (nic_pid == 0)
        if (auto kids = test::children_of(agent_pid); !kids.empty()) nic_pid = kids.front();
      sending = nic_pid != 0 && switch_rx_packets(victim) > 100;
    }
    if (sending) {
      ASSERT_EQ(::kill(agent_pid, SIGKILL), 0);
    }
  }
  ASSERT_TRUE(sending) << "host " << state_.hosts[victim].name << " never sent";
  auto out = running.get();
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->status, "partial") << out->error;
  EXPECT_NE(out->error.find(state_.hosts[victim].name), std::string::npos) << out->error;

  // Its NIC read EOF on its command pipe and stopped by itself.
  bool nic_gone = false;
  for (int i = 0; i < 150 && !nic_gone; ++i) {
    nic_gone = !process_alive(nic_pid);
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(nic_gone) << "the killed agent's NIC (pid " << nic_pid << ") kept running";

  auto store = store::run_store::open(controller_->db_path(), store::open_mode::read_only);
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto info = store->run(out->run);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->status, store::run_status::partial);
  auto records = store->load(out->run);
  ASSERT_TRUE(records.ok()) << records.error().message();
  ASSERT_EQ(records->flows.size(), 8u);
  std::size_t others_done = 0, victim_done = 0;
  for (const auto& f : records->flows) {
    if (f.src == victim)
      victim_done += f.completed() ? 1 : 0;
    else
      others_done += f.completed() ? 1 : 0;
  }
  EXPECT_EQ(others_done, 7u) << "the other senders' flows complete";
  EXPECT_EQ(victim_done, 0u) << "the killed host's flow cannot have completed";

  EXPECT_FALSE(records->counters.empty()) << "switch and NIC counters of the others";

  std::vector<std::string> others;
  for (const auto& h : hosts_)
    if (h != state_.hosts[victim].name) others.push_back(h);
  EXPECT_TRUE(controller_->wait_for_agents(others, 2s)) << "the other agents stay registered";
}

}  // namespace
}  // namespace rocelab::controller

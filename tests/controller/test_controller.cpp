#include "rocelab/controller/controller.hpp"

#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <map>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>

#include "controller_test_support.hpp"
#include "rocelab/controller/client.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/protocol/clock_datagram.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::controller {
namespace {

using namespace std::chrono_literals;
using test::agent_pool;
using test::eventually;
using test::temp_dir;

std::unique_ptr<controller> start_controller(const temp_dir& dir) {
  auto c = controller::start(test::quick_controller_options(dir));
  EXPECT_TRUE(c.ok()) << c.error().message();
  return c ? std::move(*c) : nullptr;
}

std::optional<agent_view> find_agent(const controller& c, const std::string& name) {
  for (auto& a : c.agents())
    if (a.name == name) return a;
  return std::nullopt;
}

// io_rt_priority: the thread serving the connections runs SCHED_FIFO at that priority with
// SCHED_RESET_ON_FORK (what it starts keeps the default policy); no other thread is raised.
TEST(controller, the_connection_thread_alone_takes_the_real_time_priority_and_passes_none_on) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (SCHED_FIFO)";
  temp_dir dir("rt");
  auto o = test::quick_controller_options(dir);
  o.io_rt_priority = 45;
  auto c = controller::start(o);
  ASSERT_TRUE(c.ok()) << c.error().message();
  ASSERT_TRUE(eventually([&] {
    int raised = 0, other_rt = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
      const auto tid = static_cast<pid_t>(std::stoi(e.path().filename().string()));
      const int policy = ::sched_getscheduler(tid);
      sched_param sp{};
      if (policy < 0 || ::sched_getparam(tid, &sp) != 0) continue;  // a thread that just ended
      if (policy == (SCHED_FIFO | SCHED_RESET_ON_FORK) && sp.sched_priority == 45)
        ++raised;
      else if ((policy & ~SCHED_RESET_ON_FORK) != SCHED_OTHER)
        ++other_rt;
    }
    return raised == 1 && other_rt == 0;
  }, 5s)) << "exactly one thread (the connection thread) at SCHED_FIFO 45 with SCHED_RESET_ON_FORK";
  EXPECT_EQ(::sched_getscheduler(0), SCHED_OTHER) << "the thread that started the controller keeps its policy";
}

TEST(controller, agents_register_and_their_clock_offsets_are_estimated) {
  temp_dir dir("reg");
  auto c = start_controller(dir);
  ASSERT_TRUE(c);
  agent_pool pool;
  // Offsets injected into the agents' clock sources: 3 s ahead, 750 ms behind, none.
  pool.add(c->address(), "h1", 3'000'000'000);
  pool.add(c->address(), "h2", -750'000'000);
  pool.add(c->address(), "h3", 0);
  ASSERT_TRUE(c->wait_for_agents({"h1", "h2", "h3"}, 10s, 8));
  const std::pair<const char*, double> expected[] = {{"h1", 3e9}, {"h2", -7.5e8}, {"h3", 0}};
  for (auto [name, offset] : expected) {
    auto a = find_agent(*c, name);
    ASSERT_TRUE(a) << name;
    EXPECT_TRUE(a->alive);
    // Both ends read the same CLOCK_MONOTONIC, so the only error is path asymmetry, which
    // the estimate bounds by its uncertainty (half the best round trip).
    EXPECT_LE(std::abs(a->clock_offset_ns - offset), a->clock_uncertainty_ns + 1.0)
        << name << ": offset " << a->clock_offset_ns << " uncertainty " << a->clock_uncertainty_ns;
    // Loopback: far below the injected offsets even on a loaded machine.
    EXPECT_LT(a->clock_uncertainty_ns, 250e6) << name;
  }
}

// The UDP clock service: the agents' offsets come from its exchanges (kernel timestamps)
// once they have any, and it answers no one else: a well-formed probe with a cookie no
// session was given, and a malformed datagram, get no answer.
TEST(controller, the_clock_service_sets_its_agents_offsets_and_answers_no_one_else) {
  temp_dir dir("udp-clock");
  auto c = start_controller(dir);
  ASSERT_TRUE(c);
  ASSERT_NE(c->clock_port(), 0) << "the clock service did not open";
  agent_pool pool;
  pool.add(c->address(), "h1", 2'000'000'000);
  ASSERT_TRUE(c->wait_for_agents({"h1"}, 10s, 4));
  std::optional<agent_view> a;
  ASSERT_TRUE(eventually([&] {
    a = find_agent(*c, "h1");
    return a && a->clock_probes == "udp";
  })) << "the offset never came from the clock service (" << (a ? a->clock_probes : "no agent") << ")";
  EXPECT_LE(std::abs(a->clock_offset_ns - 2e9), a->clock_uncertainty_ns + 1.0)
      << "offset " << a->clock_offset_ns << " uncertainty " << a->clock_uncertainty_ns;

  boost::asio::io_context io;
  boost::asio::ip::udp::socket stranger(io, boost::asio::ip::udp::endpoint(boost::asio::ip::udp::v4(), 0));
  const boost::asio::ip::udp::endpoint service(boost::asio::ip::make_address("127.0.0.1"), c->clock_port());
  const auto probe = protocol::encode(protocol::clock_datagram{protocol::clock_datagram_kind::probe, 0x5eed, 1, 0, 0});
  stranger.send_to(boost::asio::buffer(probe), service);
  const std::array<std::uint8_t, 5> junk{1, 2, 3, 4, 5};
  stranger.send_to(boost::asio::buffer(junk), service);
  stranger.non_blocking(true);
  std::array<std::uint8_t, 64> answer{};
  boost::system::error_code ec;
  std::size_t got = 0;
  // Bounded wait: the agent's exchanges above show the service answers within this.
  (void)eventually(
      [&] {
        got = stranger.receive(boost::asio::buffer(answer), 0, ec);
        return !ec;
      },
      300ms);
  EXPECT_TRUE(ec == boost::asio::error::would_block) << "a stranger got " << got << " bytes back";
  // The service is still there for its agent.
  a = find_agent(*c, "h1");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->clock_probes, "udp");
}

TEST(controller, jobs_start_at_one_instant_across_offset_clocks) {
  temp_dir dir("jobs");
  auto c = start_controller(dir);
  ASSERT_TRUE(c);
  agent_pool pool;
  const std::int64_t offsets[] = {5'000'000'000, -2'000'000'000, 0, 123'456'789};
  std::vector<std::string> names;
  for (int i = 0; i < 4; ++i) {
    names.push_back("h" + std::to_string(i + 1));
    pool.add(c->address(), names.back(), offsets[i]);
  }
  ASSERT_TRUE(c->wait_for_agents(names, 10s, 8));
  auto r = c->run_jobs(test::timer_plans(names, 5000), 10s);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->outcomes.size(), 4u);
  for (const auto& o : r->outcomes) {
    EXPECT_TRUE(o.reported) << o.agent << ": " << o.error;
    EXPECT_FALSE(o.lost);
    // Mapped back onto the controller's clock, every agent started at T0 or just after it;
    // a wrong mapping would be off by the injected seconds. (Bounds leave room for a
    // loaded machine: the offset error is at most the estimate's uncertainty.)
    EXPECT_GE(o.started_ns - r->t0_ns, -250'000'000) << o.agent;
    EXPECT_LT(o.started_ns - r->t0_ns, 1'000'000'000) << o.agent;
  }
}

TEST(controller, an_agent_lost_mid_job_is_reported_and_the_others_finish) {
  temp_dir dir("lost");
  auto opts = test::quick_controller_options(dir);
  opts.start_lead = 1500ms;  // time to kill one before the start instant
  auto c = controller::start(opts);
  ASSERT_TRUE(c.ok());
  agent_pool pool;
  auto h1 = pool.add((*c)->address(), "h1");
  auto h2 = pool.add((*c)->address(), "h2");
  ASSERT_TRUE((*c)->wait_for_agents({"h1", "h2"}, 10s, 4));
  std::vector<job_plan> plans(2);
  plans[0].agent = "h1";
  plans[1].agent = "h2";
  for (auto& p : plans) p.job.timeout_ms = 5000;
  std::thread killer([&] {
    std::this_thread::sleep_for(300ms);
    h2->stop();
  });
  auto r = (*c)->run_jobs(plans, 10s);
  killer.join();
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->outcomes[0].reported) << r->outcomes[0].error;
  EXPECT_TRUE(r->outcomes[1].lost);
  EXPECT_NE(r->outcomes[1].error.find("h2"), std::string::npos) << r->outcomes[1].error;
}

TEST(controller, settings_are_snapshotted_applied_and_restored) {
  temp_dir dir("settings");
  const auto knob = test::recorded_mlx5_sysfs(dir, "roce_np/min_time_between_cnps");
  auto c = start_controller(dir);
  ASSERT_TRUE(c);
  agent_pool pool;
  pool.add(c->address(), "h1", 0, test::test_token, 5000ms, (dir.path / "sys").string());
  ASSERT_TRUE(c->wait_for_agents({"h1"}, 10s, 1));
  auto prev = c->apply_settings("h1", "mlx5", {{test::mlx5_port, "roce_np/min_time_between_cnps", "20"}}, 5s);
  ASSERT_TRUE(prev.ok()) << prev.error().message();
  ASSERT_EQ(prev->size(), 1u);
  EXPECT_EQ((*prev)[0].value, "4");
  std::string v;
  std::ifstream(knob) >> v;
  EXPECT_EQ(v, "20");
  auto restored = c->restore_settings("h1", 5s);
  ASSERT_TRUE(restored.ok()) << restored.error().message();
  EXPECT_EQ(*restored, 1u);
  std::ifstream(knob) >> v;
  EXPECT_EQ(v, "4");
}

TEST(controller, settings_outside_the_knob_tree_are_refused) {
  temp_dir dir("refuse");
  const auto knob = test::recorded_mlx5_sysfs(dir, "roce_np/min_time_between_cnps");
  auto c = start_controller(dir);
  ASSERT_TRUE(c);
  agent_pool pool;
  pool.add(c->address(), "h1", 0, test::test_token, 5000ms, (dir.path / "sys").string());
  ASSERT_TRUE(c->wait_for_agents({"h1"}, 10s, 1));
  using protocol::setting;
  for (const setting& s : {setting{test::mlx5_port, "../../../../etc/passwd", "x"}, setting{"..", "roce_np/x", "1"},
                           setting{test::mlx5_port, "roce_np/../../x", "1"}, setting{test::mlx5_port, "roce_xx/knob", "1"}}) {
    auto r = c->apply_settings("h1", "mlx5", {s}, 5s);
    EXPECT_FALSE(r.ok()) << s.device << " " << s.name;
  }
  EXPECT_FALSE(c->apply_settings("h1", "shell", {{test::mlx5_port, "roce_np/x", "1"}}, 5s).ok());
  // Out of the DCQCN model's range: refused before anything is written.
  EXPECT_FALSE(c->apply_settings("h1", "mlx5", {{test::mlx5_port, "roce_np/min_time_between_cnps", "-5"}}, 5s).ok());
  std::string v;
  std::ifstream(knob) >> v;
  EXPECT_EQ(v, "4") << "nothing refused may be written";
}

TEST(controller, dead_man_switch_restores_settings_when_the_controller_is_gone) {
  temp_dir dir("deadman");
  const auto knob = test::recorded_mlx5_sysfs(dir, "roce_rp/rpg_time_reset");
  auto c = start_controller(dir);
  ASSERT_TRUE(c);
  agent_pool pool;
  auto a = pool.add(c->address(), "h1", 0, test::test_token, 400ms, (dir.path / "sys").string());
  ASSERT_TRUE(c->wait_for_agents({"h1"}, 10s, 1));
  ASSERT_TRUE(c->apply_settings("h1", "mlx5", {{test::mlx5_port, "roce_rp/rpg_time_reset", "50"}}, 5s).ok());
  std::string v;
  std::ifstream(knob) >> v;
  ASSERT_EQ(v, "50");
  c.reset();  // the controller goes away without restoring
  EXPECT_TRUE(eventually([&] {
    std::string now;
    std::ifstream(knob) >> now;
    return now == "300";
  }));
  EXPECT_EQ(a->stats().deadman_restores, 1u);
  EXPECT_EQ(a->stats().settings_restored, 1u);
}

TEST(controller, twin_run_goes_into_the_store) {
  temp_dir dir("twin");
  auto c = start_controller(dir);
  ASSERT_TRUE(c);
  auto spec = experiments::load_spec(
      "name: ctl-twin\nbackend: twin\nseed: 3\ntopology: {hosts: 5, link_gbps: 100}\n"
      "workload: {incast: {receiver: 0, senders: 4, flow_bytes: 64KiB}}\n",
      "inline.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  auto out = c->run_spec(*spec, {"inline.yaml", {}, {}, {}, {}, {}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->status, "completed");
  ASSERT_GT(out->run, 0);
  ASSERT_EQ(out->result.repeats.size(), 1u);
  EXPECT_EQ(out->result.repeats[0].flows.size(), 4u);

  auto store = store::run_store::open(c->db_path(), store::open_mode::read_only);
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto info = store->run(out->run);
  ASSERT_TRUE(info.ok()) << info.error().message();
  EXPECT_EQ(info->status, store::run_status::completed);
  EXPECT_EQ(info->backend, "twin");
  EXPECT_EQ(info->seed, 3u);
  auto records = store->load(out->run);
  ASSERT_TRUE(records.ok()) << records.error().message();
  EXPECT_EQ(records->flows.size(), 4u);
}

TEST(controller, a_client_submits_a_spec_and_gets_the_stored_run) {
  temp_dir dir("client");
  auto c = start_controller(dir);
  ASSERT_TRUE(c);
  submit_options o;
  o.controller = c->address();
  o.token = test::test_token;
  const std::string yaml =
      "name: ctl-client\nbackend: twin\nseed: 9\ntopology: {hosts: 3, link_gbps: 100}\n"
      "workload: {incast: {receiver: 0, senders: 2, flow_bytes: 16KiB}}\n";
  auto done = submit_spec(o, yaml, "client.yaml", {"seed=11"});
  ASSERT_TRUE(done.ok()) << done.error().message();
  EXPECT_EQ(done->status, "completed") << done->error;
  ASSERT_GT(done->run, 0);
  EXPECT_NE(done->summary_json.find("\"flows\""), std::string::npos) << done->summary_json;
  auto store = store::run_store::open(c->db_path(), store::open_mode::read_only);
  ASSERT_TRUE(store.ok());
  auto info = store->run(done->run);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->seed, 11u);  // the --set reached the run
  EXPECT_EQ(info->status, store::run_status::completed);

  auto bad = submit_spec(o, yaml, "client.yaml", {"switch.ecn.kmin_byte=20KiB"});
  ASSERT_TRUE(bad.ok()) << bad.error().message();
  EXPECT_EQ(bad->status, "failed");
  EXPECT_NE(bad->error.find("kmin_bytes"), std::string::npos) << bad->error;  // nearest valid key

  o.token = "not-the-token-but-long-enough";
  EXPECT_FALSE(submit_spec(o, yaml, "client.yaml", {}).ok());
}

// A client's run of three repeats is one stored run whose records keep their repeats, the
// second and third run on the same controller and store as well as the first.
TEST(controller, a_submitted_run_of_three_repeats_is_one_stored_run_with_repeats_0_1_and_2) {
  temp_dir dir("repeats");
  auto c = start_controller(dir);
  ASSERT_TRUE(c);
  submit_options o;
  o.controller = c->address();
  o.token = test::test_token;
  const std::string yaml =
      "name: ctl-repeats\nbackend: twin\nseed: 4\nrepeats: 3\ntopology: {hosts: 3, link_gbps: 100}\n"
      "workload: {incast: {receiver: 0, senders: 2, flow_bytes: 16KiB}}\n";
  std::vector<std::int64_t> ids;
  for (int round = 0; round < 3; ++round) {
    auto done = submit_spec(o, yaml, "repeats.yaml", {});
    ASSERT_TRUE(done.ok()) << done.error().message();
    EXPECT_EQ(done->status, "completed") << done->error;
    ids.push_back(done->run);
  }
  auto store = store::run_store::open(c->db_path(), store::open_mode::read_only);
  ASSERT_TRUE(store.ok());
  ASSERT_EQ(store->runs()->size(), 3u);
  for (const std::int64_t id : ids) {
    auto records = store->load(id);
    ASSERT_TRUE(records.ok()) << records.error().message();
    std::map<std::uint32_t, int> flows_per_repeat;
    for (const auto& f : records->flows) ++flows_per_repeat[f.repeat];
    EXPECT_EQ(flows_per_repeat, (std::map<std::uint32_t, int>{{0, 2}, {1, 2}, {2, 2}})) << "run " << id;
  }
}

// A long twin run: 16 x 1 GiB into one port, about 1.4 s of simulated traffic, tens of
// seconds of work; nothing in these tests lets it finish.
const char* const long_twin_spec =
    "name: ctl-long\nbackend: twin\nseed: 5\ntopology: {hosts: 17, link_gbps: 100}\n"
    "workload: {incast: {receiver: 0, senders: 16, flow_bytes: 1GiB}}\n";

// The runs of a store, read through a handle of our own (as a notebook would).
std::vector<store::run_info> stored_runs(const controller& c) {
  auto store = store::run_store::open(c.db_path(), store::open_mode::read_only);
  if (!store.ok()) return {};
  auto runs = store->runs();
  return runs.ok() ? *runs : std::vector<store::run_info>{};
}

TEST(controller, a_client_that_goes_away_cancels_its_run_which_is_stored_interrupted) {
  temp_dir dir("cancel");
  auto c = start_controller(dir);
  ASSERT_TRUE(c);
  submit_options o;
  o.controller = c->address();
  o.token = test::test_token;
  o.cancel_poll = 20ms;
  // Ctrl-C stands in: the client cancels once the controller has stored the run as
  // running, so the cancel always lands mid-run.
  o.cancel_requested = [&] {
    auto runs = stored_runs(*c);
    return !runs.empty() && runs.back().status == store::run_status::running;
  };
  auto done = submit_spec(o, long_twin_spec, "long.yaml", {});
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.error().code(), error_code::cancelled) << done.error().message();
  EXPECT_NE(done.error().message().find("interrupted"), std::string::npos) << done.error().message();

  // The controller notices the closed connection at its next poll and ends the run.
  ASSERT_TRUE(eventually([&] {
    auto runs = stored_runs(*c);
    return runs.size() == 1 && runs[0].status != store::run_status::running;
  }, 60s));
  auto store = store::run_store::open(c->db_path(), store::open_mode::read_only);
  ASSERT_TRUE(store.ok());
  auto info = store->runs()->at(0);
  EXPECT_EQ(info.status, store::run_status::interrupted);
  EXPECT_NE(info.error.find("cancelled"), std::string::npos) << info.error;
  auto records = store->load(info.id);
  ASSERT_TRUE(records.ok()) << records.error().message();
  // What ran is kept: the 16 flows, none of which could have finished.
  EXPECT_EQ(records->flows.size(), 16u);
  for (const auto& f : records->flows) EXPECT_FALSE(f.completed());
  EXPECT_TRUE(store->check_integrity().ok());
}

TEST(controller, a_run_cancelled_by_its_requester_is_stored_interrupted) {
  temp_dir dir("cancel-embedded");
  auto c = start_controller(dir);
  ASSERT_TRUE(c);
  auto spec = experiments::load_spec(long_twin_spec, "long.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  run_request request;
  int polls = 0;
  request.cancel_requested = [&] { return ++polls > 3; };  // the CLI's Ctrl-C flag stands in
  auto out = c->run_spec(*spec, request);
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->status, "interrupted");
  ASSERT_EQ(out->result.repeats.size(), 1u);
  auto store = store::run_store::open(c->db_path(), store::open_mode::read_only);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(store->run(out->run)->status, store::run_status::interrupted);
  EXPECT_EQ(store->load(out->run)->flows.size(), 16u);
}

TEST(controller, verbs_jobs_say_they_are_unavailable) {
  temp_dir dir("verbs");
  auto c = start_controller(dir);
  ASSERT_TRUE(c);
  agent_pool pool;
  pool.add(c->address(), "h1");
  ASSERT_TRUE(c->wait_for_agents({"h1"}, 10s, 4));
  job_plan p;
  p.agent = "h1";
  p.job.kind = protocol::job_kind::verbs;
  p.job.timeout_ms = 1000;
  auto r = c->run_jobs({p}, 5s);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->outcomes[0].reported);
  EXPECT_NE(r->outcomes[0].error.find("verbs"), std::string::npos) << r->outcomes[0].error;
}

}  // namespace
}  // namespace rocelab::controller

namespace rocelab::controller {
namespace {

// Two ConnectX hosts on a SONiC leaf, as a small hardware lab's inventory names them.
result<lab_inventory> two_mlx5_hosts_on_sonic() {
  return load_inventory(R"(
name: bench
switch: {name: sw1, driver: sonic, ports: [Ethernet0, Ethernet4, Ethernet48]}
hosts:
  - {name: gpu01, nic: {device: enp1s0f0np0, driver: mlx5, ip: 198.18.0.1}, switch_port: Ethernet0}
  - {name: gpu02, nic: {device: enp1s0f0np0, driver: mlx5, ip: 198.18.0.2}, switch_port: Ethernet4}
mirror: {session: everflow0, destination_port: Ethernet48}
capture: {host: cap01, device: eth1}
)",
                        "bench.yml");
}

// examples/incast-16to1.yaml on backend lab: one sender on two hosts, one DCQCN knob changed
// (roce_rp/rpg_time_reset, 300 in the recorded tree) for the run to set and restore.
result<experiments::experiment_spec> one_sender_lab_spec() {
  auto spec = experiments::load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/incast-16to1.yaml");
  if (!spec) return spec;
  for (const char* set : {"backend=lab", "topology.hosts=2", "workload.incast.senders=1",
                          "nic.dcqcn.rpg_time_reset=123"})
    if (auto st = experiments::apply_override(*spec, set); !st.ok()) return st.with_context(set);
  return spec;
}

// backend lab on this machine, which has no RDMA NIC: the run sets the hosts' DCQCN knobs
// through their agents (a recorded mlx5 tree here), starts a verbs job on each agent, and
// fails with the agents' own words ("no RDMA device found"); the knobs are back as they
// were, and the run is in the store as failed.
TEST(controller, a_lab_run_without_an_rdma_device_says_so_and_restores_the_nics) {
  temp_dir dir("labrun");
  const auto knob = test::recorded_mlx5_sysfs(dir, "roce_rp/rpg_time_reset");
  auto o = test::quick_controller_options(dir);
  auto inv = two_mlx5_hosts_on_sonic();
  ASSERT_TRUE(inv.ok()) << inv.error().message();
  o.inventory = *inv;
  o.switch_config_db = std::string(ROCELAB_SOURCE_DIR) + "/tests/data/bringup/config_db-lossless.json";
  auto c = controller::start(o);
  ASSERT_TRUE(c.ok()) << c.error().message();
  agent_pool pool;
  // Each agent on its own copy of the recorded tree would be closer to a lab; one tree
  // shared by both is enough to see every knob set and put back.
  pool.add((*c)->address(), "gpu01", 0, test::test_token, 5000ms, (dir.path / "sys").string());
  pool.add((*c)->address(), "gpu02", 0, test::test_token, 5000ms, (dir.path / "sys").string());
  ASSERT_TRUE((*c)->wait_for_agents({"gpu01", "gpu02"}, 10s, 1));
  for (const auto& a : (*c)->agents())
    if (std::find(a.transports.begin(), a.transports.end(), "verbs") != a.transports.end())
      GTEST_SKIP() << "this machine has an RDMA device; the lab run would really run";

  auto spec = one_sender_lab_spec();
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  ASSERT_TRUE(validate_against(*spec, *inv).ok());
  auto out = (*c)->run_spec(*spec, {"incast-16to1.yaml", {}, {}, {}, {}, {}});
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->status, "failed");
  EXPECT_NE(out->error.find("no RDMA device found"), std::string::npos) << out->error;
  std::string v;
  std::ifstream(knob) >> v;
  EXPECT_EQ(v, "300") << "the run's DCQCN knob must be restored";
}

// Partial fix 1 of issue 41: nothing sets the switch's lossless class for a lab run, so the
// lab backend reads the switch before T0 and refuses a switch that does not carry it
// (stock SONiC: DSCP 26 -> TC 1, PFC watchdog dropping), or one it cannot read -- before
// any NIC knob is touched.
TEST(controller, a_lab_run_on_a_switch_without_the_lossless_class_is_refused_before_t0) {
  struct case_t {
    const char* name;
    const char* config_db;  // under tests/data/bringup; empty: no switch source given
    const char* in_error;
  };
  const case_t cases[] = {
      {"stock SONiC", "config_db-stock.json", "FAIL dscp_map: Ethernet0: DSCP 26 -> TC 1"},
      {"stock SONiC's watchdog", "config_db-stock.json", "FAIL pfc_watchdog"},
      {"no way to read the switch", "", "--switch-ssh admin@SWITCH or --switch-config-db FILE"},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.name);
    temp_dir dir("labrun");
    const auto knob = test::recorded_mlx5_sysfs(dir, "roce_rp/rpg_time_reset");
    auto o = test::quick_controller_options(dir);
    auto inv = two_mlx5_hosts_on_sonic();
    ASSERT_TRUE(inv.ok()) << inv.error().message();
    o.inventory = *inv;
    if (*k.config_db) o.switch_config_db = std::string(ROCELAB_SOURCE_DIR) + "/tests/data/bringup/" + k.config_db;
    auto c = controller::start(o);
    ASSERT_TRUE(c.ok()) << c.error().message();
    agent_pool pool;
    pool.add((*c)->address(), "gpu01", 0, test::test_token, 5000ms, (dir.path / "sys").string());
    pool.add((*c)->address(), "gpu02", 0, test::test_token, 5000ms, (dir.path / "sys").string());
    ASSERT_TRUE((*c)->wait_for_agents({"gpu01", "gpu02"}, 10s, 1));
    auto spec = one_sender_lab_spec();
    ASSERT_TRUE(spec.ok()) << spec.error().message();
    auto out = (*c)->run_spec(*spec, {"incast-16to1.yaml", {}, {}, {}, {}, {}});
    ASSERT_TRUE(out.ok()) << out.error().message();
    EXPECT_EQ(out->status, "failed");
    EXPECT_NE(out->error.find(k.in_error), std::string::npos) << out->error;
    std::string v;
    std::ifstream(knob) >> v;
    EXPECT_EQ(v, "300") << "no NIC knob is touched before the switch is checked";
  }
}

}  // namespace
}  // namespace rocelab::controller

#include "rocelab/controller/worker.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "rocelab/common/spawn.hpp"
#include "rocelab/controller/client.hpp"
#include "rocelab/controller/controller.hpp"
#include "rocelab/store/run_store.hpp"
#include "rocelab/experiments/spec/spec.hpp"

// Real `rocelab worker` processes against a controller on loopback: every trial comes back
// with its records from a named worker; a worker killed in the middle of a trial has it
// re-run by another, and no trial lands twice; a twin run a client submits goes to a
// registered worker and is stored with where it ran.

namespace rocelab::controller {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string token = "rocelab-worker-test-token-0123456789";

// A twin run that takes a noticeable fraction of a second (long enough to kill its worker
// in the middle of it).
// `flow_bytes`: each sender's, which sets how long a worker takes over the trial.
std::string trial_spec(int seed, const std::string& flow_bytes = "4MiB") {
  return "name: worker-trial\nbackend: twin\nseed: " + std::to_string(seed) +
         "\nrepeats: 1\n"
         "topology: {type: single_switch, hosts: 9, link_gbps: 100}\n"
         "switch:\n  buffer_bytes: 1MiB\n  pfc: {enabled: true, priorities: [3]}\n"
         "  ecn: {enabled: true, queues: [3], kmin_bytes: 50KB, kmax_bytes: 400KB, pmax: 0.2}\n"
         "nic: {data_priority: 3, dcqcn: {enabled: true}}\n"
         "workload:\n  incast: {receiver: 0, senders: 8, flow_bytes: " + flow_bytes + ", start_jitter_ns: 2us}\n"
         "twin: {stop_ns: 2s}\n";
}

class workers_test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rocelab-workers-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    token_file_ = (dir_ / "token").string();
    std::ofstream(token_file_) << token << "\n";
    ::chmod(token_file_.c_str(), 0600);
    controller_options o;
    o.db_path = (dir_ / "c.db").string();
    o.token = token;
    o.log = false;
    auto c = controller::start(o);
    ASSERT_TRUE(c.ok()) << c.error().message();
    controller_ = std::move(*c);
  }
  void TearDown() override {
    controller_.reset();  // the workers see the session end and exit
    for (pid_t pid : pids_) {
      int st = 0;
      for (int i = 0; i < 250 && ::waitpid(pid, &st, WNOHANG) == 0; ++i) std::this_thread::sleep_for(20ms);
      if (::waitpid(pid, &st, WNOHANG) == 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &st, 0);
        ADD_FAILURE() << "worker " << pid << " did not exit when the controller closed";
      }
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  pid_t start_worker(const std::string& name) {
    spawn_options so;
    so.argv = {std::string(ROCELAB_BINARY_DIR) + "/rocelab", "worker", "--controller", controller_->address(),
               "--token-file", token_file_, "--name", name, "--quiet"};
    auto pid = spawn(so);
    EXPECT_TRUE(pid.ok()) << pid.error().message();
    if (pid) pids_.push_back(*pid);
    return pid ? *pid : -1;
  }

  fs::path dir_;
  std::string token_file_;
  std::unique_ptr<controller> controller_;
  std::vector<pid_t> pids_;
};

TEST_F(workers_test, every_trial_comes_back_with_records_from_a_named_worker) {
  start_worker("w1");
  start_worker("w2");
  ASSERT_TRUE(controller_->wait_for_workers(2, 30s));
  std::vector<std::future<remote_trial>> trials;
  for (int i = 0; i < 4; ++i)
    trials.push_back(std::async(std::launch::async, [this, i] {
      return controller_->run_trial({trial_spec(i + 1), "trial.yaml", static_cast<std::uint64_t>(i + 1), 1});
    }));
  std::set<std::string> workers;
  std::set<std::uint64_t> seeds;
  for (auto& f : trials) {
    remote_trial r = f.get();
    ASSERT_TRUE(r.completed) << r.error;
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.attempts, 1u);
    ASSERT_EQ(r.repeats.size(), 1u);
    EXPECT_EQ(r.repeats[0].records.backend, "twin");
    EXPECT_EQ(r.repeats[0].records.flows.size(), 8u);
    EXPECT_GT(r.repeats[0].records.simulated_ns, 0);
    EXPECT_FALSE(r.worker.host.empty());
    workers.insert(r.worker.name);
    seeds.insert(r.repeats[0].seed);
  }
  EXPECT_EQ(seeds, (std::set<std::uint64_t>{1, 2, 3, 4})) << "each trial's own spec ran";
  EXPECT_EQ(workers, (std::set<std::string>{"w1", "w2"})) << "both workers took trials";
}

TEST_F(workers_test, a_spec_that_names_a_file_is_refused_by_the_worker) {
  start_worker("w1");
  ASSERT_TRUE(controller_->wait_for_workers(1, 30s));
  std::string spec = trial_spec(1);
  const std::string incast = "start_jitter_ns: 2us}\n";
  spec.insert(spec.find(incast) + incast.size(), "  background: {cdf: /etc/passwd, load: 0.1, duration_ns: 10us}\n");
  remote_trial r = controller_->run_trial({spec, "files.yaml", 1, 1});
  EXPECT_TRUE(r.completed) << "the worker answered";
  EXPECT_NE(r.error.find("workload.background.cdf: names a file"), std::string::npos) << r.error;
  EXPECT_TRUE(r.repeats.empty());
}

TEST_F(workers_test, a_worker_killed_mid_trial_has_its_trial_rerun_elsewhere_once) {
  const pid_t doomed = start_worker("doomed");
  ASSERT_TRUE(controller_->wait_for_workers(1, 30s));
  // A trial long enough (~1 s of simulation work here) that the worker is still at it when the
  // kill lands, however late this thread sees it busy on a loaded machine.
  auto pending =
      std::async(std::launch::async, [this] { return controller_->run_trial({trial_spec(7, "512MiB"), "t.yaml", 7, 1}); });
  // Kill the worker while it runs the trial, once another is connected to take it over.
  bool busy = false;
  for (int i = 0; i < 500 && !busy; ++i) {
    for (const auto& w : controller_->workers()) busy = busy || (w.name == "doomed" && w.busy);
    if (!busy) std::this_thread::sleep_for(5ms);
  }
  ASSERT_TRUE(busy) << "the trial was never assigned";
  start_worker("rescuer");
  ASSERT_TRUE(controller_->wait_for_workers(2, 30s));
  ASSERT_EQ(::kill(doomed, SIGKILL), 0);
  remote_trial r = pending.get();
  ASSERT_TRUE(r.completed) << r.error;
  EXPECT_EQ(r.worker.name, "rescuer");
  EXPECT_EQ(r.attempts, 2u);
  ASSERT_EQ(r.repeats.size(), 1u);
  EXPECT_EQ(r.repeats[0].seed, 7u);
  // Exactly one result counted: the rescuer's (the dead worker is forgotten).
  std::map<std::string, std::uint32_t> done;
  for (const auto& w : controller_->workers()) done[w.name] = w.trials_done;
  EXPECT_EQ(done["doomed"], 0u);
  EXPECT_EQ(done["rescuer"], 1u);
}

// Nobody else could run it: the trial fails at once, saying why, and a client's run on it
// is stored failed with that reason instead of waiting for the client's own timeout.
TEST_F(workers_test, a_run_whose_only_worker_dies_fails_at_once_with_the_reason) {
  const pid_t only = start_worker("only");
  ASSERT_TRUE(controller_->wait_for_workers(1, 30s));
  submit_options so;
  so.controller = controller_->address();
  so.token = token;
  auto pending = std::async(std::launch::async, [&] { return submit_spec(so, trial_spec(9, "512MiB"), "only.yaml", {}); });
  bool busy = false;
  for (int i = 0; i < 1000 && !busy; ++i) {
    for (const auto& w : controller_->workers()) busy = busy || (w.name == "only" && w.busy);
    if (!busy) std::this_thread::sleep_for(5ms);
  }
  ASSERT_TRUE(busy) << "the run never reached the worker";
  ASSERT_EQ(::kill(only, SIGKILL), 0);
  if (pending.wait_for(20s) != std::future_status::ready) {
    ADD_FAILURE() << "the run still waited 20 s after its only worker died";
    controller_.reset();
  }
  auto done = pending.get();
  ASSERT_TRUE(done.ok()) << done.error().message();
  EXPECT_EQ(done->status, "failed");
  EXPECT_NE(done->error.find("worker only#1 lost"), std::string::npos) << done->error;
  EXPECT_NE(done->error.find("no other worker is connected"), std::string::npos) << done->error;
}

TEST_F(workers_test, a_trial_cancelled_while_no_worker_is_there_returns_cancelled) {
  std::atomic<bool> stop{false};
  auto pending = std::async(std::launch::async, [&] {
    return controller_->run_trial({trial_spec(1), "t.yaml", 1, 1}, [&] { return stop.load(); });
  });
  std::this_thread::sleep_for(100ms);
  stop = true;
  remote_trial r = pending.get();
  EXPECT_FALSE(r.completed);
  EXPECT_NE(r.error.find("cancelled"), std::string::npos) << r.error;
}

TEST_F(workers_test, twin_runs_a_client_submits_go_to_a_registered_worker_and_name_it) {
  submit_options so;
  so.controller = controller_->address();
  so.token = token;
  // No worker yet: the controller runs it itself.
  auto here = submit_spec(so, trial_spec(3), "here.yaml", {});
  ASSERT_TRUE(here.ok()) << here.error().message();
  ASSERT_EQ(here->status, "completed") << here->error;
  start_worker("w1");
  ASSERT_TRUE(controller_->wait_for_workers(1, 30s));
  // Second and third runs on the same controller and store: each on the worker.
  std::vector<std::int64_t> on_worker;
  for (int seed : {3, 4}) {
    auto done = submit_spec(so, trial_spec(seed), "there.yaml", {});
    ASSERT_TRUE(done.ok()) << done.error().message();
    ASSERT_EQ(done->status, "completed") << done->error;
    on_worker.push_back(done->run);
  }
  auto db = store::run_store::open(controller_->db_path(), store::open_mode::read_only);
  ASSERT_TRUE(db.ok()) << db.error().message();
  auto first = db->run(here->run);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->parameters.count("worker.name"), 0u) << "ran in the controller";
  for (std::int64_t id : on_worker) {
    auto info = db->run(id);
    ASSERT_TRUE(info.ok()) << info.error().message();
    EXPECT_EQ(info->parameters["worker.name"], "w1");
    EXPECT_EQ(info->parameters["worker.attempts"], "1");
    EXPECT_FALSE(info->parameters["worker.node"].empty());
    auto records = db->load(id);
    ASSERT_TRUE(records.ok()) << records.error().message();
    EXPECT_EQ(records->flows.size(), 8u);
  }
  // The twin is deterministic per seed: the worker's run of seed 3 is the controller's.
  auto a = db->load(here->run);
  auto b = db->load(on_worker[0]);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->flows.size(), b->flows.size());
  for (std::size_t i = 0; i < a->flows.size(); ++i) EXPECT_EQ(a->flows[i].fct_ns, b->flows[i].fct_ns);
  std::map<std::string, std::uint32_t> done;
  for (const auto& w : controller_->workers()) done[w.name] = w.trials_done;
  EXPECT_EQ(done["w1"], 2u);
}

}  // namespace
}  // namespace rocelab::controller

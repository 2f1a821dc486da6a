// Sweeps on a real Slurm (scripts/slurm-local: one node, Debian's slurmctld and slurmd):
// `rocelab tune --executor slurm` end to end, a worker's task cancelled mid-sweep, and
// SIGINT to the submitting command. Root (the fixture starts and stops Slurm; one that was
// already up is left up).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "rocelab/common/spawn.hpp"

namespace rocelab {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string source_dir = ROCELAB_SOURCE_DIR;
const std::string rocelab_bin = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
const std::string example = source_dir + "/examples/tune-incast.yaml";
// Heavier trials (about a second each) for the tests that act in the middle of a sweep.
const std::string slow = " --set workload.background.load=0.5 --set workload.background.duration_ns=5ms";

std::string shell(const std::string& cmd, int* rc = nullptr) {
  std::string out;
  FILE* p = ::popen(("{ " + cmd + "; } 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int st = ::pclose(p);
  if (rc) *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

class slurm_sweeps : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (::geteuid() != 0) return;
    int rc = 0;
    was_up_ = shell("sinfo -h -o %T", &rc).find("idle") != std::string::npos && rc == 0;
    const std::string out = shell(source_dir + "/scripts/slurm-local up", &rc);
    up_ = rc == 0;
    if (!up_) std::fprintf(stderr, "scripts/slurm-local up failed: %s\n", out.c_str());
  }
  static void TearDownTestSuite() {
    if (up_ && !was_up_) (void)shell(source_dir + "/scripts/slurm-local down");
  }
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (starts Slurm's daemons)";
    ASSERT_TRUE(up_) << "scripts/slurm-local up failed";
    dir_ = fs::temp_directory_path() / ("rocelab-slurm-sweep-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // `rocelab tune` in dir_, JSON on out.json, log on err.txt; its exit code.
  int tune(const std::string& args) {
    int rc = 0;
    (void)shell("cd " + dir_.string() + " && " + rocelab_bin + " tune " + args + " >out.json 2>err.txt", &rc);
    return rc;
  }
  // Started in the background; its pid.
  pid_t tune_in_background(const std::string& args) {
    spawn_options so;
    so.argv = {"/bin/sh", "-c", "cd " + dir_.string() + " && exec " + rocelab_bin + " tune " + args + " >out.json 2>err.txt"};
    auto pid = spawn(so);
    EXPECT_TRUE(pid.ok()) << pid.error().message();
    return pid ? *pid : -1;
  }
  nlohmann::json out_json() {
    auto j = nlohmann::json::parse(read_file(dir_ / "out.json"), nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << read_file(dir_ / "err.txt");
    return j;
  }
  std::string sql(const std::string& db, const std::string& q) {
    return shell("sqlite3 " + (dir_ / db).string() + " \"" + q + "\"");
  }
  int stored_trials(const std::string& db) {
    return std::atoi(sql(db, "SELECT count(*) FROM trials").c_str());
  }
  // The Slurm job the sweep submitted (from its log).
  std::string job_id() {
    const std::string log = read_file(dir_ / "err.txt");
    const std::string key = "Slurm job array ";
    const auto at = log.find(key);
    if (at == std::string::npos) return "";
    return log.substr(at + key.size(), log.find(' ', at + key.size()) - at - key.size());
  }
  std::string wait_for_job_and_trials(const std::string& db, int trials, std::chrono::seconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    std::string job;
    while (std::chrono::steady_clock::now() < until) {
      job = job_id();
      if (!job.empty() && fs::exists(dir_ / db) && stored_trials(db) >= trials) return job;
      std::this_thread::sleep_for(100ms);
    }
    return "";
  }

  fs::path dir_;
  static inline bool up_ = false;
  static inline bool was_up_ = false;
};

TEST_F(slurm_sweeps, sixteen_trials_on_two_slurm_workers_name_their_job_and_node_and_match_sequential) {
  ASSERT_EQ(tune(example + " --executor slurm --workers 2 --budget 16 --json --quiet --db s.db --fresh-seeds 2"), 0)
      << read_file(dir_ / "err.txt");
  const auto j = out_json();
  // 16 trials, and 8 more when the best of the 16 lay at a range's edge (docs/tuning.md).
  const std::size_t n = j["budget"];
  ASSERT_TRUE(n == 16u || (n == 24u && !j["best"]["widened"].empty())) << n;
  ASSERT_EQ(j["trials"].size(), n);
  const std::string job = j["executor"]["slurm_job"];
  ASSERT_FALSE(job.empty());
  std::set<std::string> tasks;
  for (const auto& t : j["trials"]) {
    ASSERT_TRUE(t.contains("placement")) << t.dump();
    const std::string task = t["placement"]["worker.slurm_job"];
    EXPECT_EQ(task.substr(0, task.find('_')), job);
    EXPECT_FALSE(t["placement"]["worker.node"].get<std::string>().empty());
    tasks.insert(task);
  }
  EXPECT_EQ(tasks.size(), 2u) << "both array tasks ran trials";
  // Stored with each trial's run.
  EXPECT_EQ(sql("s.db", "SELECT count(DISTINCT run) FROM parameters WHERE path='worker.slurm_job'"),
            std::to_string(n) + "\n");
  EXPECT_EQ(sql("s.db", "SELECT count(*) FROM parameters WHERE path='worker.node' AND value<>''"),
            std::to_string(n) + "\n");
  // The jobs ended by themselves, completed.
  for (const auto& line : j["executor"]["slurm_tasks"]) EXPECT_NE(line.get<std::string>().find("COMPLETED"), std::string::npos) << line;
  const std::string shown = shell("scontrol -o show job " + job);
  EXPECT_NE(shown.find("JobState=COMPLETED"), std::string::npos) << shown;
  EXPECT_EQ(shown.find("JobState=CANCELLED"), std::string::npos) << shown;
  EXPECT_EQ(shown.find("JobState=FAILED"), std::string::npos) << shown;

  // The same budget locally, one trial at a time: the batch result is within 5%.
  const double slurm_best = j["best"]["objective"];
  ASSERT_EQ(tune(example + " --jobs 1 --budget 16 --json --quiet --db q.db --fresh-seeds 2"), 0) << read_file(dir_ / "err.txt");
  const double sequential_best = out_json()["best"]["objective"];
  EXPECT_LE(slurm_best, sequential_best * 1.05) << "slurm " << slurm_best << " sequential " << sequential_best;
}

TEST_F(slurm_sweeps, a_cancelled_worker_task_has_its_trial_run_by_the_other_and_nothing_twice) {
  const pid_t pid = tune_in_background(example + slow + " --executor slurm --workers 2 --budget 16 --json --quiet --db c.db "
                                       "--fresh-seeds 2");
  const std::string job = wait_for_job_and_trials("c.db", 2, 120s);
  ASSERT_FALSE(job.empty()) << read_file(dir_ / "err.txt");
  ASSERT_LT(stored_trials("c.db"), 14) << "the sweep must still be running";
  (void)shell("scancel " + job + "_0");
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st));
  ASSERT_EQ(WEXITSTATUS(st), 0) << read_file(dir_ / "err.txt");
  const auto j = out_json();
  const std::size_t n = j["budget"];  // 16, or 24 when the best of 16 lay at an edge
  ASSERT_TRUE(n == 16u || (n == 24u && !j["best"]["widened"].empty())) << n;
  ASSERT_EQ(j["trials"].size(), n);
  std::set<int> indexes;
  std::map<std::string, int> by_task;
  for (const auto& t : j["trials"]) {
    indexes.insert(t["index"].get<int>());
    EXPECT_TRUE(t["evaluated"].get<bool>()) << t.dump();
    by_task[t["placement"]["worker.slurm_job"]]++;
  }
  EXPECT_EQ(indexes.size(), n);
  EXPECT_EQ(sql("c.db", "SELECT count(*), count(DISTINCT idx) FROM trials"),
            std::to_string(n) + "|" + std::to_string(n) + "\n");
  EXPECT_EQ(sql("c.db", "SELECT count(*) FROM parameters WHERE path='worker.slurm_job'"), std::to_string(n) + "\n")
      << "one stored run per trial: the re-run trial landed once";
  EXPECT_GT(by_task[job + "_1"], by_task[job + "_0"]) << "the surviving task ran the rest";
  const std::string shown = shell("scontrol -o show job " + job);
  EXPECT_NE(shown.find("JobState=CANCELLED"), std::string::npos) << shown;
}

TEST_F(slurm_sweeps, sigint_cancels_the_jobs_and_the_sweep_resumes_where_it_stopped) {
  const std::string args = example + slow + " --executor slurm --workers 2 --budget 16 --json --quiet --db i.db --fresh-seeds 2";
  const pid_t pid = tune_in_background(args);
  const std::string job = wait_for_job_and_trials("i.db", 2, 120s);
  ASSERT_FALSE(job.empty()) << read_file(dir_ / "err.txt");
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  const auto signalled = std::chrono::steady_clock::now();
  bool gone = false;
  while (!gone && std::chrono::steady_clock::now() - signalled < 10s) {
    gone = shell("squeue -h -j " + job + " -o %i").find(job) == std::string::npos;
    if (!gone) std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(gone) << "job " << job << " still in squeue 10 s after SIGINT";
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 130) << read_file(dir_ / "err.txt");
  const auto stopped = out_json();
  EXPECT_TRUE(stopped["interrupted"].get<bool>());
  const int kept = stored_trials("i.db");
  EXPECT_EQ(static_cast<int>(stopped["trials"].size()), kept);
  ASSERT_LT(kept, 16);
  EXPECT_EQ(sql("i.db", "SELECT count(*) FROM trials WHERE metrics_json LIKE '%cancelled%'"), "0\n")
      << "a trial cut short is not stored";

  // Run again: it resumes at the first trial not stored and completes the budget.
  ASSERT_EQ(tune(args), 0) << read_file(dir_ / "err.txt");
  EXPECT_NE(read_file(dir_ / "err.txt").find("resuming sweep"), std::string::npos);
  const auto done = out_json();
  EXPECT_EQ(done["resumed_trials"].get<int>(), kept);
  const std::size_t n = done["budget"];  // 16, or 24 when the best of 16 lay at an edge
  ASSERT_TRUE(n == 16u || (n == 24u && !done["best"]["widened"].empty())) << n;
  EXPECT_EQ(done["trials"].size(), n);
  EXPECT_EQ(sql("i.db", "SELECT count(*), count(DISTINCT idx) FROM trials"),
            std::to_string(n) + "|" + std::to_string(n) + "\n");
}

TEST_F(slurm_sweeps, compare_on_two_slurm_workers_gives_the_local_report) {
  const std::string base = rocelab_bin + " compare " + source_dir + "/examples/compare-fabrics.yaml --scale 64,128,256 "
                           "--no-store --json --quiet";
  int rc = 0;
  (void)shell("cd " + dir_.string() + " && " + base + " --out local >local.json 2>local.err", &rc);
  ASSERT_EQ(rc, 0) << read_file(dir_ / "local.err");
  (void)shell("cd " + dir_.string() + " && " + base + " --out slurm --executor slurm --workers 2 >slurm.json 2>slurm.err",
              &rc);
  ASSERT_EQ(rc, 0) << read_file(dir_ / "slurm.err");
  EXPECT_NE(read_file(dir_ / "slurm.err").find("Slurm job array"), std::string::npos) << "it ran on Slurm";
  const std::string local = read_file(dir_ / "local.json"), slurm = read_file(dir_ / "slurm.json");
  ASSERT_FALSE(local.empty());
  EXPECT_EQ(local, slurm);
}

TEST_F(slurm_sweeps, a_job_sbatch_refuses_is_an_error_with_sbatch_s_message) {
  const int rc = tune(example + " --executor slurm --workers 2 --budget 4 --json --quiet --db r.db --slurm-opt partition=nope");
  EXPECT_EQ(rc, 2);
  const std::string err = read_file(dir_ / "err.txt");
  EXPECT_NE(err.find("sbatch refused the job: sbatch: error: "), std::string::npos) << err;
  EXPECT_NE(err.find("partition"), std::string::npos) << err;
}

}  // namespace
}  // namespace rocelab

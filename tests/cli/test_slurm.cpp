#include "rocelab/cli/slurm.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "rocelab/cli/sweep_executor.hpp"

// The Slurm adapter on output recorded from Slurm 22.05 (Debian 12), and its errors: no
// Slurm on PATH, a job sbatch refuses (its message shown), an address the controller
// cannot listen on.

namespace rocelab::cli {
namespace {

namespace fs = std::filesystem;

TEST(slurm_parse, sbatch_parsable_gives_the_job_id) {
  EXPECT_EQ(*parse_sbatch_parsable("41\n"), "41");
  EXPECT_EQ(*parse_sbatch_parsable("1234;cluster\n"), "1234");
  EXPECT_EQ(*parse_sbatch_parsable("sbatch: warning: can't honor --ntasks-per-node\n77\n"), "77");
  auto bad = parse_sbatch_parsable("Submitted batch job\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("no job id"), std::string::npos);
}

TEST(slurm_parse, squeue_lines_with_an_array_range_pending) {
  const std::string out =
      "41_[2-3]|PENDING|(null)|Resources\n"
      "41_0|RUNNING|vm|None\n"
      "41_1|COMPLETING|vm|None\n"
      "garbage\n";
  auto tasks = parse_squeue(out);
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[0].id, "41_[2-3]");
  EXPECT_EQ(tasks[0].node, "");
  EXPECT_EQ(tasks[0].reason, "Resources");
  EXPECT_EQ(tasks[1].node, "vm");
  const auto n = count_tasks(tasks);
  EXPECT_EQ(n.pending, 2u);
  EXPECT_EQ(n.running, 2u);
  EXPECT_EQ(count_tasks(parse_squeue("50_[0-9%2]|PENDING|(null)|JobArrayTaskLimit\n")).pending, 10u);
  EXPECT_EQ(count_tasks(parse_squeue("")).pending, 0u);
}

TEST(slurm_parse, scontrol_show_job_one_line_per_task) {
  const std::string out =
      "JobId=42 ArrayJobId=41 ArrayTaskId=1 JobName=rocelab-sweep UserId=root(0) JobState=COMPLETED "
      "Reason=None Dependency=(null) ExitCode=0:0 NodeList=vm BatchHost=vm\n"
      "JobId=41 ArrayJobId=41 ArrayTaskId=0 JobName=rocelab-sweep JobState=CANCELLED Reason=None "
      "ExitCode=0:15 NodeList=vm\n"
      "JobId=43 JobName=x JobState=PENDING Reason=Priority ExitCode=0:0 NodeList=(null)\n";
  auto tasks = parse_scontrol_jobs(out);
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[0].id, "41_1");
  EXPECT_EQ(tasks[0].state, "COMPLETED");
  EXPECT_EQ(tasks[0].node, "vm");
  EXPECT_EQ(tasks[1].id, "41_0");
  EXPECT_EQ(tasks[1].state, "CANCELLED");
  EXPECT_EQ(tasks[2].id, "43");
  EXPECT_EQ(tasks[2].node, "");
}

class slurm_errors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rocelab-slurm-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void command(const std::string& name, const std::string& body) {
    const auto p = dir_ / name;
    std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
    ::chmod(p.c_str(), 0755);
  }
  fs::path dir_;
};

TEST_F(slurm_errors, no_sbatch_says_what_to_install) {
  slurm_commands s(dir_.string());  // an empty directory: no Slurm there
  auto r = s.submit({"--array=0-1"}, "#!/bin/sh\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), error_code::not_found);
  EXPECT_NE(r.error().message().find("Slurm's sbatch is not in"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find("slurm-client"), std::string::npos) << r.error().message();
}

TEST_F(slurm_errors, a_refused_job_shows_sbatch_s_own_message) {
  // sbatch's words for an unknown partition, as Slurm 22.05 prints them.
  command("sbatch", "cat >/dev/null\necho 'sbatch: error: Batch job submission failed: Invalid partition name specified' >&2\n"
                    "exit 1");
  slurm_commands s(dir_.string());
  auto r = s.submit({"--partition=nope"}, "#!/bin/sh\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("sbatch refused the job: sbatch: error: Batch job submission failed: Invalid partition"),
            std::string::npos)
      << r.error().message();
}

TEST_F(slurm_errors, the_batch_script_reaches_sbatch_s_stdin_and_its_arguments_pass_through) {
  command("sbatch", "cat > " + (dir_ / "script").string() + "\necho \"$@\" > " + (dir_ / "args").string() +
                        "\necho 99");
  slurm_commands s(dir_.string());
  auto r = s.submit({"--partition=debug", "--time=00:05:00"}, "#!/bin/sh\nexec srun true\n");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(*r, "99");
  std::string script, args;
  std::getline(std::ifstream(dir_ / "args"), args);
  EXPECT_EQ(args, "--parsable --partition=debug --time=00:05:00");
  std::ifstream in(dir_ / "script");
  script.assign(std::istreambuf_iterator<char>(in), {});
  EXPECT_EQ(script, "#!/bin/sh\nexec srun true\n");
}

TEST(sweep_executor_errors, an_address_the_controller_cannot_listen_on_is_named) {
  executor_options o;
  o.kind = executor_kind::local;
  o.workers = 1;
  o.listen = "198.18.0.77:0";  // not an address of this host
  o.db = (fs::temp_directory_path() / ("rocelab-exec-" + std::to_string(::getpid()) + ".db")).string();
  o.work_dir = (fs::temp_directory_path() / ("rocelab-exec-" + std::to_string(::getpid()))).string();
  auto e = sweep_executor::start(o);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message().find("--listen 198.18.0.77:0: the controller cannot listen there"), std::string::npos)
      << e.error().message();
  std::error_code ec;
  fs::remove_all(o.work_dir, ec);
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(o.db + suffix, ec);
}

// A sweep killed with kill -9 leaves .rocelab/sweeps/<pid>/token (the embedded controller's
// secret): the next executor started in that directory removes the directories of sweeps
// whose process is gone, and only those of the executor's shape.
TEST(sweep_executor_start, removes_the_token_directories_of_killed_sweeps_and_nothing_else) {
  const fs::path root = fs::temp_directory_path() / ("rocelab-killed-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(root, ec);
  const fs::path sweeps = root / ".rocelab" / "sweeps";
  // A process that really ran and is gone: its pid names the killed sweep's directory.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  const auto plant = [&](const std::string& name, std::vector<std::string> files) {
    fs::create_directories(sweeps / name);
    for (const auto& f : files) std::ofstream(sweeps / name / f) << "0123456789abcdef\n";
  };
  const std::string killed = std::to_string(child);
  plant(killed, {"token", "worker-0.log", "controller.db"});
  plant("2147483646", {"token"});                      // no such pid either
  plant(std::to_string(::getppid()), {"token"});       // alive
  plant("2147483645", {"worker-0.log"});               // ended by its sweep, kept for its logs
  plant("2147483644", {"token", "notes.txt"});         // not an executor's shape
  plant("sweep-a", {"token"});                         // not a pid
  plant("2147483643", {"token", "host"});              // another host's sweep
  std::ofstream(sweeps / "2147483643" / "host") << "some-other-host\n";
  fs::create_directories(root / "elsewhere");
  std::ofstream(root / "elsewhere" / "token") << "x\n";
  fs::create_directory_symlink(root / "elsewhere", sweeps / "2147483642");  // a symlink, not followed

  const fs::path before = fs::current_path();
  fs::current_path(root);
  executor_options o;
  o.kind = executor_kind::local;
  o.workers = 1;
  o.listen = "198.18.0.77:0";  // fails after the clean-up: no worker is started
  o.db = (root / "sweep.db").string();
  std::vector<std::string> logged;
  o.log = [&](const std::string& line) { logged.push_back(line); };
  auto e = sweep_executor::start(o);
  fs::current_path(before);
  EXPECT_FALSE(e.ok());

  EXPECT_FALSE(fs::exists(sweeps / killed)) << "a killed sweep's token and logs are removed";
  EXPECT_FALSE(fs::exists(sweeps / "2147483646"));
  EXPECT_TRUE(fs::exists(sweeps / std::to_string(::getppid()) / "token"));
  EXPECT_TRUE(fs::exists(sweeps / "2147483645" / "worker-0.log"));
  EXPECT_TRUE(fs::exists(sweeps / "2147483644" / "token"));
  EXPECT_TRUE(fs::exists(sweeps / "sweep-a" / "token"));
  EXPECT_TRUE(fs::exists(sweeps / "2147483643" / "token"));
  EXPECT_TRUE(fs::is_symlink(sweeps / "2147483642"));
  EXPECT_TRUE(fs::exists(root / "elsewhere" / "token"));
  bool said = false;
  for (const auto& line : logged) said = said || line.find("sweeps/" + killed) != std::string::npos;
  EXPECT_TRUE(said) << "the removal is logged";
  fs::remove_all(root, ec);
}

TEST(sweep_executor_errors, an_unknown_executor_is_refused) {
  auto k = parse_executor("kubernetes");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.error().message().find("expected local or slurm"), std::string::npos);
}

}  // namespace
}  // namespace rocelab::cli

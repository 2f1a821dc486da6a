// `rocelab run --hpcc config.txt [--seed N]` end to end, by the built CLI: the seed picks
// the twin's ECN draws, so a scenario can be run as several samples (as ns-3 is with
// RngRun), and one seed always gives the same records.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../support/text_file.hpp"

namespace rocelab::experiments {
namespace {

namespace fs = std::filesystem;

using testing::read_text;

class hpcc_run_command : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rlr-hpcc-cli-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // The config names its files relative to the working directory, as ns-3 reads them.
    fs::copy(fs::path(ROCELAB_SHARED_DIR) / "scenarios/hpcc-ns3/incast16_buf2MB", dir_ / "scenario",
             fs::copy_options::recursive);
  }
  void TearDown() override { fs::remove_all(dir_); }

  int run(const std::string& args) {
    const std::string cmd = "cd " + (dir_ / "scenario").string() + " && " + std::string(ROCELAB_BINARY_DIR) +
                            "/rocelab run " + args + " >" + (dir_ / "log").string() + " 2>&1";
    const int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  std::string fct_of(const std::string& seed_args, const std::string& out) {
    EXPECT_EQ(run("--hpcc config.txt " + seed_args + " --out " + (dir_ / out).string()), 0) << read_text(dir_ / "log");
    return read_text(dir_ / out / "fct.txt");
  }

  fs::path dir_;
};

TEST_F(hpcc_run_command, SeedSelectsTheEcnDrawsAndRepeatsExactly) {
  const std::string default_seed = fct_of("", "default");
  const std::string seed1 = fct_of("--seed 1", "seed1");
  const std::string seed2 = fct_of("--seed 2", "seed2");
  const std::string seed2_again = fct_of("--seed 2", "seed2-again");
  ASSERT_FALSE(seed1.empty());
  EXPECT_EQ(default_seed, seed1) << "the default seed is 1";
  EXPECT_EQ(seed2, seed2_again) << "one seed, one result";
  // 3.9% of this scenario's data packets are ECN-marked by random draws, which move the
  // flows' completion times.
  EXPECT_NE(seed1, seed2);
  EXPECT_NE(read_text(dir_ / "seed2" / "summary.json").find("\"seed\": 2"), std::string::npos)
      << read_text(dir_ / "seed2" / "summary.json");
}

TEST_F(hpcc_run_command, SeedWithoutHpccOrZeroIsRefused) {
  EXPECT_EQ(run(std::string(ROCELAB_SOURCE_DIR) + "/examples/incast-16to1.yaml --seed 3"), 2);
  EXPECT_NE(read_text(dir_ / "log").find("--set seed=N"), std::string::npos) << read_text(dir_ / "log");
  EXPECT_NE(run("--hpcc config.txt --seed 0"), 0);
}

}  // namespace
}  // namespace rocelab::experiments

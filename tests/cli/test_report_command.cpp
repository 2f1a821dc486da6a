#include "rocelab/experiments/report/report.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../support/text_file.hpp"

#include "../experiments/correlation_scenarios.hpp"
#include "rocelab/store/run_store.hpp"

// `rocelab report RUN --db FILE --out DIR` end to end: a twin run stored with its resolved
// spec in a real SQLite store, reported by the built CLI.

namespace rocelab::experiments {
namespace {

namespace fs = std::filesystem;

using testing::read_text;

int run_cli(const std::string& args, const fs::path& log) {
  const std::string cmd = std::string(ROCELAB_BINARY_DIR) + "/rocelab report " + args + " >" + log.string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

class report_command : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rlr-report-cli-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = dir_ / "runs.db";
    auto store = store::run_store::open(db_.string());
    ASSERT_TRUE(store.ok()) << store.error().message();
    const auto t = scenarios::two_incasts_and_bystanders();
    store::new_run nr;
    nr.name = "pfc-spreading";
    nr.backend = "twin";
    nr.seed = t.config.seed;
    nr.spec_yaml = scenarios::leaf_spine_yaml;
    auto id = store->begin_run(nr);
    ASSERT_TRUE(id.ok()) << id.error().message();
    ASSERT_TRUE(store->append(*id, t.records).ok());
    ASSERT_TRUE(store->finish(*id, store::run_status::completed).ok());
    run_ = *id;
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_, db_;
  std::int64_t run_ = 0;
};

TEST_F(report_command, writes_the_report_of_a_stored_twin_run) {
  const fs::path out = dir_ / "report";
  ASSERT_EQ(run_cli(std::to_string(run_) + " --db " + db_.string() + " --out " + out.string(), dir_ / "log"), 0)
      << read_text(dir_ / "log");
  const std::string log = read_text(dir_ / "log");
  EXPECT_NE(log.find("victims     2 flows"), std::string::npos) << log;
  EXPECT_NE(log.find("twin routing"), std::string::npos) << log;
  const std::string html = read_text(out / "report.html");
  EXPECT_NE(html.find("id=\"plot-pause-timeline\""), std::string::npos);
  EXPECT_NE(html.find("<td>completed</td>"), std::string::npos) << "the store's run status";
  const std::string victims = read_text(out / "victims.csv");
  // Hosts named as the spec counts them, from h0.
  EXPECT_NE(victims.find("6,h6,h12,"), std::string::npos) << victims;
  EXPECT_NE(victims.find("7,h7,h13,"), std::string::npos) << victims;
}

TEST_F(report_command, an_unknown_run_is_a_usage_error) {
  EXPECT_EQ(run_cli("999 --db " + db_.string() + " --out " + (dir_ / "x").string(), dir_ / "log"), 2)
      << read_text(dir_ / "log");
  EXPECT_FALSE(fs::exists(dir_ / "x" / "report.html"));
}

}  // namespace
}  // namespace rocelab::experiments

// `rocelab` runs analyze itself and hands every other command line to rocelab-full beside
// it (cli/src/dispatch/main.cpp): analyze starts without the hardware libraries, every other
// command behaves as before, and a missing rocelab-full is an error that says so.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "rocelab/captures/capture_file.hpp"

namespace rocelab::cli {
namespace {

namespace fs = std::filesystem;

struct ran {
  int exit_code;
  std::string output;
};

class dispatch : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rlr-cli-dispatch-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto writer = captures::pcapng_writer::create((dir_ / "one.pcapng").string(), {{}});
    ASSERT_TRUE(writer.ok()) << writer.error().message();
    const std::vector<std::uint8_t> frame(60, 0);
    ASSERT_TRUE(writer->write({1'000, 0, 60, frame}).ok());
    ASSERT_TRUE(writer->close().ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `binary args` in the test's directory with `env` before it (VAR=value ...).
  ran run(const std::string& binary, const std::string& args, const std::string& env = "") {
    const fs::path log = dir_ / "log";
    const std::string cmd = "cd " + dir_.string() + " && " + env + " " + binary + " " + args + " >" + log.string() +
                            " 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, text};
  }

  const std::string rocelab_ = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
  fs::path dir_;
};

TEST_F(dispatch, rocelab_loads_none_of_the_hardware_libraries) {
  // What the dynamic loader would map for the binary (ldd's own mechanism).
  const ran r = run(rocelab_, "", "LD_TRACE_LOADED_OBJECTS=1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_NE(r.output.find("libc.so"), std::string::npos) << r.output;
  for (const char* library : {"librte_", "libibverbs", "libssl", "libcrypto", "libpcap", "libsqlite3", "libnl-"})
    EXPECT_EQ(r.output.find(library), std::string::npos) << library << " in\n" << r.output;
}

TEST_F(dispatch, every_other_command_runs_in_rocelab_full) {
  const ran version = run(rocelab_, "--version");
  EXPECT_EQ(version.exit_code, 0) << version.output;
  EXPECT_NE(version.output.find("rocelab 0.1.0"), std::string::npos) << version.output;
  const ran help = run(rocelab_, "--help");
  EXPECT_EQ(help.exit_code, 0) << help.output;
  for (const char* command : {"analyze", "run", "spec", "lab"})
    EXPECT_NE(help.output.find(command), std::string::npos) << command << " in\n" << help.output;
  const ran unknown = run(rocelab_, "no-such-command");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
}

TEST_F(dispatch, analyze_runs_without_rocelab_full) {
  fs::copy_file(rocelab_, dir_ / "rocelab");
  const ran analyzed = run("./rocelab", "analyze one.pcapng");
  EXPECT_EQ(analyzed.exit_code, 0) << analyzed.output;
  EXPECT_NE(analyzed.output.find("frames      1 "), std::string::npos) << analyzed.output;
  const ran usage = run("./rocelab", "analyze --link-gbps nan one.pcapng");
  EXPECT_EQ(usage.exit_code, 2) << usage.output;
  EXPECT_NE(usage.output.find("rocelab analyze:"), std::string::npos) << usage.output;
}

TEST_F(dispatch, a_missing_rocelab_full_is_reported) {
  fs::copy_file(rocelab_, dir_ / "rocelab");
  const ran r = run("./rocelab", "spec");
  EXPECT_EQ(r.exit_code, 127) << r.output;
  EXPECT_NE(r.output.find("cannot run " + fs::canonical(dir_).string() + "/rocelab-full"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace rocelab::cli

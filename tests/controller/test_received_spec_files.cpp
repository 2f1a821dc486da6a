// A spec received over the controller's connection carries data, never paths: a spec that
// names a file on the controller's host (a CDF path) is refused without opening it, and no
// byte of that file reaches the client. A device named as a CDF does not take the
// controller down.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "controller_test_support.hpp"
#include "rocelab/controller/client.hpp"

namespace rocelab::controller {
namespace {

using test::temp_dir;

const std::string secret = "SECRET-e3b0c44298fc1c149afbf4c8996fb924";

std::string spec_with_cdf(const std::string& cdf) {
  return "name: files\nbackend: twin\nseed: 1\ntopology: {hosts: 4, link_gbps: 100}\n"
         "workload:\n  background:\n    cdf: " + cdf + "\n    load: 0.2\n    duration_ns: 20us\n"
         "twin: {stop_ns: 10ms}\n";
}

submit_options client_of(const controller& c) {
  submit_options o;
  o.controller = c.address();
  o.token = test::test_token;
  return o;
}

TEST(received_spec_files, a_cdf_path_is_refused_and_the_file_never_reaches_the_client) {
  temp_dir dir("spec-files");
  const auto path = dir.path / "token";
  std::ofstream(path) << secret << "\n";
  auto c = controller::start(test::quick_controller_options(dir));
  ASSERT_TRUE(c.ok()) << c.error().message();

  for (const auto& [yaml, sets] :
       {std::pair{spec_with_cdf(path.string()), std::vector<std::string>{}},
        std::pair{spec_with_cdf("websearch"), std::vector<std::string>{"workload.background.cdf=" + path.string()}}}) {
    auto done = submit_spec(client_of(**c), yaml, "client.yaml", sets);
    ASSERT_TRUE(done.ok()) << done.error().message();
    EXPECT_EQ(done->status, "failed");
    EXPECT_NE(done->error.find("workload.background.cdf"), std::string::npos) << done->error;
    EXPECT_NE(done->error.find("names a file"), std::string::npos) << done->error;
    EXPECT_EQ(done->error.find("SECRET"), std::string::npos) << done->error;
    EXPECT_EQ(done->summary_json.find("SECRET"), std::string::npos) << done->summary_json;
  }
}

TEST(received_spec_files, a_device_as_cdf_is_refused_and_the_controller_serves_the_next_run) {
  temp_dir dir("spec-device");
  auto c = controller::start(test::quick_controller_options(dir));
  ASSERT_TRUE(c.ok()) << c.error().message();
  for (const char* device : {"/dev/zero", "/dev/urandom"}) {
    auto done = submit_spec(client_of(**c), spec_with_cdf(device), "client.yaml", {});
    ASSERT_TRUE(done.ok()) << done.error().message();
    EXPECT_EQ(done->status, "failed") << device;
  }
  auto next = submit_spec(client_of(**c), spec_with_cdf("websearch"), "client.yaml", {});
  ASSERT_TRUE(next.ok()) << next.error().message();
  EXPECT_EQ(next->status, "completed") << next->error;
}

}  // namespace
}  // namespace rocelab::controller

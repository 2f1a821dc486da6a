// What `rocelab run --controller` does with a spec that names a CDF file: the client
// reads the file and inlines its points, and the controller runs the spec as data.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "controller_test_support.hpp"
#include "rocelab/controller/client.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/spec/spec_files.hpp"

namespace rocelab::controller {
namespace {

using test::temp_dir;

TEST(client_inlined_spec, a_cdf_the_client_inlined_runs_on_the_controller) {
  temp_dir dir("spec-inline");
  std::ofstream(dir.path / "mine.cdf") << "# two sizes\n1000 0.5\n4000 1\n";
  std::ofstream(dir.path / "spec.yaml") << "name: inline\nbackend: twin\nseed: 1\ntopology: {hosts: 4, link_gbps: 100}\n"
                                          "workload:\n  background:\n    cdf: mine.cdf\n    load: 0.2\n"
                                          "    duration_ns: 20us\ntwin: {stop_ns: 10ms}\n";
  auto spec = experiments::load_spec_file((dir.path / "spec.yaml").string());
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  ASSERT_TRUE(experiments::inline_file_references(*spec).ok());
  EXPECT_TRUE(experiments::is_inline_cdf(spec->workload.background.cdf));
  EXPECT_NE(spec->workload.background.cdf.find("4000 1"), std::string::npos);

  auto c = controller::start(test::quick_controller_options(dir));
  ASSERT_TRUE(c.ok()) << c.error().message();
  submit_options options;
  options.controller = (*c)->address();
  options.token = test::test_token;
  auto done = submit_spec(options, experiments::to_yaml(*spec), "spec.yaml", {});
  ASSERT_TRUE(done.ok()) << done.error().message();
  EXPECT_EQ(done->status, "completed") << done->error;
}

TEST(client_inlined_spec, the_inlined_cdf_survives_the_resolved_yaml) {
  temp_dir dir("spec-inline-yaml");
  std::ofstream(dir.path / "one.cdf") << "2048 1";  // one point, no line break at the end
  std::ofstream(dir.path / "spec.yaml") << "workload:\n  background:\n    cdf: one.cdf\n";
  auto spec = experiments::load_spec_file((dir.path / "spec.yaml").string());
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  ASSERT_TRUE(experiments::inline_file_references(*spec).ok());
  auto back = experiments::load_spec(experiments::to_yaml(*spec), "resolved.yaml");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->workload.background.cdf, spec->workload.background.cdf);
  EXPECT_TRUE(experiments::refuse_file_references(*back).ok());
  EXPECT_TRUE(experiments::validate(*back).ok()) << experiments::validate(*back).message();
}

}  // namespace
}  // namespace rocelab::controller

// backend virtual through the controller (root): the spec runs on a virtual lab the run
// brings up, its records land in the SQLite store, and the lab (with every switch setting
// the run made) is gone afterwards. The soft NICs here are the virtual backend's own
// `rocelab nic-run` processes, not agents' jobs (agents do not run soft jobs yet).
#include <unistd.h>

#include <gtest/gtest.h>

#include "controller_test_support.hpp"
#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::controller {
namespace {

TEST(lab_controller, virtual_spec_runs_into_the_store_and_leaves_no_lab) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth, AF_PACKET)";
  const std::string lab = "rlc" + std::to_string(::getpid() % 100000);
  test::temp_dir dir("vlab");
  auto o = test::lab_controller_options(dir);
  o.virtual_options.lab_name = lab;
  o.virtual_options.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
  o.virtual_options.capture_dpdk = std::getenv("ROCELAB_TEST_PCAP") == nullptr;
  auto c = controller::start(o);
  ASSERT_TRUE(c.ok()) << c.error().message();
  auto spec = experiments::load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/virtual-incast-8to1.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  ASSERT_TRUE(experiments::apply_override(*spec, "workload.incast.rounds=1").ok());
  auto out =
      (*c)->run_spec(*spec, {"virtual-incast-8to1.yaml", {"workload.incast.rounds=1"}, {}, {}, {}, {}});
  const bool lab_gone = agents::lab::lab_inspect(lab).namespaces.empty();
  if (!lab_gone) (void)agents::lab::lab_down(lab);
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(out->status, "completed") << out->error;
  EXPECT_TRUE(lab_gone) << "the run's lab must be gone";

  auto store = store::run_store::open((*c)->db_path(), store::open_mode::read_only);
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto info = store->run(out->run);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->status, store::run_status::completed);
  EXPECT_EQ(info->backend, "virtual");
  EXPECT_EQ(info->parameters["workload.incast.rounds"], "1");
  auto records = store->load(out->run);
  ASSERT_TRUE(records.ok()) << records.error().message();
  ASSERT_EQ(records->flows.size(), 8u);
  for (const auto& f : records->flows) EXPECT_TRUE(f.completed());
  EXPECT_FALSE(records->counters.empty()) << "switch, NIC and capture counters";
}

}  // namespace
}  // namespace rocelab::controller

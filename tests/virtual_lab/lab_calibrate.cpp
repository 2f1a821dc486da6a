// Lab test (root): `rocelab calibrate` on a 3-host virtual lab at 0.5 Gb/s writes a
// calibration file that reads back with every host, port and pair measured, and numbers
// the physics allows: no RTT below the ideal 64-byte RTT, no negative processing time, no
// host faster than its link (2% for pacing's rounding), no CNP loop shorter than the
// marked data frame's own serialization; on a lab it found up, the switch port it shaped
// for the CNP loop runs at the lab's rate again. Brings up its own lab (rlc<pid>) and takes
// it down. Cost on the 2-core CI VM: about 10 s.
#include "rocelab/experiments/lab/calibrate_lab.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/experiments/calibration/calibration.hpp"
#include "rocelab/experiments/lab/virtual_backend.hpp"
#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "switch_control.hpp"

namespace rocelab::experiments {
namespace {

namespace fs = std::filesystem;

class LabCalibrate : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth, AF_PACKET)";
    name_ = "rlc" + std::to_string(::getpid() % 100000);
    file_ = fs::temp_directory_path() / ("rocelab-" + name_ + "-calibration.yaml");
  }
  void TearDown() override {
    if (name_.empty()) return;
    EXPECT_TRUE(agents::lab::lab_down(name_).ok());
    EXPECT_TRUE(agents::lab::lab_inspect(name_).namespaces.empty()) << "the lab's namespaces are gone";
    std::error_code ignored;
    fs::remove(file_, ignored);
  }
  std::string name_;
  fs::path file_;
};

TEST_F(LabCalibrate, ThreeHostsAtHalfAGigabitGiveAFileWithEveryHostPortAndPairMeasured) {
  auto spec = load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/virtual-incast-8to1.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  for (const char* o : {"topology.hosts=3", "workload.incast.senders=2"})
    ASSERT_TRUE(apply_override(*spec, o).ok()) << o;
  calibrate_options o;
  o.pings = 20;
  o.lab_name = name_;
  o.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
  auto cal = calibrate_lab(*spec, o);
  ASSERT_TRUE(cal.ok()) << cal.error().message();
  EXPECT_TRUE(agents::lab::lab_inspect(name_).namespaces.empty()) << "a lab it brought up is taken down";
  ASSERT_TRUE(write_calibration_file(*cal, file_.string()).ok());
  auto back = read_calibration_file(file_.string());
  ASSERT_TRUE(back.ok()) << back.error().message();
  const calibration& c = *back;

  EXPECT_EQ(c.lab, "virtual");
  EXPECT_EQ(c.spec, spec->name);
  EXPECT_DOUBLE_EQ(c.link_gbps, 0.5);
  EXPECT_EQ(c.mtu_bytes, spec->nic.mtu_bytes);
  EXPECT_EQ(c.taken_at.size(), 20u) << c.taken_at;

  ASSERT_EQ(c.hosts.size(), 3u);
  for (const auto& h : c.hosts) {
    SCOPED_TRACE(h.name);
    EXPECT_GT(h.send_processing.samples, 0u);
    EXPECT_GE(h.send_processing.ns.front(), 0);
    EXPECT_GT(h.receive_processing.samples, 0u);
    EXPECT_GE(h.receive_processing.ns.front(), 0);
    EXPECT_GT(h.achieved_gbps, 0.0);
    EXPECT_LE(h.achieved_gbps, 0.5 * 1.02);
  }
  EXPECT_NE(c.host("h1"), nullptr);
  EXPECT_NE(c.host("h3"), nullptr);

  ASSERT_EQ(c.ports.size(), 3u);
  for (std::uint32_t p = 0; p < 3; ++p) {
    EXPECT_EQ(c.ports[p].port, p);
    EXPECT_GT(c.ports[p].forwarding.samples, 0u) << "port " << p;
    EXPECT_GE(c.ports[p].forwarding.ns.front(), 0) << "port " << p;
  }

  // Each host to h1 and back: 4 pairs, 20 pings each.
  ASSERT_EQ(c.pairs.size(), 4u);
  const auto ideal = ideal_fct_of(*spec);
  for (const auto& p : c.pairs) {
    SCOPED_TRACE(p.src + "->" + p.dst);
    EXPECT_TRUE(p.src == "h1" || p.dst == "h1");
    EXPECT_EQ(p.base_rtt.samples, 20u);
    const auto src = static_cast<std::uint32_t>(std::stoul(p.src.substr(1)) - 1);
    const auto dst = static_cast<std::uint32_t>(std::stoul(p.dst.substr(1)) - 1);
    const std::int64_t ideal_ns = ideal(src, dst, 64);
    ASSERT_GT(ideal_ns, 0);
    EXPECT_GE(p.base_rtt.median(), ideal_ns);
  }

  // The CNP loop: a marked 4 KiB data frame must reach the receiver whole before it can
  // answer, 66 us at 0.5 Gb/s.
  EXPECT_GT(c.cnp_loop.samples, 0u);
  const std::int64_t data_frame_ns = static_cast<std::int64_t>((spec->nic.mtu_bytes + 58 + 24) * 8 / 0.5);
  EXPECT_GE(c.cnp_loop.ns.front(), data_frame_ns);
}

// On a lab that stays up, the CNP loop's shaping of its receiver's port (half the line
// rate, so that the incast congests however slow the host holds the NICs) is undone: the
// port runs at the lab's rate again for the runs that come next.
TEST_F(LabCalibrate, AKeptLabsReceiverPortRunsAtTheLabsRateAgainAfterward) {
  auto spec = load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/virtual-incast-8to1.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  for (const char* o : {"topology.hosts=3", "workload.incast.senders=2"})
    ASSERT_TRUE(apply_override(*spec, o).ok()) << o;
  const std::string binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
  auto up = agents::lab::lab_up(lab_options_for(*spec, name_, agents::lab::default_state_root, binary));
  ASSERT_TRUE(up.ok()) << up.error().message();
  calibrate_options o;
  o.pings = 5;
  o.lab_name = name_;
  o.rocelab_binary = binary;
  auto cal = calibrate_lab(*spec, o);
  ASSERT_TRUE(cal.ok()) << cal.error().message();
  EXPECT_GT(cal->cnp_loop.samples, 0u);
  EXPECT_FALSE(agents::lab::lab_inspect(name_).namespaces.empty()) << "a lab it found up stays up";
  const auto rate = test::switch_call(up->control_socket, {{"op", "get"}, {"field", "rate_bps"}, {"port", 0}});
  ASSERT_TRUE(rate.value("ok", false)) << rate.dump();
  EXPECT_EQ(rate["value"], 500'000'000) << rate.dump();
}

}  // namespace
}  // namespace rocelab::experiments

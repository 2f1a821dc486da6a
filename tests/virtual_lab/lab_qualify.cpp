// Lab test (root): `rocelab qualify` against the virtual lab's soft switch. Real frames
// from the lab's host namespaces fill a port the peer holds with PFC; the switch's XOFF,
// headroom, XON, lossy shared limit, ECN curve (200 fills per depth) and PFC watchdog are
// where its configuration says. A switch told one thing and running another fails.
#include "rocelab/experiments/lab/qualify_lab.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include "../support/forwarding_switch.hpp"
#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/experiments/lab/virtual_backend.hpp"

namespace rocelab::experiments {
namespace {

// Three hosts at 0.5 Gb/s with a 1 MiB buffer and 1 KiB RoCE frames: small enough that
// filling it one frame at a time takes a second.
experiment_spec small_lab_spec() {
  auto spec = load_spec(
      "name: qualify-lab\nbackend: virtual\ntopology: {hosts: 3, link_gbps: 0.5}\n"
      "switch:\n  buffer_bytes: 1MiB\n  ecn: {enabled: true, queues: [3], kmin_bytes: 8KiB, kmax_bytes: 48KiB, "
      "pmax: 0.2}\n  pfc:\n    watchdog: {enabled: true, detection_ns: 50ms, restoration_ns: 100ms}\n"
      "nic: {mtu_bytes: 1024}\nworkload: {incast: {receiver: 0, senders: 2, flow_bytes: 64KiB}}\n",
      "qualify-lab.yaml");
  EXPECT_TRUE(spec.ok()) << spec.error().message();
  return *spec;
}

class QualifyLab : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth, AF_PACKET)";
    name_ = "rlq" + std::to_string(::getpid() % 10000);
  }
  void TearDown() override {
    if (!name_.empty()) {
      EXPECT_TRUE(agents::lab::lab_down(name_).ok());
    }
  }
  std::string binary() const { return std::string(ROCELAB_BINARY_DIR) + "/rocelab"; }
  std::string name_;
};

TEST_F(QualifyLab, TheSoftSwitchPassesEveryCheckWithRealFrames) {
  qualify_plan plan;
  plan.frame_bytes = 1102;
  auto r = qualify_virtual_lab(small_lab_spec(), plan, name_, binary());
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->passed()) << qualify_table(*r);
  ASSERT_EQ(r->ecn_curve.size(), 7u);
  for (const auto& p : r->ecn_curve) EXPECT_EQ(p.samples, 200u) << p.depth_bytes;
  EXPECT_EQ(r->ecn_curve.back().marked, 200u);
  EXPECT_NE(r->target.find(name_), std::string::npos);
  // The lab went down with the qualification.
  EXPECT_TRUE(agents::lab::lab_inspect(name_).namespaces.empty());
}

TEST_F(QualifyLab, ASwitchRunningOtherSettingsThanItIsQualifiedAgainstFails) {
  // Up by hand, the spec's settings on it, then qualified against a configuration that
  // claims twice the ECN marking probability and half the headroom.
  const auto spec = small_lab_spec();
  auto up = agents::lab::lab_up(lab_options_for(spec, name_, {}, binary()));
  ASSERT_TRUE(up.ok()) << up.error().message();
  ASSERT_TRUE(configure_lab_switch(*up, spec).ok());
  auto target = lab_switch_under_test::open(*up);
  ASSERT_TRUE(target.ok()) << target.error().message();
  auto actual = (*target)->current_config();
  ASSERT_TRUE(actual.ok()) << actual.error().message();
  // The target applies what it is given; give it the real settings and claim others.
  class claimed_switch final : public rocelab::testing::forwarding_switch {
   public:
    claimed_switch(lab_switch_under_test& inner, fabric::switch_config actual)
        : forwarding_switch(inner), actual_(std::move(actual)) {}
    status configure(const fabric::switch_config& cfg) override {
      auto real = actual_;
      real.pfc.watchdog = cfg.pfc.watchdog;
      return inner_.configure(real);
    }

   private:
    fabric::switch_config actual_;
  } sw(**target, *actual);
  auto claimed = *actual;
  for (auto& p : claimed.ports) {
    p.queues[3].ecn.pmax = 0.4;
    p.pgs[3].headroom_bytes *= 2;
  }
  qualify_plan plan;
  plan.frame_bytes = 1102;
  plan.watchdog = false;
  plan.lossy_priorities.clear();
  auto r = qualify_switch(sw, claimed, plan);
  ASSERT_TRUE(r.ok()) << r.error().message();
  std::vector<std::string> failed;
  for (const auto& c : r->checks)
    if (!c.pass) failed.push_back(c.name);
  // Claimed headroom moves the expected pool (so XOFF and XON too) and the headroom.
  EXPECT_EQ(failed, (std::vector<std::string>{"pfc.xoff_threshold", "pfc.headroom", "pfc.xon_threshold", "ecn.curve"}))
      << qualify_table(*r);
  // restore() put the switch's own configuration back.
  auto after = (*target)->current_config();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->ports[0].queues[3].ecn.pmax, actual->ports[0].queues[3].ecn.pmax);
  EXPECT_EQ(after->ports[0].pgs[3].headroom_bytes, actual->ports[0].pgs[3].headroom_bytes);
}

}  // namespace
}  // namespace rocelab::experiments

#include "rocelab/fabric/drivers/soft_switch_driver.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <set>

#include "rocelab/agents/lab/virtual_lab.hpp"

namespace rocelab::fabric::drivers {
namespace {

// A real soft switch in a virtual lab of two hosts (namespaces rl-rld<pid>-*), driven
// through its control socket.
class soft_switch_driver_lab : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces, veth pairs)";
    agents::lab::lab_options o;
    o.name = name_ = "rld" + std::to_string(::getpid() % 100000);
    o.hosts = 2;
    o.link_gbps = 1;
    o.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
    auto s = agents::lab::lab_up(o);
    ASSERT_TRUE(s.ok()) << s.error().message();
    state_ = *s;
  }
  void TearDown() override {
    if (!name_.empty()) {
      EXPECT_TRUE(agents::lab::lab_down(name_).ok());
    }
  }
  std::string name_;
  agents::lab::lab_state state_;
};

TEST_F(soft_switch_driver_lab, applies_reads_back_and_restores_exactly) {
  auto d = soft_switch_driver::connect({state_.control_socket});
  ASSERT_TRUE(d.ok()) << d.error().message();
  ASSERT_EQ((*d)->ports().size(), 2u);
  const std::vector<std::string> ports = (*d)->ports();
  auto before = (*d)->read_settings(ports);
  ASSERT_TRUE(before.ok()) << before.error().message();

  switch_settings s;
  s.ecn = {{ports[0], 3, true, 10000, 50000, 0.2}};
  s.pfc = {{ports[0], {3, 4}}, {ports[1], {3, 4}}};
  s.buffers = {{ports[1], 3, 2048, 40000, 4096, 0, -1}};
  s.dscp_maps = {{ports[0], {{26, 4}, {10, 3}}}, {ports[1], {{26, 4}, {10, 3}}}};
  mirror_setting m;
  m.enabled = true;
  m.direction = mirror_direction::rx;
  m.truncate_bytes = 128;
  s.mirror = m;
  auto st = (*d)->apply(s);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE((*d)->has_snapshot());

  auto after = (*d)->read_settings(ports);
  ASSERT_TRUE(after.ok());
  auto find_ecn = [&](const switch_settings& x, const std::string& port, int q) {
    for (const auto& e : x.ecn)
      if (e.port == port && e.queue == q) return e;
    return ecn_setting{};
  };
  EXPECT_EQ(find_ecn(*after, ports[0], 3), s.ecn[0]);
  EXPECT_EQ(find_ecn(*after, ports[1], 3), find_ecn(*before, ports[1], 3)) << "another port is untouched";
  EXPECT_EQ(after->pfc[1].priorities, (std::vector<std::uint8_t>{3, 4}));
  for (const auto& b : after->buffers) {
    if (b.port == ports[1] && b.priority_group == 3) {
      EXPECT_EQ(b, s.buffers[0]);
    }
  }
  ASSERT_EQ(after->dscp_maps.size(), 2u);
  EXPECT_EQ(after->dscp_maps[1].dscp_to_tc.at(26), 4);
  EXPECT_EQ(after->dscp_maps[1].dscp_to_tc.at(10), 3);
  EXPECT_EQ(after->dscp_maps[1].dscp_to_tc.at(27), before->dscp_maps[1].dscp_to_tc.at(27)) << "other entries stay";
  ASSERT_TRUE(after->mirror.has_value());
  EXPECT_TRUE(after->mirror->enabled);
  EXPECT_EQ(after->mirror->direction, mirror_direction::rx);
  EXPECT_EQ(after->mirror->truncate_bytes, 128u);

  ASSERT_TRUE((*d)->restore().ok());
  EXPECT_FALSE((*d)->has_snapshot());
  auto restored = (*d)->read_settings(ports);
  ASSERT_TRUE(restored.ok());
  EXPECT_EQ(restored->ecn, before->ecn);
  EXPECT_EQ(restored->pfc, before->pfc);
  EXPECT_EQ(restored->buffers, before->buffers);
  EXPECT_EQ(restored->mirror, before->mirror);
  EXPECT_EQ(restored->dscp_maps, before->dscp_maps);
}

// The lab's switch holds the lossless class of a default spec (DSCP 26 and mlx5's CNP DSCP
// 48 on their priorities, PFC on 3) once lossless_class_settings are applied.
TEST_F(soft_switch_driver_lab, the_lossless_class_applied_passes_its_check) {
  auto d = soft_switch_driver::connect({state_.control_socket});
  ASSERT_TRUE(d.ok());
  const auto ports = (*d)->ports();
  auto cls = make_lossless_class(3, 10, dcqcn_config::mlx5(), true);
  ASSERT_TRUE(cls.ok());
  lossless_observation seen;
  auto before = (*d)->read_settings(ports);
  ASSERT_TRUE(before.ok());
  seen.switch_ports = lossless_ports(*before, ports);
  EXPECT_FALSE(check_lossless_class(*cls, seen).ok()) << "DSCP 10 is not on priority 3 by default";
  ASSERT_TRUE((*d)->apply(lossless_class_settings(*cls, ports, {3})).ok());
  auto after = (*d)->read_settings(ports);
  ASSERT_TRUE(after.ok());
  seen.switch_ports = lossless_ports(*after, ports);
  EXPECT_TRUE(check_lossless_class(*cls, seen).ok()) << check_lossless_class(*cls, seen).message();
  ASSERT_TRUE((*d)->restore().ok());
}

TEST_F(soft_switch_driver_lab, refuses_what_the_soft_switch_cannot_do_and_changes_nothing) {
  auto d = soft_switch_driver::connect({state_.control_socket});
  ASSERT_TRUE(d.ok());
  const auto ports = (*d)->ports();
  auto before = (*d)->read_settings(ports);
  ASSERT_TRUE(before.ok());
  switch_settings per_port_pfc;
  per_port_pfc.pfc = {{ports[0], {3}}, {ports[1], {4}}};
  EXPECT_EQ((*d)->apply(per_port_pfc).code(), error_code::unsupported);
  switch_settings unknown_port;
  unknown_port.ecn = {{"Ethernet0", 3, true, 1, 2, 0.1}};
  auto st = (*d)->apply(unknown_port);
  EXPECT_EQ(st.code(), error_code::not_found);
  EXPECT_NE(st.message().find("Ethernet0"), std::string::npos);
  EXPECT_FALSE((*d)->has_snapshot());
  EXPECT_EQ((*d)->read_settings(ports)->ecn, before->ecn);
}

TEST_F(soft_switch_driver_lab, counters_use_the_common_vocabulary) {
  auto d = soft_switch_driver::connect({state_.control_socket});
  ASSERT_TRUE(d.ok());
  auto counters = (*d)->read_counters();
  ASSERT_TRUE(counters.ok()) << counters.error().message();
  std::set<std::string> names;
  for (const auto& c : *counters) names.insert(c.scope + "/" + c.name);
  for (const char* n : {"port/rx_packets", "port/tx_bytes", "port/rx_drops", "queue/ecn_marked_packets",
                        "queue/watermark_bytes", "pg/pfc_tx_frames", "pg/headroom_watermark_bytes",
                        "switch/buffer_watermark_bytes"})
    EXPECT_TRUE(names.contains(n)) << n;
}

TEST(soft_switch_driver, a_missing_socket_is_an_error_naming_it) {
  auto d = soft_switch_driver::connect({"/nonexistent/rocelab/control.sock", std::chrono::milliseconds(500)});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message().find("/nonexistent/rocelab/control.sock"), std::string::npos) << d.error().message();
}

}  // namespace
}  // namespace rocelab::fabric::drivers

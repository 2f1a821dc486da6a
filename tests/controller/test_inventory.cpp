#include "rocelab/controller/inventory.hpp"

#include <gtest/gtest.h>

namespace rocelab::controller {
namespace {

const std::string examples = std::string(ROCELAB_SOURCE_DIR) + "/examples";

experiments::experiment_spec lab_spec(std::uint32_t hosts) {
  experiments::experiment_spec s;
  s.backend = "virtual";
  s.topology.hosts = hosts;
  return s;
}

TEST(inventory, examples_load) {
  for (const char* f : {"/inventory-lab.yml", "/inventory-virtual.yml"}) {
    auto inv = load_inventory_file(examples + f);
    ASSERT_TRUE(inv.ok()) << inv.error().message();
    EXPECT_FALSE(inv->hosts.empty());
  }
  auto inv = load_inventory_file(examples + "/inventory-lab.yml");
  EXPECT_EQ(inv->hosts[2].name, "gpu03");
  EXPECT_EQ(inv->hosts[2].nic_driver, "mlx5");
  EXPECT_EQ(inv->mirror_destination_port, "Ethernet48");
  EXPECT_EQ(inv->capture_host, "cap01");
}

TEST(inventory, a_spec_that_fits_validates) {
  auto inv = load_inventory_file(examples + "/inventory-virtual.yml");
  ASSERT_TRUE(inv.ok());
  EXPECT_TRUE(validate_against(lab_spec(4), *inv).ok());
  EXPECT_TRUE(validate_against(lab_spec(2), *inv).ok());
}

struct misfit {
  const char* name;
  std::function<void(experiments::experiment_spec&, lab_inventory&)> change;
  const char* expected;
};

class inventory_refuses : public ::testing::TestWithParam<misfit> {};

TEST_P(inventory_refuses, naming_the_problem) {
  auto inv = load_inventory_file(examples + "/inventory-virtual.yml");
  ASSERT_TRUE(inv.ok());
  auto spec = lab_spec(4);
  GetParam().change(spec, *inv);
  const status st = validate_against(spec, *inv);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(GetParam().expected), std::string::npos) << st.message();
}

INSTANTIATE_TEST_SUITE_P(
    cases, inventory_refuses,
    ::testing::Values(
        misfit{"too_many_hosts", [](auto& s, auto&) { s.topology.hosts = 5; }, "the lab has 4 hosts"},
        misfit{"leaf_spine", [](auto& s, auto&) { s.topology.type = "leaf_spine"; }, "the lab has one switch"},
        misfit{"twin", [](auto& s, auto&) { s.backend = "twin"; }, "needs no lab"},
        misfit{"port_missing", [](auto&, auto& i) { i.hosts[1].switch_port = "p9"; }, "p9 is not a port"},
        misfit{"port_shared", [](auto&, auto& i) { i.hosts[1].switch_port = "p1"; }, "used by another host"},
        misfit{"mirror_on_host_port", [](auto&, auto& i) { i.mirror_destination_port = "p2"; }, "is a host's port"},
        misfit{"no_mirror", [](auto&, auto& i) { i.mirror_session.clear(); }, "no mirror session"},
        misfit{"no_capture", [](auto&, auto& i) { i.capture_host.clear(); }, "no capture host"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(inventory, yaml_errors_name_the_line_and_key) {
  auto r = load_inventory("name: x\nswitch: {name: s, driver: cisco, ports: [a]}\nhosts: []\n", "inv.yml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("inv.yml:2: switch.driver"), std::string::npos) << r.error().message();
  auto typo = load_inventory("name: x\nswitch: {name: s, driver: soft, ports: [a]}\nhostz: []\n", "inv.yml");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message().find("hostz: unknown key"), std::string::npos) << typo.error().message();
}

}  // namespace
}  // namespace rocelab::controller

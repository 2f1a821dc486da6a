#include "rocelab/fabric/lossless_class.hpp"

#include <gtest/gtest.h>

namespace rocelab::fabric {
namespace {

// SONiC's default DSCP_TO_TC_MAP AZURE (sonic-buildimage files/build_templates/qos_config.j2):
// DSCP 3 -> 3, 4 -> 4, 5 -> 2, 8 -> 0, 46 -> 5, 48 -> 6, every other DSCP -> 1 (lossy).
std::map<std::uint8_t, std::uint8_t> sonic_default_map() {
  std::map<std::uint8_t, std::uint8_t> m;
  for (std::uint8_t d = 0; d < 64; ++d) m[d] = 1;
  m[3] = 3;
  m[4] = 4;
  m[5] = 2;
  m[8] = 0;
  m[46] = 5;
  m[48] = 6;
  return m;
}

lossless_class default_class() {
  auto c = make_lossless_class(3, 26, dcqcn_config::mlx5(), true);
  EXPECT_TRUE(c.ok());
  return *c;
}

TEST(lossless_class, one_setting_gives_every_sides_values) {
  const lossless_class c = default_class();
  EXPECT_EQ(c.data_priority, 3);
  EXPECT_EQ(c.data_dscp, 26);
  EXPECT_EQ(c.cnp_dscp, 48) << "mlx5's default cnp_dscp";
  EXPECT_EQ(c.cnp_priority, 6) << "mlx5's default cnp_802p_prio";
  EXPECT_EQ(traffic_class_of(26), 106) << "DSCP 26 with ECT(0): NVIDIA's RoCE tos 106";
  EXPECT_EQ(traffic_class_of(3), 14);
  EXPECT_EQ(switch_class_entries(c), (std::map<std::uint8_t, std::uint8_t>{{26, 3}, {48, 6}}));

  dcqcn_config d = dcqcn_config::mlx5();
  d.cnp_dscp = 46;
  d.cnp_802p_prio = 5;
  auto other = make_lossless_class(4, 4, d, false);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(switch_class_entries(*other), (std::map<std::uint8_t, std::uint8_t>{{4, 4}, {46, 5}}));
  EXPECT_FALSE(other->pfc);
}

TEST(lossless_class, out_of_range_values_and_a_shared_dscp_are_refused_by_name) {
  struct case_t {
    const char* name;
    std::uint32_t priority, dscp;
    std::uint8_t cnp_dscp, cnp_prio;
    const char* in_message;
  };
  const case_t cases[] = {
      {"priority 8", 8, 26, 48, 6, "nic.data_priority"},
      {"dscp 64", 3, 64, 48, 6, "nic.data_dscp"},
      {"cnp dscp 64", 3, 26, 64, 6, "cnp_dscp"},
      {"cnp priority 9", 3, 26, 48, 9, "cnp_802p_prio"},
      {"cnp on the data dscp, another priority", 3, 26, 26, 6, "one DSCP to one traffic class"},
  };
  for (const auto& t : cases) {
    SCOPED_TRACE(t.name);
    dcqcn_config d = dcqcn_config::mlx5();
    d.cnp_dscp = t.cnp_dscp;
    d.cnp_802p_prio = t.cnp_prio;
    auto c = make_lossless_class(t.priority, t.dscp, d, true);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error().code(), error_code::invalid_argument);
    EXPECT_NE(c.error().message().find(t.in_message), std::string::npos) << c.error().message();
  }
}

TEST(lossless_class, an_agreeing_lab_passes) {
  const lossless_class c = default_class();
  lossless_observation seen;
  seen.nics.push_back({"h1", 26, 3, 48, 6});
  auto map = sonic_default_map();
  map[26] = 3;
  seen.switch_ports.push_back({"Ethernet0", map, {3, 4}});
  EXPECT_TRUE(lossless_mismatches(c, seen).empty());
  EXPECT_TRUE(check_lossless_class(c, seen).ok());
}

// A stock SONiC switch: RoCE's DSCP 26 lands in lossy TC 1 (no PFC, no marks, no CNPs).
TEST(lossless_class, a_stock_sonic_map_fails_naming_dscp_26_and_tc_1) {
  const lossless_class c = default_class();
  lossless_observation seen;
  seen.switch_ports.push_back({"Ethernet0", sonic_default_map(), {3, 4}});
  const auto m = lossless_mismatches(c, seen);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0], "switch port Ethernet0: DSCP_TO_TC_MAP maps DSCP 26 to TC 1, not to the data priority 3");
  const status st = check_lossless_class(c, seen);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("DSCP 26 to TC 1"), std::string::npos) << st.message();
}

TEST(lossless_class, each_disagreement_is_named) {
  const lossless_class c = default_class();
  struct case_t {
    const char* name;
    lossless_observation seen;
    std::string want;
  };
  auto good_map = sonic_default_map();
  good_map[26] = 3;
  auto no_cnp = good_map;
  no_cnp.erase(48);
  const case_t cases[] = {
      {"NIC sends another DSCP", {{{"h2", 24, 3, 48, 6}}, {}}, "NIC h2: data DSCP is 24, the lossless class says 26"},
      {"NIC on another priority", {{{"h2", 26, 0, 48, 6}}, {}}, "NIC h2: data priority is 0, the lossless class says 3"},
      {"mlx5 cnp_dscp", {{{"h3", 26, 3, 46, 6}}, {}}, "NIC h3: cnp_dscp is 46, the lossless class says 48"},
      {"mlx5 cnp_802p_prio", {{{"h3", 26, 3, 48, 7}}, {}}, "NIC h3: cnp_802p_prio is 7, the lossless class says 6"},
      {"no PFC on 3", {{}, {{"Ethernet4", good_map, {4}}}},
       "switch port Ethernet4: PFC is not enabled on the data priority 3 (pfc_enable: 4)"},
      {"no PFC at all", {{}, {{"Ethernet4", good_map, {}}}},
       "switch port Ethernet4: PFC is not enabled on the data priority 3 (pfc_enable: none)"},
      {"CNP DSCP unmapped", {{}, {{"Ethernet8", no_cnp, {3}}}},
       "switch port Ethernet8: DSCP_TO_TC_MAP has no entry for the CNP DSCP 48 (want TC 6)"},
  };
  for (const auto& t : cases) {
    SCOPED_TRACE(t.name);
    const auto m = lossless_mismatches(c, t.seen);
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0], t.want);
  }
}

TEST(lossless_class, values_a_side_did_not_report_and_pfc_off_are_not_checked) {
  lossless_class c = default_class();
  lossless_observation seen;
  seen.nics.push_back({"h1", 26, 3, std::nullopt, std::nullopt});
  auto map = sonic_default_map();
  map[26] = 3;
  seen.switch_ports.push_back({"Ethernet0", map, {}});
  EXPECT_EQ(lossless_mismatches(c, seen).size(), 1u) << "PFC expected";
  c.pfc = false;
  EXPECT_TRUE(lossless_mismatches(c, seen).empty()) << "a lossy run does not ask for PFC";
}

}  // namespace
}  // namespace rocelab::fabric

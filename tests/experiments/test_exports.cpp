#include "rocelab/experiments/exports.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

namespace rocelab::experiments {
namespace {

experiment_spec tuned() {
  experiment_spec s;
  s.topology.hosts = 3;
  s.sw.ecn.kmin_bytes = 58480;
  s.sw.ecn.kmax_bytes = 1362584;
  s.sw.ecn.pmax = 0.25;
  EXPECT_TRUE(set_field(s, "nic.dcqcn.rpg_time_reset", "55", "test").ok());
  EXPECT_TRUE(set_field(s, "nic.dcqcn.min_time_between_cnps", "8", "test").ok());
  return s;
}

TEST(exports, mlx5_sysfs_lines_name_the_driver_files) {
  export_options o;
  o.nic_interface = "enp1s0f0np0";
  const std::string text = mlx5_sysfs_settings(tuned(), o);
  EXPECT_NE(text.find("/sys/class/net/enp1s0f0np0/ecn/roce_rp/rpg_time_reset 55\n"), std::string::npos) << text;
  EXPECT_NE(text.find("/sys/class/net/enp1s0f0np0/ecn/roce_np/min_time_between_cnps 8\n"), std::string::npos);
  EXPECT_NE(text.find("/sys/class/net/enp1s0f0np0/ecn/roce_rp/enable/3 1\n"), std::string::npos);
  EXPECT_NE(text.find("/sys/class/net/enp1s0f0np0/ecn/roce_np/enable/3 1\n"), std::string::npos);
  // Every line is "path value": no shell, no comments; every path is a file of the
  // recorded mlx5 tree the driver's tests use.
  const std::string recorded = std::string(ROCELAB_SOURCE_DIR) + "/tests/data/mlx5-sysfs";
  std::size_t lines = 0;
  for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1, ++lines) {
    const std::string line = text.substr(at, nl - at);
    const auto space = line.find(' ');
    ASSERT_NE(space, std::string::npos) << line;
    EXPECT_EQ(line.find(' ', space + 1), std::string::npos) << line;
    std::string path = line.substr(0, space);
    path.replace(0, std::string("/sys").size(), recorded);
    if (path.find("/enable/") == std::string::npos) {
      EXPECT_TRUE(std::filesystem::exists(path)) << path;
    }
  }
  EXPECT_EQ(lines, 15u + 3u + 2u);  // the roce_rp and roce_np knobs the spec holds, enable on both
  for (const std::string& k : knobs_without_mlx5_file()) EXPECT_EQ(text.find("/" + k + " "), std::string::npos) << k;
}

TEST(exports, sonic_config_db_carries_the_tuned_thresholds) {
  export_options o;
  o.switch_ports = {"Ethernet0", "Ethernet8"};
  auto text = sonic_config_db_json(tuned(), o);
  ASSERT_TRUE(text.ok()) << text.error().message();
  const auto j = nlohmann::json::parse(*text);
  ASSERT_TRUE(j.contains("WRED_PROFILE")) << *text;
  bool found = false;
  for (const auto& [key, profile] : j["WRED_PROFILE"].items()) {
    found = true;
    EXPECT_EQ(profile.at("green_min_threshold"), "58480") << key;
    EXPECT_EQ(profile.at("green_max_threshold"), "1362584") << key;
    EXPECT_EQ(profile.at("green_drop_probability"), "25") << key;
  }
  EXPECT_TRUE(found);
  EXPECT_TRUE(j.contains("QUEUE"));
  EXPECT_EQ(j["PORT_QOS_MAP"]["Ethernet8"]["pfc_enable"], "3");
  EXPECT_TRUE(j.contains("BUFFER_PROFILE"));
  // Default ports: one per host, SONiC's names.
  EXPECT_EQ(export_ports(tuned(), {}), (std::vector<std::string>{"Ethernet0", "Ethernet4", "Ethernet8"}));
}

}  // namespace
}  // namespace rocelab::experiments

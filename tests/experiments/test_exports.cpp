#include "rocelab/experiments/tuning/exports.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "rocelab/experiments/lab/sonic_export.hpp"

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
  // The lossless class: SONiC's default map sends DSCP 26 to lossy TC 1; the export moves it.
  EXPECT_EQ(j["DSCP_TO_TC_MAP"]["AZURE"]["26"], "3") << *text;
  EXPECT_EQ(j["DSCP_TO_TC_MAP"]["AZURE"]["48"], "6");
  // Default ports: one per host, SONiC's names.
  EXPECT_EQ(export_ports(tuned(), {}), (std::vector<std::string>{"Ethernet0", "Ethernet4", "Ethernet8"}));
}

experiment_spec load_example(const std::string& name) {
  auto spec = load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/" + name);
  EXPECT_TRUE(spec.ok()) << spec.error().message();
  return *spec;
}

// Every exported mlx5 value against the documented range at the spec's link speed, and
// every knob the export writes has a row in the range table.
void expect_every_value_in_range(const experiment_spec& spec) {
  const auto values = mlx5_knob_values(spec);
  ASSERT_FALSE(values.empty());
  for (const auto& [knob, value] : values) {
    if (knob.find("/enable/") != std::string::npos) {
      EXPECT_TRUE(value == "0" || value == "1") << knob;
      continue;
    }
    const auto range = mlx5_range(knob, spec.topology.link_gbps);
    ASSERT_TRUE(range) << knob << " has no documented range";
    const std::int64_t v = std::stoll(value);
    EXPECT_GE(v, range->first) << knob << " at " << spec.topology.link_gbps << " Gb/s";
    EXPECT_LE(v, range->second) << knob << " at " << spec.topology.link_gbps << " Gb/s";
  }
}

TEST(exports, a_lab_scaled_configuration_is_refused_with_the_reasons) {
  const experiment_spec lab = load_example("tune-virtual-incast.yaml");
  const status st = check_hardware_export(lab);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), error_code::invalid_argument);
  EXPECT_NE(st.message().find("link_gbps 0.5 is not a port speed of real hardware"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("scaling.hardware_gbps 100: this is a lab dilated x200"), std::string::npos)
      << st.message();
  // The lab's dilated DCQCN clock at a real port speed is still refused.
  experiment_spec fast_links = lab;
  fast_links.topology.link_gbps = 25;
  const status clock = check_hardware_export(fast_links);
  ASSERT_FALSE(clock.ok());
  EXPECT_NE(clock.message().find("dilated x4"), std::string::npos) << clock.message();
  EXPECT_EQ(clock.message().find("link_gbps"), std::string::npos) << clock.message();
}

// --export-for the speed a lab stands for undoes its scaling exactly: the links at that
// speed, no scaling, every knob and byte as the lab ran them; the same export of a
// hardware spec is the spec itself.
TEST(exports, exporting_for_the_speed_a_lab_stands_for_is_the_exact_inverse_of_its_scaling) {
  experiment_spec lab = load_example("tune-virtual-incast.yaml");
  ASSERT_TRUE(set_field(lab, "switch.ecn.kmin_bytes", "12345", "test").ok());
  ASSERT_TRUE(set_field(lab, "switch.ecn.kmax_bytes", "234567", "test").ok());
  ASSERT_TRUE(set_field(lab, "nic.dcqcn.rpg_time_reset", "77", "test").ok());
  auto hw = hardware_equivalent(lab, 100);
  ASSERT_TRUE(hw.ok()) << hw.error().message();
  EXPECT_EQ(hw->topology.link_gbps, 100);
  EXPECT_EQ(hw->scaling.hardware_gbps, 0);
  EXPECT_EQ(hw->sw.ecn.kmin_bytes, 12345);
  EXPECT_EQ(hw->sw.ecn.kmax_bytes, 234567);
  EXPECT_EQ(hw->sw.buffer_bytes, lab.sw.buffer_bytes);
  EXPECT_EQ(mlx5_knob_values(*hw), mlx5_knob_values(lab));
  // Scaling the hardware spec back down gives the lab's spec again.
  experiment_spec back = *hw;
  back.topology.link_gbps = 0.5;
  back.scaling.hardware_gbps = 100;
  EXPECT_EQ(to_yaml(back), to_yaml(lab));
  // For another speed the thresholds keep their marking delay.
  auto at_400 = hardware_equivalent(lab, 400);
  ASSERT_TRUE(at_400.ok()) << at_400.error().message();
  EXPECT_EQ(at_400->sw.ecn.kmin_bytes, 4 * 12345);
}

TEST(exports, a_value_outside_the_firmware_range_is_refused) {
  struct test_case {
    const char* knob;
    const char* value;
    const char* says;
  };
  const test_case cases[] = {
      {"nic.dcqcn.initial_alpha_value", "1024", "roce_rp/initial_alpha_value 1024 is outside the mlx5 firmware's range 0..1023"},
      {"nic.dcqcn.rpg_time_reset", "200000", "roce_rp/rpg_time_reset 200000 is outside"},
      {"nic.dcqcn.rpg_ai_rate", "150000", "roce_rp/rpg_ai_rate 150000 is outside the mlx5 firmware's range 1..100000 at 100 Gb/s"},
      {"nic.dcqcn.rate_reduce_monitor_period", "0", "roce_rp/rate_reduce_monitor_period 0 is outside"},
  };
  for (const auto& c : cases) {
    experiment_spec s = load_example("tune-incast.yaml");
    ASSERT_TRUE(check_hardware_export(s).ok()) << check_hardware_export(s).message();
    ASSERT_TRUE(set_field(s, c.knob, c.value, "test").ok()) << c.knob;
    const status st = check_hardware_export(s);
    ASSERT_FALSE(st.ok()) << c.knob;
    EXPECT_NE(st.message().find(c.says), std::string::npos) << st.message();
  }
}

TEST(exports, every_exported_value_is_in_range_at_100_200_and_400_gbps) {
  for (const double gbps : {100.0, 200.0, 400.0}) {
    // A hardware spec at that speed: the vendor defaults and the tuned example.
    experiment_spec hw = load_example("tune-incast.yaml");
    hw.topology.link_gbps = gbps;
    ASSERT_TRUE(check_hardware_export(hw).ok()) << gbps << ": " << check_hardware_export(hw).message();
    expect_every_value_in_range(hw);
    // The lab-scaled spec, derived for that speed: mlx5 units, in range, exportable.
    auto derived = hardware_equivalent(load_example("tune-virtual-incast.yaml"), gbps);
    ASSERT_TRUE(derived.ok()) << gbps << ": " << derived.error().message();
    EXPECT_DOUBLE_EQ(derived->topology.link_gbps, gbps);
    EXPECT_EQ(derived->nic.dcqcn.rpg_time_reset_us, 300);
    EXPECT_EQ(derived->nic.dcqcn.min_time_between_cnps_us, 4);
    EXPECT_EQ(derived->nic.dcqcn.dce_tcp_rtt_us, 1);
    EXPECT_EQ(derived->nic.dcqcn.rpg_ai_rate_mbps, 5);
    EXPECT_TRUE(check_hardware_export(*derived).ok());
    expect_every_value_in_range(*derived);
    // The lab stands for 100 Gb/s: there its bytes are the hardware's; at another speed
    // the marking delay is kept (bytes x gbps / 100).
    EXPECT_EQ(derived->sw.ecn.kmin_bytes, std::llround(1048576.0 * gbps / 100.0));
    EXPECT_TRUE(sonic_config_db_json(*derived, {}).ok());
  }
  EXPECT_FALSE(hardware_equivalent(load_example("tune-incast.yaml"), 0.5).ok());
  EXPECT_NE(export_target_text(load_example("tune-incast.yaml")).find("100 Gb/s"), std::string::npos);
}

}  // namespace
}  // namespace rocelab::experiments

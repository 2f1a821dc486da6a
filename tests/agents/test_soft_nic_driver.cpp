#include "rocelab/agents/nic/soft_nic_driver.hpp"

#include <gtest/gtest.h>

#include "nic_test_support.hpp"
#include "rocelab/common/bounded_file.hpp"

namespace rocelab::agents::nic {
namespace {

using testing::temp_dir;
namespace fs = std::filesystem;

result<std::unique_ptr<soft_nic_driver>> open_in(const temp_dir& dir) {
  return soft_nic_driver::open({"eth0", dir.path().string(), (dir.path() / "sys").string()});
}

TEST(soft_nic_driver, without_a_file_it_has_the_mlx5_defaults_with_dcqcn_on_priority_3) {
  temp_dir dir;
  auto d = open_in(dir);
  ASSERT_TRUE(d.ok()) << d.error().message();
  auto settings = (*d)->read_settings();
  ASSERT_TRUE(settings.ok());
  EXPECT_EQ(*settings, soft_nic_default_settings());
  EXPECT_EQ(settings->at("roce_rp/rpg_time_reset"), "300");
  EXPECT_EQ(settings->at("roce_np/min_time_between_cnps"), "4");
  EXPECT_EQ(settings->at("roce_rp/enable/3"), "1");
  EXPECT_EQ(settings->at("roce_rp/enable/0"), "0");
  EXPECT_FALSE(fs::exists((*d)->settings_path()));
}

TEST(soft_nic_driver, applied_settings_reach_the_nic_config_and_restore_removes_them) {
  temp_dir dir;
  auto d = open_in(dir);
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE((*d)->apply({{"rpg_time_reset", "55"}, {"roce_np/min_time_between_cnps", "0"},
                           {"roce_rp/enable/3", "0"}})
                  .ok());
  ASSERT_TRUE(fs::exists((*d)->settings_path()));

  traffic::soft_nic::nic_config cfg;
  ASSERT_TRUE(apply_soft_nic_settings((*d)->settings_path(), cfg).ok());
  EXPECT_EQ(cfg.dcqcn.rpg_time_reset_us, 55);
  EXPECT_EQ(cfg.dcqcn.min_time_between_cnps_us, 0);
  EXPECT_FALSE(cfg.dcqcn_enabled);

  // Another driver (the next agent, after a restart) reads the same state.
  auto again = open_in(dir);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->read_settings()->at("roce_rp/rpg_time_reset"), "55");

  ASSERT_TRUE((*d)->restore().ok());
  EXPECT_FALSE(fs::exists((*d)->settings_path())) << "back to defaults: no file, as before";
  traffic::soft_nic::nic_config fresh;
  ASSERT_TRUE(apply_soft_nic_settings((*d)->settings_path(), fresh).ok());
  EXPECT_EQ(fresh.dcqcn.rpg_time_reset_us, fabric::dcqcn_config::mlx5().rpg_time_reset_us);
  EXPECT_TRUE(fresh.dcqcn_enabled);
}

TEST(soft_nic_driver, restore_brings_back_a_file_that_was_there) {
  temp_dir dir;
  {
    auto first = open_in(dir);
    ASSERT_TRUE(first.ok());
    ASSERT_TRUE((*first)->apply({{"rpg_ai_rate", "20"}}).ok());  // an operator's own setting
  }
  auto d = open_in(dir);
  ASSERT_TRUE(d.ok());
  const auto before = (*d)->read_settings();
  ASSERT_TRUE((*d)->apply({{"rpg_ai_rate", "40"}, {"cnp_dscp", "26"}}).ok());
  ASSERT_TRUE((*d)->restore().ok());
  auto reopened = open_in(dir);
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ(*(*reopened)->read_settings(), *before);
  EXPECT_EQ((*reopened)->read_settings()->at("roce_rp/rpg_ai_rate"), "20");
}

TEST(soft_nic_driver, rejects_wrong_names_and_values_and_a_damaged_file) {
  temp_dir dir;
  auto d = open_in(dir);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)->apply({{"rpg_gd", "3"}}).code(), error_code::not_found) << "the soft NIC does not model rpg_gd";
  EXPECT_EQ((*d)->apply({{"rpg_min_dec_fac", "101"}}).code(), error_code::invalid_argument);
  EXPECT_FALSE(fs::exists((*d)->settings_path()));

  std::ofstream((*d)->settings_path()) << R"({"version":1,"settings":{"roce_rp/rpg_time_reset":"fast"}})";
  auto damaged = open_in(dir);
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.error().message().find((*d)->settings_path()), std::string::npos) << damaged.error().message();
  traffic::soft_nic::nic_config cfg;
  EXPECT_FALSE(apply_soft_nic_settings((*d)->settings_path(), cfg).ok());

  EXPECT_EQ(soft_nic_driver::open({"eth0", (dir.path() / "missing").string(), "/sys"}).error().code(),
            error_code::not_found);
  EXPECT_EQ(soft_nic_driver::open({"../eth0", dir.path().string(), "/sys"}).error().code(),
            error_code::invalid_argument);
}

TEST(soft_nic_driver, a_settings_file_that_is_a_device_or_too_big_is_refused_unread) {
  temp_dir dir;
  auto d = open_in(dir);
  ASSERT_TRUE(d.ok());
  const std::string path = (*d)->settings_path();
  // A device where the settings belong: refused before a byte is read, naming the path.
  fs::create_symlink("/dev/zero", path);
  auto device = open_in(dir);
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.error().code(), error_code::invalid_argument) << device.error().message();
  EXPECT_NE(device.error().message().find(path), std::string::npos) << device.error().message();
  fs::remove(path);
  // A regular file past the bound: refused by its size.
  {
    std::ofstream big(path);
    big << R"({"version":1,"settings":{}, "pad":")" << std::string(max_state_file_bytes, 'x') << R"("})";
  }
  auto too_big = open_in(dir);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.error().code(), error_code::resource_exhausted) << too_big.error().message();
}

TEST(soft_nic_driver, counters_are_the_netdev_statistics_and_the_nics_own) {
  temp_dir dir;
  const auto stats = dir.path() / "sys/class/net/eth0/statistics";
  fs::create_directories(stats);
  std::ofstream(stats / "rx_packets") << "1200\n";
  std::ofstream(stats / "tx_dropped") << "0\n";
  auto d = open_in(dir);
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE(write_soft_nic_counters((*d)->counters_path(),
                                      {{"ev", "counters"}, {"rx_cnps", 17}, {"rx_ce_marked", 40}, {"paused_ns", 5000}})
                  .ok());
  auto counters = (*d)->read_counters();
  ASSERT_TRUE(counters.ok()) << counters.error().message();
  std::map<std::string, std::uint64_t> by_name;
  for (const auto& c : *counters) by_name[c.name] = c.value;
  EXPECT_EQ(by_name.at("netdev_rx_packets"), 1200u);
  EXPECT_EQ(by_name.at("netdev_tx_dropped"), 0u);
  EXPECT_EQ(by_name.at("rx_cnps"), 17u);
  EXPECT_EQ(by_name.at("rx_ce_marked"), 40u);
  EXPECT_EQ(by_name.at("paused_ns"), 5000u);
  EXPECT_FALSE(by_name.contains("ev"));
}

}  // namespace
}  // namespace rocelab::agents::nic

// The built `rocelab lab facts` and `rocelab lab check` on recorded labs, without root or
// hardware: examples/bringup (facts recorded before rocelab read the NIC's trust state and
// the clock's synchronisation, a config_db dump without the QoS maps' tables or PFC_WD:
// those items listed, MISSING), and facts gathered from the
// recorded mlx5 sysfs tree with recorded `mlnx_qos` output (a NIC trusting PCP fails
// nic_trust with the mlnx_qos fix).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../support/temp_dir.hpp"
#include "../support/text_file.hpp"

namespace rocelab::cli {
namespace {

namespace fs = std::filesystem;

const fs::path source_dir = ROCELAB_SOURCE_DIR;

struct ran {
  int exit_code;
  std::string out;
};

class lab_check_recorded : public ::testing::Test {
 protected:
  // stdout alone (a JSON document), stderr to a file of its own.
  ran rocelab(const std::string& args) {
    const fs::path out = dir_ / "out", err = dir_ / "err";
    const std::string cmd = "cd " + source_dir.string() + " && " + std::string(ROCELAB_BINARY_DIR) + "/rocelab " +
                            args + " >" + out.string() + " 2>" + err.string();
    const int rc = std::system(cmd.c_str());
    return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, rocelab::testing::read_text(out)};
  }

  static nlohmann::json item(const nlohmann::json& j, const std::string& name) {
    for (const auto& i : j["items"])
      if (i["item"] == name) return i;
    return nlohmann::json::object();
  }

  rocelab::testing::temp_dir tmp_{"rlr-lab-check-recorded"};
  const fs::path& dir_ = tmp_.path();
};

TEST_F(lab_check_recorded, the_example_lab_lists_trust_clock_sync_pgs_queues_and_watchdog_as_missing) {
  const ran r = rocelab(
      "lab check --json --inventory examples/bringup/inventory.yml --host-facts examples/bringup/facts "
      "--config-db examples/bringup/config_db-stock.json");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_FALSE(j.value("passed", true));
  EXPECT_EQ(item(j, "nic_trust").value("verdict", ""), "MISSING") << j.dump(1);
  EXPECT_EQ(item(j, "clock_source").value("verdict", ""), "MISSING") << j.dump(1);
  EXPECT_NE(item(j, "nic_trust").value("fix", "").find("mlnx_qos -i enp1s0f0np0"), std::string::npos) << j.dump(1);
  for (const char* name : {"priority_group", "pfc_queue", "pfc_watchdog"})
    EXPECT_EQ(item(j, name).value("verdict", ""), "MISSING") << name << "\n" << j.dump(1);
}

TEST_F(lab_check_recorded, facts_with_a_nic_trusting_pcp_fail_nic_trust) {
  fs::create_directories(dir_ / "facts");
  const ran facts = rocelab(
      "lab facts --host gpu01 --device enp1s0f0np0 --ip 198.18.0.1 --sysfs-root tests/data/mlx5-sysfs "
      "--pfc-file tests/data/bringup/dcb-pfc-prio3.txt --trust-file tests/data/mlnx-qos/mlnx-qos-trust-pcp.txt");
  ASSERT_EQ(facts.exit_code, 0) << facts.out;
  const auto f = nlohmann::json::parse(facts.out, nullptr, false);
  ASSERT_FALSE(f.is_discarded()) << facts.out;
  EXPECT_EQ(f.value("nic_trust", ""), "pcp") << f.dump(1);
  EXPECT_TRUE(f.contains("clock_sync")) << f.dump(1);  // this machine's, whatever it is
  std::ofstream(dir_ / "facts" / "gpu01.json") << facts.out;

  const ran r = rocelab("lab check --json --inventory tests/data/bringup/inventory.yml --host-facts " +
                        (dir_ / "facts").string() + " --config-db tests/data/bringup/config_db-lossless.json");
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  const auto trust = item(j, "nic_trust");
  EXPECT_EQ(trust.value("verdict", ""), "FAIL") << j.dump(1);
  EXPECT_NE(trust.value("fix", "").find("`mlnx_qos -i enp1s0f0np0 --trust dscp` on gpu01"), std::string::npos)
      << trust.dump(1);
  EXPECT_EQ(item(j, "nic_pfc").value("verdict", ""), "PASS") << j.dump(1);
}

}  // namespace
}  // namespace rocelab::cli

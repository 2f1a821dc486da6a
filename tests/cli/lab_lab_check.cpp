// `rocelab lab check --inventory examples/inventory-virtual.yml` against a virtual lab the
// test brings up with `rocelab lab up` (root: namespaces, veths, the soft switch): every
// item passes, twice on the same lab with the same answer (nothing the check does stays
// behind); on a lab mis-set the way a new lab often is (interface MTU 1500, RoCE's DSCP
// mapped to a lossy class, PFC on another priority) exactly those items fail, each with
// its fix, and applying the printed fix makes the item pass.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace rocelab {
namespace {

namespace fs = std::filesystem;

const std::string source_dir = ROCELAB_SOURCE_DIR;
const std::string rocelab_bin = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
const std::string inventory = source_dir + "/examples/inventory-virtual.yml";

std::string shell(const std::string& cmd, int* rc) {
  std::string out;
  FILE* p = ::popen(("{ " + cmd + "; } 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int st = ::pclose(p);
  *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

std::string unique_name() {
  static int n = 0;
  return "lck" + std::to_string(::getpid() % 1000) + std::to_string(n++);
}

class lab_check : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (rocelab lab up makes namespaces and veths)";
    root_ = fs::temp_directory_path() / ("rocelab-lab-check-" + std::to_string(::getpid()));
    fs::create_directories(root_);
  }
  void TearDown() override {
    if (!name_.empty()) {
      int rc = 0;
      const std::string out = lab("down", &rc);
      EXPECT_EQ(rc, 0) << out;
    }
    if (!root_.empty()) fs::remove_all(root_);
  }
  // `rocelab lab --name N --state-root R <args>`.
  std::string lab(const std::string& args, int* rc) {
    return shell(rocelab_bin + " lab --name " + name_ + " --state-root " + root_.string() + " " + args, rc);
  }
  void up(const std::string& args) {
    name_ = unique_name();
    int rc = 0;
    const std::string out = lab("up --hosts 4 --link-gbps 1 " + args, &rc);
    ASSERT_EQ(rc, 0) << out;
  }
  // The check's JSON, and its exit status.
  nlohmann::json check(int* rc) {
    const std::string out = lab("check --json --inventory " + inventory, rc);
    auto j = nlohmann::json::parse(out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << out;
    return j.is_discarded() ? nlohmann::json::object() : j;
  }
  static std::map<std::string, std::set<std::string>> by_verdict(const nlohmann::json& j) {
    std::map<std::string, std::set<std::string>> out;
    for (const auto& i : j.value("items", nlohmann::json::array()))
      out[i["verdict"].get<std::string>()].insert(i["item"].get<std::string>());
    return out;
  }
  // Runs a fix as printed ("`rocelab switch-ctl --lab N ...`"), with this test's state
  // root added (its lab is not under the default one).
  void apply_fix(const std::string& fix) {
    const std::string prefix = "`rocelab switch-ctl";
    ASSERT_EQ(fix.rfind(prefix, 0), 0u) << fix;
    int rc = 0;
    const std::string out = shell(rocelab_bin + " switch-ctl --state-root " + root_.string() +
                                      fix.substr(prefix.size(), fix.size() - prefix.size() - 1),
                                  &rc);
    ASSERT_EQ(rc, 0) << fix << ": " << out;
  }
  static nlohmann::json item(const nlohmann::json& j, const std::string& name) {
    for (const auto& i : j["items"])
      if (i["item"] == name) return i;
    return nlohmann::json::object();
  }

  fs::path root_;
  std::string name_;
};

TEST_F(lab_check, every_item_passes_on_a_fresh_virtual_lab_and_again_on_the_same_lab) {
  up("");
  int rc = -1;
  const nlohmann::json first = check(&rc);
  EXPECT_EQ(rc, 0) << first.dump(1);
  EXPECT_TRUE(first.value("passed", false));
  // 4 hosts x (rdma_device, active_mtu, nic_pfc, nic_trust, clock_source), 7 switch items,
  // the capture.
  ASSERT_EQ(first["items"].size(), 28u) << first.dump(1);
  for (const auto& i : first["items"]) EXPECT_EQ(i["verdict"], "PASS") << i.dump();
  EXPECT_EQ(item(first, "rdma_device")["observed"], "soft RoCEv2 NIC (user space), RoCE v2 GID ::ffff:198.18.0.1");
  EXPECT_EQ(item(first, "active_mtu")["observed"], "netdev MTU 4200, active MTU 4096");
  EXPECT_EQ(item(first, "nic_trust")["observed"].get<std::string>().rfind("trust dscp, DSCP 26 -> priority 3 (soft NIC", 0), 0u)
      << item(first, "nic_trust");
  EXPECT_EQ(item(first, "clock_source")["observed"].get<std::string>().rfind("one kernel clock for every host", 0), 0u)
      << item(first, "clock_source");

  const nlohmann::json second = check(&rc);
  EXPECT_EQ(rc, 0) << second.dump(1);
  EXPECT_EQ(second, first) << "the second check of the same lab differs";

  // The text form: one line per item, the count last.
  const std::string text = lab("check --inventory " + inventory, &rc);
  EXPECT_EQ(rc, 0) << text;
  EXPECT_NE(
      text.find("PASS    dscp_map       switch sw (p1, p2, p3, p4): DSCP 26 -> TC 3, DSCP 48 -> TC 6 on every port"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("28 passed, 0 failed, 0 missing, 0 skipped"), std::string::npos) << text;
}

TEST_F(lab_check, a_mis_set_virtual_lab_fails_its_items_and_the_printed_fix_repairs_one) {
  up("--mtu 1500");
  int rc = 0;
  const std::string set = shell(rocelab_bin + " switch-ctl --state-root " + root_.string() + " --lab " + name_ +
                                    R"( '{"op":"set","field":"dscp_to_tc","value":{"26":1}}')",
                                &rc);
  ASSERT_EQ(rc, 0) << set;
  nlohmann::json j = check(&rc);
  EXPECT_EQ(rc, 1) << j.dump(1);
  EXPECT_FALSE(j.value("passed", true));
  // The capture namespace keeps its own MTU (9216), so the capture item still passes.
  EXPECT_EQ(by_verdict(j)["FAIL"], (std::set<std::string>{"active_mtu", "dscp_map"})) << j.dump(1);
  EXPECT_TRUE(by_verdict(j)["MISSING"].empty()) << j.dump(1);
  EXPECT_EQ(item(j, "active_mtu")["observed"].get<std::string>().rfind("netdev MTU 1500, active MTU 1024", 0), 0u);
  EXPECT_NE(item(j, "active_mtu")["fix"].get<std::string>().find("rocelab lab up --mtu 4200"), std::string::npos);
  const std::string dscp_fix = item(j, "dscp_map")["fix"].get<std::string>();
  const std::string expected_fix =
      "`rocelab switch-ctl --lab " + name_ + R"( '{"op":"set","field":"dscp_to_tc","value":{"26":3}}'`)";
  ASSERT_EQ(dscp_fix, expected_fix);

  apply_fix(dscp_fix);
  j = check(&rc);
  EXPECT_EQ(by_verdict(j)["FAIL"], (std::set<std::string>{"active_mtu"})) << j.dump(1);

  // PFC moved off the data priority at the switch: switch_pfc fails, its fix repairs it.
  const std::string off = shell(rocelab_bin + " switch-ctl --state-root " + root_.string() + " --lab " + name_ +
                                    " set field=lossless_priorities value=16",
                                &rc);
  ASSERT_EQ(rc, 0) << off;
  j = check(&rc);
  EXPECT_EQ(by_verdict(j)["FAIL"], (std::set<std::string>{"active_mtu", "switch_pfc"})) << j.dump(1);
  const std::string pfc_fix = item(j, "switch_pfc")["fix"].get<std::string>();
  ASSERT_EQ(pfc_fix, "`rocelab switch-ctl --lab " + name_ + " set field=lossless_priorities value=24`");
  apply_fix(pfc_fix);
  j = check(&rc);
  EXPECT_EQ(by_verdict(j)["FAIL"], (std::set<std::string>{"active_mtu"})) << j.dump(1);
}

}  // namespace
}  // namespace rocelab

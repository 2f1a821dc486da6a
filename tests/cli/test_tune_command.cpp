#include "rocelab/experiments/tuning/exports.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <set>
#include <string>
#include <thread>

#include "../support/text_file.hpp"
#include "rocelab/controller/controller.hpp"
#include "rocelab/store/run_store.hpp"

// `rocelab tune SPEC --json` end to end with the built CLI on small incasts: the JSON has
// the baselines, the best with its interval and edges, and the Pareto front; a lab-scaled
// spec gets no hardware export but the reason, and --export-for derives one in range;
// with --executor local --controller the trials run on workers attached to a running
// controller, which stores them, and the workers are gone when the command ends; --verify
// without root measures nothing and says so.

namespace rocelab::experiments {
namespace {

namespace fs = std::filesystem;

using testing::read_text;

std::string spec_text(const std::string& topology, const std::string& dcqcn) {
  return "name: tune-cli\nbackend: twin\nseed: 2\nrepeats: 1\n"
         "topology: {type: single_switch, hosts: 5, " + topology + "}\n"
         "switch:\n  buffer_bytes: 512KiB\n  pfc: {enabled: true, priorities: [3]}\n"
         "  ecn: {enabled: true, queues: [3], kmin_bytes: 100KB, kmax_bytes: 400KB, pmax: 0.2}\n"
         "nic: {mtu_bytes: 1024, data_priority: 3, dcqcn: {enabled: true" + dcqcn + "}}\n"
         "workload:\n  incast: {receiver: 0, senders: 4, flow_bytes: 64KiB, start_jitter_ns: 2us}\n"
         "twin: {stop_ns: 2s}\n"
         "tuning:\n  method: random\n  budget: 3\n  parallelism: 2\n  seed: 3\n  parameters:\n"
         "    - {path: switch.ecn.kmin_bytes, min: 5KB, max: 200KB, log: true}\n"
         "    - {path: switch.ecn.pmax, min: 0.01, max: 1, log: true}\n"
         "  objective:\n    - {metric: incast.slowdown_p99, weight: 1}\n    - {metric: paused_us, weight: 0.01}\n";
}

class tune_command : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rlt-tune-cli-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `prefix` runs the command as another user (setpriv ...). A test may tune again into
  // the same export directory: --force replaces the exports.
  int tune(const std::string& spec, const std::string& args, const std::string& prefix = "") {
    const fs::path file = dir_ / "spec.yaml";
    std::ofstream(file) << spec;
    const std::string cmd = prefix + std::string(ROCELAB_BINARY_DIR) + "/rocelab tune " + file.string() + " --db " +
                            (dir_ / "runs.db").string() + " --export-dir " + (dir_ / "exp").string() + " --force " + args +
                            " >" + (dir_ / "out").string() + " 2>" + (dir_ / "err").string();
    const int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  std::string out() const { return read_text(dir_ / "out"); }
  std::string err() const { return read_text(dir_ / "err"); }

  fs::path dir_;
};

TEST_F(tune_command, json_has_baselines_best_with_ci_and_edges_and_the_front) {
  ASSERT_EQ(tune(spec_text("link_gbps: 100", ""), "--json --fresh-seeds 5"), 0) << err();
  const auto j = nlohmann::json::parse(out());
  double lowest = 1e300;
  for (const char* b : {"pfc_only", "vendor_default"}) {
    ASSERT_TRUE(j["baselines"].contains(b)) << b;
    const auto& row = j["baselines"][b];
    EXPECT_TRUE(row["params"].is_object());
    EXPECT_TRUE(row["summary"].is_object());
    ASSERT_TRUE(row["objective"].is_number());
    if (row["feasible"]) lowest = std::min(lowest, row["objective"].get<double>());
  }
  EXPECT_EQ(j["baselines"]["pfc_only"]["params"]["switch.ecn.enabled"], false);
  const auto& best = j["best"];
  ASSERT_TRUE(best["objective"].is_number());
  // The answer follows the rule: a trial only when it beat both baselines on fresh seeds.
  const auto& decision = j["decision"];
  if (decision["answer"] == "tuned") {
    for (const char* b : {"pfc_only", "vendor_default"}) EXPECT_EQ(decision["versus"][b]["outcome"], "better") << b;
    EXPECT_TRUE(best["baseline"].is_null());
  } else {
    EXPECT_EQ(best["baseline"], decision["answer"]);
    EXPECT_DOUBLE_EQ(best["objective"].get<double>(), j["baselines"][best["baseline"].get<std::string>()]["objective"].get<double>());
  }
  EXPECT_LT(lowest, 1e300) << "a baseline is feasible";
  EXPECT_EQ(j["seeds"], 3);
  EXPECT_EQ(best["ci"]["n"], 5);
  EXPECT_EQ(best["ci"]["level"], 0.95);
  EXPECT_TRUE(best["at_edge"].is_array());
  ASSERT_TRUE(j["pareto"].is_array());
  EXPECT_FALSE(j["pareto"].empty());
  // At 100 Gb/s in mlx5 units: exported, and the export names its target.
  EXPECT_TRUE(fs::exists(dir_ / "exp" / "config_db.json"));
  EXPECT_TRUE(fs::exists(dir_ / "exp" / "tuning.html"));
  EXPECT_EQ(j["exports"]["target"]["link_gbps"], 100.0);
  EXPECT_NE(read_text(dir_ / "exp" / "export.txt").find("100 Gb/s"), std::string::npos);
}

// 16 hosts, a deep buffer and light WebSearch traffic: nothing congests, so ECN changes
// nothing and the answer must be a baseline, said first, with the baseline's exports.
TEST_F(tune_command, a_spec_without_congestion_answers_with_a_baseline_and_exports_no_tuned_values) {
  const std::string quiet =
      "name: no-congestion\nbackend: twin\nseed: 4\nrepeats: 1\n"
      "topology: {type: single_switch, hosts: 16, link_gbps: 100}\n"
      "switch:\n  buffer_bytes: 32MiB\n  pfc: {enabled: true, priorities: [3]}\n  ecn: {enabled: true, queues: [3]}\n"
      "nic: {mtu_bytes: 1024, data_priority: 3, dcqcn: {enabled: true}}\n"
      "workload:\n  background: {cdf: websearch, load: 0.2, duration_ns: 200us}\n"
      "twin: {stop_ns: 100ms}\n"
      "tuning:\n  method: random\n  budget: 4\n  parallelism: 2\n  seed: 1\n  parameters:\n"
      "    - {path: switch.ecn.kmin_bytes, min: 10KB, max: 1MB, log: true}\n"
      "    - {path: switch.ecn.kmax_bytes, min: 100KB, max: 4MB, log: true, at_least: switch.ecn.kmin_bytes}\n"
      "    - {path: switch.ecn.pmax, min: 0.01, max: 1, log: true}\n"
      "  objective:\n    - {metric: slowdown_p99, weight: 1}\n    - {metric: paused_us, weight: 0.01}\n";
  ASSERT_EQ(tune(quiet, "--json --fresh-seeds 3"), 0) << err();
  const auto j = nlohmann::json::parse(out());
  const auto& decision = j["decision"];
  ASSERT_NE(decision["answer"], "tuned") << decision.dump(2);
  EXPECT_EQ(j["best"]["baseline"], decision["answer"]);
  EXPECT_FALSE(j["best"].contains("trial"));
  const std::string text = decision["text"];
  EXPECT_TRUE(text.rfind("PFC alone suffices here", 0) == 0 || text.rfind("Keep the vendor defaults", 0) == 0) << text;
  EXPECT_NE(text.find("not distinguishable"), std::string::npos) << text;
  // The exports are the baseline's: none of the contender's thresholds appear in them.
  ASSERT_TRUE(decision["contender"].is_object());
  const std::string config_db = read_text(dir_ / "exp" / "config_db.json");
  ASSERT_FALSE(config_db.empty());
  const double kmin = decision["contender"]["params"]["switch.ecn.kmin_bytes"];
  EXPECT_EQ(config_db.find(std::to_string(static_cast<long long>(kmin))), std::string::npos) << config_db;
  EXPECT_NE(read_text(dir_ / "exp" / "export.txt").find("the baseline " + decision["answer"].get<std::string>()),
            std::string::npos);
  EXPECT_NE(read_text(dir_ / "exp" / "best.yaml").find("the baseline"), std::string::npos);
}

TEST_F(tune_command, a_lab_scaled_spec_is_not_exported_unless_a_hardware_speed_is_named) {
  // The virtual lab's links, standing for 100 Gb/s (k = 200), with hardware DCQCN knobs
  // the tuner does not touch set off their defaults.
  std::string lab = spec_text("link_gbps: 0.5", ", rpg_time_reset: 120, rpg_ai_rate: 20");
  lab += "scaling: {hardware_gbps: 100}\n";
  ASSERT_EQ(tune(lab, ""), 0) << err();
  EXPECT_NE(err().find("no SONiC or mlx5 export"), std::string::npos) << err();
  EXPECT_NE(err().find("link_gbps 0.5"), std::string::npos) << err();
  EXPECT_NE(err().find("scaling.hardware_gbps 100: this is a lab dilated x200"), std::string::npos) << err();
  EXPECT_NE(out().find("no hardware export"), std::string::npos) << out();
  EXPECT_FALSE(fs::exists(dir_ / "exp" / "config_db.json"));
  EXPECT_FALSE(fs::exists(dir_ / "exp" / "mlx5_sysfs.txt"));
  EXPECT_TRUE(fs::exists(dir_ / "exp" / "best.yaml"));

  // For the hardware it stands for, the export is the exact inverse of the scaling: the
  // knobs as the spec has them (the lab ran them dilated), the thresholds unchanged.
  ASSERT_EQ(tune(lab, "--export-for 100"), 0) << err();
  const std::string sysfs = read_text(dir_ / "exp" / "mlx5_sysfs.txt");
  EXPECT_NE(sysfs.find("roce_rp/rpg_time_reset 120\n"), std::string::npos) << sysfs;
  EXPECT_NE(sysfs.find("roce_rp/rpg_ai_rate 20\n"), std::string::npos) << sysfs;
  EXPECT_NE(sysfs.find("roce_np/min_time_between_cnps 4\n"), std::string::npos) << sysfs;
  EXPECT_TRUE(fs::exists(dir_ / "exp" / "hardware.yaml"));
  auto hw = load_spec_file((dir_ / "exp" / "hardware.yaml").string());
  ASSERT_TRUE(hw.ok()) << hw.error().message();
  auto best = load_spec_file((dir_ / "exp" / "best.yaml").string());
  ASSERT_TRUE(best.ok()) << best.error().message();
  EXPECT_DOUBLE_EQ(hw->topology.link_gbps, 100);
  EXPECT_EQ(hw->scaling.hardware_gbps, 0);
  EXPECT_EQ(hw->sw.ecn.kmin_bytes, best->sw.ecn.kmin_bytes);
  EXPECT_EQ(hw->sw.ecn.kmax_bytes, best->sw.ecn.kmax_bytes);
  EXPECT_EQ(hw->nic.dcqcn.rpg_time_reset_us, best->nic.dcqcn.rpg_time_reset_us);
  EXPECT_TRUE(check_hardware_export(*hw).ok()) << check_hardware_export(*hw).message();
}

// `tune --verify 1` without root (as nobody when the test runs as root): the virtual lab
// cannot be brought up, so no configuration is measured. The twin's answer and exports
// are still written; the reason is said once, every row is "not measured", no agreement
// is claimed, and the exit status is 3.
TEST_F(tune_command, verify_without_root_measures_nothing_says_why_once_and_exits_3) {
  std::string lab = spec_text("link_gbps: 0.5", "") + "scaling: {hardware_gbps: 100}\n";
  // The virtual lab's headroom (as_run_here) does not fit 512 KiB; its own buffer does.
  lab.replace(lab.find("buffer_bytes: 512KiB"), std::string("buffer_bytes: 512KiB").size(), "buffer_bytes: 8MiB");
  const std::string as_user = ::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  fs::permissions(dir_, fs::perms::all);  // the store and the exports are written as that user
  ASSERT_EQ(tune(lab, "--verify 1 --json", as_user), 3) << err();
  const std::string reason = "lab up needs root (namespaces, veth)";
  std::size_t said = 0;
  for (auto at = err().find(reason); at != std::string::npos; at = err().find(reason, at + 1)) ++said;
  EXPECT_EQ(said, 1u) << err();
  EXPECT_NE(err().find("--verify measured 0 of 3 configurations"), std::string::npos) << err();

  const auto j = nlohmann::json::parse(out());
  EXPECT_TRUE(j["best"]["objective"].is_number()) << "the twin's answer stands";
  EXPECT_TRUE(fs::exists(dir_ / "exp" / "best.yaml"));
  ASSERT_EQ(j["sim_to_real"].size(), 3u) << j["sim_to_real"].dump();
  for (const auto& row : j["sim_to_real"]) {
    EXPECT_EQ(row.value("status", ""), "not measured") << row.dump();
    EXPECT_NE(row.value("reason", "").find(reason), std::string::npos) << row.dump();
    EXPECT_FALSE(row.contains("within")) << row.dump();
  }
  const std::string table = read_text(dir_ / "exp" / "sim_to_real.txt");
  EXPECT_EQ(table.find("within 15%"), std::string::npos) << table;
  EXPECT_NE(table.find("no configuration measured"), std::string::npos) << table;
  EXPECT_NE(table.find("not measured (pfc_only, vendor_default, trial "), std::string::npos) << table;
  std::size_t in_table = 0;
  for (auto at = table.find(reason); at != std::string::npos; at = table.find(reason, at + 1)) ++in_table;
  EXPECT_EQ(in_table, 1u) << table;
}

TEST_F(tune_command, executor_workers_attach_to_a_running_controller_which_stores_every_trial) {
  const std::string token = "rocelab-tune-attach-token-0123456789";
  const std::string token_file = (dir_ / "token").string();
  std::ofstream(token_file) << token << "\n";
  fs::permissions(token_file, fs::perms::owner_read | fs::perms::owner_write);
  controller::controller_options o;
  o.db_path = (dir_ / "controller.db").string();
  o.token = token;
  o.log = false;
  auto c = controller::controller::start(o);
  ASSERT_TRUE(c.ok()) << c.error().message();
  const std::string flags =
      "--json --fresh-seeds 2 --executor local --workers 2 --controller " + (*c)->address() + " --token-file " + token_file;
  // Twice on the same controller and store: nothing of the first sweep leaks into the second.
  std::set<std::int64_t> runs;
  for (int sweep = 0; sweep < 2; ++sweep) {
    ASSERT_EQ(tune(spec_text("link_gbps: 100", ""), flags + " --name attached-" + std::to_string(sweep)), 0) << err();
    const auto j = nlohmann::json::parse(out());
    EXPECT_EQ(j["executor"]["attached"], true);
    EXPECT_EQ(j["executor"]["controller"], (*c)->address());
    ASSERT_EQ(j["trials"].size(), 3u);
    auto db = store::run_store::open(o.db_path, store::open_mode::read_only);
    ASSERT_TRUE(db.ok()) << db.error().message();
    for (const auto& t : j["trials"]) {
      ASSERT_TRUE(t["run"].is_number()) << t.dump();
      EXPECT_TRUE(runs.insert(t["run"].get<std::int64_t>()).second) << "a run id twice";
      auto info = db->run(t["run"].get<std::int64_t>());
      ASSERT_TRUE(info.ok()) << info.error().message();
      EXPECT_EQ(info->status, store::run_status::completed);
      EXPECT_FALSE(info->parameters["worker.name"].empty()) << "ran on a worker";
    }
    EXPECT_TRUE(j["best"]["objective"].is_number());
    // The sweep's workers were stopped with it; the controller goes on.
    bool gone = false;
    for (int i = 0; i < 250 && !gone; ++i) {
      gone = true;
      for (const auto& w : (*c)->workers()) gone = gone && !w.alive;
      if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_TRUE(gone) << "a worker of sweep " << sweep << " is still connected";
  }
  // The controller's token file is its owner's: left in place.
  EXPECT_TRUE(fs::exists(token_file));
  // Attaching needs the token file; --listen and --controller exclude each other.
  EXPECT_EQ(tune(spec_text("link_gbps: 100", ""), "--executor local --controller " + (*c)->address()), 2);
  EXPECT_NE(err().find("--token-file"), std::string::npos) << err();
  EXPECT_EQ(tune(spec_text("link_gbps: 100", ""), "--controller " + (*c)->address()), 2);
  EXPECT_NE(err().find("need --executor"), std::string::npos) << err();
  EXPECT_EQ(tune(spec_text("link_gbps: 100", ""),
                 "--executor local --listen 127.0.0.1:0 --controller " + (*c)->address() + " --token-file " + token_file),
            2);
  EXPECT_NE(err().find("not both"), std::string::npos) << err();
}

}  // namespace
}  // namespace rocelab::experiments

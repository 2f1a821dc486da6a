// Sim-to-real (tuning_verify.hpp) on a backend that cannot run here and on one that runs:
// the table, the JSON and the log say which rows were measured and why the others were
// not, the reason once; agreement is claimed only from rows measured on both sides.
// The "virtual" backend of these registries is a fake: one that answers as the virtual
// lab does without root (error_code::unavailable), or the twin standing in for a lab.
#include "rocelab/experiments/tuning/tuning_verify.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::experiments {
namespace {

namespace fs = std::filesystem;

constexpr const char* no_root = "lab up needs root (namespaces, veth)";

const char* spec_text = R"(
name: verify-incast
backend: twin
seed: 3
repeats: 1
topology: {type: single_switch, hosts: 5, link_gbps: 100, link_delay_ns: 1us}
switch:
  buffer_bytes: 512KiB
  pfc: {enabled: true, priorities: [3]}
  ecn: {enabled: true, queues: [3], kmin_bytes: 100KB, kmax_bytes: 400KB, pmax: 0.2}
nic: {mtu_bytes: 1024, data_priority: 3, dcqcn: {enabled: true}}
workload:
  incast: {receiver: 0, senders: 4, flow_bytes: 64KiB, start_jitter_ns: 2us}
twin: {stop_ns: 20ms}
)";

// The virtual lab without root: every run answers unavailable, before doing anything.
class no_root_backend final : public backend {
 public:
  result<experiment_result> run(const experiment_spec&, const run_hooks&) const override {
    ++calls;
    return status(error_code::unavailable, no_root);
  }
  mutable std::atomic<int> calls{0};
};

// A lab that runs the twin, except for the configuration with ECN off, which fails.
class twin_lab_backend final : public backend {
 public:
  result<experiment_result> run(const experiment_spec& spec, const run_hooks&) const override {
    if (!spec.sw.ecn.enabled) return status(error_code::internal, "the soft switch exited");
    experiment_spec twin = spec;
    twin.backend = "twin";
    return run_experiment(twin);
  }
};

std::vector<verify_config> three_configs() {
  return {{"pfc_only", "pfc_only", {{"switch.ecn.enabled", "false"}, {"nic.dcqcn.enabled", "false"}}},
          {"vendor_default", "vendor_default", {{"switch.ecn.kmin_bytes", "1MiB"}, {"switch.ecn.kmax_bytes", "2MiB"}}},
          {"trial 2", "", {{"switch.ecn.kmin_bytes", "20KB"}}}};
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

class tuning_verify : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rlt-verify-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto spec = load_spec(spec_text, "verify.yaml");
    ASSERT_TRUE(spec.ok()) << spec.error().message();
    spec_ = *spec;
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  experiment_spec spec_;
};

TEST_F(tuning_verify, without_root_no_row_is_measured_the_reason_is_given_once_and_no_agreement_is_printed) {
  auto fake = std::make_shared<no_root_backend>();
  backend_registry backends = core_backends();
  ASSERT_TRUE(backends.add("virtual", fake).ok());
  auto db = store::run_store::open((dir_ / "runs.db").string());
  ASSERT_TRUE(db.ok()) << db.error().message();
  store::sweep_info sweep;
  sweep.name = "verify";
  sweep.method = "random";
  auto sweep_id = db->begin_sweep(sweep);
  ASSERT_TRUE(sweep_id.ok()) << sweep_id.error().message();
  std::string log;
  auto rows = verify_configs(spec_, three_configs(), "virtual", backends, &*db, *sweep_id,
                             [&](const std::string& line) { log += line + "\n"; });
  ASSERT_TRUE(rows.ok()) << rows.error().message();
  ASSERT_EQ(rows->size(), 3u);

  // The backend said it cannot run here once; the other two are not tried.
  EXPECT_EQ(fake->calls.load(), 1);
  EXPECT_EQ(count_of(log, no_root), 1u) << log;
  auto runs = db->runs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->front().status, store::run_status::failed);

  const std::string table = verify_table(*rows);
  EXPECT_EQ(count_of(table, "not measured"), 4u) << table;  // three rows and the reason's line
  EXPECT_EQ(count_of(table, no_root), 1u) << table;
  EXPECT_NE(table.find("not measured (pfc_only, vendor_default, trial 2): " + std::string(no_root)), std::string::npos)
      << table;
  EXPECT_EQ(table.find("within 15%"), std::string::npos) << table;
  EXPECT_NE(table.find("no configuration measured"), std::string::npos) << table;

  const auto json = nlohmann::json::parse(verify_json_text(*rows));
  ASSERT_EQ(json.size(), 3u);
  for (const auto& row : json) {
    EXPECT_EQ(row.value("status", ""), "not measured") << row.dump();
    EXPECT_EQ(row.value("reason", ""), no_root) << row.dump();
    EXPECT_FALSE(row.contains("measured")) << row.dump();
    EXPECT_FALSE(row.contains("within")) << row.dump();
  }
}

TEST_F(tuning_verify, agreement_counts_only_the_rows_measured_on_both_sides) {
  backend_registry backends = core_backends();
  ASSERT_TRUE(backends.add("virtual", std::make_shared<twin_lab_backend>()).ok());
  auto rows = verify_configs(spec_, three_configs(), "virtual", backends, nullptr, 0);
  ASSERT_TRUE(rows.ok()) << rows.error().message();
  ASSERT_EQ(rows->size(), 3u);

  const auto json = nlohmann::json::parse(verify_json_text(*rows));
  EXPECT_EQ(json[0].value("status", ""), "not measured");
  EXPECT_EQ(json[0].value("reason", ""), "the soft switch exited");
  for (int i : {1, 2}) {
    EXPECT_EQ(json[i].value("status", ""), "measured") << json[i].dump();
    EXPECT_TRUE(json[i].contains("measured")) << json[i].dump();
    EXPECT_TRUE(json[i].contains("within")) << json[i].dump();
  }

  // The twin replaying the twin agrees with itself: the two measured rows, not three.
  const std::string table = verify_table(*rows);
  EXPECT_NE(table.find("within 15% in the 2 of 3 configurations measured"), std::string::npos) << table;
  EXPECT_NE(table.find("not measured (pfc_only): the soft switch exited"), std::string::npos) << table;
}

verify_row ranked_row(const std::string& label, std::vector<double> lab, std::vector<double> twin) {
  verify_row r;
  r.label = label;
  r.lab_objective = mean_ci95(lab);
  r.twin_objective = mean_ci95(twin);
  return r;
}

TEST(verify_ranking, says_whether_the_lab_orders_the_configurations_as_the_twin_and_whether_its_cis_tell_them_apart) {
  // The twin and the lab agree: tuned < vendor_default < pfc_only on both.
  const std::vector<verify_row> agree{ranked_row("pfc_only", {900, 950, 1000}, {970, 975, 980}),
                                      ranked_row("vendor_default", {190, 200, 210}, {185, 190, 195}),
                                      ranked_row("trial 15", {150, 160, 170}, {160, 163, 166})};
  const auto a = rank_verified(agree);
  ASSERT_EQ(a.lab_order.size(), 3u);
  EXPECT_EQ(a.lab_order[0].label, "trial 15");
  EXPECT_EQ(a.lab_order[2].label, "pfc_only");
  EXPECT_TRUE(a.same_order);
  EXPECT_TRUE(a.disagreements.empty());
  EXPECT_NE(a.text.find("agrees with the twin's"), std::string::npos) << a.text;
  EXPECT_NE(a.text.find("over 3 runs each"), std::string::npos) << a.text;

  // The lab puts the vendor defaults first, within its noise; the twin the tuned one, clearly.
  const std::vector<verify_row> differ{ranked_row("vendor_default", {150, 170, 190}, {190, 191, 192}),
                                       ranked_row("trial 15", {160, 180, 200}, {160, 161, 162})};
  const auto d = rank_verified(differ);
  EXPECT_FALSE(d.same_order);
  ASSERT_EQ(d.disagreements.size(), 1u);
  EXPECT_EQ(d.disagreements[0].better_on_lab, "vendor_default");
  EXPECT_EQ(d.disagreements[0].better_on_twin, "trial 15");
  EXPECT_FALSE(d.disagreements[0].lab_separates) << "the lab's CIs overlap";
  EXPECT_TRUE(d.disagreements[0].twin_separates);
  EXPECT_NE(d.text.find("differs from the twin's"), std::string::npos) << d.text;

  // A row not measured is not ranked; one row alone is no ranking.
  auto lone = differ;
  lone[1].error = "the soft switch exited";
  EXPECT_TRUE(rank_verified(lone).lab_order.empty());
}

}  // namespace
}  // namespace rocelab::experiments

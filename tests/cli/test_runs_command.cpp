// `rocelab runs`, `runs show` and `runs diff` with the built CLI on a real store: two twin
// runs of one spec, the second with a lower ECN threshold; the list tells them apart by
// their overrides and results, show gives one run's settings and results, diff names the
// differing fields and the change of each result; a run cut short is partial.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../support/text_file.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::cli {
namespace {

namespace fs = std::filesystem;
using rocelab::testing::read_text;

constexpr const char* spec =
    "name: runs-cli\nbackend: twin\nseed: 2\n"
    "topology: {type: single_switch, hosts: 5, link_gbps: 100}\n"
    "switch:\n  buffer_bytes: 512KiB\n  pfc: {enabled: true, priorities: [3]}\n"
    "  ecn: {enabled: true, queues: [3], kmin_bytes: 100KB, kmax_bytes: 400KB, pmax: 0.2}\n"
    "nic: {data_priority: 3, dcqcn: {enabled: true}}\n"
    "workload:\n  incast: {receiver: 0, senders: 4, flow_bytes: 256KiB}\n";

class runs_command : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("rlr-runs-cli-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "spec.yaml") << spec;
    ASSERT_EQ(rocelab("run spec.yaml --db runs.db"), 0) << out();
    ASSERT_EQ(rocelab("run spec.yaml --db runs.db --set switch.ecn.kmin_bytes=5KB --set switch.ecn.kmax_bytes=20KB"), 0)
        << out();
  }
  void TearDown() override { fs::remove_all(dir_); }

  int rocelab(const std::string& args) {
    const std::string cmd = "cd " + dir_.string() + " && " + std::string(ROCELAB_BINARY_DIR) + "/rocelab " + args +
                            " >out 2>&1";
    const int rc = std::system(cmd.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }
  std::string out() const { return read_text(dir_ / "out"); }

  fs::path dir_;
};

TEST_F(runs_command, the_list_shows_each_runs_overrides_and_results) {
  ASSERT_EQ(rocelab("runs --db runs.db"), 0) << out();
  const std::string text = out();
  EXPECT_NE(text.find("fct p99"), std::string::npos) << text;
  EXPECT_NE(text.find("switch.ecn.kmax_bytes=20KB switch.ecn.kmin_bytes=5KB"), std::string::npos) << text;

  ASSERT_EQ(rocelab("runs --db runs.db --json"), 0) << out();
  const auto j = nlohmann::json::parse(out());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_TRUE(j[0]["overrides"].empty());
  EXPECT_EQ(j[1]["overrides"]["switch.ecn.kmin_bytes"], "5KB");
  EXPECT_EQ(j[0]["results"]["all"]["flows"], 4);
  EXPECT_EQ(j[1]["results"]["all"]["completed"], 4);
  // The lower thresholds mark more: the results tell the runs apart.
  EXPECT_GT(j[1]["results"]["ce_marked"].get<std::uint64_t>(), j[0]["results"]["ce_marked"].get<std::uint64_t>());
}

TEST_F(runs_command, show_gives_one_runs_settings_and_results) {
  ASSERT_EQ(rocelab("runs show 2 --db runs.db"), 0) << out();
  const std::string text = out();
  EXPECT_NE(text.find("runs-cli (twin, seed 2)"), std::string::npos) << text;
  EXPECT_NE(text.find("switch.ecn.kmin_bytes = 5KB"), std::string::npos) << text;
  EXPECT_NE(text.find("incast slowdown p99"), std::string::npos) << text;

  ASSERT_EQ(rocelab("runs show 2 --db runs.db --json"), 0) << out();
  const auto j = nlohmann::json::parse(out());
  EXPECT_EQ(j["id"], 2);
  EXPECT_NE(j["spec_yaml"].get<std::string>().find("kmin_bytes"), std::string::npos);
  EXPECT_EQ(j["results"]["by_kind"]["incast"]["flows"], 4);

  EXPECT_NE(rocelab("runs show 7 --db runs.db"), 0);
  EXPECT_NE(out().find("7"), std::string::npos) << "the error names the run: " << out();
}

TEST_F(runs_command, diff_names_the_fields_that_differ_and_the_change_of_each_result) {
  ASSERT_EQ(rocelab("runs diff 1 2 --db runs.db --json"), 0) << out();
  const auto j = nlohmann::json::parse(out());
  std::vector<std::string> fields;
  for (const auto& row : j["settings"]) fields.push_back(row["field"]);
  EXPECT_EQ(fields, (std::vector<std::string>{"switch.ecn.kmin_bytes", "switch.ecn.kmax_bytes"}));
  bool saw_ce = false;
  for (const auto& row : j["results"]) {
    EXPECT_DOUBLE_EQ(row["change"].get<double>(), row["b"].get<double>() - row["a"].get<double>());
    if (row["metric"] == "CE marked") saw_ce = row["b"].get<double>() > row["a"].get<double>();
  }
  EXPECT_TRUE(saw_ce) << j["results"].dump();

  ASSERT_EQ(rocelab("runs diff 1 2 --db runs.db"), 0) << out();
  const std::string text = out();
  EXPECT_NE(text.find("2 fields differ"), std::string::npos) << text;
  EXPECT_NE(text.find("switch.ecn.kmin_bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("%"), std::string::npos) << text;

  ASSERT_EQ(rocelab("runs diff 1 1 --db runs.db"), 0) << out();
  EXPECT_NE(out().find("the same spec: no field differs"), std::string::npos) << out();
}

TEST_F(runs_command, report_of_two_runs_puts_them_side_by_side) {
  ASSERT_EQ(rocelab("report 1 2 --db runs.db"), 0) << out();
  EXPECT_NE(out().find("report-1-2/report.html (side by side)"), std::string::npos) << out();
  const std::string html = read_text(dir_ / "report-1-2" / "report.html");
  EXPECT_NE(html.find("2 runs side by side"), std::string::npos);
  EXPECT_NE(html.find("switch.ecn.kmin_bytes = 5KB"), std::string::npos) << "the overrides name the runs apart";
  const auto j = nlohmann::json::parse(read_text(dir_ / "report-1-2" / "report.json"));
  EXPECT_EQ(j["runs"][1]["overrides"]["switch.ecn.kmax_bytes"], "20KB");
  EXPECT_NE(rocelab("report 1 9 --db runs.db"), 0) << "a run that is not there";
}

// The example's 16-to-1 incast stopped 100 ns into virtual time: no flow completes. The
// run is stored partial with the count, said by run (exit 3, summary.json, its text), runs
// and runs show.
TEST_F(runs_command, a_run_cut_short_is_stored_partial_with_its_count_everywhere) {
  const std::string example = std::string(ROCELAB_SOURCE_DIR) + "/examples/incast-16to1.yaml";
  EXPECT_EQ(rocelab("run " + example + " --set twin.stop_ns=100 --db cut.db --out cut"), 3) << out();
  EXPECT_NE(out().find("status      partial: 0 of 16 flows completed"), std::string::npos) << out();
  const auto summary = nlohmann::json::parse(read_text(dir_ / "cut" / "summary.json"));
  EXPECT_EQ(summary["status"], "partial");
  EXPECT_EQ(summary["status_note"], "0 of 16 flows completed");

  ASSERT_EQ(rocelab("runs --db cut.db --json"), 0) << out();
  const auto j = nlohmann::json::parse(out());
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["status"], "partial");
  EXPECT_EQ(j[0]["error"], "0 of 16 flows completed");
  ASSERT_EQ(rocelab("runs --db cut.db"), 0) << out();
  EXPECT_NE(out().find("partial"), std::string::npos) << out();
  EXPECT_NE(out().find("0 of 16 flows completed"), std::string::npos) << out();
  ASSERT_EQ(rocelab("runs show 1 --db cut.db"), 0) << out();
  EXPECT_NE(out().find("status      partial: 0 of 16 flows completed"), std::string::npos) << out();

  // The same spec run to its end completes.
  ASSERT_EQ(rocelab("runs show 1 --db runs.db --json"), 0) << out();
  EXPECT_EQ(nlohmann::json::parse(out())["status"], "completed");
}

// Every field of a run's records as the store gives them back, and what the run is, as
// text to compare two stores' copies of one run.
std::string stored_text(const std::string& db, std::int64_t id) {
  auto store = store::run_store::open(db, store::open_mode::read_only);
  if (!store) return "cannot open " + db + ": " + store.error().message();
  auto info = store->run(id);
  auto r = store->load(id);
  if (!info || !r) return "no run " + std::to_string(id) + " in " + db;
  std::ostringstream o;
  o << info->name << ' ' << info->backend << ' ' << info->seed << ' ' << store::to_string(info->status) << " ["
    << info->error << "]\n" << info->spec_yaml << '\n';
  for (const auto& [k, v] : info->parameters) o << k << '=' << v << '\n';
  for (const auto& h : r->hosts) o << "host " << h << '\n';
  for (const auto& d : r->devices) o << "device " << d << '\n';
  for (const auto& f : r->flows)
    o << "flow " << f.src << ' ' << f.dst << ' ' << f.qp << ' ' << int{f.priority} << ' ' << static_cast<int>(f.kind)
      << ' ' << f.bytes << ' ' << f.start_ns << ' ' << f.end_ns << ' ' << f.fct_ns << ' ' << f.ideal_fct_ns << ' '
      << f.retransmits << ' ' << f.ce_marked << ' ' << f.cnps << ' ' << f.tag << ' ' << f.retransmits_measured
      << f.cnps_measured << '\n';
  for (const auto& p : r->pauses)
    o << "pause " << p.device << ' ' << p.port << ' ' << int{p.priority} << ' ' << p.start_ns << ' ' << p.end_ns << ' '
      << static_cast<int>(p.source) << '\n';
  for (const auto& e : r->events)
    o << "event " << static_cast<int>(e.kind) << ' ' << e.device << ' ' << e.port << ' ' << int{e.priority} << ' '
      << e.t_ns << ' ' << e.src << ' ' << e.dst << ' ' << e.qp << ' ' << static_cast<int>(e.source) << '\n';
  for (const auto& c : r->counters)
    o << "counter " << c.device << ' ' << c.port << ' ' << c.name << ' ' << c.t_ns << ' ' << c.value << '\n';
  for (const auto& q : r->queues)
    o << "queue " << q.device << ' ' << q.port << ' ' << int{q.queue} << ' ' << q.t_ns << ' ' << q.bytes << '\n';
  for (const auto& a : r->allreduce)
    o << "allreduce " << a.algorithm << ' ' << a.ranks << ' ' << a.bytes << ' ' << a.time_ns << ' ' << a.algbw_gbps
      << ' ' << a.busbw_gbps << '\n';
  const auto& t = r->totals;
  o << "totals " << t.pfc_pause_frames << ' ' << t.pfc_resume_frames << ' ' << t.paused_ns << ' ' << t.ce_marked << ' '
    << t.cnps << ' ' << t.drops << ' ' << t.retransmits << ' ' << t.packets_forwarded << ' ' << t.retransmits_measured
    << t.cnps_measured << " simulated " << r->simulated_ns << '\n';
  auto agents = store->agents(id);
  if (agents)
    for (const auto& a : *agents) o << "agent " << a.name << ' ' << a.address << ' ' << a.state << '\n';
  return o.str();
}

// A run directory holds its run whole (records.db): `runs import DIR` into a fresh store
// gives exactly the run a direct store holds: the same records, name, spec, parameters
// and status.
TEST_F(runs_command, a_run_directory_imported_into_a_fresh_store_equals_the_directly_stored_run) {
  ASSERT_EQ(rocelab("run spec.yaml --db direct.db --out D --set repeats=2 --set switch.ecn.kmin_bytes=5KB"), 0) << out();
  ASSERT_TRUE(fs::is_regular_file(dir_ / "D" / "records.db"));
  ASSERT_EQ(rocelab("runs import D --db fresh.db"), 0) << out();
  EXPECT_NE(out().find("run         1 in fresh.db (completed, from D)"), std::string::npos) << out();
  const std::string direct = stored_text((dir_ / "direct.db").string(), 1);
  EXPECT_NE(direct.find("flow "), std::string::npos) << direct;
  EXPECT_NE(direct.find("counter "), std::string::npos) << direct;
  EXPECT_EQ(stored_text((dir_ / "fresh.db").string(), 1), direct);
  // Into a store that has runs already: the next id, the same run.
  ASSERT_EQ(rocelab("runs import D --db runs.db --json"), 0) << out();
  EXPECT_EQ(stored_text((dir_ / "runs.db").string(), 3), direct);
  EXPECT_EQ(rocelab("runs import nowhere --db fresh.db"), 2) << out();
  EXPECT_NE(out().find("nowhere holds no records.db"), std::string::npos) << out();
}

// A store that cannot take the run's records (here its disk full: the test hook limits its
// pages) loses nothing: the run directory is written, says so, and `runs import` stores
// the run later exactly as a direct store holds it.
TEST_F(runs_command, a_run_its_store_cannot_keep_is_kept_in_its_directory_and_imported_later) {
  // Ten repeats: more records than two pages hold.
  ASSERT_EQ(rocelab("run spec.yaml --db direct.db --set repeats=10"), 0) << out();
  ASSERT_EQ(rocelab("run spec.yaml --db full.db --out F"), 0) << out();  // the store holds its schema
  // Room for the run's row (two pages), not for its records.
  const std::string cmd = "cd " + dir_.string() + " && ROCELAB_TEST_STORE_ROOM=full.db=2 " +
                          std::string(ROCELAB_BINARY_DIR) +
                          "/rocelab run spec.yaml --db full.db --out G --set repeats=10 >out 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1) << out();
  EXPECT_NE(out().find("could not keep run 2"), std::string::npos) << out();
  EXPECT_NE(out().find("database or disk is full"), std::string::npos) << out();
  EXPECT_NE(out().find("rocelab runs import G --db full.db"), std::string::npos) << out();
  for (const char* f : {"records.db", "flows.csv", "queues.csv", "summary.json", "spec.yaml"})
    EXPECT_TRUE(fs::is_regular_file(dir_ / "G" / f)) << f;
  ASSERT_EQ(rocelab("runs import G --db later.db"), 0) << out();
  EXPECT_EQ(stored_text((dir_ / "later.db").string(), 1), stored_text((dir_ / "direct.db").string(), 1));
  // The store itself: the run is failed there, saying why.
  auto full = store::run_store::open((dir_ / "full.db").string(), store::open_mode::read_only);
  ASSERT_TRUE(full.ok());
  auto info = full->run(2);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->status, store::run_status::failed);
  EXPECT_NE(info->error.find("database or disk is full"), std::string::npos) << info->error;
}

// One stored run; the store keeps each record's repeat (schema 4).
TEST_F(runs_command, a_three_repeat_run_is_one_stored_run_whose_flows_carry_repeats_0_1_and_2) {
  ASSERT_EQ(rocelab("run spec.yaml --db three.db --set repeats=3 --out three"), 0) << out();
  auto db = store::run_store::open((dir_ / "three.db").string(), store::open_mode::read_only);
  ASSERT_TRUE(db.ok()) << db.error().message();
  auto runs = db->runs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  auto loaded = db->load(runs->front().id);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  std::set<std::uint32_t> repeats;
  for (const auto& f : loaded->flows) repeats.insert(f.repeat);
  EXPECT_EQ(repeats, (std::set<std::uint32_t>{0, 1, 2}));
}

}  // namespace
}  // namespace rocelab::cli

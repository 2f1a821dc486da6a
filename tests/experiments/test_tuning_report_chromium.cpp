// The tuning and multi-run reports rendered by a browser: a real tuning of a small incast
// on the twin and three twin runs side by side, loaded by headless Chromium (Debian's
// chromium). After the browser has parsed each page, every plot's geometry still holds
// (no point under the legend or outside the axes, every series visible: svg_geometry.hpp)
// and the screenshot is not blank. The screenshots are kept in build/report-plots/ (the
// pictures docs/reports.md shows are these). Skipped, saying so, without chromium.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../support/chromium.hpp"
#include "rocelab/experiments/report/multi_run_report.hpp"
#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/spec/spec_files.hpp"
#include "rocelab/experiments/tuning/tuning_report.hpp"
#include "rocelab/experiments/tuning/tuning_spec.hpp"
#include "svg_geometry.hpp"
#include "tuning_on_twin.hpp"

namespace rocelab::experiments {
namespace {

namespace fs = std::filesystem;

const std::string incast = R"(
name: chromium-incast
backend: twin
seed: 3
repeats: 1
topology: {type: single_switch, hosts: 9, link_gbps: 100, link_delay_ns: 1us}
switch:
  buffer_bytes: 1MiB
  cell_bytes: 256
  dynamic_th: 0
  pfc: {enabled: true, priorities: [3]}
  ecn: {enabled: true, queues: [3], kmin_bytes: 100KB, kmax_bytes: 400KB, pmax: 0.2}
nic: {mtu_bytes: 1024, data_priority: 3, dcqcn: {enabled: true}}
workload:
  incast: {receiver: 0, sender_hosts: 1-4, flow_bytes: 256KiB, start_jitter_ns: 2us}
  victim: {flow_bytes: 16KiB, flows_per_sender: 4, start_ns: 10us, gap_ns: 30us}
twin: {stop_ns: 50ms}
tuning:
  method: random
  budget: 8
  parallelism: 2
  seed: 5
  parameters:
    - {path: switch.ecn.kmin_bytes, min: 5KB, max: 200KB, log: true}
    - {path: switch.ecn.kmax_bytes, min: 200KB, max: 2MB, log: true}
    - {path: switch.ecn.pmax, min: 0.01, max: 1, log: true}
  objective:
    - {metric: victim.slowdown_p99, weight: 1}
    - {metric: incast.slowdown_p99, weight: 1}
    - {metric: paused_us, weight: 0.01}
)";

class reports_in_chromium : public ::testing::Test {
 protected:
  void SetUp() override {
    if (rocelab::testing::chromium_binary().empty())
      GTEST_SKIP() << "chromium is not installed (scripts/setup installs Debian's chromium)";
    dir_ = fs::temp_directory_path() / ("rlt-report-chromium-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Renders `html`, checks every plot of the parsed DOM, screenshots it into
  // build/report-plots/NAME.png. Returns the DOM.
  std::string check_in_browser(const std::string& name, const std::string& html, std::size_t plots) {
    const fs::path page = dir_ / (name + ".html");
    std::ofstream(page) << html;
    auto dom = rocelab::testing::chromium_dom(page, dir_);
    EXPECT_TRUE(dom.has_value()) << "chromium failed; see " << (dir_ / "chromium.log");
    if (!dom) return {};
    const auto parsed = rocelab::testing::svg_geometry::parse(*dom);
    EXPECT_EQ(parsed.size(), plots) << name;
    for (const auto& p : parsed) {
      for (const std::string& problem : rocelab::testing::svg_geometry::problems(p)) ADD_FAILURE() << name << ": " << problem;
    }
    const fs::path keep = fs::path(ROCELAB_BINARY_DIR) / "report-plots";
    fs::create_directories(keep);
    const fs::path shot = keep / (name + ".png");
    fs::remove(shot);
    const int rc = std::system(
        rocelab::testing::chromium_command(page, dir_, "--screenshot=" + shot.string() + " --window-size=1280,1800")
            .c_str());
    EXPECT_EQ(rc, 0);
    EXPECT_TRUE(fs::exists(shot));
    if (fs::exists(shot)) {
      EXPECT_GT(fs::file_size(shot), 20'000u) << "a page with plots, not a blank one";
    }
    return *dom;
  }

  fs::path dir_;
};

TEST_F(reports_in_chromium, a_real_tuning_report_keeps_its_plot_and_labels_every_configuration) {
  auto spec = load_spec(incast, "chromium-incast.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  auto settings = load_tuning(incast, "chromium-incast.yaml", *spec);
  ASSERT_TRUE(settings.ok()) << settings.error().message();
  const testing::tuned t = testing::tune_on_twin(*spec, *settings, 3);
  ASSERT_FALSE(HasFailure());
  const tuning_answer* a = &t.answer;
  const std::string dom = check_in_browser("tuning-report", tuning_report_html("chromium-incast", t.settings, *a), 1);
  // Both baselines are drawn, and every distinct configuration is a labelled row.
  EXPECT_NE(dom.find("pfc_only"), std::string::npos);
  EXPECT_NE(dom.find("vendor_default"), std::string::npos);
  for (const pareto_point& p : a->pareto) EXPECT_NE(dom.find("<td class=\"l\">" + p.label + "</td>"), std::string::npos) << p.label;
  EXPECT_NE(dom.find(a->decision.answer == "tuned" ? "Run the tuned configuration" : "baseline"), std::string::npos);
}

TEST_F(reports_in_chromium, a_multi_run_report_of_twin_runs_keeps_its_plots) {
  std::vector<report_run> runs;
  for (const auto& [senders, name] : std::vector<std::pair<int, std::string>>{{4, "4-to-1"}, {2, "2-to-1"}, {1, "alone"}}) {
    auto spec = load_spec(incast, "chromium-incast.yaml");
    ASSERT_TRUE(spec.ok());
    spec->workload.incast.sender_hosts = {};
    spec->workload.incast.senders = static_cast<std::uint32_t>(senders);
    spec->workload.victim.enabled = false;
    auto ran = run_experiment(*spec);
    ASSERT_TRUE(ran.ok()) << ran.error().message();
    report_run r;
    r.id = std::to_string(runs.size() + 1);
    r.name = name;
    r.backend = "twin";
    r.status = "completed";
    r.flows = ran->repeats.front().flows;
    r.summary = summarize({&ran->repeats.front()}, ran->seeds);
    runs.push_back(std::move(r));
  }
  const std::string html = multi_run_html(runs);
  const std::string dom = check_in_browser("multi-run-report", html, rocelab::testing::svg_geometry::parse(html).size());
  EXPECT_NE(dom.find("4-to-1"), std::string::npos);
}

}  // namespace
}  // namespace rocelab::experiments

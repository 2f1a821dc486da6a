// Runs side by side (report/multi_run_report.hpp): the page overlays each run's FCT CDF
// and slowdown by size, its table gives each result's change against the first run, and
// the files hold the same numbers; in headless Chromium the page parses with every plot.
#include "rocelab/experiments/report/multi_run_report.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../support/chromium.hpp"
#include "../support/text_file.hpp"

namespace rocelab::experiments {
namespace {

namespace fs = std::filesystem;

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// A run of `n` flows of 4 KiB and 1 MiB whose FCT is `factor` times the ideal.
report_run run_of(const std::string& id, double factor, std::int64_t paused_ns) {
  report_run r;
  r.id = id;
  r.name = "incast";
  r.backend = "twin";
  r.status = "completed";
  for (int i = 0; i < 8; ++i) {
    flow_record f;
    f.kind = workload_kind::incast;
    f.bytes = i % 2 ? 4096 : 1 << 20;
    f.ideal_fct_ns = i % 2 ? 1'000 : 100'000;
    f.fct_ns = static_cast<std::int64_t>(static_cast<double>(f.ideal_fct_ns) * factor * (1 + i * 0.1));
    f.start_ns = 0;
    f.end_ns = f.fct_ns;
    r.flows.push_back(f);
  }
  run_records rec;
  rec.flows = r.flows;
  rec.totals.paused_ns = paused_ns;
  rec.totals.pfc_pause_frames = static_cast<std::uint64_t>(paused_ns / 1000);
  r.summary = summarize({&rec}, {1});
  return r;
}

TEST(multi_run_report, slowdown_by_size_buckets_flows_by_powers_of_two) {
  const auto buckets = slowdown_by_size(run_of("1", 2.0, 0).flows);
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0].flows, 4u);
  EXPECT_NEAR(buckets[0].bytes, 4096 * std::sqrt(2.0), 1e-6);
  EXPECT_NEAR(buckets[0].slowdown_p99, 2.0 * 1.7, 1e-9) << "the largest of 1.1, 1.3, 1.5, 1.7 times 2";
  EXPECT_NEAR(buckets[1].bytes, (1 << 20) * std::sqrt(2.0), 1e-3);
}

TEST(multi_run_report, the_page_overlays_the_runs_and_gives_each_change_against_the_first) {
  const std::vector<report_run> runs = {run_of("12", 4.0, 2'000'000), run_of("13", 2.0, 500'000)};
  const std::string html = multi_run_html(runs);
  EXPECT_NE(html.find("id=\"fct-cdf\""), std::string::npos);
  EXPECT_NE(html.find("id=\"slowdown-by-size\""), std::string::npos);
  EXPECT_EQ(count(html, "data-name=\"run 12 incast\""), 2u) << "one series per plot";
  EXPECT_EQ(count(html, "data-name=\"run 13 incast\""), 2u);
  EXPECT_EQ(html.find("no data"), std::string::npos);
  EXPECT_NE(html.find("id=pause-time"), std::string::npos);
  // Half the slowdown and a quarter of the pause time: -50% and -75%, both better.
  EXPECT_NE(html.find("(-50.0%)"), std::string::npos) << html;
  EXPECT_NE(html.find("(-75.0%)"), std::string::npos) << html;
  EXPECT_NE(html.find("class=good"), std::string::npos);
  EXPECT_NE(html.find("run 13 incast against run 12 incast: fct p99"), std::string::npos) << html;

  const auto j = nlohmann::json::parse(multi_run_json(runs));
  ASSERT_EQ(j["runs"].size(), 2u);
  bool paused = false;
  for (const auto& c : j["changes"])
    if (c["metric"] == "paused") {
      paused = true;
      EXPECT_EQ(c["run"], "13");
      EXPECT_DOUBLE_EQ(c["change"].get<double>(), -1'500'000);
      EXPECT_DOUBLE_EQ(c["change_percent"].get<double>(), -75.0);
    }
  EXPECT_TRUE(paused);
}

TEST(multi_run_report, writes_html_json_and_csv_and_needs_two_runs) {
  const fs::path dir = fs::temp_directory_path() / ("rlr-multi-run-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ASSERT_TRUE(write_multi_run_report(dir.string(), {run_of("1", 1.0, 0), run_of("2", 2.0, 0), run_of("3", 3.0, 0)})
                  .ok());
  for (const char* f : {"report.html", "report.json", "results.csv"}) EXPECT_TRUE(fs::exists(dir / f)) << f;
  const std::string csv = rocelab::testing::read_text(dir / "results.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "metric,run 1,run 2,run 3");
  EXPECT_EQ(write_multi_run_report(dir.string(), {run_of("1", 1.0, 0)}).code(), error_code::invalid_argument);

  // Chromium parses the page into a DOM with both plots and their lines.
  if (rocelab::testing::chromium_binary().empty()) {
    fs::remove_all(dir);
    GTEST_SKIP() << "chromium is not installed (scripts/setup installs Debian's chromium)";
  }
  const auto dom = rocelab::testing::chromium_dom(dir / "report.html", dir);
  ASSERT_TRUE(dom.has_value()) << rocelab::testing::read_text(dir / "chromium.log");
  EXPECT_NE(dom->find("id=\"fct-cdf\""), std::string::npos);
  EXPECT_NE(dom->find("id=\"slowdown-by-size\""), std::string::npos);
  EXPECT_EQ(count(*dom, "</svg>"), 2u);
  EXPECT_GE(count(*dom, "<polyline"), 6u) << "three runs in each of two plots";
  EXPECT_NE(dom->find("id=\"results\""), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rocelab::experiments

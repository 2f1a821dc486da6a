// The decision report rendered by a browser: headless Chromium (Debian's chromium) loads
// report.html of the compare example, and the parsed DOM holds the table and every plot.
// Skipped, saying so, when chromium is not installed.
#include "rocelab/experiments/compare/compare.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../support/chromium.hpp"

namespace rocelab::experiments {
namespace {

namespace fs = std::filesystem;

TEST(CompareReportInChromium, TheRenderedPageHoldsTheTableAndEveryPlot) {
  if (rocelab::testing::chromium_binary().empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup installs Debian's chromium)";
  compare_settings s;
  auto spec = load_compare_spec(std::string(ROCELAB_SOURCE_DIR) + "/examples/compare-fabrics.yaml", s);
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  ASSERT_TRUE(load_profiles(s).ok());
  s.tune_budget = 2;  // the page, not the tuning, is under test here
  auto r = run_compare(*spec, s);
  ASSERT_TRUE(r.ok()) << r.error().message();
  const fs::path dir = fs::temp_directory_path() / ("rlc-chromium-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "report.html") << compare_html(*r);
  const auto rendered = rocelab::testing::chromium_dom(dir / "report.html", dir);
  ASSERT_TRUE(rendered.has_value()) << "chromium failed; see " << (dir / "chromium.log");
  const std::string& dom = *rendered;
  for (const char* id : {"incast-fct-cdf", "small-fct-cdf", "scale-busbw", "scale-cost"}) {
    const auto at = dom.find(std::string("id=\"") + id + "\"");
    ASSERT_NE(at, std::string::npos) << id;
    // The svg module counts the points it drew in data-points.
    const auto dp = dom.find("data-points=\"", at);
    ASSERT_NE(dp, std::string::npos) << id;
    EXPECT_GT(std::stoi(dom.substr(dp + 13, 8)), 0) << id << " drew no points";
  }
  EXPECT_NE(dom.find("<table>"), std::string::npos);
  EXPECT_NE(dom.find("Verdict"), std::string::npos);
  for (const char* f : {"ib", "roce-tuned", "roce-default"}) EXPECT_NE(dom.find(f), std::string::npos) << f;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rocelab::experiments

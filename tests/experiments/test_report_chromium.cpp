#include "rocelab/experiments/report/report.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#if ROCELAB_HAVE_PNG
#include <png.h>
#endif

#include "../support/chromium.hpp"
#include "correlation_scenarios.hpp"

// The report rendered by a browser: headless Chromium (Debian's chromium) loads the page
// from a file, its DOM after parsing holds every plot with its marks, and a screenshot of
// the page is not blank and shows the plots' colours. Skipped, saying so, when chromium
// is not installed.

namespace rocelab::experiments {
namespace {

namespace fs = std::filesystem;

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

class report_in_chromium : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = rocelab::testing::chromium_binary();
    if (chromium_.empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup installs Debian's chromium)";
    dir_ = fs::temp_directory_path() / ("rlr-chromium-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    const auto t = scenarios::two_incasts_and_bystanders();
    report_header h;
    h.run_id = "chromium-test";
    h.name = "pfc-spreading";
    const path_fn paths = paths_for_run(t.records, &t.config.topology, t.config.seed, h);
    ASSERT_TRUE(write_report(dir_.string(), analyze_run(t.records, h, paths)).ok());
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  std::string command(const std::string& action) const {
    return rocelab::testing::chromium_command(dir_ / "report.html", dir_, action);
  }

  std::string chromium_;
  fs::path dir_;
};

TEST_F(report_in_chromium, the_rendered_dom_holds_every_plot) {
  FILE* p = ::popen(command("--dump-dom").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string dom;
  std::array<char, 65536> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) dom.append(buf.data(), n);
  const int rc = ::pclose(p);
  ASSERT_EQ(rc, 0) << "chromium failed; see its log";
  ASSERT_FALSE(dom.empty());
  for (const char* id : {"plot-fct-cdf", "plot-slowdown-size", "plot-slowdown-pause", "plot-pause-timeline",
                         "plot-queue-depth", "plot-marks-cnps"})
    EXPECT_NE(dom.find("id=\"" + std::string(id) + "\""), std::string::npos) << id;
  EXPECT_EQ(count(dom, "</svg>"), 6u);
  // The marks survived parsing: points of the scatter plots, lines, timeline spans.
  EXPECT_GE(count(dom, "<circle"), 16u) << "8 flows in each of two scatter plots";
  EXPECT_GE(count(dom, "<polyline"), 4u);
  EXPECT_NE(dom.find("spine0:1 p3 (model)"), std::string::npos);
  EXPECT_NE(dom.find("id=\"table-victims\""), std::string::npos);
}

TEST_F(report_in_chromium, the_screenshot_is_not_blank_and_shows_the_plots) {
#if !ROCELAB_HAVE_PNG
  GTEST_SKIP() << "built without libpng (scripts/setup installs libpng-dev): cannot read the screenshot";
#else
  const fs::path shot = dir_ / "report.png";
  const int rc = std::system(command("--screenshot=" + shot.string() + " --window-size=1280,4000").c_str());
  ASSERT_EQ(rc, 0) << "chromium failed; see its log";
  ASSERT_TRUE(fs::exists(shot));
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  ASSERT_TRUE(png_image_begin_read_from_file(&image, shot.c_str())) << image.message;
  image.format = PNG_FORMAT_RGB;
  std::vector<unsigned char> px(PNG_IMAGE_SIZE(image));
  ASSERT_TRUE(png_image_finish_read(&image, nullptr, px.data(), 0, nullptr)) << image.message;
  EXPECT_EQ(image.width, 1280u);
  std::size_t ink = 0, model_orange = 0, palette_blue = 0;
  const auto near = [](const unsigned char* p, int r, int g, int b) {
    return std::abs(p[0] - r) < 12 && std::abs(p[1] - g) < 12 && std::abs(p[2] - b) < 12;
  };
  for (std::size_t i = 0; i + 2 < px.size(); i += 3) {
    const unsigned char* p = &px[i];
    if (p[0] < 240 || p[1] < 240 || p[2] < 240) ++ink;
    if (near(p, 0xD5, 0x5E, 0x00)) ++model_orange;  // model pauses in the timeline, victims in the scatter
    if (near(p, 0x00, 0x72, 0xB2)) ++palette_blue;  // the first series of every plot
  }
  const std::size_t pixels = px.size() / 3;
  EXPECT_GT(ink, pixels / 50) << "more than 2% of the page is drawn";
  EXPECT_GT(model_orange, 500u) << "the pause timeline's bars are visible";
  EXPECT_GT(palette_blue, 500u) << "the plots' lines and points are visible";
#endif
}

}  // namespace
}  // namespace rocelab::experiments

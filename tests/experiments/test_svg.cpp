#include "rocelab/experiments/report/svg.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rocelab::experiments::svg {
namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

std::vector<double> values(const std::vector<tick>& t) {
  std::vector<double> v;
  for (const auto& x : t) v.push_back(x.value);
  return v;
}

TEST(svg_ticks, linear_ticks_are_nice_and_cover_the_range) {
  struct {
    const char* name;
    double lo, hi;
    std::vector<double> expected;
  } cases[] = {
      {"unit range in fifths", 0, 1, {0, 0.2, 0.4, 0.6, 0.8, 1.0}},
      {"0..7 in twos, the last above 7", 0, 7, {0, 2, 4, 6, 8}},
      {"ragged ends padded out", 3, 97, {0, 20, 40, 60, 80, 100}},
      {"negative to positive", -1.5, 1.5, {-1.5, -1, -0.5, 0, 0.5, 1, 1.5}},
      {"a single value gets a range around it", 5, 5, {2, 3, 4, 5, 6, 7, 8}},
  };
  for (const auto& c : cases) {
    const auto v = values(linear_ticks(c.lo, c.hi));
    ASSERT_EQ(v.size(), c.expected.size()) << c.name;
    for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], c.expected[i], 1e-9) << c.name << " tick " << i;
  }
  EXPECT_EQ(linear_ticks(0, 1)[1].label, "0.2");
}

TEST(svg_ticks, log_ticks_are_decades) {
  EXPECT_EQ(values(log_ticks(3, 2000)), (std::vector<double>{1, 10, 100, 1000, 10000}));
  EXPECT_EQ(values(log_ticks(1, 100)), (std::vector<double>{1, 10, 100}));
  EXPECT_EQ(values(log_ticks(5, 5)), (std::vector<double>{1, 10})) << "one value spans its decade";
  const auto many = log_ticks(1e-3, 1e12, 8);
  EXPECT_LE(many.size(), 9u);
  EXPECT_LE(many.front().value, 1e-3);
  EXPECT_GE(many.back().value, 1e12);
  EXPECT_EQ(log_ticks(1, 1e6).back().label, "1M");
}

TEST(svg_format, numbers_and_escaping) {
  struct {
    double v;
    const char* expected;
  } cases[] = {{0, "0"}, {1, "1"}, {0.25, "0.25"}, {1234, "1234"}, {12345, "12.35k"}, {2e6, "2M"}, {-3e9, "-3G"}};
  for (const auto& c : cases) EXPECT_EQ(format_number(c.v), c.expected) << c.v;
  EXPECT_EQ(escape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
}

TEST(svg_plot, draws_each_mark_kind_with_a_legend) {
  plot p;
  p.id = "fct-cdf";
  p.title = "FCT <CDF>";
  p.x.label = "FCT (us)";
  p.y.label = "fraction";
  p.lines.push_back({"line", mark::line, {1, 2, 3}, {0.1, 0.5, 1.0}, ""});
  p.lines.push_back({"step", mark::step, {1, 2, 3}, {1, 2, 3}, "#123456"});
  p.lines.push_back({"points", mark::scatter, {1, 2, 3, 4}, {4, 3, 2, 1}, ""});
  p.lines.push_back({"", mark::line, {1, 2}, {1, 2}, ""});  // not in the legend
  const std::string s = render(p);
  EXPECT_EQ(s.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(s.find("id=\"fct-cdf\""), std::string::npos);
  EXPECT_NE(s.find("<title>FCT &lt;CDF&gt;</title>"), std::string::npos) << "titles are escaped";
  EXPECT_EQ(count(s, "<polyline"), 3u) << "line, step and the unnamed line";
  EXPECT_EQ(count(s, "<circle class=\"point\""), 3u + 3u + 4u + 2u) << "a marker on every point";
  EXPECT_EQ(count(s, "class=\"series\""), 4u);
  EXPECT_NE(s.find("stroke=\"#123456\""), std::string::npos);
  EXPECT_NE(s.find("data-points=\"12\""), std::string::npos);
  EXPECT_NE(s.find("data-dropped=\"0\""), std::string::npos);
  // The legend holds the three named series.
  const auto legend = s.substr(s.find("class=\"legend\""));
  EXPECT_EQ(count(legend, "<text"), 3u);
  EXPECT_EQ(count(legend, "<circle"), 3u) << "each entry's swatch";
  EXPECT_EQ(s.substr(s.size() - 6), "</svg>");
  EXPECT_EQ(count(s, "<g"), count(s, "</g>")) << "balanced groups";
}

TEST(svg_plot, a_category_axis_labels_its_points_by_name_not_by_fractions) {
  plot p;
  set_x_categories(p, "profile", {"RoCEv2 shallow-buffer Ethernet", "RoCEv2 deep-buffer Ethernet"});
  p.y.label = "senders";
  p.lines.push_back({"PFC on", mark::scatter, {1, 2}, {16, 64}, ""});
  p.lines.push_back({"PFC off", mark::scatter, {1, 2}, {6, 64}, ""});
  const std::string s = render(p);
  // Both series' points at the second category, 64 each, side by side.
  const auto cx = [&](const char* series) {
    const auto group = s.find(std::string("data-name=\"") + series);
    const auto second = s.find("cx=\"", s.find("cx=\"", group) + 1) + 4;
    return std::stod(s.substr(second, s.find('"', second) - second));
  };
  EXPECT_NEAR(cx("PFC off") - cx("PFC on"), 6.0, 0.05) << "equal values do not hide one another";
  EXPECT_NE(s.find(">RoCEv2 shallow-buffer Ethernet</text>"), std::string::npos) << s;
  EXPECT_NE(s.find(">RoCEv2 deep-buffer Ethernet</text>"), std::string::npos);
  EXPECT_EQ(s.find(">1.2</text>"), std::string::npos) << "no fractional ticks between categories";
  EXPECT_EQ(s.find(">1.5</text>"), std::string::npos);
  EXPECT_NE(s.find("data-dropped=\"0\""), std::string::npos) << "both points inside the frame";
}

TEST(svg_plot, a_step_holds_its_value_until_the_next_point) {
  plot p;
  p.x.min = 0, p.x.max = 10, p.y.min = 0, p.y.max = 10;
  p.width = 200 + 72 + 16 - 88, p.height = 150;  // plot area: x 72..184
  p.lines.push_back({"q", mark::step, {0, 5, 10}, {0, 10, 0}, ""});
  const std::string s = render(p);
  const auto at = s.find(" points=\"") + 9;
  const std::string pts = s.substr(at, s.find('"', at) - at);
  // Five vertices: (0,0) (5,0) (5,10) (10,10) (10,0): horizontal then vertical moves.
  EXPECT_EQ(count(pts, ","), 5u) << pts;
}

TEST(svg_plot, log_scales_draw_zeros_at_the_floor_and_leave_out_negatives) {
  plot p;
  p.x.scale = scale_kind::log;
  p.y.scale = scale_kind::log;
  p.lines.push_back({"s", mark::scatter, {0, 1, 10, 100, -5}, {1, 1, 0, 100, 3}, ""});
  const std::string s = render(p);
  EXPECT_EQ(count(s, "<circle class=\"point\""), 4u) << "the two zeros at the floors";
  EXPECT_NE(s.find("data-dropped=\"1\""), std::string::npos) << "the negative one";
  EXPECT_NE(s.find("(log; 0 at the floor)"), std::string::npos);
  EXPECT_EQ(count(s, "class=\"axis-break\""), 2u);
  EXPECT_NE(s.find(">0</text>"), std::string::npos);
  // The zero x sits at the left edge of the plot area (x = 72).
  EXPECT_NE(s.find("cx=\"72.0\""), std::string::npos) << s;
}

TEST(svg_plot, an_automatic_axis_is_log_when_values_span_more_than_two_decades) {
  struct {
    const char* name;
    std::vector<double> values;
    scale_kind expected;
  } cases[] = {
      {"within 100x: linear", {1, 50, 100}, scale_kind::linear},
      {"beyond 100x: log", {1, 50, 101}, scale_kind::log},
      {"zeros beside values 1000x apart: log", {0, 0, 5, 5000}, scale_kind::log},
      {"zeros beside one value: linear", {0, 17'674'000}, scale_kind::linear},
      {"a negative value: linear", {-1, 1, 1e6}, scale_kind::linear},
      {"no values: linear", {}, scale_kind::linear},
  };
  for (const auto& c : cases) EXPECT_EQ(resolve_scale(axis{}, c.values), c.expected) << c.name;
  axis zero_based;
  zero_based.min = 0;
  EXPECT_EQ(resolve_scale(zero_based, {1, 1e6}), scale_kind::linear) << "an axis fixed at 0 stays linear";
  axis fixed;
  fixed.scale = scale_kind::log;
  EXPECT_EQ(resolve_scale(fixed, {1, 2}), scale_kind::log) << "an explicit scale is kept";
}

TEST(svg_plot, every_point_of_a_short_series_has_a_marker_so_one_point_shows) {
  plot p;
  p.lines.push_back({"one point", mark::line, {5}, {7}, ""});
  p.lines.push_back({"three points", mark::step, {1, 2, 3}, {1, 2, 3}, ""});
  std::vector<double> many(max_marked_points + 1);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<double>(i);
  p.lines.push_back({"a dense curve", mark::line, many, many, ""});
  const std::string s = render(p);
  const auto series_at = [&](const char* name) {
    const auto at = s.find(std::string("data-name=\"") + name);
    return s.substr(at, s.find("</g>", at) - at);
  };
  EXPECT_EQ(count(series_at("one point"), "class=\"point\""), 1u);
  EXPECT_EQ(count(series_at("three points"), "class=\"point\""), 3u);
  EXPECT_EQ(count(series_at("a dense curve"), "class=\"point\""), 0u) << "its line is the mark";
  EXPECT_EQ(count(series_at("a dense curve"), "<polyline"), 1u);
}

TEST(svg_plot, the_legend_sits_right_of_the_plot_area_in_a_box_as_wide_as_its_text) {
  plot p;
  p.width = 400, p.height = 200;
  const std::string name = "vendor_default (on the front), a long legend entry";
  p.lines.push_back({name, mark::scatter, {1}, {1}, ""});
  p.lines.push_back({"empty", mark::line, {}, {}, ""});
  const std::string s = render(p);
  const auto box = s.find("class=\"legend-box\"");
  ASSERT_NE(box, std::string::npos);
  const auto number = [&](const char* attr) {
    const auto at = s.find(std::string(" ") + attr + "=\"", box) + std::string(attr).size() + 3;
    return std::stod(s.substr(at, s.find('"', at) - at));
  };
  EXPECT_GE(number("x"), 400 - 16) << "right of the plot area, which ends at width - 16";
  EXPECT_GE(number("width"), 7.0 * static_cast<double>(name.size())) << "7 px per character";
  EXPECT_NE(s.find(">" + escape(name) + "</text>"), std::string::npos) << "the text whole";
  EXPECT_NE(s.find(">empty (no data)</text>"), std::string::npos);
  const auto w = s.find("width=\"") + 7;
  EXPECT_GE(std::stod(s.substr(w, s.find('"', w) - w)), number("x") + number("width")) << "the svg holds the legend";
}

TEST(svg_units, byte_and_time_axes_are_labelled_in_their_units) {
  const auto labels = [](const std::vector<tick>& t) {
    std::vector<std::string> out;
    for (const auto& x : t) out.push_back(x.label);
    return out;
  };
  EXPECT_EQ(labels(byte_ticks(0, 10 << 20, scale_kind::linear)),
            (std::vector<std::string>{"0", "2 MiB", "4 MiB", "6 MiB", "8 MiB", "10 MiB"}));
  EXPECT_EQ(labels(byte_ticks(1024, 1 << 20, scale_kind::log)),
            (std::vector<std::string>{"1 KiB", "4 KiB", "16 KiB", "64 KiB", "256 KiB", "1 MiB"}));
  EXPECT_EQ(labels(ns_ticks(0, 1'000'000, scale_kind::linear)),
            (std::vector<std::string>{"0", "0.2 ms", "0.4 ms", "0.6 ms", "0.8 ms", "1 ms"}));
  EXPECT_EQ(labels(ns_ticks(1'000, 10'000'000, scale_kind::log)),
            (std::vector<std::string>{"1 us", "10 us", "100 us", "1 ms", "10 ms"}));
  struct {
    double bytes;
    const char* expected;
  } sizes[] = {{0, "0 B"}, {512, "512 B"}, {1536, "1.50 KiB"}, {11'247'390, "10.7 MiB"}, {8.0 * (1 << 30), "8.00 GiB"}};
  for (const auto& c : sizes) EXPECT_EQ(readable_bytes(c.bytes), c.expected) << c.bytes;
  EXPECT_EQ(readable_bytes(49'664, 4), "48.50 KiB");
}

TEST(svg_plot, log_scale_maps_decades_evenly) {
  plot p;
  p.width = 72 + 300 + 16;  // 300 px plot area
  p.x.scale = scale_kind::log;
  p.x.min = 1, p.x.max = 1000;
  p.y.min = 0, p.y.max = 1;
  p.legend = false;
  p.lines.push_back({"s", mark::scatter, {1, 10, 100, 1000}, {0.5, 0.5, 0.5, 0.5}, ""});
  const std::string s = render(p);
  for (const char* cx : {"cx=\"72.0\"", "cx=\"172.0\"", "cx=\"272.0\"", "cx=\"372.0\""})
    EXPECT_NE(s.find(cx), std::string::npos) << cx;
}

TEST(svg_plot, empty_plot_says_no_data) {
  plot p;
  p.title = "nothing";
  const std::string s = render(p);
  EXPECT_NE(s.find(">no data</text>"), std::string::npos);
  EXPECT_NE(s.find("data-points=\"0\""), std::string::npos);
}

TEST(svg_timeline, one_row_per_resource_and_short_spans_stay_visible) {
  timeline t;
  t.id = "pauses";
  t.title = "pauses";
  t.x.label = "time (us)";
  t.rows.push_back({"leaf0:8 p3", {{0, 10}, {20, 30}}, ""});
  t.rows.push_back({"spine0:1 p3", {{5, 5.000001}}, ""});
  t.rows.push_back({"idle", {}, ""});
  const std::string s = render(t);
  EXPECT_NE(s.find("data-rows=\"3\""), std::string::npos);
  EXPECT_NE(s.find("data-spans=\"3\""), std::string::npos);
  EXPECT_EQ(count(s, "class=\"row\""), 3u);
  EXPECT_NE(s.find("width=\"1.0\""), std::string::npos) << "a tiny span is one pixel wide";
  EXPECT_NE(s.find(">leaf0:8 p3</text>"), std::string::npos);
}

}  // namespace
}  // namespace rocelab::experiments::svg

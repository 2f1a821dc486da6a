#pragma once
// A small reader of the SVG the reports emit (report/svg.hpp) and the checks every plot
// must pass: each data mark inside the axes and outside the legend, every series with a
// visible mark, the legend clear of the plot area and wide enough for its text.
//
// It reads the elements by what they are, not only by the classes svg.cpp gives them, so
// the same checks run on any drawing of these plots: the plot area is the rect with class
// "plot-area" (or the unfilled frame rect stroked #555555), the legend box the first rect
// of the <g class="legend"> group, a series a <g class="series"> group with its <circle>
// and <polyline> marks, a timeline row a <g class="row"> group with its span rects.

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rocelab::testing::svg_geometry {

struct box {
  double x = 0, y = 0, w = 0, h = 0;
  [[nodiscard]] bool contains(double px, double py, double slack = 0) const {
    return px >= x - slack && px <= x + w + slack && py >= y - slack && py <= y + h + slack;
  }
  [[nodiscard]] bool overlaps(const box& o) const {
    return x < o.x + o.w && o.x < x + w && y < o.y + o.h && o.y < y + h;
  }
};

struct legend_text {
  double x = 0;
  std::string text;
};

struct series {
  std::string name;
  std::optional<std::size_t> declared_points;  // data-points, when the drawing says it
  std::vector<std::pair<double, double>> markers;   // circle centres with r > 0
  std::vector<std::pair<double, double>> vertices;  // polyline points
};

struct plot {
  std::string id, cls;
  double width = 0, height = 0;
  std::optional<box> area, legend;
  std::vector<legend_text> legend_texts;
  std::vector<series> lines;
  std::vector<box> spans;  // timeline rows' rects
};

inline std::optional<std::string> attribute(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const auto at = tag.find(key);
  if (at == std::string::npos) return std::nullopt;
  const auto from = at + key.size();
  return tag.substr(from, tag.find('"', from) - from);
}

inline double number(const std::string& tag, const std::string& name) {
  const auto v = attribute(tag, name);
  return v ? std::strtod(v->c_str(), nullptr) : 0.0;
}

inline std::vector<std::pair<double, double>> polyline_points(const std::string& text) {
  std::vector<std::pair<double, double>> out;
  const char* p = text.c_str();
  while (*p) {
    char* end = nullptr;
    const double x = std::strtod(p, &end);
    if (end == p || *end != ',') break;
    p = end + 1;
    const double y = std::strtod(p, &end);
    if (end == p) break;
    out.emplace_back(x, y);
    p = end;
    while (*p == ' ') ++p;
  }
  return out;
}

// Every <svg> element of `html`, in order.
inline std::vector<plot> parse(const std::string& html) {
  std::vector<plot> out;
  for (auto at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 4)) {
    const auto end = html.find("</svg>", at);
    if (end == std::string::npos) break;
    const std::string svg = html.substr(at, end - at);
    plot p;
    const std::string head = svg.substr(0, svg.find('>'));
    p.id = attribute(head, "id").value_or("");
    p.cls = attribute(head, "class").value_or("");
    p.width = number(head, "width");
    p.height = number(head, "height");
    // The group each element sits in: the innermost open <g> with a class.
    std::vector<std::string> groups;
    for (auto t = svg.find('<', 1); t != std::string::npos; t = svg.find('<', t + 1)) {
      const auto close = svg.find('>', t);
      const std::string tag = svg.substr(t, close - t + 1);
      if (tag.rfind("</g", 0) == 0) {
        if (!groups.empty()) groups.pop_back();
        continue;
      }
      if (tag.rfind("<g", 0) == 0) {
        const std::string cls = attribute(tag, "class").value_or("");
        groups.push_back(cls);
        if (cls == "series") {
          series s;
          s.name = attribute(tag, "data-name").value_or("");
          if (const auto n = attribute(tag, "data-points")) s.declared_points = std::stoul(*n);
          p.lines.push_back(std::move(s));
        }
        continue;
      }
      const std::string group = groups.empty() ? "" : groups.back();
      if (tag.rfind("<rect", 0) == 0) {
        const box b{number(tag, "x"), number(tag, "y"), number(tag, "width"), number(tag, "height")};
        if (attribute(tag, "class") == std::string("plot-area") ||
            (!p.area && attribute(tag, "fill") == std::string("none") &&
             attribute(tag, "stroke") == std::string("#555555")))
          p.area = b;
        else if (group == "legend" && !p.legend)
          p.legend = b;
        else if (group == "row")
          p.spans.push_back(b);
      } else if (tag.rfind("<circle", 0) == 0 && group == "series" && !p.lines.empty()) {
        if (number(tag, "r") > 0) p.lines.back().markers.emplace_back(number(tag, "cx"), number(tag, "cy"));
      } else if (tag.rfind("<polyline", 0) == 0 && group == "series" && !p.lines.empty()) {
        for (const auto& v : polyline_points(attribute(tag, "points").value_or(""))) p.lines.back().vertices.push_back(v);
      } else if (tag.rfind("<text", 0) == 0 && group == "legend") {
        const auto text_end = svg.find("</text>", close);
        p.legend_texts.push_back({number(tag, "x"), svg.substr(close + 1, text_end - close - 1)});
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

// The characters of escaped SVG text as a browser counts them (&amp; is one).
inline std::size_t shown_length(const std::string& text) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '&') i = text.find(';', i);
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++n;
  }
  return n;
}

// What is wrong with a plot's geometry; empty when nothing is. A lower bound of 6 px per
// character is taken for the legend's 11 px sans-serif text.
inline std::vector<std::string> problems(const plot& p) {
  std::vector<std::string> out;
  const std::string where = "svg " + p.id + ": ";
  if (p.cls == "rl-timeline") {
    if (!p.area) return {where + "no frame"};
    for (const auto& s : p.spans)
      if (!p.area->contains(s.x, s.y, 0.5) || !p.area->contains(s.x + s.w, s.y + s.h, 0.5))
        out.push_back(where + "a span lies outside the axes");
    return out;
  }
  if (!p.area) return {where + "no plot area"};
  if (p.legend) {
    if (p.legend->overlaps(*p.area)) out.push_back(where + "the legend overlaps the plot area");
    if (p.legend->x + p.legend->w > p.width + 0.5 || p.legend->y + p.legend->h > p.height + 0.5)
      out.push_back(where + "the legend runs off the svg");
    for (const auto& t : p.legend_texts)
      if (t.x + 6.0 * static_cast<double>(shown_length(t.text)) > p.legend->x + p.legend->w)
        out.push_back(where + "legend text \"" + t.text + "\" is wider than the legend box");
  }
  for (const auto& s : p.lines) {
    const std::string name = "series \"" + s.name + "\"";
    if (s.declared_points && *s.declared_points == 0) continue;  // no data, and the drawing says so
    bool distinct = false;
    for (const auto& v : s.vertices) distinct = distinct || v != s.vertices.front();
    if (s.markers.empty() && !distinct) out.push_back(where + name + " has no visible mark");
    std::vector<std::pair<double, double>> all = s.markers;
    all.insert(all.end(), s.vertices.begin(), s.vertices.end());
    for (const auto& [x, y] : all) {
      if (!p.area->contains(x, y, 0.5)) {
        out.push_back(where + name + " has a point outside the axes");
        break;
      }
      if (p.legend && p.legend->contains(x, y)) {
        out.push_back(where + name + " has a point under the legend");
        break;
      }
    }
  }
  return out;
}

}  // namespace rocelab::testing::svg_geometry

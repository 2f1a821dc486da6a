// SVG plots for the report (see svg.hpp).

#include "rocelab/experiments/report/svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>

namespace rocelab::experiments::svg {
namespace {

constexpr int margin_left = 72, margin_right = 16, margin_top = 28, margin_bottom = 48;

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

// 1, 2 or 5 x 10^k nearest above `raw`.
double nice_step(double raw) {
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / p;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

struct scale {
  scale_kind kind = scale_kind::linear;
  double d0 = 0, d1 = 1;  // domain
  double r0 = 0, r1 = 1;  // range (pixels)
  [[nodiscard]] double operator()(double v) const {
    const double a = kind == scale_kind::log ? std::log10(v) : v;
    const double lo = kind == scale_kind::log ? std::log10(d0) : d0;
    const double hi = kind == scale_kind::log ? std::log10(d1) : d1;
    return hi == lo ? (r0 + r1) / 2 : r0 + (a - lo) / (hi - lo) * (r1 - r0);
  }
};

bool drawable(double v, scale_kind k) { return std::isfinite(v) && (k == scale_kind::linear || v > 0); }

// The domain and ticks of an axis over the values given (already filtered as drawable).
std::vector<tick> axis_ticks(const axis& a, double lo, double hi, bool any) {
  if (a.min) lo = *a.min;
  if (a.max) hi = *a.max;
  if (!any && !a.min && !a.max) lo = a.scale == scale_kind::log ? 1 : 0, hi = a.scale == scale_kind::log ? 10 : 1;
  if (a.scale == scale_kind::log) {
    lo = std::max(lo, std::numeric_limits<double>::min());
    hi = std::max(hi, lo);
    return log_ticks(lo, hi);
  }
  return linear_ticks(lo, hi);
}

void text(std::string& out, double x, double y, std::string_view anchor, std::string_view s, std::string_view extra = {}) {
  out += "<text x=\"" + fmt(x) + "\" y=\"" + fmt(y) + "\" text-anchor=\"" + std::string(anchor) + "\"";
  if (!extra.empty()) out += " " + std::string(extra);
  out += ">" + escape(s) + "</text>";
}

std::string open_svg(const std::string& id, const std::string& cls, int w, int h, const std::string& title) {
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"" + cls + "\"";
  if (!id.empty()) out += " id=\"" + escape(id) + "\"";
  out += " width=\"" + std::to_string(w) + "\" height=\"" + std::to_string(h) + "\" viewBox=\"0 0 " +
         std::to_string(w) + " " + std::to_string(h) +
         "\" role=\"img\" font-family=\"sans-serif\" font-size=\"11\">";
  out += "<title>" + escape(title) + "</title>";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>";
  return out;
}

}  // namespace

void set_x_categories(plot& p, std::string label, const std::vector<std::string>& names) {
  p.x = {std::move(label), scale_kind::linear, 0.5, static_cast<double>(names.size()) + 0.5};
  p.x_categories.clear();
  for (std::size_t i = 0; i < names.size(); ++i) p.x_categories.push_back({static_cast<double>(i + 1), names[i]});
}

std::vector<tick> linear_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.5;
    lo -= pad, hi += pad;
  }
  const double step = nice_step((hi - lo) / std::max(1, target));
  const double first = std::floor(lo / step) * step, last = std::ceil(hi / step) * step;
  std::vector<tick> out;
  for (int i = 0;; ++i) {
    double v = first + i * step;
    if (std::abs(v) < step * 1e-9) v = 0;  // no "-0" or 1e-17 from rounding
    out.push_back({v, format_number(v)});
    if (v >= last - step * 1e-9 || i > 1000) break;
  }
  return out;
}

std::vector<tick> log_ticks(double lo, double hi, int max_ticks) {
  const int k0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int k1 = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  if (k1 <= k0) k1 = k0 + 1;
  const int every = std::max(1, (k1 - k0 + max_ticks - 1) / std::max(1, max_ticks));
  std::vector<tick> out;
  for (int k = k0; k <= k1 + every - 1; k += every) {
    const double v = std::pow(10.0, k);
    out.push_back({v, format_number(v)});
    if (k >= k1) break;
  }
  return out;
}

std::string format_number(double v) {
  if (v == 0) return "0";
  const double a = std::abs(v);
  static constexpr std::array<std::pair<double, const char*>, 4> suffixes{
      {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
  char b[40];
  if (a >= 1e4) {
    for (const auto& [f, s] : suffixes)
      if (a >= f) {
        std::snprintf(b, sizeof b, "%.4g%s", v / f, s);
        return b;
      }
  }
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

const std::string& palette(std::size_t i) {
  static const std::array<std::string, 8> colors{"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                 "#E69F00", "#56B4E9", "#F0E442", "#000000"};
  return colors[i % colors.size()];
}

std::string render(const plot& p) {
  const int w = std::max(200, p.width), h = std::max(150, p.height);
  const double px0 = margin_left, px1 = w - margin_right, py0 = h - margin_bottom, py1 = margin_top;

  // Domains from the drawable points.
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  std::size_t dropped = 0, drawn = 0;
  for (const auto& s : p.lines)
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!drawable(s.x[i], p.x.scale) || !drawable(s.y[i], p.y.scale)) {
        ++dropped;
        continue;
      }
      ++drawn;
      xlo = std::min(xlo, s.x[i]), xhi = std::max(xhi, s.x[i]);
      ylo = std::min(ylo, s.y[i]), yhi = std::max(yhi, s.y[i]);
    }
  const auto xt = p.x_categories.empty() ? axis_ticks(p.x, xlo, xhi, drawn > 0) : p.x_categories;
  const auto yt = axis_ticks(p.y, ylo, yhi, drawn > 0);
  const scale sx{p.x.scale, p.x.min.value_or(xt.front().value), p.x.max.value_or(xt.back().value), px0, px1};
  const scale sy{p.y.scale, p.y.min.value_or(yt.front().value), p.y.max.value_or(yt.back().value), py0, py1};

  std::string out = open_svg(p.id, "rl-plot", w, h, p.title);
  // data-* for tests and readers: how many points were drawn and left out.
  const auto at = out.find(" role=\"img\"");
  out.insert(at, " data-points=\"" + std::to_string(drawn) + "\" data-dropped=\"" + std::to_string(dropped) + "\"");
  text(out, w / 2.0, 16, "middle", p.title, "font-size=\"13\" font-weight=\"bold\"");

  // Grid and ticks.
  out += "<g class=\"axis x\" stroke=\"#dddddd\">";
  for (const auto& t : xt) {
    if (t.value < std::min(sx.d0, sx.d1) || t.value > std::max(sx.d0, sx.d1)) continue;
    const double x = sx(t.value);
    out += "<line x1=\"" + fmt(x) + "\" y1=\"" + fmt(py0) + "\" x2=\"" + fmt(x) + "\" y2=\"" + fmt(py1) + "\"/>";
  }
  out += "</g><g class=\"axis y\" stroke=\"#dddddd\">";
  for (const auto& t : yt) {
    if (t.value < std::min(sy.d0, sy.d1) || t.value > std::max(sy.d0, sy.d1)) continue;
    const double y = sy(t.value);
    out += "<line x1=\"" + fmt(px0) + "\" y1=\"" + fmt(y) + "\" x2=\"" + fmt(px1) + "\" y2=\"" + fmt(y) + "\"/>";
  }
  out += "</g><g class=\"tick-labels\" fill=\"#333333\">";
  for (const auto& t : xt)
    if (t.value >= std::min(sx.d0, sx.d1) && t.value <= std::max(sx.d0, sx.d1))
      text(out, sx(t.value), py0 + 16, "middle", t.label);
  for (const auto& t : yt)
    if (t.value >= std::min(sy.d0, sy.d1) && t.value <= std::max(sy.d0, sy.d1))
      text(out, px0 - 6, sy(t.value) + 4, "end", t.label);
  out += "</g>";
  out += "<rect x=\"" + fmt(px0) + "\" y=\"" + fmt(py1) + "\" width=\"" + fmt(px1 - px0) + "\" height=\"" +
         fmt(py0 - py1) + "\" fill=\"none\" stroke=\"#555555\"/>";
  text(out, (px0 + px1) / 2, h - 10.0, "middle", p.x.label + (p.x.scale == scale_kind::log ? " (log)" : ""));
  text(out, 14, (py0 + py1) / 2, "middle", p.y.label + (p.y.scale == scale_kind::log ? " (log)" : ""),
       "transform=\"rotate(-90 14 " + fmt((py0 + py1) / 2) + ")\"");

  // Series, clipped to the plot area.
  const std::string clip = "clip-" + (p.id.empty() ? std::string("plot") : escape(p.id));
  out += "<clipPath id=\"" + clip + "\"><rect x=\"" + fmt(px0) + "\" y=\"" + fmt(py1) + "\" width=\"" +
         fmt(px1 - px0) + "\" height=\"" + fmt(py0 - py1) + "\"/></clipPath>";
  out += "<g clip-path=\"url(#" + clip + ")\">";
  for (std::size_t si = 0; si < p.lines.size(); ++si) {
    const series& s = p.lines[si];
    const std::string& color = s.color.empty() ? palette(si) : s.color;
    out += "<g class=\"series\" data-name=\"" + escape(s.name) + "\">";
    std::string pts;
    double prev_y = 0;
    bool first = true;
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!drawable(s.x[i], p.x.scale) || !drawable(s.y[i], p.y.scale)) continue;
      const double x = sx(s.x[i]), y = sy(s.y[i]);
      if (s.kind == mark::scatter) {
        out += "<circle cx=\"" + fmt(x) + "\" cy=\"" + fmt(y) + "\" r=\"2.5\" fill=\"" + color +
               "\" fill-opacity=\"0.7\"/>";
        continue;
      }
      if (s.kind == mark::step && !first) pts += fmt(x) + "," + fmt(prev_y) + " ";
      pts += fmt(x) + "," + fmt(y) + " ";
      prev_y = y;
      first = false;
    }
    if (!pts.empty())
      out += "<polyline fill=\"none\" stroke=\"" + color + "\" stroke-width=\"1.5\" points=\"" + pts + "\"/>";
    out += "</g>";
  }
  out += "</g>";
  if (drawn == 0) text(out, (px0 + px1) / 2, (py0 + py1) / 2, "middle", "no data", "fill=\"#888888\"");

  // Legend: top right inside the plot area.
  if (p.legend) {
    std::size_t row = 0, named = 0;
    for (const auto& s : p.lines) named += s.name.empty() ? 0 : 1;
    out += "<g class=\"legend\">";
    // A translucent box so points under the legend stay visible without the text clashing.
    if (named > 0)
      out += "<rect x=\"" + fmt(px1 - 154) + "\" y=\"" + fmt(py1 + 2) + "\" width=\"150\" height=\"" +
             fmt(14.0 * static_cast<double>(named) + 4) + "\" fill=\"#ffffff\" fill-opacity=\"0.75\"/>";
    for (std::size_t si = 0; si < p.lines.size(); ++si) {
      if (p.lines[si].name.empty()) continue;
      const std::string& color = p.lines[si].color.empty() ? palette(si) : p.lines[si].color;
      const double y = py1 + 12 + 14.0 * static_cast<double>(row++);
      out += "<rect x=\"" + fmt(px1 - 150) + "\" y=\"" + fmt(y - 8) + "\" width=\"10\" height=\"10\" fill=\"" + color + "\"/>";
      text(out, px1 - 136, y + 1, "start", p.lines[si].name);
    }
    out += "</g>";
  }
  out += "</svg>";
  return out;
}

std::string render(const timeline& t) {
  const int w = std::max(300, t.width);
  const int label_w = 150;
  const int rows = static_cast<int>(std::max<std::size_t>(1, t.rows.size()));
  const int h = margin_top + rows * t.row_height + margin_bottom;
  const double px0 = label_w, px1 = w - margin_right;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  std::size_t spans = 0;
  for (const auto& r : t.rows)
    for (const auto& [a, b] : r.spans) {
      lo = std::min(lo, a), hi = std::max(hi, b);
      ++spans;
    }
  const auto xt = axis_ticks(t.x, lo, hi, spans > 0);
  const scale sx{scale_kind::linear, t.x.min.value_or(xt.front().value), t.x.max.value_or(xt.back().value), px0, px1};

  std::string out = open_svg(t.id, "rl-timeline", w, h, t.title);
  const auto at = out.find(" role=\"img\"");
  out.insert(at, " data-rows=\"" + std::to_string(t.rows.size()) + "\" data-spans=\"" + std::to_string(spans) + "\"");
  text(out, w / 2.0, 16, "middle", t.title, "font-size=\"13\" font-weight=\"bold\"");
  const double y_bottom = margin_top + rows * t.row_height;
  out += "<g class=\"axis x\" stroke=\"#dddddd\">";
  for (const auto& tk : xt)
    if (tk.value >= sx.d0 && tk.value <= sx.d1)
      out += "<line x1=\"" + fmt(sx(tk.value)) + "\" y1=\"" + fmt(margin_top) + "\" x2=\"" + fmt(sx(tk.value)) +
             "\" y2=\"" + fmt(y_bottom) + "\"/>";
  out += "</g><g class=\"tick-labels\" fill=\"#333333\">";
  for (const auto& tk : xt)
    if (tk.value >= sx.d0 && tk.value <= sx.d1) text(out, sx(tk.value), y_bottom + 16, "middle", tk.label);
  out += "</g>";
  text(out, (px0 + px1) / 2, h - 10.0, "middle", t.x.label);
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& r = t.rows[i];
    const double y = margin_top + static_cast<double>(i) * t.row_height;
    const std::string& color = r.color.empty() ? palette(i) : r.color;
    out += "<g class=\"row\" data-name=\"" + escape(r.name) + "\">";
    text(out, px0 - 6, y + t.row_height * 0.7, "end", r.name);
    for (const auto& [a, b] : r.spans) {
      const double x0 = std::clamp(sx(a), px0, px1), x1 = std::clamp(sx(b), px0, px1);
      // A span shorter than a pixel is still drawn one pixel wide: a pause must not vanish.
      out += "<rect x=\"" + fmt(x0) + "\" y=\"" + fmt(y + 2) + "\" width=\"" + fmt(std::max(1.0, x1 - x0)) +
             "\" height=\"" + fmt(t.row_height - 4.0) + "\" fill=\"" + color + "\"/>";
    }
    out += "</g>";
  }
  if (spans == 0) text(out, (px0 + px1) / 2, margin_top + t.row_height * 0.7, "middle", "no data", "fill=\"#888888\"");
  out += "<rect x=\"" + fmt(px0) + "\" y=\"" + fmt(margin_top) + "\" width=\"" + fmt(px1 - px0) + "\" height=\"" +
         fmt(y_bottom - margin_top) + "\" fill=\"none\" stroke=\"#555555\"/>";
  out += "</svg>";
  return out;
}

}  // namespace rocelab::experiments::svg

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
// The legend's layout: gap from the plot area, row height, inner padding, and the room
// its swatch (a line with a marker) takes before the text.
constexpr double legend_gap = 12, legend_row = 16, legend_pad = 8, legend_swatch = 22;

// An upper estimate of the width of 11 px sans-serif text: 7 px per character (DejaVu
// Sans, Chromium's default on Debian, averages about 6.3 px; capitals and "m", "w" reach
// 9). A legend box sized from it holds its text.
double text_width(std::string_view s) {
  std::size_t chars = 0;
  for (const char c : s) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;  // UTF-8 code points
  return 7.0 * static_cast<double>(chars);
}

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
  // On a log scale a zero sits at the floor (d0).
  [[nodiscard]] double operator()(double v) const {
    if (kind == scale_kind::log && v <= 0) return r0;
    const double a = kind == scale_kind::log ? std::log10(v) : v;
    const double lo = kind == scale_kind::log ? std::log10(d0) : d0;
    const double hi = kind == scale_kind::log ? std::log10(d1) : d1;
    return hi == lo ? (r0 + r1) / 2 : r0 + (a - lo) / (hi - lo) * (r1 - r0);
  }
};

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

std::string readable_bytes(double bytes, int digits) {
  if (!std::isfinite(bytes)) return "-";
  if (bytes == 0) return "0 B";
  static constexpr std::array<const char*, 5> units{"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t k = 0;
  double v = bytes;
  while (k + 1 < units.size() && std::abs(v) >= 1024) v /= 1024, ++k;
  const double a = std::abs(v);
  const int integer_digits = a >= 100 ? 3 : a >= 10 ? 2 : 1;
  char b[48];
  std::snprintf(b, sizeof b, "%.*f %s", k == 0 ? 0 : std::max(0, std::max(3, digits) - integer_digits), v, units[k]);
  return b;
}

std::vector<tick> byte_ticks(double lo, double hi, scale_kind scale, int max_ticks) {
  static constexpr std::array<const char*, 5> units{"B", "KiB", "MiB", "GiB", "TiB"};
  if (scale == scale_kind::log) {
    lo = std::max(lo, std::numeric_limits<double>::min());
    hi = std::max(hi, lo);
    const int e0 = static_cast<int>(std::floor(std::log2(lo) + 1e-9));
    int e1 = static_cast<int>(std::ceil(std::log2(hi) - 1e-9));
    if (e1 <= e0) e1 = e0 + 1;
    int step = 1;
    for (const int s : {1, 2, 5, 10, 20, 50})
      if (step = s; (e1 - e0) / s + 1 <= std::max(2, max_ticks)) break;
    const int first = static_cast<int>(std::floor(static_cast<double>(e0) / step)) * step;
    std::vector<tick> out;
    for (int e = first;; e += step) {
      const int k = std::clamp(e >= 0 ? e / 10 : 0, 0, static_cast<int>(units.size()) - 1);
      out.push_back({std::exp2(e), format_number(std::exp2(e - 10 * k)) + " " + units[static_cast<std::size_t>(k)]});
      if (e >= e1) break;
    }
    return out;
  }
  const double top = std::max(std::abs(lo), std::abs(hi));
  std::size_t k = 0;
  double unit = 1;
  while (k + 1 < units.size() && top >= unit * 1024) unit *= 1024, ++k;
  auto out = linear_ticks(lo / unit, hi / unit);
  for (auto& t : out) {
    t.label = t.value == 0 ? "0" : format_number(t.value) + " " + units[k];
    t.value *= unit;
  }
  return out;
}

std::vector<tick> ns_ticks(double lo, double hi, scale_kind scale, int max_ticks) {
  static constexpr std::array<std::pair<double, const char*>, 4> units{{{1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}}};
  const auto unit_of = [](double v) {
    for (const auto& u : units)
      if (std::abs(v) >= u.first * (1 - 1e-9)) return u;
    return units.back();
  };
  if (scale == scale_kind::log) {
    auto out = log_ticks(std::max(lo, std::numeric_limits<double>::min()), std::max(hi, lo), max_ticks);
    for (auto& t : out) {
      const auto [f, name] = unit_of(t.value);
      t.label = format_number(t.value / f) + " " + name;
    }
    return out;
  }
  const auto [f, name] = unit_of(std::max(std::abs(lo), std::abs(hi)));
  auto out = linear_ticks(lo / f, hi / f);
  for (auto& t : out) {
    t.label = t.value == 0 ? "0" : format_number(t.value) + " " + name;
    t.value *= f;
  }
  return out;
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

scale_kind resolve_scale(const axis& a, const std::vector<double>& values) {
  if (a.scale != scale_kind::automatic) return a.scale;
  if (a.min && *a.min <= 0) return scale_kind::linear;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const double v : values) {
    if (!std::isfinite(v)) continue;
    if (v < 0) return scale_kind::linear;
    if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  return hi > 0 && hi / lo > log_span ? scale_kind::log : scale_kind::linear;
}

namespace {

// An axis made ready to draw: its scale, ticks and domain. A log axis with zeros among its
// values gets a floor one tick step below its lowest tick, labelled "0", where zeros go.
struct resolved_axis {
  scale_kind kind = scale_kind::linear;
  std::vector<tick> ticks;
  double d0 = 0, d1 = 1;
  bool zero_floor = false;
};

std::vector<tick> unit_ticks(const axis& a, scale_kind kind, double lo, double hi) {
  switch (a.unit) {
    case unit_kind::bytes: return byte_ticks(lo, hi, kind);
    case unit_kind::ns: return ns_ticks(lo, hi, kind);
    case unit_kind::none: break;
  }
  return kind == scale_kind::log ? log_ticks(lo, hi) : linear_ticks(lo, hi);
}

resolved_axis resolve_axis(const axis& a, const std::vector<double>& values, const std::vector<tick>& categories) {
  resolved_axis r;
  r.kind = categories.empty() ? resolve_scale(a, values) : scale_kind::linear;
  const bool log = r.kind == scale_kind::log;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  bool any = false, zero = false;
  for (const double v : values) {
    if (!std::isfinite(v) || (log && v < 0)) continue;
    if (log && v == 0) {
      zero = true;
      continue;
    }
    lo = std::min(lo, v), hi = std::max(hi, v), any = true;
  }
  if (!categories.empty()) {
    r.ticks = categories;
  } else if (log) {
    if (a.min && *a.min > 0) lo = *a.min, any = true;
    if (a.max && *a.max > 0) hi = *a.max;
    if (!any) lo = 1, hi = 10;
    hi = std::max(hi, lo);
    r.ticks = unit_ticks(a, r.kind, std::max(lo, std::numeric_limits<double>::min()), hi);
  } else {
    if (a.min) lo = *a.min;
    if (a.max) hi = *a.max;
    if (!any && !a.min && !a.max) lo = 0, hi = 1;
    if (!std::isfinite(lo)) lo = std::isfinite(hi) ? std::min(0.0, hi) : 0;
    if (!std::isfinite(hi)) hi = std::max(lo, 1.0);
    r.ticks = unit_ticks(a, r.kind, lo, hi);
  }
  r.d0 = r.ticks.front().value, r.d1 = r.ticks.back().value;
  if (log) {
    if (a.min && *a.min > 0) r.d0 = *a.min;
    if (a.max && *a.max > 0) r.d1 = *a.max;
    if (zero) {
      const double ratio = r.ticks.size() > 1 ? r.ticks[1].value / r.ticks[0].value : 10;
      r.d0 = r.ticks.front().value / ratio;
      r.ticks.insert(r.ticks.begin(), tick{r.d0, "0"});
      r.zero_floor = true;
    }
  } else if (categories.empty() || a.min || a.max) {
    if (a.min) r.d0 = *a.min;
    if (a.max) r.d1 = *a.max;
  }
  return r;
}

// Whether a value is drawn on this axis: finite, inside the domain; on a log axis not
// negative (a zero sits at the floor).
bool inside(double v, const resolved_axis& r) {
  if (!std::isfinite(v)) return false;
  if (r.kind == scale_kind::log) {
    if (v < 0 || (v == 0 && !r.zero_floor)) return false;
    if (v == 0) return true;
  }
  const double lo = std::min(r.d0, r.d1), hi = std::max(r.d0, r.d1), slack = (hi - lo) * 1e-9;
  return v >= lo - slack && v <= hi + slack;
}

std::string axis_title(const axis& a, const resolved_axis& r) {
  if (r.kind != scale_kind::log) return a.label;
  return a.label + (r.zero_floor ? " (log; 0 at the floor)" : " (log)");
}

// The two slanted strokes that mark a log axis's break between its "0" floor and its
// first decade.
std::string axis_break(double x, double y, bool vertical_axis) {
  const std::string d = vertical_axis ? "M" + fmt(x - 5) + "," + fmt(y + 1) + " L" + fmt(x + 5) + "," + fmt(y - 3) +
                                            " M" + fmt(x - 5) + "," + fmt(y + 4) + " L" + fmt(x + 5) + "," + fmt(y)
                                      : "M" + fmt(x - 3) + "," + fmt(y + 5) + " L" + fmt(x + 1) + "," + fmt(y - 5) +
                                            " M" + fmt(x) + "," + fmt(y + 5) + " L" + fmt(x + 4) + "," + fmt(y - 5);
  return "<path class=\"axis-break\" d=\"" + d + "\" stroke=\"#555555\" stroke-width=\"1.5\" fill=\"none\"/>";
}

std::string marker(double x, double y, const std::string& color, double r) {
  return "<circle class=\"point\" cx=\"" + fmt(x) + "\" cy=\"" + fmt(y) + "\" r=\"" + fmt(r) + "\" fill=\"" + color +
         "\" fill-opacity=\"0.8\"/>";
}

}  // namespace

std::string render(const plot& p) {
  const int plot_w = std::max(200, p.width), plot_h = std::max(150, p.height);
  const double px0 = margin_left, px1 = plot_w - margin_right, py0 = plot_h - margin_bottom, py1 = margin_top;

  std::vector<double> xv, yv;
  for (const auto& s : p.lines) {
    const std::size_t n = std::min(s.x.size(), s.y.size());
    xv.insert(xv.end(), s.x.begin(), s.x.begin() + static_cast<std::ptrdiff_t>(n));
    yv.insert(yv.end(), s.y.begin(), s.y.begin() + static_cast<std::ptrdiff_t>(n));
  }
  const resolved_axis rx = resolve_axis(p.x, xv, p.x_categories), ry = resolve_axis(p.y, yv, {});
  const scale sx{rx.kind, rx.d0, rx.d1, px0, px1}, sy{ry.kind, ry.d0, ry.d1, py0, py1};

  // Each series' drawable points, in pixels.
  std::vector<std::vector<std::pair<double, double>>> points(p.lines.size());
  std::size_t dropped = 0, drawn = 0;
  // On a category axis the series are set side by side, `dodge` px apart, so equal values
  // at one category do not hide one another.
  const double dodge = p.x_categories.empty() ? 0 : 6;
  for (std::size_t si = 0; si < p.lines.size(); ++si) {
    const series& s = p.lines[si];
    const double offset = dodge * (static_cast<double>(si) - static_cast<double>(p.lines.size() - 1) / 2);
    for (std::size_t i = 0; i < std::min(s.x.size(), s.y.size()); ++i) {
      if (!inside(s.x[i], rx) || !inside(s.y[i], ry)) {
        ++dropped;
        continue;
      }
      points[si].emplace_back(sx(s.x[i]) + offset, sy(s.y[i]));
      ++drawn;
    }
  }

  // The legend: right of the plot area, as wide as its longest entry.
  std::vector<std::size_t> named;
  double legend_w = 0;
  const auto entry = [&](std::size_t si) { return p.lines[si].name + (points[si].empty() ? " (no data)" : ""); };
  if (p.legend)
    for (std::size_t si = 0; si < p.lines.size(); ++si)
      if (!p.lines[si].name.empty()) {
        named.push_back(si);
        legend_w = std::max(legend_w, text_width(entry(si)) + legend_swatch + 2 * legend_pad);
      }
  const double lx = px1 + legend_gap, ly = py1;
  const double legend_h = static_cast<double>(named.size()) * legend_row + 2 * legend_pad - 4;
  int w = plot_w + (named.empty() ? 0 : static_cast<int>(std::ceil(legend_gap + legend_w)));
  w = std::max(w, static_cast<int>(std::ceil(text_width(p.title) * 13.0 / 11.0 + 20)));
  const int h = std::max(plot_h, static_cast<int>(std::ceil(ly + legend_h + 8)));

  std::string out = open_svg(p.id, "rl-plot", w, h, p.title);
  // data-* for tests and readers: how many points were drawn and left out.
  const auto at = out.find(" role=\"img\"");
  out.insert(at, " data-points=\"" + std::to_string(drawn) + "\" data-dropped=\"" + std::to_string(dropped) + "\"");
  text(out, w / 2.0, 16, "middle", p.title, "font-size=\"13\" font-weight=\"bold\"");

  // Grid and ticks.
  const auto in_domain = [](const tick& t, const scale& s) {
    const double lo = std::min(s.d0, s.d1), hi = std::max(s.d0, s.d1), slack = (hi - lo) * 1e-9;
    return t.value >= lo - slack && t.value <= hi + slack;
  };
  out += "<g class=\"axis x\" stroke=\"#dddddd\">";
  for (const auto& t : rx.ticks) {
    if (!in_domain(t, sx)) continue;
    const double x = sx(t.value);
    out += "<line x1=\"" + fmt(x) + "\" y1=\"" + fmt(py0) + "\" x2=\"" + fmt(x) + "\" y2=\"" + fmt(py1) + "\"/>";
  }
  out += "</g><g class=\"axis y\" stroke=\"#dddddd\">";
  for (const auto& t : ry.ticks) {
    if (!in_domain(t, sy)) continue;
    const double y = sy(t.value);
    out += "<line x1=\"" + fmt(px0) + "\" y1=\"" + fmt(y) + "\" x2=\"" + fmt(px1) + "\" y2=\"" + fmt(y) + "\"/>";
  }
  out += "</g><g class=\"tick-labels\" fill=\"#333333\">";
  for (const auto& t : rx.ticks)
    if (in_domain(t, sx)) text(out, sx(t.value), py0 + 16, "middle", t.label);
  for (const auto& t : ry.ticks)
    if (in_domain(t, sy)) text(out, px0 - 6, sy(t.value) + 4, "end", t.label);
  out += "</g>";
  out += "<rect class=\"plot-area\" x=\"" + fmt(px0) + "\" y=\"" + fmt(py1) + "\" width=\"" + fmt(px1 - px0) +
         "\" height=\"" + fmt(py0 - py1) + "\" fill=\"none\" stroke=\"#555555\"/>";
  if (rx.zero_floor) out += axis_break((sx(rx.ticks[0].value) + sx(rx.ticks[1].value)) / 2, py0, false);
  if (ry.zero_floor) out += axis_break(px0, (sy(ry.ticks[0].value) + sy(ry.ticks[1].value)) / 2, true);
  text(out, (px0 + px1) / 2, plot_h - 10.0, "middle", axis_title(p.x, rx));
  text(out, 14, (py0 + py1) / 2, "middle", axis_title(p.y, ry),
       "transform=\"rotate(-90 14 " + fmt((py0 + py1) / 2) + ")\"");

  // Series: every point is inside the domain, so nothing needs clipping.
  for (std::size_t si = 0; si < p.lines.size(); ++si) {
    const series& s = p.lines[si];
    const std::string& color = s.color.empty() ? palette(si) : s.color;
    const auto& pts = points[si];
    out += "<g class=\"series\" data-name=\"" + escape(s.name) + "\" data-points=\"" + std::to_string(pts.size()) +
           "\">";
    if (s.kind != mark::scatter && pts.size() > 1) {
      std::string line;
      for (std::size_t i = 0; i < pts.size(); ++i) {
        if (s.kind == mark::step && i > 0) line += fmt(pts[i].first) + "," + fmt(pts[i - 1].second) + " ";
        line += fmt(pts[i].first) + "," + fmt(pts[i].second) + " ";
      }
      out += "<polyline fill=\"none\" stroke=\"" + color + "\" stroke-width=\"1.5\" points=\"" + line + "\"/>";
    }
    if (s.kind == mark::scatter || pts.size() <= max_marked_points)
      for (const auto& [x, y] : pts) out += marker(x, y, color, s.kind == mark::scatter ? 2.5 : 3);
    out += "</g>";
  }
  if (drawn == 0) text(out, (px0 + px1) / 2, (py0 + py1) / 2, "middle", "no data", "fill=\"#888888\"");

  if (!named.empty()) {
    out += "<g class=\"legend\"><rect class=\"legend-box\" x=\"" + fmt(lx) + "\" y=\"" + fmt(ly) + "\" width=\"" +
           fmt(legend_w) + "\" height=\"" + fmt(legend_h) + "\" fill=\"#ffffff\" stroke=\"#cccccc\"/>";
    for (std::size_t row = 0; row < named.size(); ++row) {
      const std::size_t si = named[row];
      const std::string& color = p.lines[si].color.empty() ? palette(si) : p.lines[si].color;
      const double y = ly + legend_pad + legend_row * static_cast<double>(row) + 6;
      const double x = lx + legend_pad;
      if (p.lines[si].kind != mark::scatter)
        out += "<line x1=\"" + fmt(x) + "\" y1=\"" + fmt(y) + "\" x2=\"" + fmt(x + 16) + "\" y2=\"" + fmt(y) +
               "\" stroke=\"" + color + "\" stroke-width=\"1.5\"/>";
      out += "<circle cx=\"" + fmt(x + 8) + "\" cy=\"" + fmt(y) + "\" r=\"3\" fill=\"" + color + "\"/>";
      text(out, x + legend_swatch, y + 4, "start", entry(si), "class=\"legend-text\"");
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
  std::vector<double> ends;
  std::size_t spans = 0;
  for (const auto& r : t.rows)
    for (const auto& [a, b] : r.spans) {
      ends.push_back(a), ends.push_back(b);
      ++spans;
    }
  axis x = t.x;
  x.scale = scale_kind::linear;
  const resolved_axis rx = resolve_axis(x, ends, {});
  const auto& xt = rx.ticks;
  const scale sx{scale_kind::linear, rx.d0, rx.d1, px0, px1};

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

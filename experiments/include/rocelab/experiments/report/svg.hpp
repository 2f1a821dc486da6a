#pragma once
// A small SVG plotting module for the run report: self-contained <svg> elements (no
// scripts, no external fonts or stylesheets), so a report is one HTML file that renders
// anywhere, including headless Chromium in the tests.
//
// A plot is axes (linear or log scale, ticks at "nice" values) and series drawn as lines,
// steps (a value held until the next point, as counters and queue samples are), or
// scatter points, with a legend. A timeline is one row per resource with the spans it was
// busy (a pause timeline: one row per port and priority).
//
// Log scales draw only positive values: points with x or y <= 0 are left out (and
// counted in the plot's `data-dropped` attribute, so nothing vanishes silently).
// Pure functions: text in, text out.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rocelab::experiments::svg {

enum class scale_kind : std::uint8_t { linear, log };

struct tick {
  double value = 0;
  std::string label;
};

// Ticks at 1, 2 or 5 x 10^k covering [lo, hi] with about `target` of them; the first is
// <= lo and the last >= hi (so they make a padded domain too). lo == hi gets a unit range.
[[nodiscard]] std::vector<tick> linear_ticks(double lo, double hi, int target = 6);
// Ticks at the decades 10^k from the decade at or below lo to the one at or above hi
// (lo, hi > 0); when that is more than `max_ticks` decades, every n-th.
[[nodiscard]] std::vector<tick> log_ticks(double lo, double hi, int max_ticks = 8);

// A number as axis labels show it: up to 4 significant digits, k/M/G for large values.
[[nodiscard]] std::string format_number(double v);
// Text made safe for SVG/HTML content and attributes.
[[nodiscard]] std::string escape(std::string_view text);

// The palette series take their colours from when they name none (colour-blind safe,
// Okabe-Ito).
[[nodiscard]] const std::string& palette(std::size_t i);

struct axis {
  std::string label;
  scale_kind scale = scale_kind::linear;
  std::optional<double> min, max;  // fixed domain ends; otherwise from the data
};

enum class mark : std::uint8_t { line, step, scatter };

struct series {
  std::string name;  // legend text; empty: not in the legend
  mark kind = mark::line;
  std::vector<double> x, y;
  std::string color;  // empty: palette
};

struct plot {
  std::string id;     // the svg element's id (for the report's links and the tests)
  std::string title;
  axis x, y;
  std::vector<series> lines;
  int width = 720, height = 360;
  bool legend = true;
  // A categorical x axis: these ticks (values 1..n, labels the names) replace the
  // computed ones, so points at 1, 2, ... are labelled by what they are, not 1.0, 1.2.
  std::vector<tick> x_categories;
};

// Makes the plot's x axis categorical over `names`: ticks at 1..n labelled with the
// names, domain [0.5, n + 0.5] so the first and last points sit inside the frame.
void set_x_categories(plot& p, std::string label, const std::vector<std::string>& names);

// The <svg> element. A plot without any drawable point still renders its axes and says
// "no data" in the middle.
[[nodiscard]] std::string render(const plot& p);

struct timeline_row {
  std::string name;
  std::vector<std::pair<double, double>> spans;  // [start, end] in x units
  std::string color;                             // empty: palette
};

struct timeline {
  std::string id;
  std::string title;
  axis x;  // linear
  std::vector<timeline_row> rows;
  int width = 720;
  int row_height = 18;
};

[[nodiscard]] std::string render(const timeline& t);

}  // namespace rocelab::experiments::svg

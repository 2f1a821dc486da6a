#pragma once
// A small SVG plotting module, the one every report draws with (run, multi-run, tuning,
// compare, buffers, qualify): self-contained <svg> elements (no scripts, no external fonts
// or stylesheets), so a report is one HTML file that renders anywhere, including headless
// Chromium in the tests.
//
// A plot is axes (linear or log scale, ticks at "nice" values, labelled in the axis's
// unit) and series drawn as lines, steps (a value held until the next point, as counters
// and queue samples are), or scatter points, with a legend. A timeline is one row per
// resource with the spans it was busy (a pause timeline: one row per port and priority).
//
// What a reader can rely on in every plot:
// - the legend sits outside the plot area, to the right of it, in a box sized from its
//   text (the svg grows to hold it), so it never covers data and its text is never cut;
// - every point of a series has a marker (a scatter's points; a line's or step's when it
//   has at most `max_marked_points`, beyond which the curve itself is the mark), so a
//   one-point series is visible;
// - an automatic axis is logarithmic when its positive values span more than
//   `log_span` (max / min > 100) and it has no negative value, linear otherwise;
// - a log axis draws a zero at its floor, a tick labelled "0" one tick step below the
//   lowest tick, with a break mark on the axis, and its label says "0 at the floor";
//   negative values on a log axis, and values beyond an axis's fixed min or max, are left
//   out and counted in `data-dropped`;
// - byte axes are labelled in B/KiB/MiB/GiB (log: powers of two), time axes in
//   ns/us/ms/s (values are given in bytes and nanoseconds).
// The elements carry classes the tests (and readers) can find: `plot-area` (the frame of
// the axes), `legend` and `legend-box`, `series` groups with `data-name` and
// `data-points`, and `point` markers.
// Pure functions: text in, text out.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rocelab::experiments::svg {

// automatic: log or linear from the data (see above).
enum class scale_kind : std::uint8_t { linear, log, automatic };
// What an axis's values are: tick labels say "4 KiB" and "200 us" for bytes and ns.
enum class unit_kind : std::uint8_t { none, bytes, ns };

// Positive values spanning more than this ratio make an automatic axis logarithmic.
inline constexpr double log_span = 100;
// Line and step series with at most this many points get a marker on each.
inline constexpr std::size_t max_marked_points = 100;

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

// Ticks for a byte axis: linear ones at nice multiples of the largest binary unit (KiB,
// MiB, ...) under hi, log ones at powers of two (every 2^n with n stepping by 1, 2, 5 or
// 10 so there are at most `max_ticks`). Labels "512 B", "64 KiB", "1.5 MiB".
[[nodiscard]] std::vector<tick> byte_ticks(double lo, double hi, scale_kind scale, int max_ticks = 8);
// Ticks for a nanosecond axis: linear ones nice in the unit of hi (ns, us, ms, s), log
// ones at decades. Labels "200 us", "1 ms".
[[nodiscard]] std::vector<tick> ns_ticks(double lo, double hi, scale_kind scale, int max_ticks = 8);

// A number as axis labels show it: up to 4 significant digits, k/M/G for large values.
[[nodiscard]] std::string format_number(double v);
// A size as a person reads it: `digits` significant digits (at least 3) in the largest
// binary unit that keeps the number at least 1: 11247390 -> "10.7 MiB", 1536 -> "1.50 KiB",
// 512 -> "512 B" (bytes are whole).
[[nodiscard]] std::string readable_bytes(double bytes, int digits = 3);
// Text made safe for SVG/HTML content and attributes.
[[nodiscard]] std::string escape(std::string_view text);

// The palette series take their colours from when they name none (colour-blind safe,
// Okabe-Ito).
[[nodiscard]] const std::string& palette(std::size_t i);

struct axis {
  std::string label;  // without the unit when `unit` says it: the ticks carry it
  scale_kind scale = scale_kind::automatic;
  std::optional<double> min, max;  // fixed domain ends; otherwise from the data
  unit_kind unit = unit_kind::none;
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
  // The series are drawn side by side at each category (6 px apart), so equal values
  // stay visible.
  std::vector<tick> x_categories;
};

// Makes the plot's x axis categorical over `names`: ticks at 1..n labelled with the
// names, domain [0.5, n + 0.5] so the first and last points sit inside the frame.
void set_x_categories(plot& p, std::string label, const std::vector<std::string>& names);

// The scale an axis gets over these values (automatic resolved; see the top of the file).
[[nodiscard]] scale_kind resolve_scale(const axis& a, const std::vector<double>& values);

// The <svg> element, `width` wide plus the legend's width. A plot without any drawable
// point still renders its axes and says "no data" in the middle; a named series without
// one says "(no data)" after its name in the legend.
[[nodiscard]] std::string render(const plot& p);

struct timeline_row {
  std::string name;
  std::vector<std::pair<double, double>> spans;  // [start, end] in x units
  std::string color;                             // empty: palette
};

struct timeline {
  std::string id;
  std::string title;
  axis x;  // linear; its unit labels the ticks
  std::vector<timeline_row> rows;
  int width = 720;
  int row_height = 18;
};

[[nodiscard]] std::string render(const timeline& t);

}  // namespace rocelab::experiments::svg

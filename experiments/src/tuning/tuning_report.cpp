#include "rocelab/experiments/tuning/tuning_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "report/change_judgement.hpp"
#include "report/html_page.hpp"
#include "rocelab/common/units.hpp"
#include "rocelab/experiments/tuning/objective.hpp"
#include "rocelab/experiments/report/svg.hpp"
#include "rocelab/experiments/tuning/tuning_trials.hpp"

namespace rocelab::experiments {
namespace {

std::string num(double v) {
  if (std::isnan(v)) return "-";
  char b[64];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

// "ecn.kmin_bytes=20480 ecn.pmax=0.2 dcqcn.enabled=false": the path without its section
// (switch., nic.), reals to 4 significant digits.
std::string params_text(const std::map<std::string, std::string>& params) {
  std::string out;
  for (const auto& [path, value] : params) {
    const auto dot = path.find('.');
    std::string shown = value;
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (!value.empty() && end && *end == '\0' && v != std::floor(v)) shown = num(v);
    out += (out.empty() ? "" : " ") + path.substr(dot == std::string::npos ? 0 : dot + 1) + "=" + shown;
  }
  return out;
}

// A trade-off axis as plotted: its name without the unit suffix, the unit, and the factor
// that turns its values into that unit's base (us -> ns).
struct tradeoff_axis {
  std::string label;
  svg::unit_kind unit = svg::unit_kind::none;
  double factor = 1;
};

tradeoff_axis tradeoff_axis_of(const std::string& name) {
  const auto ends = [&](std::string_view suffix) { return name.size() > suffix.size() && name.ends_with(suffix); };
  if (ends("_us")) return {name.substr(0, name.size() - 3), svg::unit_kind::ns, 1e3};
  if (ends("_ns")) return {name.substr(0, name.size() - 3), svg::unit_kind::ns, 1};
  if (ends("_bytes")) return {name.substr(0, name.size() - 6), svg::unit_kind::bytes, 1};
  return {name};
}

// A trade-off value as the table shows it, in the axis's unit.
std::string tradeoff_text(const tradeoff_axis& axis, double v) {
  if (std::isnan(v)) return "-";
  if (axis.unit == svg::unit_kind::ns) return readable_duration(v * axis.factor);
  if (axis.unit == svg::unit_kind::bytes) return svg::readable_bytes(v * axis.factor);
  return num(v);
}

}  // namespace

std::string pareto_svg(const tuning_answer& a) {
  const tradeoff_axis ax = tradeoff_axis_of(a.axes.x), ay = tradeoff_axis_of(a.axes.y);
  svg::plot p;
  p.id = "pareto";
  p.title = "Trade-off: " + a.axes.x + " against " + a.axes.y + " (lower is better on both)";
  p.x = {ax.label, svg::scale_kind::automatic, {}, {}, ax.unit};
  p.y = {ay.label, svg::scale_kind::automatic, {}, {}, ay.unit};
  svg::series others{"trial", svg::mark::scatter, {}, {}, "#bbbbbb"};
  svg::series front{"Pareto front", svg::mark::line, {}, {}, svg::palette(0)};
  std::vector<std::pair<double, double>> f;
  std::vector<svg::series> baselines;
  std::size_t colour = 1;
  for (const pareto_point& pt : a.pareto) {
    if (std::isnan(pt.x) || std::isnan(pt.y)) continue;
    const double x = pt.x * ax.factor, y = pt.y * ay.factor;
    if (!pt.baseline.empty()) {
      baselines.push_back({pt.baseline + (pt.on_front ? " (on the front)" : ""), svg::mark::scatter, {x}, {y},
                           svg::palette(colour++)});
    } else if (!pt.on_front) {
      others.x.push_back(x);
      others.y.push_back(y);
    }
    if (pt.on_front) f.emplace_back(x, y);
  }
  std::sort(f.begin(), f.end());
  for (const auto& [x, y] : f) {
    front.x.push_back(x);
    front.y.push_back(y);
  }
  if (!others.x.empty()) p.lines.push_back(std::move(others));
  p.lines.push_back(std::move(front));
  for (auto& b : baselines) p.lines.push_back(std::move(b));
  return svg::render(p);
}

namespace {

// Whether the recommendation beats every baseline beside it beyond noise: each paired
// difference's interval below zero and the means more than the noise fraction apart.
bool clearly_best(const tuning_answer& a) {
  std::size_t compared = 0;
  for (const config_evaluation& b : a.baselines) {
    if (b.baseline == a.best_baseline) continue;
    const auto diff = a.vs_baseline_ci.find(b.baseline);
    const auto ci = a.baseline_ci.find(b.baseline);
    if (diff == a.vs_baseline_ci.end() || ci == a.baseline_ci.end()) return false;
    const std::pair interval{diff->second.low, diff->second.high};
    if (report_detail::judge_change(ci->second.mean, a.best_ci.mean, true, interval) != report_detail::judgement::better)
      return false;
    ++compared;
  }
  return compared > 0;
}

}  // namespace

std::string tuning_report_html(const std::string& title, const tuning_settings& settings, const tuning_answer& a) {
  std::ostringstream h;
  h << html_page_head("Tuning " + title);
  h << "<h1>Tuning " << svg::escape(title) << "</h1>\n";
  h << "<p>Minimizing " << svg::escape(describe(settings.objective)) << " with " << to_string(settings.method)
    << " search; PFC only and the vendor defaults are candidates beside the trials.</p>\n";
  h << "<h2>Answer</h2>\n<p id=verdict>";
  std::istringstream lines(answer_text(settings, a));
  for (std::string line; std::getline(lines, line);) h << svg::escape(line) << "<br>\n";
  h << "</p>\n";

  h << "<h2>Recommendation and baselines</h2>\n<table id=baselines><tr><th>configuration</th><th>settings</th>"
       "<th>objective (search seeds)</th><th>mean on fresh seeds</th><th>95% CI</th><th>best minus this (paired)</th></tr>\n";
  const bool clear = clearly_best(a);
  auto row = [&](const std::string& label, const std::map<std::string, std::string>& params, double objective,
                 const confidence_interval& ci, const confidence_interval* diff, bool winner) {
    h << "<tr><td class=\"l" << (winner && clear ? " good" : "") << "\">" << svg::escape(label)
      << (winner ? " (best)" : "")
      << "</td><td class=l>" << svg::escape(params_text(params)) << "</td><td>" << num(objective) << "</td><td>"
      << num(ci.mean) << "</td><td>" << num(ci.low) << " .. " << num(ci.high) << "</td><td>";
    if (diff) h << num(diff->mean) << " (" << num(diff->low) << " .. " << num(diff->high) << ")";
    h << "</td></tr>\n";
  };
  if (a.best_baseline.empty()) {
    row(a.best_label, a.best_params, a.best_objective, a.best_ci, nullptr, true);
  } else if (a.contender_trial) {
    // The contender that did not win: its evidence beside the baseline that did.
    row(a.contender_fresh.name + " (contender)", a.contender_params, a.contender_objective,
        mean_ci95(a.contender_fresh.objectives), nullptr, false);
  }
  for (const config_evaluation& b : a.baselines) {
    const auto ci = a.baseline_ci.find(b.baseline);
    const auto diff = a.vs_baseline_ci.find(b.baseline);
    row(b.baseline, b.params, b.scored.objective, ci == a.baseline_ci.end() ? confidence_interval{} : ci->second,
        diff == a.vs_baseline_ci.end() || b.baseline == a.best_baseline ? nullptr : &diff->second,
        b.baseline == a.best_baseline);
  }
  h << "</table>\n<p class=note>Fresh seeds: ";
  for (std::size_t i = 0; i < a.fresh_seeds.size(); ++i) h << (i ? ", " : "") << a.fresh_seeds[i];
  h << " (none used by the search). Intervals: mean +- t<sub>0.975, n-1</sub> s / sqrt(n) (Student's t). "
       "The paired difference is taken seed by seed; an interval below zero means the best beats that baseline. "
       "The best is shaded green only when it beats every baseline that way and by more than "
    << static_cast<int>(report_detail::noise_fraction * 100) << "%, and is not zero.</p>\n";
  if (!a.best_at_edge.empty()) {
    h << "<p id=at_edge class=bad><b>At the edge of the search range:</b> ";
    for (std::size_t i = 0; i < a.best_at_edge.size(); ++i) h << (i ? ", " : "") << svg::escape(a.best_at_edge[i]);
    h << (a.widened.empty() ? ". The optimum may lie beyond it."
                            : ". The sweep widened its ranges once already; the optimum may lie beyond them.")
      << "</p>\n";
  }
  h << "<h2>Trade-off</h2>\n<p>Every trial and baseline on the search seeds; the coloured line is the Pareto front "
       "(no other configuration is better on both axes). The objective picks one point of it by its weights.</p>\n";
  const tradeoff_axis ax = tradeoff_axis_of(a.axes.x), ay = tradeoff_axis_of(a.axes.y);
  // Every distinct configuration, labelled: trials with the same values or the same result
  // are one row, naming the others.
  h << pareto_svg(a) << "\n<table id=pareto_front><tr><th>configuration</th><th>the same</th><th>settings</th><th>"
    << svg::escape(ax.label) << "</th><th>" << svg::escape(ay.label) << "</th><th>on the front</th></tr>\n";
  for (const pareto_point& p : a.pareto) {
    std::string same;
    for (const std::string& o : p.same) same += (same.empty() ? "" : ", ") + o;
    h << "<tr><td class=l>" << svg::escape(p.label) << "</td><td class=l>" << svg::escape(same) << "</td><td class=l>"
      << svg::escape(params_text(p.params)) << "</td><td>" << tradeoff_text(ax, p.x) << "</td><td>"
      << tradeoff_text(ay, p.y) << "</td><td>" << (p.on_front ? "yes" : "") << "</td></tr>\n";
  }
  h << "</table>\n</body></html>\n";
  return h.str();
}

}  // namespace rocelab::experiments

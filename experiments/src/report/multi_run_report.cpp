#include "rocelab/experiments/report/multi_run_report.hpp"

#include "rocelab/common/output_file.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "report/change_judgement.hpp"
#include "report/html_page.hpp"
#include "rocelab/common/units.hpp"
#include "rocelab/experiments/report/svg.hpp"
#include "rocelab/experiments/run/summary_metrics.hpp"

namespace rocelab::experiments {
namespace {

using json = nlohmann::ordered_json;

std::string label_of(const report_run& r) { return "run " + r.id + (r.name.empty() ? "" : " " + r.name); }


std::string percent_text(std::optional<double> p, double a, double b) {
  if (!p) return a == b ? "=" : "new";
  char text[24];
  std::snprintf(text, sizeof text, "%+.1f%%", *p);
  return text;
}


// One sentence per run after the first: how its main figures moved against the first.
std::string sentence(const report_run& first, const report_run& other) {
  const auto a = key_metrics(first.summary), b = key_metrics(other.summary);
  std::string out = label_of(other) + " against " + label_of(first) + ":";
  bool any = false;
  for (const char* name : {"fct p99", "slowdown p99", "victim slowdown p99", "paused", "drops"}) {
    const summary_metric* ma = find_metric(a, name);
    const summary_metric* mb = find_metric(b, name);
    if (ma == nullptr || mb == nullptr) continue;
    out += std::string(any ? "," : "") + " " + name + " " + metric_text(*ma) + " to " + metric_text(*mb) + " (" +
           percent_text(change_percent(ma->value, mb->value), ma->value, mb->value) + ")";
    any = true;
  }
  return out + ".";
}

std::string fct_cdf_svg(const std::vector<report_run>& runs) {
  svg::plot p;
  p.id = "fct-cdf";
  p.title = "FCT CDF, completed flows";
  p.x = {"flow completion time", svg::scale_kind::automatic, {}, {}, svg::unit_kind::ns};
  p.y = {"fraction of flows", svg::scale_kind::linear, 0.0, 1.0};
  for (const report_run& r : runs) {
    std::vector<double> fct;
    for (const flow_record& f : r.flows)
      if (f.end_ns > 0 && f.fct_ns > 0) fct.push_back(static_cast<double>(f.fct_ns));
    std::sort(fct.begin(), fct.end());
    svg::series s{label_of(r), svg::mark::step, {}, {}, {}};
    for (std::size_t i = 0; i < fct.size(); ++i) {
      s.x.push_back(fct[i]);
      s.y.push_back(static_cast<double>(i + 1) / static_cast<double>(fct.size()));
    }
    p.lines.push_back(std::move(s));
  }
  return svg::render(p);
}

std::string slowdown_svg(const std::vector<report_run>& runs) {
  svg::plot p;
  p.id = "slowdown-by-size";
  p.title = "p99 slowdown by flow size";
  p.x = {"flow size", svg::scale_kind::automatic, {}, {}, svg::unit_kind::bytes};
  p.y = {"p99 slowdown (FCT / ideal FCT)", svg::scale_kind::automatic, {}, {}};
  for (const report_run& r : runs) {
    svg::series s{label_of(r), svg::mark::line, {}, {}, {}};
    for (const size_bucket& b : slowdown_by_size(r.flows)) {
      s.x.push_back(b.bytes);
      s.y.push_back(b.slowdown_p99);
    }
    p.lines.push_back(std::move(s));
  }
  return svg::render(p);
}

// Pause time as horizontal bars (HTML, no plot needed for one number per run).
std::string pause_bars(const std::vector<report_run>& runs) {
  double most = 0;
  for (const auto& r : runs) most = std::max(most, static_cast<double>(r.summary.paused_ns));
  std::string out = "<table id=pause-time><tr><th>run</th><th>time paused</th><th>pause frames</th><th></th></tr>";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    const double share = most > 0 ? static_cast<double>(r.summary.paused_ns) / most : 0;
    char width[32];
    std::snprintf(width, sizeof width, "%.0fpx", 1 + 300 * share);
    out += "<tr><td class=l>" + svg::escape(label_of(r)) + "</td><td>" +
           readable_duration(static_cast<double>(r.summary.paused_ns)) + "</td><td>" +
           std::to_string(r.summary.pause_frames) + "</td><td class=l><div class=bar style=\"width:" + width +
           ";background:" + svg::palette(i) + "\"></div></td></tr>";
  }
  return out + "</table>";
}

}  // namespace

std::vector<size_bucket> slowdown_by_size(const std::vector<flow_record>& flows) {
  std::map<int, std::vector<double>> by_bucket;  // floor(log2(bytes)) -> slowdowns
  for (const flow_record& f : flows) {
    if (f.end_ns <= 0 || f.fct_ns <= 0 || f.ideal_fct_ns <= 0 || f.bytes == 0) continue;
    by_bucket[static_cast<int>(std::bit_width(f.bytes)) - 1].push_back(static_cast<double>(f.fct_ns) /
                                                                      static_cast<double>(f.ideal_fct_ns));
  }
  std::vector<size_bucket> out;
  for (auto& [exponent, slowdowns] : by_bucket) {
    std::sort(slowdowns.begin(), slowdowns.end());
    out.push_back({std::exp2(exponent + 0.5), percentile(slowdowns, 99), slowdowns.size()});
  }
  return out;
}

std::string multi_run_html(const std::vector<report_run>& runs) {
  std::string html = html_page_head(std::to_string(runs.size()) + " runs side by side", ".bar{height:12px}");
  html += "<h1>" + std::to_string(runs.size()) + " runs side by side</h1>\n";
  for (std::size_t i = 1; i < runs.size(); ++i)
    html += "<p class=summary>" + svg::escape(sentence(runs[0], runs[i])) + "</p>\n";

  html += "<h2>Runs</h2><table id=runs><tr><th>run</th><th>backend</th><th>status</th><th>overrides</th></tr>";
  for (const auto& r : runs) {
    std::string overrides;
    for (const auto& [path, value] : r.overrides)
      overrides += (overrides.empty() ? "" : "<br>") + svg::escape(path + " = " + value);
    html += "<tr><td class=l>" + svg::escape(label_of(r)) + "</td><td class=l>" + svg::escape(r.backend) +
            "</td><td class=l>" + svg::escape(r.status) + "</td><td class=l>" +
            (overrides.empty() ? "(the spec as written)" : overrides) + "</td></tr>";
  }
  html += "</table>\n";

  html += "<h2>Results</h2><p class=note>Each run's change is against " + svg::escape(label_of(runs[0])) +
          "; green where it is better, red where worse, by more than " +
          std::to_string(static_cast<int>(report_detail::noise_fraction * 100)) +
          "% (a smaller change is within run-to-run noise); a zero is never coloured better.</p>"
          "<table id=results><tr><th>metric</th>";
  for (const auto& r : runs) html += "<th>" + svg::escape(label_of(r)) + "</th>";
  html += "</tr>";
  std::vector<std::vector<summary_metric>> metrics;
  for (const auto& r : runs) metrics.push_back(key_metrics(r.summary));
  for (const summary_metric& m : metrics[0]) {
    html += "<tr><td class=l>" + svg::escape(m.name) + "</td><td>" + metric_text(m) + "</td>";
    for (std::size_t i = 1; i < runs.size(); ++i) {
      const summary_metric* other = find_metric(metrics[i], m.name);
      if (other == nullptr) {
        html += "<td>-</td>";
        continue;
      }
      if (!m.measured || !other->measured) {  // no change against a count nobody measured
        html += "<td>" + metric_text(*other) + "</td>";
        continue;
      }
      const bool judged = m.name != "flows" && m.name != "completed" && m.name != "CE marked" && m.name != "CNPs";
      const auto j = judged ? report_detail::judge_change(m.value, other->value, m.lower_is_better)
                            : report_detail::judgement::none;
      html += std::string("<td") + (j == report_detail::judgement::none ? "" : std::string(" class=") +
                                    report_detail::judgement_class(j)) + ">" +
              metric_text(*other) + " (" + percent_text(change_percent(m.value, other->value), m.value, other->value) +
              ")</td>";
    }
    html += "</tr>";
  }
  html += "</table>\n";

  html += "<h2>Flow completion times</h2>" + fct_cdf_svg(runs) + "\n";
  html += "<h2>Slowdown by flow size</h2>" + slowdown_svg(runs) + "\n";
  html += "<h2>Pause time</h2>" + pause_bars(runs) + "\n";
  return html + "</body></html>\n";
}

std::string multi_run_json(const std::vector<report_run>& runs) {
  json out = {{"runs", json::array()}, {"changes", json::array()}};
  std::vector<std::vector<summary_metric>> metrics;
  for (const auto& r : runs) {
    metrics.push_back(key_metrics(r.summary));
    json overrides = json::object();
    for (const auto& [path, value] : r.overrides) overrides[path] = value;
    json results = json::object();
    for (const auto& m : metrics.back()) results[m.name] = m.measured ? json(m.value) : json(nullptr);
    out["runs"].push_back({{"id", r.id},
                           {"name", r.name},
                           {"backend", r.backend},
                           {"status", r.status},
                           {"overrides", overrides},
                           {"results", results}});
  }
  for (std::size_t i = 1; i < runs.size(); ++i)
    for (const summary_metric& m : metrics[0])
      if (const summary_metric* other = find_metric(metrics[i], m.name); other && m.measured && other->measured) {
        const auto p = change_percent(m.value, other->value);
        out["changes"].push_back({{"metric", m.name},
                                  {"run", runs[i].id},
                                  {"change", other->value - m.value},
                                  {"change_percent", p ? json(*p) : json(nullptr)}});
      }
  return out.dump(2);
}

status write_multi_run_report(const std::string& dir, const std::vector<report_run>& runs, existing_output existing) {
  if (runs.size() < 2) return status(error_code::invalid_argument, "a side-by-side report needs at least two runs");
  std::string csv = "metric";
  for (const auto& r : runs) csv += ",run " + r.id;
  csv += "\n";
  std::vector<std::vector<summary_metric>> metrics;
  for (const auto& r : runs) metrics.push_back(key_metrics(r.summary));
  for (const summary_metric& m : metrics[0]) {
    csv += m.name;
    for (const auto& ms : metrics) {
      const summary_metric* x = find_metric(ms, m.name);
      char v[32] = "";
      if (x != nullptr && x->measured) std::snprintf(v, sizeof v, "%.17g", x->value);
      csv += std::string(",") + v;
    }
    csv += "\n";
  }
  return write_output_files(dir,
                            {{"report.html", multi_run_html(runs)}, {"report.json", multi_run_json(runs)},
                             {"results.csv", csv}},
                            existing);
}

}  // namespace rocelab::experiments

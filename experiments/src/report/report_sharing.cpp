// The run report's "Bandwidth sharing" section: each flow's rate over time at the
// receiver's switch port (experiments/run/flow_timeline.hpp), and for a sim-to-real run the
// twin's replay of the same flows on the same axes.
#include <algorithm>
#include <cstdio>

#include "report/report_sections.hpp"
#include "report/report_table.hpp"
#include "rocelab/common/units.hpp"
#include "rocelab/experiments/report/svg.hpp"
#include "rocelab/experiments/run/backend_traits.hpp"
#include "rocelab/experiments/run/flow_timeline.hpp"

namespace rocelab::experiments::report_detail {

namespace {

// Flows drawn at most: beyond a dozen lines no one tells them apart.
constexpr std::size_t max_flow_lines = 16;

// The first repeat's timelines, at most max_flow_lines; `cut` says whether there were more.
std::vector<flow_timeline> first_repeat(const std::vector<counter_sample>& counters, bool& cut) {
  auto all = flow_timelines_of(counters);
  std::erase_if(all, [](const flow_timeline& t) { return t.repeat != 0 || t.points.empty(); });
  cut = all.size() > max_flow_lines;
  if (cut) all.resize(max_flow_lines);
  return all;
}

std::string flow_label(const run_records& r, std::uint32_t flow) {
  if (flow >= r.flows.size()) return "flow " + std::to_string(flow);
  const flow_record& f = r.flows[flow];
  return host_name(r, f.src) + " to " + host_name(r, f.dst) + " #" + std::to_string(flow);
}

// One line per flow, its rate (Mb/s) at the middle of each interval; both plots of a
// section share x_max and y_max so the lab's and the twin's read alike.
std::string rate_plot(const std::vector<flow_timeline>& timelines, const run_records& names, const std::string& id,
                      const std::string& title, double x_max, double y_max) {
  svg::plot p;
  p.id = id;
  p.title = title;
  p.x = {"time since T0", svg::scale_kind::linear, 0.0, x_max, svg::unit_kind::ns};
  p.y = {"rate at the receiver's port (Mb/s)", svg::scale_kind::linear, 0.0, y_max};
  for (const flow_timeline& t : timelines) {
    svg::series s{flow_label(names, t.flow), svg::mark::line, {}, {}, ""};
    for (const flow_rate_point& pt : t.points) {
      s.x.push_back(0.5 * static_cast<double>(pt.from_ns + pt.to_ns));
      s.y.push_back(pt.rate_bps / 1e6);
    }
    p.lines.push_back(std::move(s));
  }
  return svg::render(p);
}

// "h3 to h1 #2 ended at 46.7 ms" for the first and last flow to end.
std::string ends_sentence(const run_records& r, const char* who) {
  std::int64_t first = -1, last = -1;
  for (const auto& f : r.flows) {
    if (!f.completed()) continue;
    first = first < 0 ? f.end_ns : std::min(first, f.end_ns);
    last = std::max(last, f.end_ns);
  }
  if (first < 0) return "";
  return std::string(who) + " flows ended from " + readable_duration(static_cast<double>(first)) + " to " +
         readable_duration(static_cast<double>(last)) + ". ";
}

}  // namespace

std::string sharing_section(const run_analysis& a) {
  bool measured_cut = false, predicted_cut = false;
  const auto measured = first_repeat(a.records.counters, measured_cut);
  const auto predicted = first_repeat(a.header.predicted_flow_timeline, predicted_cut);
  if (measured.empty() && predicted.empty()) return "";
  double x_max = 1, y_max = 1;
  for (const auto* set : {&measured, &predicted})
    for (const auto& t : *set)
      for (const auto& pt : t.points) {
        x_max = std::max(x_max, static_cast<double>(pt.to_ns));
        y_max = std::max(y_max, pt.rate_bps / 1e6);
      }
  std::string text = "Each flow's rate at the receiver's switch port over time: payload bytes of its data packets "
                     "(retransmissions included) per interval, from " +
                     std::string(backend_traits_of(a.records.backend).simulated
                                     ? "the twin's last switch"
                                     : "the capture of the switch's egress copies (stamps fitted to the port's rate)") +
                     (measured_cut || predicted_cut ? "; the first " + std::to_string(max_flow_lines) + " flows"
                                                    : std::string()) +
                     ". " + ends_sentence(a.records, "This run's");
  std::string out = "<h2 id=\"sharing\">Bandwidth sharing</h2><p>" + svg::escape(text) + "</p>";
  if (!measured.empty())
    out += "<figure>" +
           rate_plot(measured, a.records, "plot-flow-rates", "Per-flow rate over time (this run, first repeat)", x_max,
                     y_max) +
           "<figcaption>Rate of each flow over each interval, drawn at the interval's middle.</figcaption></figure>";
  if (!predicted.empty())
    out += "<figure>" +
           rate_plot(predicted, a.records, "plot-flow-rates-twin",
                     "Per-flow rate over time (the twin replaying this run's first repeat)", x_max, y_max) +
           "<figcaption>The twin's replay of the same flows at their measured start times, on the same axes." +
           "</figcaption></figure>";
  return out;
}

}  // namespace rocelab::experiments::report_detail

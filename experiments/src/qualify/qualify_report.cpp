// The qualification's outputs (table, JSON, HTML with the ECN curve) and the NIC
// counters-against-capture checks of a run.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "report/html_page.hpp"
#include "rocelab/common/units.hpp"
#include "rocelab/experiments/qualify/qualify.hpp"
#include "rocelab/experiments/report/svg.hpp"

namespace rocelab::experiments {
namespace {

std::string tolerance_text(const qualify_check& c) {
  if (c.unit.empty() || c.unit == "points") return "";
  return "±" + qualify_value_text(c.tolerance, c.unit);
}

// The latest value of a cumulative counter per device, summed over devices.
std::optional<std::uint64_t> counter_sum(const run_records& run, const std::vector<const char*>& names) {
  std::map<std::uint32_t, std::pair<std::int64_t, std::uint64_t>> latest;
  bool any = false;
  for (const auto& c : run.counters)
    for (const char* n : names)
      if (c.name == n) {
        auto& [t, v] = latest[c.device];
        if (!any || c.t_ns >= t) {
          t = c.t_ns;
          v = c.value;
        }
        any = true;
      }
  if (!any) return std::nullopt;
  std::uint64_t sum = 0;
  for (const auto& [d, tv] : latest) sum += tv.second;
  return sum;
}

}  // namespace

std::string qualify_value_text(double v, const std::string& unit) {
  char s[64];
  if (v < 0 && unit != "probability") return "none";
  if (unit == "bytes")
    return svg::readable_bytes(v, 4);
  if (unit == "ns")
    return readable_duration(v);
  if (unit == "probability")
    std::snprintf(s, sizeof s, "%.3f", v);
  else if (unit.empty())
    std::snprintf(s, sizeof s, "%s", v != 0 ? "yes" : "no");
  else
    std::snprintf(s, sizeof s, "%g %s", v, unit.c_str());
  return s;
}

std::optional<std::vector<qualify_check>> nic_capture_checks(const run_records& run) {
  const auto cnp = counter_sum(run, {"capture.cnp"});
  if (!cnp) return std::nullopt;
  const auto ce = counter_sum(run, {"capture.ce"}).value_or(0);
  const auto pfc = counter_sum(run, {"capture.pfc_frames"}).value_or(0);
  const std::uint64_t lost = counter_sum(run, {"capture.imissed"}).value_or(0) +
                             counter_sum(run, {"capture.rx_nombuf"}).value_or(0) +
                             counter_sum(run, {"capture.kernel_dropped"}).value_or(0) +
                             counter_sum(run, {"capture.if_dropped"}).value_or(0);
  const std::string note = "summed over the NICs; tolerance = frames the capture reports lost (" +
                           std::to_string(lost) + ")";
  std::vector<qualify_check> out;
  // The soft NIC's names and mlx5's (hw_counters, ethtool) for the same counts.
  const std::tuple<const char*, const char*, std::vector<const char*>, std::uint64_t, const char*> rows[] = {
      {"nic.np_cnp_sent", "CNPs the NICs sent vs CNPs captured", {"nic.tx_cnps", "nic.np_cnp_sent", "np_cnp_sent"}, *cnp,
       "packets"},
      {"nic.rp_cnp_handled", "CNPs the NICs handled vs CNPs captured",
       {"nic.rx_cnps", "nic.rp_cnp_handled", "rp_cnp_handled"}, *cnp, "packets"},
      {"nic.np_ecn_marked_roce_packets", "CE-marked packets the NICs received vs CE packets captured",
       {"nic.rx_ce_marked", "nic.np_ecn_marked_roce_packets", "np_ecn_marked_roce_packets"}, ce, "packets"},
      {"nic.rx_pause", "PFC frames the NICs received vs the switch's PFC frames captured",
       {"nic.rx_pfc", "nic.rx_prio3_pause", "rx_prio3_pause"}, pfc, "frames"},
  };
  for (const auto& [name, what, names, captured, unit] : rows) {
    const auto nic = counter_sum(run, names);
    qualify_check c{name, what, unit, nic ? static_cast<double>(*nic) : -1, static_cast<double>(captured),
                    static_cast<double>(lost), false, note};
    if (!nic)
      c.note = "the NICs do not report this counter";
    else
      c.pass = std::abs(c.measured - c.expected) <= c.tolerance;
    out.push_back(std::move(c));
  }
  return out;
}

std::string qualify_table(const qualify_result& r) {
  std::ostringstream o;
  o << "Qualification of " << r.target << "\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-32s %-16s %-16s %-14s %s\n", "check", "measured", "expected", "tolerance",
                "result");
  o << line;
  for (const auto& c : r.checks) {
    std::snprintf(line, sizeof line, "%-32s %-16s %-16s %-14s %s\n", c.name.c_str(),
                  qualify_value_text(c.measured, c.unit).c_str(), qualify_value_text(c.expected, c.unit).c_str(),
                  tolerance_text(c).c_str(), c.pass ? "PASS" : "FAIL");
    o << line;
    if (!c.note.empty()) o << "    " << c.note << "\n";
  }
  if (!r.ecn_curve.empty()) {
    o << "\nECN marking against queue depth\n";
    std::snprintf(line, sizeof line, "%12s %8s %8s %10s %10s %21s %s\n", "depth B", "samples", "marked", "measured",
                  "expected", "99.9% interval", "result");
    o << line;
    for (const auto& p : r.ecn_curve) {
      std::snprintf(line, sizeof line, "%12lld %8u %8u %10.4f %10.4f     [%6.4f, %6.4f] %s%s%s\n",
                    static_cast<long long>(p.depth_bytes), p.samples, p.marked, p.measured, p.expected, p.ci_low,
                    p.ci_high, p.pass ? "PASS" : "FAIL", p.note.empty() ? "" : "  ", p.note.c_str());
      o << line;
    }
  }
  const auto failed = std::count_if(r.checks.begin(), r.checks.end(), [](const auto& c) { return !c.pass; });
  o << "\n" << (failed == 0 ? "PASS" : "FAIL") << ": " << r.checks.size() - static_cast<std::size_t>(failed) << " of "
    << r.checks.size() << " checks passed\n";
  return o.str();
}

std::string qualify_json(const qualify_result& r) {
  nlohmann::ordered_json j;
  j["target"] = r.target;
  j["passed"] = r.passed();
  j["checks"] = nlohmann::ordered_json::array();
  for (const auto& c : r.checks)
    j["checks"].push_back({{"name", c.name}, {"what", c.what}, {"unit", c.unit}, {"measured", c.measured},
                           {"expected", c.expected}, {"tolerance", c.tolerance}, {"pass", c.pass}, {"note", c.note}});
  j["ecn"] = {{"enabled", r.ecn.enabled}, {"kmin_bytes", r.ecn.kmin_bytes}, {"kmax_bytes", r.ecn.kmax_bytes},
              {"pmax", r.ecn.pmax}, {"mark_on_dequeue", r.ecn_on_dequeue}};
  j["ecn_curve"] = nlohmann::ordered_json::array();
  for (const auto& p : r.ecn_curve)
    j["ecn_curve"].push_back({{"depth_bytes", p.depth_bytes}, {"samples", p.samples}, {"marked", p.marked},
                              {"measured", p.measured}, {"expected", p.expected}, {"ci_low", p.ci_low},
                              {"ci_high", p.ci_high}, {"pass", p.pass}, {"note", p.note}});
  return j.dump(2);
}

std::string qualify_html(const qualify_result& r) {
  std::ostringstream h;
  h << html_page_head("rocelab qualify: " + r.target);
  h << "<h1>Switch qualification</h1>\n<p>" << svg::escape(r.target) << ": <b>"
    << (r.passed() ? "PASS" : "FAIL") << "</b></p>\n";
  h << "<table id=checks>\n<tr><th>check</th><th>measured</th><th>expected</th><th>tolerance</th><th>result</th>"
       "<th>how</th></tr>\n";
  for (const auto& c : r.checks)
    h << "<tr><td class=l>" << svg::escape(c.name) << "</td><td>"
      << svg::escape(qualify_value_text(c.measured, c.unit)) << "</td><td>"
      << svg::escape(qualify_value_text(c.expected, c.unit)) << "</td><td>"
      << svg::escape(tolerance_text(c)) << "</td><td class=" << (c.pass ? "good>PASS" : "bad>FAIL")
      << "</td><td class='l note'>" << svg::escape(c.note) << "</td></tr>\n";
  h << "</table>\n";
  if (!r.ecn_curve.empty()) {
    svg::plot p;
    p.id = "plot-ecn-curve";
    p.title = "ECN marking probability against queue depth";
    p.x.label = "queue depth";
    p.x.unit = svg::unit_kind::bytes;
    p.y.label = "marking probability";
    p.y.min = 0;
    p.y.max = 1;
    svg::series configured{"configured (Kmin, Kmax, Pmax)", svg::mark::line, {}, {}, {}};
    const double kmin = static_cast<double>(r.ecn.kmin_bytes), kmax = static_cast<double>(r.ecn.kmax_bytes);
    const double x0 = static_cast<double>(r.ecn_curve.front().depth_bytes);
    const double x1 = static_cast<double>(r.ecn_curve.back().depth_bytes);
    for (auto [x, y] : {std::pair{std::min(x0, kmin), 0.0}, std::pair{kmin, 0.0}, std::pair{kmax, r.ecn.pmax},
                        std::pair{kmax, 1.0}, std::pair{std::max(x1, kmax), 1.0}}) {
      configured.x.push_back(x);
      configured.y.push_back(y);
    }
    svg::series measured{"measured", svg::mark::scatter, {}, {}, {}};
    svg::series lo{"99.9% interval", svg::mark::scatter, {}, {}, "#999999"};
    for (const auto& pt : r.ecn_curve) {
      measured.x.push_back(static_cast<double>(pt.depth_bytes));
      measured.y.push_back(pt.measured);
      for (double b : {pt.ci_low, pt.ci_high}) {
        lo.x.push_back(static_cast<double>(pt.depth_bytes));
        lo.y.push_back(b);
      }
    }
    p.lines = {configured, lo, measured};
    h << "<h2>ECN marking</h2>\n" << svg::render(p) << "\n";
    h << "<table id=ecn-curve>\n<tr><th>depth</th><th>samples</th><th>marked</th><th>measured</th><th>expected</th>"
         "<th>99.9% interval</th><th>result</th></tr>\n";
    for (const auto& pt : r.ecn_curve) {
      char row[256];
      std::snprintf(row, sizeof row, "<td>%u</td><td>%u</td><td>%.4f</td><td>%.4f</td><td>[%.4f, %.4f]</td>",
                    pt.samples, pt.marked, pt.measured, pt.expected, pt.ci_low, pt.ci_high);
      h << "<tr><td>" << svg::readable_bytes(static_cast<double>(pt.depth_bytes), 4) << "</td>" << row
        << "<td class=" << (pt.pass ? "good>PASS" : "bad>FAIL") << "</td></tr>\n";
    }
    h << "</table>\n";
  }
  h << "</body></html>\n";
  return h.str();
}

}  // namespace rocelab::experiments

// The run report's configuration, comparison and sim-to-real sections and its one-line
// readings (see report_sections.hpp).
#include "report/report_sections.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/report_table.hpp"
#include "rocelab/common/units.hpp"
#include "rocelab/experiments/analysis/sim_to_real.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/report/svg.hpp"

namespace rocelab::experiments::report_detail {
namespace {

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "-";
  char b[48];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

std::string count_text(std::uint64_t n) { return std::to_string(n); }

// "42% lower", "3% higher", "the same"; empty when there is nothing to compare against.
std::string change_text(double from, double to) {
  if (from == to) return "the same";
  if (from == 0) return "";
  const double d = (to - from) / from * 100;
  if (std::fabs(d) < 0.5) return "the same";
  return fixed(std::fabs(d), 0) + (d < 0 ? "% lower" : "% higher");
}

bool is_shown_setting(const std::string& path) {
  return path.starts_with("topology.") || path.starts_with("switch.") || path.starts_with("nic.") ||
         path.starts_with("fabric.");
}

run_summary this_run(const run_analysis& a) { return summarize({&a.records}, {}); }

}  // namespace

}  // namespace rocelab::experiments::report_detail

namespace rocelab::experiments {

std::vector<std::array<std::string, 3>> run_configuration(const experiment_spec& spec) {
  const experiment_spec defaults;
  std::vector<std::array<std::string, 3>> out;
  for (const field_info& f : field_table())
    if (report_detail::is_shown_setting(f.path)) out.push_back({f.path, f.get(spec), f.get(defaults)});
  return out;
}

}  // namespace rocelab::experiments

namespace rocelab::experiments::report_detail {

std::string configuration_section(const run_analysis& a) {
  const auto& config = a.header.configuration;
  if (config.empty()) return "";
  table changed{{"setting", "value", "default"}, {}}, all{{"setting", "value", "default"}, {}};
  for (const auto& [path, value, def] : config) {
    all.rows.push_back({path, value, def});
    if (value != def) changed.rows.push_back({path, value, def});
  }
  std::string out = "<h2 id=\"configuration\">Configuration</h2><p>" +
                    svg::escape(std::to_string(changed.rows.size()) + " of " + std::to_string(all.rows.size()) +
                                " topology, link, switch and NIC settings differ from the defaults (SONiC's lossless RoCE "
                                "profile, the mlx5 firmware's DCQCN); these are the run's.") +
                    "</p>";
  out += html_table(changed, "table-configuration", "every setting at its default");
  out += "<details><summary>All settings</summary>" + html_table(all, "table-configuration-all") + "</details>";
  return out;
}

table allreduce_table(const run_analysis& a) {
  table t{{"iteration", "algorithm", "ranks", "bytes", "time_ns", "algbw_gbps", "busbw_gbps"}, {}};
  for (std::size_t i = 0; i < a.records.allreduce.size(); ++i) {
    const allreduce_result& r = a.records.allreduce[i];
    t.rows.push_back({std::to_string(i + 1), r.algorithm, std::to_string(r.ranks), std::to_string(r.bytes),
                      std::to_string(r.time_ns), fixed(r.algbw_gbps, 1), fixed(r.busbw_gbps, 1)});
  }
  return t;
}

std::string allreduce_section(const run_analysis& a) {
  const auto& runs = a.records.allreduce;
  if (runs.empty()) return "";
  double lo = runs.front().busbw_gbps, hi = lo;
  for (const allreduce_result& r : runs) lo = std::min(lo, r.busbw_gbps), hi = std::max(hi, r.busbw_gbps);
  const allreduce_result& first = runs.front();
  std::string reading = std::to_string(runs.size()) + " all-reduce iteration" + (runs.size() == 1 ? "" : "s") +
                        " (" + first.algorithm + ", " + std::to_string(first.ranks) + " ranks): bus bandwidth " +
                        (hi - lo < 0.05 ? fixed(lo, 1) : fixed(lo, 1) + " to " + fixed(hi, 1)) +
                        " Gb/s, as nccl-tests defines it (algbw = bytes / time, busbw = algbw x 2(n-1)/n: what each "
                        "rank's link would carry, comparable across rank counts).";
  return "<h2 id=\"allreduce\">All-reduce</h2><p>" + svg::escape(reading) + "</p>" +
         html_table(allreduce_table(a), "table-allreduce");
}

std::string comparisons_section(const run_analysis& a) {
  if (a.header.comparisons.empty()) return "";
  const run_summary self = this_run(a);
  std::vector<std::string> kinds;
  for (const auto& [k, s] : self.by_kind)
    if (k != "other") kinds.push_back(k);
  table t{{"run", "flows completed", "FCT p50_ns", "FCT p99_ns", "slowdown p99"}, {}};
  for (const auto& k : kinds) t.head.push_back(k + " slowdown p99");
  for (const char* h : {"paused_ns", "pause frames", "CE marks", "CNPs", "drops"}) t.head.push_back(h);
  auto row = [&](const std::string& label, const run_summary& s) {
    std::vector<std::string> r{label, count_text(s.all.completed) + " of " + count_text(s.all.flows),
                               std::to_string(s.all.fct_p50_ns), std::to_string(s.all.fct_p99_ns),
                               fixed(s.all.slowdown_p99, 2)};
    for (const auto& k : kinds) {
      const auto it = s.by_kind.find(k);
      r.push_back(it == s.by_kind.end() ? "-" : fixed(it->second.slowdown_p99, 2));
    }
    for (const std::string& v : {std::to_string(s.paused_ns), count_text(s.pause_frames), count_text(s.ce_marked),
                                count_text(s.cnp), count_text(s.drops)})
      r.push_back(v);
    t.rows.push_back(std::move(r));
  };
  row("this run", self);
  std::string sentences;
  // The slowdown that matters most: the victims' where the run has them (what ECN is for),
  // else every flow's.
  const bool victims = self.by_kind.contains("victim");
  for (const auto& [label, json] : a.header.comparisons) {
    auto other = parse_summary_json(json);
    if (!other) {
      t.rows.push_back({label, "unreadable summary: " + other.error().message()});
      continue;
    }
    const run_summary& o = other->aggregate;
    row(label, o);
    const double mine = victims ? self.by_kind.at("victim").slowdown_p99 : self.all.slowdown_p99;
    const double theirs = victims && o.by_kind.contains("victim") ? o.by_kind.at("victim").slowdown_p99
                                                                  : o.all.slowdown_p99;
    const std::string slow = change_text(theirs, mine);
    const std::string paused = change_text(static_cast<double>(o.paused_ns), static_cast<double>(self.paused_ns));
    if (slow.empty() && paused.empty()) continue;
    sentences += "Against " + label + ", this run's " + (victims ? "victims' " : "") + "p99 slowdown is " +
                 (slow.empty() ? "not comparable" : slow) + " and its pause time is " +
                 (paused.empty() ? "new (" + readable_duration(static_cast<double>(self.paused_ns)) + ")" : paused) +
                 ". ";
  }
  return "<h2 id=\"comparisons\">Beside the baselines</h2><p>" + svg::escape(sentences) + "</p>" +
         html_table(t, "table-comparisons");
}

std::string sim_to_real_section(const run_analysis& a) {
  if (a.header.predicted_summary_json.empty()) return "";
  auto predicted = parse_summary_json(a.header.predicted_summary_json);
  if (!predicted) return "";
  const run_summary& p = predicted->aggregate;
  const run_summary m = this_run(a);
  const sim_to_real_comparison c = compare_sim_to_real(p, m);
  table t{{"metric", "twin (predicted)", "this run (measured)", "difference", "within " + fixed(c.tolerance * 100, 0) + "%"},
          {}};
  for (const sim_to_real_cell& cell : c.cells)
    t.rows.push_back({cell.metric, readable_duration(cell.predicted), readable_duration(cell.measured),
                      std::isfinite(cell.difference) ? fixed(cell.difference * 100, 1) + "%" : "-",
                      cell.within ? "yes" : "no"});
  auto other = [&](const std::string& name, double pv, double mv, const std::string& pt, const std::string& mt) {
    const double d = pv != 0 ? (mv - pv) / pv * 100 : (mv == 0 ? 0.0 : NAN);
    t.rows.push_back({name, pt, mt, std::isfinite(d) ? fixed(d, 1) + "%" : "-", ""});
  };
  other("slowdown p99", p.all.slowdown_p99, m.all.slowdown_p99, fixed(p.all.slowdown_p99, 2),
        fixed(m.all.slowdown_p99, 2));
  // A count either side did not measure is shown as such, with no difference.
  for (const auto& [name, pv, mv, p_known, m_known] :
       {std::tuple{"PFC pause frames", p.pause_frames, m.pause_frames, true, true},
        std::tuple{"CE-marked", p.ce_marked, m.ce_marked, true, true},
        std::tuple{"CNPs", p.cnp, m.cnp, p.cnp_measured, m.cnp_measured},
        std::tuple{"retransmissions", p.retransmits, m.retransmits, p.retransmits_measured, m.retransmits_measured},
        std::tuple{"drops", p.drops, m.drops, true, true}}) {
    if (p_known && m_known)
      other(name, static_cast<double>(pv), static_cast<double>(mv), count_text(pv), count_text(mv));
    else
      t.rows.push_back({name, p_known ? count_text(pv) : "not measured", m_known ? count_text(mv) : "not measured", "-", ""});
  }
  std::string reading =
      c.within ? "The twin predicts this run within " + fixed(c.tolerance * 100, 0) +
                     "% on FCT p50, FCT p99 and pause time."
               : "The twin and this run differ beyond " + fixed(c.tolerance * 100, 0) + "%:";
  std::string out = "<h2 id=\"sim-to-real\">Sim-to-real</h2><p>The twin's prediction of this run" +
                    svg::escape(a.header.prediction_method.empty() ? "" : " (" + a.header.prediction_method + ")") +
                    " beside what it measured. " + svg::escape(reading) + "</p>";
  if (!c.explanation.empty()) {
    out += "<ul class=\"notes\">";
    for (const auto& e : c.explanation) out += "<li>" + svg::escape(e) + "</li>";
    out += "</ul>";
  }
  return out + html_table(t, "table-sim-to-real");
}

std::string files_section(const run_analysis& a) {
  if (a.header.files.empty()) return "";
  std::string out = "<p>Kept with the run: ";
  for (std::size_t i = 0; i < a.header.files.size(); ++i)
    out += (i ? ", " : "") + std::string("<a href=\"") + svg::escape(a.header.files[i].second) + "\">" +
           svg::escape(a.header.files[i].first) + "</a>";
  return out + ".</p>";
}

std::string summary_sentence(const run_analysis& a) {
  const auto& s = a.stats;
  const auto& t = a.records.totals;
  std::string out = std::to_string(s.completed) + " of " + std::to_string(s.flows) + " flows completed";
  if (s.completed > 0)
    out += "; FCT p50 " + readable_duration(static_cast<double>(s.fct_p50_ns)) + ", p99 " +
           readable_duration(static_cast<double>(s.fct_p99_ns)) + " (p99 slowdown " + fixed(s.slowdown_p99, 2) + ")";
  if (const auto v = a.by_kind.find("victim"); v != a.by_kind.end() && v->second.completed > 0)
    out += "; the victims' p99 slowdown " + fixed(v->second.slowdown_p99, 2);
  out += ". PFC paused " + readable_duration(static_cast<double>(t.paused_ns)) + " in all (" +
         std::to_string(t.pfc_pause_frames) + " pause frames); " + std::to_string(t.ce_marked) + " CE-marked packets, " +
         (t.cnps_measured ? std::to_string(t.cnps) + " CNPs" : std::string("CNPs not measured")) + ", " +
         std::to_string(t.drops) + " drops.";
  if (s.completed < s.flows) out += " Percentiles are over completed flows only.";
  return out;
}

std::string pauses_sentence(const run_analysis& a) {
  if (a.ports.empty()) return "No PFC pause in this run: no lossless queue reached its XOFF threshold.";
  std::int64_t total = 0;
  const port_pause_summary* longest = &a.ports.front();
  for (const auto& p : a.ports) {
    total += p.paused_ns;
    if (p.longest_ns > longest->longest_ns) longest = &p;
  }
  return "PFC stopped " + std::to_string(a.ports.size()) + " transmitters for " +
         readable_duration(static_cast<double>(total)) + " in all; the longest continuous pause was " +
         readable_duration(static_cast<double>(longest->longest_ns)) + " at " + port_name(a.records, longest->port) +
         "; " + std::to_string(a.storms.size()) + " lasted long enough to count as a PFC storm.";
}

std::string queues_sentence(const run_analysis& a) {
  if (a.records.queues.empty())
    return "No queue samples in this run (the twin samples them with twin.queue_sample_interval_ns).";
  const auto deepest = std::max_element(a.records.queues.begin(), a.records.queues.end(),
                                        [](const queue_sample& x, const queue_sample& y) { return x.bytes < y.bytes; });
  return "The deepest queue reached " + svg::readable_bytes(static_cast<double>(deepest->bytes)) + " at " +
         device_name(a.records, deepest->device) + ":" + std::to_string(deepest->port) + " queue " +
         std::to_string(deepest->queue) + ", " + readable_duration(static_cast<double>(deepest->t_ns)) +
         " into the run.";
}

std::string attribution_sentence(const run_analysis& a) {
  if (a.tail.empty()) return "No completed flow to attribute.";
  double excess = 0, pause = 0, queueing = 0, retx = 0, sharing = 0, rest = 0;
  for (const auto& x : a.tail) {
    excess += static_cast<double>(x.excess_ns);
    pause += static_cast<double>(x.pause_ns);
    queueing += static_cast<double>(x.queueing_ns);
    retx += static_cast<double>(x.retransmission_ns);
    sharing += static_cast<double>(x.sharing_ns);
    rest += static_cast<double>(x.unexplained_ns);
  }
  if (excess <= 0) return "The slowest flows completed in their ideal time: nothing to attribute.";
  const auto pct = [excess](double v) { return fixed(v / excess * 100, 0) + "%"; };
  const bool retx_measured =
      std::all_of(a.tail.begin(), a.tail.end(), [](const flow_attribution& x) { return x.retransmission_measured; });
  return "Of the " + std::to_string(a.tail.size()) + " slowest flows' excess FCT (" + readable_duration(excess) +
         " in all), " + pct(pause) + " was PFC pause, " + pct(queueing) + " queueing, " +
         (retx_measured ? pct(retx) + " retransmission" : std::string("retransmission not measured")) + ", " +
         pct(sharing) + " bandwidth shared with other flows, and " + pct(rest) + " is unexplained (rate cuts below " +
         "the fair share, host delays" + (retx_measured ? "" : ", and retransmissions the NICs did not count") + ").";
}

}  // namespace rocelab::experiments::report_detail

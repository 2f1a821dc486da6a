// The decision report's outputs (JSON, HTML) and the compare spec file (compare.hpp).

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "rocelab/common/bounded_file.hpp"
#include "rocelab/common/units.hpp"
#include "report/change_judgement.hpp"
#include "report/html_page.hpp"
#include "rocelab/experiments/compare/compare.hpp"
#include "rocelab/experiments/report/svg.hpp"

namespace rocelab::experiments {
namespace {

nlohmann::json cost_json(const cluster_cost& c) {
  return {{"hosts", c.hosts},
          {"topology", c.topology},
          {"leaves", c.leaves},
          {"spines", c.spines},
          {"radix", c.radix},
          {"port_gbps", c.port_gbps},
          {"link_gbps", c.link_gbps},
          {"uplink_gbps", c.uplink_gbps},
          {"ports_per_leaf", c.ports_per_leaf},
          {"ports_per_spine", c.ports_per_spine},
          {"switch_ports", c.switch_ports},
          {"switches", c.switches},
          {"optics", c.optics},
          {"uplink_optics", c.uplink_optics},
          {"nic_unit_usd", c.host_prices.nic_usd},
          {"nic_priced_gbps", c.host_prices.gbps},
          {"optic_unit_usd", c.host_prices.optic_usd},
          {"uplink_optic_unit_usd", c.uplink_prices.optic_usd},
          {"uplink_optic_priced_gbps", c.uplink_prices.gbps},
          {"nic_usd", c.nic_usd},
          {"switch_usd", c.switch_usd},
          {"optics_usd", c.optics_usd},
          {"total_usd", c.total_usd},
          {"per_gpu_usd", c.per_gpu_usd},
          {"basis", cost_basis_text(c)}};
}

nlohmann::json ci_json(const confidence_interval& ci) {
  return {{"n", ci.n}, {"mean", ci.mean}, {"half_width", ci.half_width}, {"low", ci.low}, {"high", ci.high}};
}

// " ± half width" of the metric's 95% CI in `unit_scale` (1e3 for ns shown as us); empty
// when the fabric has no CI for it.
std::string pm(const fabric_metrics& m, const std::string& metric, double unit_scale = 1) {
  const auto it = m.ci.find(metric);
  if (it == m.ci.end() || it->second.n < 2) return {};
  char b[48];
  std::snprintf(b, sizeof b, " \u00b1 %.2f", it->second.half_width / unit_scale);
  return b;
}

std::string esc(const std::string& s) {
  std::string o;
  for (const char c : s) {
    switch (c) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string duration(double ns) { return readable_duration(ns); }

// " ± 12.3 us": a duration metric's 95% half-width, in the unit it reads best in.
std::string pm_duration(const fabric_metrics& m, const std::string& metric) {
  const auto it = m.ci.find(metric);
  if (it == m.ci.end() || it->second.n < 2) return {};
  return " \u00b1 " + duration(it->second.half_width);
}

// One row of the table: a metric per fabric (`known`: the fabric measured it, e.g. ran
// that workload), with a bar relative to the largest so the eye compares them. The best
// is shaded only when it beats every other known value beyond noise and is not zero
// (report/change_judgement.hpp).
std::string row(const std::string& label, const std::vector<double>& v, const std::vector<bool>& known,
                const std::vector<std::string>& text, bool higher_better) {
  const auto best = report_detail::clear_best(v, known, higher_better);
  double top = 0;
  for (const double x : v) top = std::max(top, x);
  std::string r = "<tr><th>" + esc(label) + "</th>";
  for (std::size_t i = 0; i < v.size(); ++i) {
    const bool win = best == i;
    const int width = top > 0 ? static_cast<int>(std::lround(100 * v[i] / top)) : 0;
    r += std::string("<td") + (win ? " class=best" : "") + ">" + esc(text[i]) + "<div class=bar style=\"width:" +
         std::to_string(width) + "%\"></div></td>";
  }
  return r + "</tr>\n";
}

}  // namespace

std::string compare_json(const compare_result& r) {
  nlohmann::json j;
  j["name"] = r.name;
  j["hosts"] = r.hosts;
  j["link_gbps"] = r.link_gbps;
  j["compute_ms_per_step"] = r.settings.compute_ms_per_step;
  j["small_message_bytes"] = r.settings.small_message_bytes;
  j["seeds"] = r.seeds;
  j["verdicts"] = nlohmann::json::array();
  for (const auto& v : r.verdicts) {
    nlohmann::json vs = nlohmann::json::object();
    for (const auto& [f, ci] : v.vs_best) vs[f] = ci_json(ci);
    j["verdicts"].push_back({{"metric", v.metric}, {"label", v.label}, {"best", v.best}, {"tie", v.tie()},
                             {"tied", v.tied}, {"vs_best", vs}, {"text", verdict_text(v, r.fabrics)}});
  }
  j["fabrics"] = nlohmann::json::array();
  for (const auto& m : r.fabrics) {
    nlohmann::json f;
    f["fabric"] = m.fabric;
    f["profile"] = m.profile;
    f["link"] = m.link;
    f["routing"] = m.routing;
    f["congestion"] = m.congestion;
    f["settings"] = m.settings;
    if (!m.tuning_note.empty()) f["tuning"] = m.tuning_note;
    if (m.has_allreduce)
      f["allreduce"] = {{"algbw_gbps", m.algbw_gbps},      {"busbw_gbps", m.busbw_gbps},
                        {"time_ns", m.allreduce_time_ns},  {"link_util_mean", m.link_util_mean},
                        {"link_util_max", m.link_util_max}, {"step_ms", m.step_ms},
                        {"comm_share", m.comm_share},      {"mfu_factor", m.mfu_factor}};
    if (m.has_incast) f["incast"] = {{"fct_p50_ns", m.incast_fct_p50_ns}, {"fct_p99_ns", m.incast_fct_p99_ns}};
    if (m.has_background)
      f["small_messages"] = {
          {"count", m.small_messages}, {"fct_p50_ns", m.small_fct_p50_ns}, {"fct_p99_ns", m.small_fct_p99_ns}};
    f["pauses"] = {{"kind", m.link == "infiniband" ? "credit_stalls" : m.link == "uec" ? "none" : "pfc"},
                   {"frames", m.pause_frames},
                   {"intervals", m.pause_intervals},
                   {"paused_ns", m.paused_ns}};
    f["drops"] = m.drops;
    f["retransmits"] = m.retransmits;
    f["trims"] = m.trims;
    f["ce_marked"] = m.ce_marked;
    f["cnps"] = m.cnps;
    f["incomplete_flows"] = m.incomplete_flows;
    f["cost"] = cost_json(m.cost);
    f["usd_per_busbw_gbps"] = m.usd_per_busbw_gbps;
    f["run_ids"] = m.run_ids;
    f["seeds"] = m.seeds;
    f["per_seed"] = m.per_seed;
    f["ci"] = nlohmann::json::object();
    for (const auto& [metric, ci] : m.ci) f["ci"][metric] = ci_json(ci);
    j["fabrics"].push_back(std::move(f));
  }
  j["scale"] = nlohmann::json::array();
  for (const auto& p : r.scale)
    j["scale"].push_back({{"hosts", p.hosts},
                          {"allreduce_bytes", p.allreduce_bytes},
                          {"busbw_gbps", p.busbw_gbps},
                          {"cost_per_gpu_usd", p.cost_per_gpu_usd},
                          {"usd_per_busbw_gbps", p.usd_per_busbw_gbps},
                          {"cheapest", p.cheapest},
                          {"cheapest_tied", p.cheapest_tied},
                          {"cost", [&p] {
                             nlohmann::json c = nlohmann::json::object();
                             for (const auto& [f, cost] : p.cost) c[f] = cost_json(cost);
                             return c;
                           }()}});
  j["crossovers"] = r.crossovers;
  return j.dump(2);
}

std::string compare_html(const compare_result& r) {
  std::ostringstream h;
  h << html_page_head("rocelab compare: " + r.name,
                      "td.best{background:#e6f4e6;font-weight:bold}.bar{height:4px;background:#4a7fb5;margin-top:2px}");
  const bool any_uec = std::any_of(r.fabrics.begin(), r.fabrics.end(), [](const auto& m) { return m.link == "uec"; });
  h << "<h1>" << (any_uec ? "RoCE, InfiniBand or Ultra Ethernet: " : "RoCE or InfiniBand: ")
    << esc(r.name.empty() ? "fabric comparison" : r.name) << "</h1>\n";
  h << "<p>" << r.hosts << " hosts at " << fmt("%g", r.link_gbps) << " Gb/s, simulated on the rocelab twin with each "
    << "fabric's switch profile; " << fmt("%g", r.settings.compute_ms_per_step)
    << " ms of compute per training step. The best value of a row is in green when it beats every other fabric's by "
       "more than "
    << static_cast<int>(report_detail::noise_fraction * 100) << "% and is not zero.</p>\n";
  // Verdict: each metric's best fabric, or a tie when the paired difference is noise.
  h << "<h2>Verdict</h2><p class=note>" << r.seeds
    << " seeds per fabric and scenario; values are means over the seeds with their 95% confidence interval "
       "(Student's t); two fabrics are a tie when the 95% CI of their paired difference over the same seeds "
       "includes zero, or when that difference's mean is within "
    << fmt("%g", 100 * r.settings.tie_tolerance) << "% of the best's mean.</p><ul>";
  for (const auto& v : r.verdicts) h << "<li>" << (v.tie() ? "" : "<b>") << esc(verdict_text(v, r.fabrics)) << (v.tie() ? "" : "</b>") << ".</li>";
  // Loss and its recovery: a drop waits for a timeout, a trim is resent one RTT later.
  {
    std::string loss;
    for (const auto& m : r.fabrics) {
      if (!loss.empty()) loss += "; ";
      loss += esc(m.fabric) + " " + std::to_string(m.drops) + " drops";
      if (m.link == "uec") loss += ", " + std::to_string(m.trims) + " trims";
      loss += ", " + std::to_string(m.retransmits) + " retransmissions";
    }
    if (!loss.empty()) h << "<li>Loss and recovery: " << loss << ".</li>";
  }
  for (const auto& c : r.crossovers) h << "<li>Crossover: " << esc(c) << ".</li>";
  if (!r.scale.empty() && r.crossovers.empty())
    h << "<li>No crossover in the scale sweep: the cheapest fabric per delivered bandwidth stays the same.</li>";
  h << "</ul>\n";

  std::vector<std::string> names;
  for (const auto& m : r.fabrics) names.push_back(m.fabric);
  // `has`: whether a fabric measured the row (ran its workload); a fabric that did not
  // shows "-" and takes no part in the best.
  auto series = [&](auto get, auto text, const std::string& label, bool higher, auto has) {
    std::vector<double> v;
    std::vector<bool> known;
    std::vector<std::string> t;
    for (const auto& m : r.fabrics) {
      v.push_back(get(m));
      known.push_back(has(m));
      t.push_back(has(m) ? text(m) : std::string("-"));
    }
    return row(label, v, known, t, higher);
  };
  const auto allreduce = [](const fabric_metrics& m) { return m.has_allreduce; };
  const auto incast = [](const fabric_metrics& m) { return m.has_incast; };
  const auto background = [](const fabric_metrics& m) { return m.has_background; };
  const auto always = [](const fabric_metrics&) { return true; };
  const auto priced = [](const fabric_metrics& m) { return m.usd_per_busbw_gbps > 0; };
  h << "<h2>Per fabric</h2><table><tr><th></th>";
  for (const auto& m : r.fabrics)
    h << "<th>" << esc(m.fabric) << "<br><span class=note>" << esc(m.profile) << ", " << esc(m.routing) << ", "
      << esc(m.congestion) << "</span></th>";
  h << "</tr>\n";
  const bool ar = std::any_of(r.fabrics.begin(), r.fabrics.end(), [](const auto& m) { return m.has_allreduce; });
  const bool inc = std::any_of(r.fabrics.begin(), r.fabrics.end(), [](const auto& m) { return m.has_incast; });
  const bool bg = std::any_of(r.fabrics.begin(), r.fabrics.end(), [](const auto& m) { return m.has_background; });
  if (ar) {
    h << series([](const auto& m) { return m.busbw_gbps; },
                [](const auto& m) { return fmt("%.1f", m.busbw_gbps) + pm(m, "allreduce.busbw_gbps"); },
                "all-reduce busbw (Gb/s, \u00b1 95% CI)", true, allreduce);
    h << series([](const auto& m) { return m.algbw_gbps; }, [](const auto& m) { return fmt("%.1f", m.algbw_gbps); },
                "all-reduce algbw (Gb/s)", true, allreduce);
    h << series([](const auto& m) { return m.allreduce_time_ns; },
                [](const auto& m) { return duration(m.allreduce_time_ns); }, "all-reduce time", false, allreduce);
    h << series([](const auto& m) { return m.link_util_mean; },
                [](const auto& m) { return fmt("%.0f%%", 100 * m.link_util_mean) + " (max " + fmt("%.0f%%", 100 * m.link_util_max) + ")"; },
                "link utilisation, mean of used switch ports", true, allreduce);
    h << series([](const auto& m) { return m.comm_share; }, [](const auto& m) { return fmt("%.2f%%", 100 * m.comm_share); },
                "step time communicating", false, allreduce);
    h << series([](const auto& m) { return m.mfu_factor; }, [](const auto& m) { return fmt("%.4f", m.mfu_factor); },
                "MFU factor (compute / step)", true, allreduce);
  }
  if (inc) {
    h << series([](const auto& m) { return static_cast<double>(m.incast_fct_p50_ns); },
                [](const auto& m) { return duration(static_cast<double>(m.incast_fct_p50_ns)); }, "incast FCT p50", false,
                incast);
    h << series([](const auto& m) { return static_cast<double>(m.incast_fct_p99_ns); },
                [](const auto& m) {
                  return duration(static_cast<double>(m.incast_fct_p99_ns)) + pm_duration(m, "incast.fct_p99_ns");
                },
                "incast FCT p99 (pooled; \u00b1 95% CI of the per-seed p99)", false, incast);
  }
  if (bg) {
    h << series([](const auto& m) { return static_cast<double>(m.small_fct_p50_ns); },
                [](const auto& m) { return duration(static_cast<double>(m.small_fct_p50_ns)); },
                "small messages under background, FCT p50", false, background);
    h << series([](const auto& m) { return static_cast<double>(m.small_fct_p99_ns); },
                [](const auto& m) {
                  return duration(static_cast<double>(m.small_fct_p99_ns)) + pm_duration(m, "small.fct_p99_ns");
                },
                "small messages under background, FCT p99 (pooled; \u00b1 95% CI of the per-seed p99)", false,
                background);
  }
  h << series([](const auto& m) { return static_cast<double>(m.paused_ns); },
              [](const auto& m) {
                return duration(static_cast<double>(m.paused_ns)) +
                       (m.link == "infiniband" ? " credit stall" : " PFC pause") + " (" +
                       std::to_string(m.pause_intervals) + " intervals, " + std::to_string(m.pause_frames) + " frames)";
              },
              "paused or credit-stalled (summed over ports)", false, always);
  h << series([](const auto& m) { return static_cast<double>(m.drops + m.retransmits); },
              [](const auto& m) {
                return std::to_string(m.drops) + " / " + std::to_string(m.trims) + " / " + std::to_string(m.retransmits);
              },
              "drops / trims / retransmits", false, always);
  h << series([](const auto& m) { return static_cast<double>(m.ce_marked); },
              [](const auto& m) { return std::to_string(m.ce_marked) + " / " + std::to_string(m.cnps); },
              "ECN or FECN marks / CNPs or BECNs", false, always);
  h << series([](const auto& m) { return m.cost.per_gpu_usd; }, [](const auto& m) { return fmt("$%.0f", m.cost.per_gpu_usd); },
              "fabric cost per GPU", false, always);
  h << series([](const auto& m) { return m.cost.total_usd; },
              [](const auto& m) {
                return fmt("$%.0f", m.cost.total_usd) + " (NICs " + fmt("$%.0f", m.cost.nic_usd) + ", ports " +
                       fmt("$%.0f", m.cost.switch_usd) + ", optics " + fmt("$%.0f", m.cost.optics_usd) + ")";
              },
              "fabric cost", false, always);
  h << series([](const auto& m) { return m.usd_per_busbw_gbps; },
              [](const auto& m) { return fmt("$%.2f", m.usd_per_busbw_gbps) + pm(m, "usd_per_busbw_gbps"); },
              "cost per GPU per Gb/s busbw", false, priced);
  h << "<tr><th>cost basis (the simulated topology)</th>";
  for (const auto& m : r.fabrics) h << "<td>" << esc(cost_basis_text(m.cost)) << "</td>";
  h << "</tr>\n</table>\n";
  for (const auto& m : r.fabrics) {
    if (!m.tuning_note.empty() || !m.settings.empty()) {
      h << "<p class=note><b>" << esc(m.fabric) << "</b>: ";
      if (!m.tuning_note.empty()) h << esc(m.tuning_note) << ". ";
      for (const auto& [k, v] : m.settings) h << esc(k) << " = " << esc(v) << "; ";
      h << "</p>\n";
    }
  }
  // FCT distributions (the svg module of the run report).
  auto cdf_plot = [&](const std::string& id, const std::string& title, auto get) {
    svg::plot p;
    p.id = id;
    p.title = title;
    p.x = {"FCT", svg::scale_kind::automatic, std::nullopt, std::nullopt, svg::unit_kind::ns};
    p.y = {"fraction of messages", svg::scale_kind::linear, 0.0, 1.0};
    for (const auto& m : r.fabrics) {
      const std::vector<double>& v = get(m);
      if (v.empty()) continue;
      svg::series sr;
      sr.name = m.fabric;
      sr.kind = svg::mark::step;
      for (std::size_t i = 0; i < v.size(); ++i) {
        sr.x.push_back(v[i] * 1e3);  // us -> ns
        sr.y.push_back(static_cast<double>(i + 1) / static_cast<double>(v.size()));
      }
      p.lines.push_back(std::move(sr));
    }
    return svg::render(p);
  };
  if (inc || bg) h << "<h2>Flow completion times</h2>\n";
  if (inc) h << cdf_plot("incast-fct-cdf", "Incast FCT CDF", [](const auto& m) -> const std::vector<double>& { return m.incast_fct_us; }) << "\n";
  if (bg)
    h << cdf_plot("small-fct-cdf", "Small messages under background load, FCT CDF",
                  [](const auto& m) -> const std::vector<double>& { return m.small_fct_us; })
      << "\n";
  if (!r.scale.empty()) {
    h << "<h2>Scale sweep (all-reduce of " << esc(format_size(r.scale.front().allreduce_bytes))
      << " per rank on a leaf-spine)</h2>\n";
    for (const bool cost : {false, true}) {
      svg::plot p;
      p.id = cost ? "scale-cost" : "scale-busbw";
      p.title = cost ? "Cost per GPU per Gb/s of bus bandwidth" : "All-reduce bus bandwidth by cluster size";
      p.x = {"hosts", svg::scale_kind::automatic, std::nullopt, std::nullopt};
      p.y = {cost ? "USD per GPU per Gb/s" : "busbw (Gb/s)", svg::scale_kind::linear, 0.0, std::nullopt};
      for (const auto& n : names) {
        svg::series sr;
        sr.name = n;
        for (const auto& pt : r.scale) {
          const auto& mp = cost ? pt.usd_per_busbw_gbps : pt.busbw_gbps;
          const auto it = mp.find(n);
          if (it == mp.end()) continue;
          sr.x.push_back(pt.hosts);
          sr.y.push_back(it->second);
        }
        p.lines.push_back(std::move(sr));
      }
      h << svg::render(p) << "\n";
    }
  }
  if (!r.scale.empty()) {
    h << "<table><tr><th>hosts</th>";
    for (const auto& n : names) h << "<th>" << esc(n) << " busbw (Gb/s)</th><th>" << esc(n) << " $/GPU per Gb/s</th>";
    h << "<th>cheapest per Gb/s</th></tr>\n";
    for (const auto& p : r.scale) {
      h << "<tr><td>" << p.hosts << "</td>";
      for (const auto& n : names) {
        const auto b = p.busbw_gbps.find(n);
        const auto c = p.usd_per_busbw_gbps.find(n);
        h << "<td>" << fmt("%.1f", b == p.busbw_gbps.end() ? 0 : b->second) << "</td><td>"
          << fmt("$%.2f", c == p.usd_per_busbw_gbps.end() ? 0 : c->second) << "</td>";
      }
      std::string cheapest = p.cheapest;
      for (const auto& t : p.cheapest_tied) cheapest += " = " + t;
      h << "<td>" << esc(cheapest) << (p.cheapest_tied.empty() ? "" : " (tie)") << "</td></tr>\n";
    }
    h << "</table>\n";
  }
  h << "<p class=note>Costs are those of the topology simulated (switch count and ports from the spec against the "
       "profile's radix; NICs and optics at the spec's link and uplink speeds: the profile's prices at its own port "
       "speed, the seed price table at any other); seed figures, edit examples/fabric-profiles/. "
       "The twin is store-and-forward with each profile's port-to-port latency added per hop. Pauses are PFC pause "
       "time on RoCE and credit-stall time (a VL without credits) on InfiniBand, summed over every transmitter. "
       "Ultra Ethernet (uec) runs without PFC: its switches trim what they would drop and its senders spray "
       "packets over the paths and resend a trimmed packet on its NACK. "
       "MFU factor assumes no overlap of compute and communication.</p>\n</body></html>\n";
  return h.str();
}

result<experiment_spec> load_compare_spec(const std::string& path, compare_settings& settings) {
  auto read = read_bounded_file(path, max_spec_file_bytes, "spec");
  if (!read) return read.error();
  const std::string text = std::move(*read);
  // Cut the top-level `compare:` block out, keeping the other lines where they are so the
  // spec's errors still name the right line.
  std::string spec_text, compare_text;
  bool inside = false;
  std::istringstream lines(text);
  std::string line;
  int compare_line = 0, n = 0;
  while (std::getline(lines, line)) {
    ++n;
    const bool top = !line.empty() && line[0] != ' ' && line[0] != '\t' && line[0] != '#';
    if (top) inside = line.rfind("compare:", 0) == 0;
    if (inside && compare_line == 0) compare_line = n;
    (inside ? compare_text : spec_text) += line;
    spec_text += "\n";
    compare_text += "\n";
  }
  const std::string dir = std::filesystem::path(path).parent_path().string();
  auto spec = load_spec(spec_text, path);
  if (!spec.ok()) return std::move(spec).error();
  spec->source_file = path;
  spec->base_dir = dir.empty() ? "." : dir;
  settings.profiles_dir = dir.empty() ? "fabric-profiles" : dir + "/fabric-profiles";
  if (compare_line == 0) return spec;
  YAML::Node root;
  try {
    root = YAML::Load(compare_text)["compare"];
  } catch (const YAML::Exception& e) {
    return status(error_code::malformed_input, path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  auto where = [&](const YAML::Node& node, const std::string& field, const std::string& what) {
    return status(error_code::invalid_argument,
                  path + ":" + std::to_string(node.Mark().line + 1) + ": compare." + field + ": " + what);
  };
  if (!root.IsMap()) return where(root, "", "expects a map");
  std::map<std::string, std::string> profile_paths;
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    try {
      if (key == "fabrics") {
        settings.fabrics.clear();
        for (const auto& f : v) settings.fabrics.push_back(f.as<std::string>());
      } else if (key == "compute_ms_per_step") {
        settings.compute_ms_per_step = v.as<double>();
      } else if (key == "small_message_bytes") {
        auto b = parse_size_bytes(v.as<std::string>());
        if (!b.ok()) return where(v, key, b.error().message());
        settings.small_message_bytes = *b;
      } else if (key == "seeds") {
        settings.seeds = v.as<std::uint32_t>();
      } else if (key == "tie_tolerance") {
        settings.tie_tolerance = v.as<double>();
      } else if (key == "tune_budget") {
        settings.tune_budget = v.as<std::uint32_t>();
      } else if (key == "tune_method") {
        auto m = parse_tuning_method(v.as<std::string>());
        if (!m.ok()) return where(v, key, m.error().message());
        settings.tune_method = *m;
      } else if (key == "scale_hosts") {
        settings.scale_hosts.clear();
        for (const auto& x : v) settings.scale_hosts.push_back(x.as<std::uint32_t>());
      } else if (key == "scale_hosts_per_leaf") {
        settings.scale_hosts_per_leaf = v.as<std::uint32_t>();
      } else if (key == "scale_oversubscription") {
        settings.scale_oversubscription = v.as<double>();
      } else if (key == "scale_allreduce_bytes") {
        auto b = parse_size_bytes(v.as<std::string>());
        if (!b.ok()) return where(v, key, b.error().message());
        settings.scale_allreduce_bytes = *b;
      } else if (key == "profiles_dir") {
        settings.profiles_dir = (std::filesystem::path(dir) / v.as<std::string>()).string();
      } else if (key == "profiles") {
        for (const auto& p : v)
          profile_paths[p.first.as<std::string>()] = (std::filesystem::path(dir) / p.second.as<std::string>()).string();
      } else {
        return where(kv.first, key,
                     "unknown key (fabrics, compute_ms_per_step, small_message_bytes, seeds, tie_tolerance, tune_budget, tune_method, scale_hosts, "
                     "scale_hosts_per_leaf, scale_oversubscription, scale_allreduce_bytes, profiles_dir, profiles)");
      }
    } catch (const YAML::Exception& e) {
      return where(v, key, "wrong type: " + e.msg);
    }
  }
  for (const auto& [fabric, file] : profile_paths) {
    auto p = load_fabric_profile(file);
    if (!p.ok()) return std::move(p).error().with_context("compare.profiles." + fabric);
    settings.profiles[fabric] = std::move(p).value();
  }
  return spec;
}

status load_profiles(compare_settings& settings) {
  for (const auto& f : settings.fabrics) {
    if (settings.profiles.count(f) != 0) continue;
    const auto file = std::filesystem::path(settings.profiles_dir) / default_profile_file(f);
    std::error_code ec;
    if (!std::filesystem::exists(file, ec))
      return status(error_code::invalid_argument,
                    "fabric '" + f + "': no profile: not one of ib, roce-tuned, roce-default, roce-deep, and no " +
                        file.string());
    auto p = load_fabric_profile(file.string());
    if (!p.ok()) return std::move(p).error().with_context("profile of fabric " + f);
    settings.profiles[f] = std::move(p).value();
  }
  return status::success();
}

}  // namespace rocelab::experiments

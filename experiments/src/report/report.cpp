// The run report: analysis, HTML with inline SVG, CSV and JSON (see report.hpp).

#include "rocelab/experiments/report/report.hpp"

#include "rocelab/common/output_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "rocelab/common/units.hpp"
#include "rocelab/experiments/run/start_skew.hpp"
#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/report/svg.hpp"
#include "rocelab/experiments/run/backend_traits.hpp"
#include "rocelab/fabric/twin/routing.hpp"
#include "report/report_sections.hpp"
#include "report/report_table.hpp"

namespace rocelab::experiments {
namespace {

using nlohmann::json;
using report_detail::attribution_sentence;
using report_detail::comparisons_section;
using report_detail::allreduce_section;
using report_detail::configuration_section;
using report_detail::device_name;
using report_detail::files_section;
using report_detail::pauses_sentence;
using report_detail::queues_sentence;
using report_detail::sharing_section;
using report_detail::sim_to_real_section;
using report_detail::summary_sentence;
using report_detail::host_name;
using report_detail::html_table;
using report_detail::port_name;
using report_detail::table;

std::string hop_name(const run_records& r, const path_hop& h) {
  return device_name(r, h.device) + ":" + std::to_string(h.egress_port);
}

std::string num(double v, int precision = 3) {
  if (!std::isfinite(v)) return "";
  char b[48];
  std::snprintf(b, sizeof b, "%.*f", precision, v);
  return b;
}
// A threshold as people say it: "200 ms", "50 us", "800 ns".
std::string duration(std::int64_t ns) {
  char b[48];
  if (ns >= 1'000'000'000 && ns % 1'000'000 == 0) std::snprintf(b, sizeof b, "%g s", static_cast<double>(ns) / 1e9);
  else if (ns >= 1'000'000) std::snprintf(b, sizeof b, "%g ms", static_cast<double>(ns) / 1e6);
  else if (ns >= 1'000) std::snprintf(b, sizeof b, "%g us", static_cast<double>(ns) / 1e3);
  else std::snprintf(b, sizeof b, "%lld ns", static_cast<long long>(ns));
  return b;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Evenly spaced indexes into n items, at most `limit` of them (the first and last kept).
std::vector<std::size_t> thin(std::size_t n, std::size_t limit) {
  std::vector<std::size_t> out;
  if (n == 0) return out;
  if (n <= limit || limit < 2) {
    for (std::size_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (std::size_t i = 0; i < limit; ++i) out.push_back(i * (n - 1) / (limit - 1));
  return out;
}

const char* source_color(pause_source s) {
  switch (s) {
    case pause_source::capture: return "#0072B2";
    case pause_source::counter: return "#E69F00";
    case pause_source::model: return "#D55E00";
  }
  return "#000000";
}

}  // namespace

// ---------------------------------------------------------------- analysis

path_fn paths_for_run(const run_records& records, const fabric::twin::topology_config* topology, std::uint64_t seed,
                      report_header& header) {
  if (topology) {
    header.path_source = "twin routing (fabric/twin/routing.hpp, ECMP by the run's seed)";
    return twin_paths(*topology, seed);
  }
  auto layout = infer_single_switch_layout(records);
  if (!layout) {
    header.path_source = "unknown (" + layout.error().message() + "): no per-hop figures or victims";
    return {};
  }
  header.path_source = "single-switch layout: " + device_name(records, layout->switch_device) +
                       ", host i on port i (the virtual lab's wiring)";
  return single_switch_paths(*layout);
}

run_analysis analyze_run(run_records records, report_header header, const path_fn& paths,
                         const report_options& options) {
  run_analysis a;
  a.counter_pauses = pause_intervals_from_counters(records.counters, options.counter_pauses);
  records.pauses.insert(records.pauses.end(), a.counter_pauses.intervals.begin(), a.counter_pauses.intervals.end());
  if (!a.counter_pauses.intervals.empty())
    header.notes.push_back(std::to_string(a.counter_pauses.intervals.size()) +
                           " pause intervals derived from pause counters; their placement is uncertain by up to " +
                           readable_duration(static_cast<double>(a.counter_pauses.resolution_ns)) +
                           " (the sampling interval)");
  if (!paths) header.notes.push_back("flow paths unknown: per-hop pause exposure and victims are not computed");
  a.flows = correlate_flows(records, paths, options.correlation);
  a.victims = find_victims(records, a.flows, options.victims);
  if (!a.victims.from_queue_samples)
    header.notes.push_back("no queue samples: a destination port counts as congested on fan-in alone (victims.hpp)");
  a.tail = attribute_tail(records, a.flows, options.attribution);
  a.correlations = slowdown_correlations(a.flows);
  a.ports = summarize_pauses(records.pauses);
  a.storms = detect_storms(records.pauses, options.storms);
  a.stats = flow_statistics(records.flows);
  std::map<std::string, std::vector<flow_record>> kinds;
  for (const auto& f : records.flows) kinds[to_string(f.kind)].push_back(f);
  for (const auto& [k, v] : kinds) a.by_kind[k] = flow_statistics(v);
  a.marks_from_events = std::any_of(records.events.begin(), records.events.end(), [](const congestion_event& e) {
    return e.kind == event_kind::ce_mark || e.kind == event_kind::cnp;
  });
  if (!a.marks_from_events)
    header.notes.push_back(
        "no per-event marks or CNPs in the records: their time series is estimated by spreading each flow's counts "
        "evenly over its lifetime");
  a.header = std::move(header);
  a.records = std::move(records);
  return a;
}

run_analysis analyze_run_with_spec(run_records records, report_header header, std::string_view spec_yaml,
                                   std::uint64_t seed, report_options options) {
  std::optional<fabric::twin::topology_config> topology;
  if (!spec_yaml.empty()) {
    auto spec = load_spec(spec_yaml, "the run's spec");
    if (!spec) {
      header.notes.push_back("the run's spec could not be read (" + spec.error().message() +
                             "): default MTU and link speeds");
    } else {
      header.configuration = run_configuration(*spec);
      options.correlation.mtu_bytes = spec->nic.mtu_bytes;
      options.attribution.mtu_bytes = spec->nic.mtu_bytes;
      options.attribution.sender_gbps = spec->topology.link_gbps;
      options.correlation.default_port_gbps = spec->topology.link_gbps;
      if (backend_traits_of(records.backend.empty() ? header.backend : records.backend).simulated) {
        auto config = to_twin_config(*spec, seed);
        if (config) {
          topology = config->topology;
        } else {
          header.notes.push_back("twin config from the spec failed (" + config.error().message() + ")");
        }
      }
      if (topology && topology->type != fabric::twin::topology_config::kind::single_switch) {
        // Every port at its link's speed in the fabric graph the twin built (uplinks at the
        // spine link speed, derived as the twin derives it when the spec leaves it 0).
        auto graph = fabric::twin::fabric_graph::build(*topology);
        if (graph) {
          auto g = std::make_shared<const fabric::twin::fabric_graph>(std::move(*graph));
          options.correlation.port_gbps = [g](std::uint32_t device, std::uint32_t port) {
            return g->port_gbps(device, port);
          };
        }
      }
    }
  } else {
    header.notes.push_back("no spec with the run: default MTU (1024) and link speed (100 Gb/s)");
  }
  const path_fn paths = paths_for_run(records, topology ? &*topology : nullptr, seed, header);
  return analyze_run(std::move(records), std::move(header), paths, options);
}

// ---------------------------------------------------------------- plots

namespace {

std::string fct_cdf(const run_analysis& a) {
  svg::plot p;
  p.id = "plot-fct-cdf";
  p.title = "FCT CDF";
  p.x = {"flow completion time", svg::scale_kind::automatic, {}, {}, svg::unit_kind::ns};
  p.y = {"fraction of flows", svg::scale_kind::linear, 0.0, 1.0};
  std::map<std::string, std::vector<double>> by_kind;
  for (const auto& f : a.records.flows)
    if (f.completed()) by_kind[to_string(f.kind)].push_back(static_cast<double>(f.fct_ns));
  if (by_kind.size() > 1)
    for (const auto& f : a.records.flows)
      if (f.completed()) by_kind["all"].push_back(static_cast<double>(f.fct_ns));
  for (auto& [kind, v] : by_kind) {
    std::sort(v.begin(), v.end());
    svg::series s{kind, svg::mark::step, {}, {}, ""};
    for (const std::size_t i : thin(v.size(), 2000)) {
      s.x.push_back(v[i]);
      s.y.push_back(static_cast<double>(i + 1) / static_cast<double>(v.size()));
    }
    p.lines.push_back(std::move(s));
  }
  return svg::render(p);
}

std::string slowdown_by_size(const run_analysis& a, const report_options& o) {
  svg::plot p;
  p.id = "plot-slowdown-size";
  p.title = "Slowdown by flow size";
  p.x = {"flow size", svg::scale_kind::automatic, {}, {}, svg::unit_kind::bytes};
  p.y = {"slowdown (FCT / ideal)", svg::scale_kind::automatic, {}, {}};
  std::map<std::string, svg::series> by_kind;
  std::vector<std::size_t> done;
  for (std::size_t i = 0; i < a.records.flows.size(); ++i)
    if (a.records.flows[i].slowdown() > 0) done.push_back(i);
  for (const std::size_t j : thin(done.size(), o.max_scatter_points)) {
    const auto& f = a.records.flows[done[j]];
    auto& s = by_kind[to_string(f.kind)];
    s.name = to_string(f.kind);
    s.kind = svg::mark::scatter;
    s.x.push_back(static_cast<double>(f.bytes));
    s.y.push_back(f.slowdown());
  }
  for (auto& [k, s] : by_kind) p.lines.push_back(std::move(s));
  return svg::render(p);
}

std::string slowdown_by_pause(const run_analysis& a, const report_options& o) {
  svg::plot p;
  p.id = "plot-slowdown-pause";
  p.title = "Slowdown against pause exposure";
  p.x = {"paused time on the flow's path", svg::scale_kind::automatic, {}, {}, svg::unit_kind::ns};
  p.y = {"slowdown", svg::scale_kind::automatic, {}, {}};
  svg::series victims{"victims", svg::mark::scatter, {}, {}, "#D55E00"};
  svg::series others{"other flows", svg::mark::scatter, {}, {}, "#0072B2"};
  std::set<std::size_t> victim_set;
  for (const auto& v : a.victims.victims) victim_set.insert(v.flow);
  std::vector<std::size_t> done;
  for (std::size_t i = 0; i < a.flows.size(); ++i)
    if (a.flows[i].slowdown > 0) done.push_back(i);
  for (const std::size_t j : thin(done.size(), o.max_scatter_points)) {
    const auto& c = a.flows[done[j]];
    auto& s = victim_set.count(c.flow) ? victims : others;
    s.x.push_back(static_cast<double>(c.paused_ns));
    s.y.push_back(c.slowdown);
  }
  p.lines = {std::move(others), std::move(victims)};
  return svg::render(p);
}

std::string pause_timeline(const run_analysis& a, const report_options& o) {
  svg::timeline t;
  t.id = "plot-pause-timeline";
  t.title = "PFC pauses per port and priority (colour: source)";
  t.x.label = "time";
  t.x.unit = svg::unit_kind::ns;
  t.x.min = 0.0;
  t.x.max = static_cast<double>(std::max<std::int64_t>(1, run_end_ns(a.records)));
  std::map<std::pair<pause_index::key, pause_source>, std::vector<std::pair<double, double>>> spans;
  for (const auto& p : a.records.pauses)
    spans[{{p.device, p.port, p.priority}, p.source}].emplace_back(static_cast<double>(p.start_ns),
                                                                   static_cast<double>(p.end_ns));
  std::size_t rows = 0;
  for (const auto& port : a.ports) {
    for (const pause_source s : {pause_source::capture, pause_source::counter, pause_source::model}) {
      const auto it = spans.find({port.port, s});
      if (it == spans.end()) continue;
      t.rows.push_back({port_name(a.records, port.port) + " (" + to_string(s) + ")", it->second, source_color(s)});
    }
    if (++rows >= o.max_timeline_rows) break;
  }
  return svg::render(t);
}

std::string queue_depth(const run_analysis& a, const report_options& o) {
  svg::plot p;
  p.id = "plot-queue-depth";
  p.title = "Queue depth over time (deepest queues)";
  p.x = {"time", svg::scale_kind::linear, 0.0, {}, svg::unit_kind::ns};
  p.y = {"queue depth", svg::scale_kind::linear, 0.0, {}, svg::unit_kind::bytes};
  const queue_index q(a.records.queues);
  std::vector<std::pair<std::uint64_t, pause_index::key>> deepest;
  for (const auto& [k, v] : q.series()) {
    std::uint64_t m = 0;
    for (const auto& s : v) m = std::max(m, s.second);
    if (m > 0) deepest.emplace_back(m, k);
  }
  std::sort(deepest.begin(), deepest.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  if (deepest.size() > o.max_queue_series) deepest.resize(o.max_queue_series);
  for (const auto& [m, k] : deepest) {
    const auto& v = q.series().at(k);
    svg::series s{port_name(a.records, k), svg::mark::step, {}, {}, ""};
    for (const std::size_t i : thin(v.size(), 4000)) {
      s.x.push_back(static_cast<double>(v[i].first));
      s.y.push_back(static_cast<double>(v[i].second));
    }
    p.lines.push_back(std::move(s));
  }
  return svg::render(p);
}

std::string marks_over_time(const run_analysis& a, const report_options& o) {
  svg::plot p;
  p.id = "plot-marks-cnps";
  p.title = a.marks_from_events ? "CE marks and CNPs over time" : "CE marks and CNPs over time (estimated from per-flow counts)";
  const std::int64_t end = std::max<std::int64_t>(1, run_end_ns(a.records));
  const std::size_t bins = std::max<std::size_t>(1, o.time_bins);
  const double width_ns = static_cast<double>(end) / static_cast<double>(bins);
  p.x = {"time", svg::scale_kind::linear, 0.0, static_cast<double>(end), svg::unit_kind::ns};
  p.y = {"per " + readable_duration(width_ns), svg::scale_kind::linear, 0.0, {}};
  std::vector<double> ce(bins, 0), cnp(bins, 0), retx(bins, 0);
  bool cnps_measured = a.marks_from_events, retransmits_measured = a.marks_from_events;
  const auto bin_of = [&](std::int64_t t) {
    return std::min(bins - 1, static_cast<std::size_t>(std::max<double>(0, static_cast<double>(t) / width_ns)));
  };
  if (a.marks_from_events) {
    for (const auto& e : a.records.events) {
      if (e.kind == event_kind::ce_mark) ce[bin_of(e.t_ns)] += 1;
      if (e.kind == event_kind::cnp) cnp[bin_of(e.t_ns)] += 1;
      if (e.kind == event_kind::retransmit) retx[bin_of(e.t_ns)] += 1;
    }
  } else {
    // Spread each flow's counts evenly over its lifetime, bin by bin; counts a flow's NIC
    // did not measure add nothing, and a series no flow measured is left out.
    for (const auto& f : a.records.flows) {
      cnps_measured = cnps_measured || f.cnps_measured;
      retransmits_measured = retransmits_measured || f.retransmits_measured;
      const std::int64_t s = f.start_ns, e = f.completed() ? f.end_ns : end;
      const double life = static_cast<double>(std::max<std::int64_t>(1, e - s));
      for (std::size_t b = bin_of(s); b <= bin_of(e); ++b) {
        const double b0 = static_cast<double>(b) * width_ns, b1 = b0 + width_ns;
        const double share = std::max(0.0, std::min(b1, static_cast<double>(e)) - std::max(b0, static_cast<double>(s))) / life;
        ce[b] += share * static_cast<double>(f.ce_marked);
        if (f.cnps_measured) cnp[b] += share * static_cast<double>(f.cnps);
        if (f.retransmits_measured) retx[b] += share * static_cast<double>(f.retransmits);
      }
    }
  }
  svg::series sce{"CE-marked packets", svg::mark::line, {}, {}, ""}, scnp{"CNPs", svg::mark::line, {}, {}, ""},
      sretx{"retransmits", svg::mark::line, {}, {}, ""};
  for (std::size_t b = 0; b < bins; ++b) {
    const double x = (static_cast<double>(b) + 0.5) * width_ns;
    sce.x.push_back(x), sce.y.push_back(ce[b]);
    scnp.x.push_back(x), scnp.y.push_back(cnp[b]);
    sretx.x.push_back(x), sretx.y.push_back(retx[b]);
  }
  p.lines = {std::move(sce)};
  if (cnps_measured) p.lines.push_back(std::move(scnp));
  if (retransmits_measured) p.lines.push_back(std::move(sretx));
  if (!cnps_measured || !retransmits_measured)
    p.title += std::string("; per-flow ") + (!cnps_measured && !retransmits_measured ? "CNPs and retransmits"
                                              : !cnps_measured                       ? "CNPs"
                                                                                     : "retransmits") +
               " not measured";
  return svg::render(p);
}

// ---------------------------------------------------------------- tables

std::string csv(const table& t) {
  std::string out;
  for (std::size_t i = 0; i < t.head.size(); ++i) out += (i ? "," : "") + csv_field(t.head[i]);
  out += "\n";
  for (const auto& r : t.rows) {
    for (std::size_t i = 0; i < r.size(); ++i) out += (i ? "," : "") + csv_field(r[i]);
    out += "\n";
  }
  return out;
}

std::string opt(const std::optional<double>& v, int precision = 1) { return v ? num(*v, precision) : ""; }
// A count the hardware did not provide is "not measured", never 0.
std::string count_or_unmeasured(const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : "not measured"; }
std::string count_or_unmeasured(std::uint64_t v, bool measured) { return measured ? std::to_string(v) : "not measured"; }

table flows_table(const run_analysis& a, const std::vector<std::size_t>& order) {
  table t{{"flow", "src", "dst", "qp", "priority", "kind", "bytes", "start_ns", "end_ns", "fct_ns", "ideal_fct_ns",
           "slowdown", "paused_ns", "ce_fraction", "cnps", "retransmits", "queueing_ns", "victim"},
          {}};
  std::set<std::size_t> victims;
  for (const auto& v : a.victims.victims) victims.insert(v.flow);
  for (const std::size_t i : order) {
    const auto& c = a.flows[i];
    const auto& f = a.records.flows[c.flow];
    t.rows.push_back({std::to_string(c.flow), host_name(a.records, f.src), host_name(a.records, f.dst),
                      std::to_string(f.qp), std::to_string(f.priority), to_string(f.kind), std::to_string(f.bytes),
                      std::to_string(f.start_ns), std::to_string(f.end_ns), std::to_string(f.fct_ns),
                      std::to_string(f.ideal_fct_ns), num(c.slowdown, 3), std::to_string(c.paused_ns),
                      num(c.ce_fraction, 4), count_or_unmeasured(c.cnps), count_or_unmeasured(c.retransmits),
                      opt(c.queueing_ns), victims.count(c.flow) ? "yes" : "no"});
  }
  return t;
}

table hops_table(const run_analysis& a) {
  table t{{"flow", "hop", "device", "ingress_port", "egress_port", "paused_ns", "queue_mean_bytes", "queue_max_bytes",
           "queueing_ns", "victim"},
          {}};
  for (const auto& c : a.flows)
    for (std::size_t h = 0; h < c.hops.size(); ++h) {
      const auto& e = c.hops[h];
      t.rows.push_back({std::to_string(c.flow), std::to_string(h), device_name(a.records, e.hop.device),
                        std::to_string(e.hop.ingress_port), std::to_string(e.hop.egress_port),
                        std::to_string(e.paused_ns), opt(e.queue_mean_bytes),
                        e.queue_max_bytes ? std::to_string(*e.queue_max_bytes) : "", opt(e.queueing_ns),
                        e.victim ? "yes" : "no"});
    }
  return t;
}

table pauses_table(const run_analysis& a) {
  table t{{"device", "port", "priority", "start_ns", "end_ns", "source"}, {}};
  for (const auto& p : a.records.pauses)
    t.rows.push_back({device_name(a.records, p.device), std::to_string(p.port), std::to_string(p.priority),
                      std::to_string(p.start_ns), std::to_string(p.end_ns), to_string(p.source)});
  return t;
}

table ports_table(const run_analysis& a, std::size_t limit = SIZE_MAX) {
  table t{{"device", "port", "priority", "intervals", "paused_ns", "longest_ns", "capture_ns", "counter_ns", "model_ns"},
          {}};
  for (const auto& p : a.ports) {
    if (t.rows.size() >= limit) break;
    t.rows.push_back({device_name(a.records, p.port.device), std::to_string(p.port.port),
                      std::to_string(p.port.priority), std::to_string(p.intervals), std::to_string(p.paused_ns),
                      std::to_string(p.longest_ns), std::to_string(p.by_source_ns[0]),
                      std::to_string(p.by_source_ns[1]), std::to_string(p.by_source_ns[2])});
  }
  return t;
}

table storms_table(const run_analysis& a) {
  table t{{"device", "port", "priority", "start_ns", "end_ns", "duration_ns", "sources"}, {}};
  for (const auto& s : a.storms) {
    std::string sources;
    for (const auto src : s.sources) sources += (sources.empty() ? "" : ";") + std::string(to_string(src));
    t.rows.push_back({device_name(a.records, s.port.device), std::to_string(s.port.port),
                      std::to_string(s.port.priority), std::to_string(s.start_ns), std::to_string(s.end_ns),
                      std::to_string(s.end_ns - s.start_ns), sources});
  }
  return t;
}

table victims_table(const run_analysis& a, std::size_t limit = SIZE_MAX) {
  table t{{"flow", "src", "dst", "slowdown", "victim_paused_ns", "paused_at"}, {}};
  for (const auto& v : a.victims.victims) {
    if (t.rows.size() >= limit) break;
    const auto& f = a.records.flows[v.flow];
    std::string at;
    for (const std::size_t h : v.hops) at += (at.empty() ? "" : ";") + hop_name(a.records, a.flows[v.flow].hops[h].hop);
    t.rows.push_back({std::to_string(v.flow), host_name(a.records, f.src), host_name(a.records, f.dst),
                      num(f.slowdown(), 3), std::to_string(v.victim_paused_ns), at});
  }
  return t;
}

table victim_ports_table(const run_analysis& a) {
  table t{{"device", "port", "priority", "victims", "victim_paused_ns"}, {}};
  for (const auto& p : a.victims.ports)
    t.rows.push_back({device_name(a.records, p.port.device), std::to_string(p.port.port),
                      std::to_string(p.port.priority), std::to_string(p.victims), std::to_string(p.victim_paused_ns)});
  return t;
}

table attribution_table(const run_analysis& a) {
  table t{{"flow", "src", "dst", "bytes", "slowdown", "fct_ns", "ideal_fct_ns", "excess_ns", "pause_ns", "queueing_ns",
           "retransmission_ns", "sharing_ns", "unexplained_ns"},
          {}};
  for (const auto& x : a.tail) {
    const auto& f = a.records.flows[x.flow];
    t.rows.push_back({std::to_string(x.flow), host_name(a.records, f.src), host_name(a.records, f.dst),
                      std::to_string(f.bytes), num(x.slowdown, 3), std::to_string(x.fct_ns),
                      std::to_string(x.ideal_fct_ns), std::to_string(x.excess_ns), std::to_string(x.pause_ns),
                      std::to_string(x.queueing_ns),
                      x.retransmission_measured ? std::to_string(x.retransmission_ns) : "not measured",
                      std::to_string(x.sharing_ns), std::to_string(x.unexplained_ns)});
  }
  return t;
}

table correlations_table(const run_analysis& a) {
  table t{{"measure", "flows", "spearman_rho_with_slowdown"}, {}};
  for (const auto& c : a.correlations) t.rows.push_back({c.measure, std::to_string(c.n), c.rho ? num(*c.rho, 3) : ""});
  return t;
}

std::vector<std::size_t> slowest_first(const run_analysis& a) {
  std::vector<std::size_t> order(a.flows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return a.flows[x].slowdown > a.flows[y].slowdown; });
  return order;
}

json stats_json(const flow_stats& s) {
  return {{"flows", s.flows},
          {"completed", s.completed},
          {"fct_ns", {{"p50", s.fct_p50_ns}, {"p99", s.fct_p99_ns}, {"max", s.fct_max_ns}}},
          {"slowdown", {{"p50", s.slowdown_p50}, {"p99", s.slowdown_p99}}}};
}

json table_json(const table& t) {
  json rows = json::array();
  for (const auto& r : t.rows) {
    json o = json::object();
    for (std::size_t i = 0; i < t.head.size() && i < r.size(); ++i) o[t.head[i]] = r[i];
    rows.push_back(std::move(o));
  }
  return rows;
}

constexpr const char* style = R"(
body{font-family:sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:12px;margin:8px 0}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}th{background:#f0f0f0}
td.empty{text-align:center;color:#888}
figure{display:inline-block;margin:8px}figcaption{font-size:12px;color:#555;max-width:720px}
.notes li{font-size:13px;color:#6a4a00}
.legend-sources span{display:inline-block;padding:0 6px;margin-right:6px;color:#fff}
)";

}  // namespace

std::string report_html(const run_analysis& a, const report_options& o) {
  const auto& h = a.header;
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>rocelab report " +
                    svg::escape(h.run_id) + "</title><style>" + style + "</style></head><body>\n";
  out += "<h1>rocelab report: " + svg::escape(h.name.empty() ? h.run_id : h.name) + "</h1>\n";
  out += files_section(a);
  table summary{{"field", "value"}, {}};
  const auto time = [](std::int64_t ns) { return readable_duration(static_cast<double>(ns)); };
  summary.rows = {{"run", h.run_id},
                  {"backend", a.records.backend.empty() ? h.backend : a.records.backend},
                  {"status", h.status.empty() ? "-" : h.status},
                  {"flows", std::to_string(a.stats.flows) + " (" + std::to_string(a.stats.completed) + " completed)"},
                  {"FCT p50 / p99 / max", time(a.stats.fct_p50_ns) + " / " + time(a.stats.fct_p99_ns) + " / " + time(a.stats.fct_max_ns)},
                  {"slowdown p50 / p99", num(a.stats.slowdown_p50, 2) + " / " + num(a.stats.slowdown_p99, 2)},
                  {"pause intervals", std::to_string(a.records.pauses.size()) + " on " + std::to_string(a.ports.size()) + " ports"},
                  {"PFC storms (paused > " + duration(o.storms.threshold_ns) + ")", std::to_string(a.storms.size())},
                  {"victim flows", std::to_string(a.victims.victims.size())},
                  {"CE-marked / CNPs / retransmits / drops",
                   std::to_string(a.records.totals.ce_marked) + " / " +
                       count_or_unmeasured(a.records.totals.cnps, a.records.totals.cnps_measured) + " / " +
                       count_or_unmeasured(a.records.totals.retransmits, a.records.totals.retransmits_measured) +
                       " / " + std::to_string(a.records.totals.drops)},
                  {"paths", h.path_source}};
  // Real-time runs: how far apart the senders started, and why the run is degraded.
  if (!a.records.start_offsets_ns.empty())
    summary.rows.push_back({"start skew", time(start_skew_ns(a.records.start_offsets_ns)) + " (from the " +
                                              (a.records.start_source.empty() ? "nic" : a.records.start_source) + ")"});
  if (!a.records.start_clock.empty())
    summary.rows.push_back({"start clock", a.records.start_clock + ", uncertainty " +
                                               time(static_cast<double>(a.records.start_clock_uncertainty_ns))});
  for (const auto& d : a.records.degraded) summary.rows.push_back({"degraded", d});
  out += "<h2 id=\"summary\">Summary</h2><p>" + svg::escape(summary_sentence(a)) + "</p>" +
         html_table(summary, "table-summary");
  out += comparisons_section(a);
  out += sim_to_real_section(a);
  if (a.by_kind.size() > 1) {
    table kinds{{"kind", "flows", "completed", "FCT p50_ns", "FCT p99_ns", "slowdown p50", "slowdown p99"}, {}};
    for (const auto& [k, s] : a.by_kind)
      kinds.rows.push_back({k, std::to_string(s.flows), std::to_string(s.completed), std::to_string(s.fct_p50_ns),
                            std::to_string(s.fct_p99_ns), num(s.slowdown_p50, 2), num(s.slowdown_p99, 2)});
    out += html_table(kinds, "table-kinds");
  }
  if (!h.notes.empty()) {
    out += "<ul class=\"notes\">";
    for (const auto& n : h.notes) out += "<li>" + svg::escape(n) + "</li>";
    out += "</ul>";
  }
  out += configuration_section(a);
  out += allreduce_section(a);

  out += "<h2 id=\"fct\">Flow completion</h2>";
  out += "<figure>" + fct_cdf(a) + "<figcaption>Completed flows' FCT, per workload kind.</figcaption></figure>";
  out += "<figure>" + slowdown_by_size(a, o) +
         "<figcaption>Slowdown = FCT / ideal FCT (alone on an idle path), by flow size.</figcaption></figure>";

  out += sharing_section(a);

  out += "<h2 id=\"pauses\">PFC pauses</h2><p>" + svg::escape(pauses_sentence(a)) + "</p>";
  out += "<p class=\"legend-sources\">Sources: <span style=\"background:" + std::string(source_color(pause_source::capture)) +
         "\">capture</span><span style=\"background:" + source_color(pause_source::counter) +
         "\">counter</span><span style=\"background:" + source_color(pause_source::model) + "\">model</span></p>";
  out += "<figure>" + pause_timeline(a, o) +
         "<figcaption>Each row is a transmitter (device:egress port, priority) that PFC stopped, with the source "
         "of each interval: a PFC frame in the capture, sampled pause counters, or the twin's model.</figcaption></figure>";
  table sources{{"source", "intervals", "paused_ns"}, {}};
  for (const pause_source s : {pause_source::capture, pause_source::counter, pause_source::model}) {
    std::size_t n = 0;
    std::int64_t ns = 0;
    for (const auto& p : a.records.pauses)
      if (p.source == s) ++n, ns += p.end_ns - p.start_ns;
    sources.rows.push_back({to_string(s), std::to_string(n), std::to_string(ns)});
  }
  out += "<h3>Pause intervals by source</h3>" + html_table(sources, "table-pause-sources");
  out += "<h3>Paused ports</h3>" + html_table(ports_table(a, 50), "table-ports", "no pauses");
  out += "<h3>PFC storms (paused longer than " + duration(o.storms.threshold_ns) + ")</h3>" +
         html_table(storms_table(a), "table-storms", "no storms");

  out += "<h2 id=\"queues\">Queues, marks and CNPs</h2><p>" + svg::escape(queues_sentence(a)) + "</p>";
  out += "<figure>" + queue_depth(a, o) + "<figcaption>Sampled egress queue depth of the deepest queues (device:port pN = queue N).</figcaption></figure>";
  out += "<figure>" + marks_over_time(a, o) + "<figcaption>" +
         std::string(a.marks_from_events ? "From the run's congestion events."
                                         : "Estimated: each flow's CE marks, CNPs and retransmits spread evenly over its lifetime (the run has no per-event records).") +
         "</figcaption></figure>";

  out += "<h2 id=\"victims\">Victims of PFC</h2>";
  out += "<p>A flow is a victim at a hop when that hop was paused during the flow while the flow's own destination "
         "port was not congested (fan-in" +
         std::string(a.victims.from_queue_samples
                         ? " and a queue of at least " +
                               svg::readable_bytes(static_cast<double>(o.victims.congested_queue_bytes))
                         : "") +
         "): it waited behind congestion elsewhere. " + std::to_string(a.victims.victims.size()) + " victim flows; " +
         std::to_string(a.victims.congested_ports.size()) + " congested destination ports.</p>";
  out += html_table(victims_table(a, o.max_flow_rows), "table-victims", "no victims");
  out += "<h3>Where victims were paused</h3>" + html_table(victim_ports_table(a), "table-victim-ports", "no victims");
  out += "<figure>" + slowdown_by_pause(a, o) + "<figcaption>Each flow's slowdown against the time its path was paused during it.</figcaption></figure>";

  out += "<h2 id=\"attribution\">Attribution of the slowest flows</h2>";
  out += "<p>Flows at the p" + num(o.attribution.percentile, 0) +
         " slowdown and above: excess FCT over ideal split into pause, queueing, retransmission, bandwidth shared "
         "with other flows at either end and the unexplained rest, charged in that order. " +
         svg::escape(attribution_sentence(a)) + "</p>";
  out += html_table(attribution_table(a), "table-attribution", "no completed flows");
  out += "<h3>Rank correlation with slowdown (Spearman)</h3>" + html_table(correlations_table(a), "table-correlations");

  out += "<h2 id=\"flows\">Slowest flows</h2>";
  auto order = slowest_first(a);
  if (order.size() > o.max_flow_rows) order.resize(o.max_flow_rows);
  out += html_table(flows_table(a, order), "table-flows", "no flows");
  out += "<p>All flows, hops and intervals: flows.csv, hops.csv, pauses.csv (and report.json).</p>";
  out += "</body></html>\n";
  return out;
}

std::map<std::string, std::string> report_tables(const run_analysis& a) {
  std::map<std::string, std::string> files;
  std::vector<std::size_t> all(a.flows.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const table flows = flows_table(a, all), hops = hops_table(a), pauses = pauses_table(a), ports = ports_table(a),
              storms = storms_table(a), victims = victims_table(a), victim_ports = victim_ports_table(a),
              attribution = attribution_table(a), correlations = correlations_table(a);
  files["flows.csv"] = csv(flows);
  files["hops.csv"] = csv(hops);
  files["pauses.csv"] = csv(pauses);
  files["ports.csv"] = csv(ports);
  files["storms.csv"] = csv(storms);
  files["victims.csv"] = csv(victims);
  files["victim_ports.csv"] = csv(victim_ports);
  files["attribution.csv"] = csv(attribution);
  files["correlations.csv"] = csv(correlations);
  json j;
  j["run_id"] = a.header.run_id;
  j["name"] = a.header.name;
  j["backend"] = a.records.backend.empty() ? a.header.backend : a.records.backend;
  j["status"] = a.header.status;
  j["paths"] = a.header.path_source;
  j["notes"] = a.header.notes;
  j["start_skew_ns"] = start_skew_ns(a.records.start_offsets_ns);
  j["degraded_reasons"] = a.records.degraded;
  for (const auto& [path, value, def] : a.header.configuration)
    j["configuration"].push_back({{"setting", path}, {"value", value}, {"default", def}});
  j["summary"] = stats_json(a.stats);
  for (const auto& [k, s] : a.by_kind) j["by_kind"][k] = stats_json(s);
  j["counter_pauses"] = {{"intervals", a.counter_pauses.intervals.size()},
                         {"resolution_ns", a.counter_pauses.resolution_ns},
                         {"frames", a.counter_pauses.frames}};
  j["victims_from_queue_samples"] = a.victims.from_queue_samples;
  j["marks_from_events"] = a.marks_from_events;
  j["ports"] = table_json(ports);
  j["storms"] = table_json(storms);
  if (!a.records.allreduce.empty()) j["allreduce"] = table_json(report_detail::allreduce_table(a));
  j["victims"] = table_json(victims);
  j["victim_ports"] = table_json(victim_ports);
  j["attribution"] = table_json(attribution);
  json corr = json::array();
  for (const auto& c : a.correlations)
    corr.push_back({{"measure", c.measure}, {"flows", c.n}, {"rho", c.rho ? json(*c.rho) : json(nullptr)}});
  j["correlations"] = std::move(corr);
  j["flows"] = table_json(flows);
  files["report.json"] = j.dump(1) + "\n";
  return files;
}

status write_report(const std::string& dir, const run_analysis& a, const report_options& options,
                    existing_output existing) {
  auto files = report_tables(a);
  files["report.html"] = report_html(a, options);
  return write_output_files(dir, {files.begin(), files.end()}, existing);
}

}  // namespace rocelab::experiments

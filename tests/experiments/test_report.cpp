#include "rocelab/experiments/report/report.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../support/text_file.hpp"
#include "correlation_scenarios.hpp"

// The report on a twin run with PFC spreading (victims, pauses at several hops, queues):
// every plot and table is present and holds the run's figures; the CSV and JSON carry
// the same tables. test_report_chromium.cpp renders the page in a browser.

namespace rocelab::experiments {
namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

using testing::read_text;

run_analysis analyzed_spreading_run() {
  const auto t = scenarios::two_incasts_and_bystanders();
  report_header h;
  h.run_id = "test-run";
  h.name = "pfc-spreading <two incasts>";
  const path_fn paths = paths_for_run(t.records, &t.config.topology, t.config.seed, h);
  return analyze_run(t.records, h, paths);
}

TEST(report, html_has_every_plot_and_table) {
  const run_analysis a = analyzed_spreading_run();
  EXPECT_EQ(a.victims.victims.size(), 2u);
  const std::string html = report_html(a);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* id : {"plot-fct-cdf", "plot-slowdown-size", "plot-slowdown-pause", "plot-pause-timeline",
                         "plot-queue-depth", "plot-marks-cnps", "table-summary", "table-pause-sources", "table-ports",
                         "table-storms", "table-victims", "table-victim-ports", "table-attribution",
                         "table-correlations", "table-flows"})
    EXPECT_NE(html.find("id=\"" + std::string(id) + "\""), std::string::npos) << id;
  EXPECT_EQ(count(html, "<svg "), 6u);
  EXPECT_EQ(count(html, "</svg>"), 6u);
  EXPECT_EQ(html.find("<script"), std::string::npos) << "no scripts";
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg")) << "no external assets";
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_NE(html.find("pfc-spreading &lt;two incasts&gt;"), std::string::npos) << "escaped";
  EXPECT_NE(html.find("twin routing"), std::string::npos) << "the report says where paths came from";
  // The timeline has a row for the spine's paused port to leaf1, from the model.
  EXPECT_NE(html.find(">spine0:1 p3 (model)</text>"), std::string::npos);
  // The victims table names the bystanders (as the spec counts hosts, from h0) and the
  // spine port they were paused at.
  const auto victims = html.substr(html.find("id=\"table-victims\""));
  EXPECT_NE(victims.find("<td>h6</td><td>h12</td>"), std::string::npos);
  EXPECT_NE(victims.find("<td>h7</td><td>h13</td>"), std::string::npos);
  EXPECT_NE(victims.substr(0, victims.find("</table>")).find("spine0:1"), std::string::npos);
  // The scatter and CDF plots hold every completed flow.
  const auto at = html.find("id=\"plot-slowdown-size\"");
  EXPECT_NE(html.substr(at, html.find('>', at) - at).find("data-points=\"8\""), std::string::npos);
}

// A run measured by `rocelab tune --verify` carries the twin's prediction: the report
// shows both side by side; a run without one shows no such table.
// The same run as a real lab's NICs would report it: no per-flow retransmits or CNPs and
// no run-level retransmits. The page says "not measured" where it would have said 0.
TEST(report, counts_the_nics_did_not_measure_read_not_measured) {
  auto t = scenarios::two_incasts_and_bystanders();
  for (auto& f : t.records.flows) {
    f.retransmits = 0, f.retransmits_measured = false;
    f.cnps = 0, f.cnps_measured = false;
  }
  t.records.totals.retransmits = 0, t.records.totals.retransmits_measured = false;
  t.records.totals.cnps = 0, t.records.totals.cnps_measured = false;
  t.records.events.clear();
  report_header h;
  h.run_id = "lab-run";
  const path_fn paths = paths_for_run(t.records, &t.config.topology, t.config.seed, h);
  const run_analysis a = analyze_run(t.records, h, paths);
  const std::string html = report_html(a);
  EXPECT_NE(html.find("CNPs not measured"), std::string::npos) << "summary sentence";
  EXPECT_NE(html.find("/ not measured / not measured /"), std::string::npos) << "CE-marked / CNPs / retransmits / drops";
  EXPECT_NE(html.find("retransmission not measured"), std::string::npos) << "attribution sentence";
  EXPECT_NE(html.find("per-flow CNPs and retransmits not measured"), std::string::npos) << "marks plot title";
  EXPECT_GE(count(html, "<td>not measured</td>"), 2u) << "flow table cells";
}

TEST(report, sim_to_real_table_beside_the_measurement) {
  const auto t = scenarios::two_incasts_and_bystanders();
  report_header h;
  h.run_id = "measured";
  run_summary predicted;
  predicted.all.flows = 8;
  predicted.all.fct_p99_ns = 2 * 123'000;
  predicted.pause_frames = 77;
  predicted.by_kind["incast"] = predicted.all;
  h.predicted_summary_json = summary_json({"predicted", "twin", "x"}, predicted, {});
  const run_analysis a = analyze_run(t.records, h, paths_for_run(t.records, &t.config.topology, t.config.seed, h));
  const std::string html = report_html(a);
  const auto at = html.find("id=\"table-sim-to-real\"");
  ASSERT_NE(at, std::string::npos);
  const std::string table = html.substr(at, html.find("</table>", at) - at);
  EXPECT_NE(table.find("<td>FCT p99</td><td>246 us</td>"), std::string::npos) << table;  // predicted, readable
  EXPECT_NE(table.find("<td>" + std::to_string(t.records.totals.pfc_pause_frames) + "</td>"), std::string::npos);
  EXPECT_NE(table.find("<td>77</td>"), std::string::npos);
  // The prediction had no pause time and p50 0: the page says the two differ, and which terms.
  EXPECT_NE(html.find("differ beyond 15%"), std::string::npos);
  EXPECT_NE(html.find("the terms that differ most are"), std::string::npos);
  EXPECT_EQ(report_html(analyzed_spreading_run()).find("table-sim-to-real"), std::string::npos);
}

// Per-flow rates over time: the run's own timelines as a line plot, one series per flow
// with its rate in Mb/s; the twin's replay beside it on the same axes where stored; no
// section for a run without timelines.
TEST(report, sharing_section_plots_each_flows_rate_and_the_twins_replay) {
  auto t = scenarios::two_incasts_and_bystanders();
  ASSERT_GE(t.records.flows.size(), 2u);
  const std::uint32_t dev = 0;
  // Flow 0: 125 KB over 1 ms (1 Gb/s) then 62.5 KB (0.5 Gb/s); flow 1: 25 KB in 1 ms.
  for (const auto& c : std::vector<counter_sample>{{dev, 0, "flow_tx_bytes", 0, 0},
                                                   {dev, 0, "flow_tx_bytes", 1'000'000, 125'000},
                                                   {dev, 0, "flow_tx_bytes", 2'000'000, 187'500},
                                                   {dev, 1, "flow_tx_bytes", 0, 0},
                                                   {dev, 1, "flow_tx_bytes", 1'000'000, 25'000}})
    t.records.counters.push_back(c);
  report_header h;
  h.run_id = "sharing";
  h.predicted_flow_timeline = {{dev, 0, "flow_tx_bytes", 0, 0}, {dev, 0, "flow_tx_bytes", 4'000'000, 250'000}};
  const run_analysis a = analyze_run(t.records, h, paths_for_run(t.records, &t.config.topology, t.config.seed, h));
  const std::string html = report_html(a);
  const auto at = html.find("id=\"plot-flow-rates\"");
  ASSERT_NE(at, std::string::npos);
  const std::string plot = html.substr(at, html.find("</svg>", at) - at);
  EXPECT_EQ(count(plot, "class=\"series\""), 2u) << "one line per flow";
  EXPECT_NE(plot.find("data-points=\"2\""), std::string::npos) << "flow 0's two intervals";
  EXPECT_NE(plot.find("Mb/s"), std::string::npos);
  EXPECT_NE(plot.find(">1000<"), std::string::npos) << "1000 Mb/s, the highest rate, is on the axis";
  const auto twin = html.find("id=\"plot-flow-rates-twin\"");
  ASSERT_NE(twin, std::string::npos);
  EXPECT_EQ(count(html.substr(twin, html.find("</svg>", twin) - twin), "class=\"series\""), 1u);
  EXPECT_EQ(report_html(analyzed_spreading_run()).find("id=\"sharing\""), std::string::npos);
}

// Times on the page are in readable units (the CSV files keep integer nanoseconds), the
// run's settings are stated, other runs stand beside it, and each section says in one
// sentence what its numbers mean.
TEST(report, the_page_states_the_settings_the_baselines_and_a_reading_per_section) {
  const auto t = scenarios::two_incasts_and_bystanders();
  report_header h;
  h.run_id = "tuned";
  experiment_spec spec;
  spec.sw.ecn.kmin_bytes = 50'000;
  spec.sw.ecn.pmax = 0.2;
  h.configuration = run_configuration(spec);
  run_summary pfc_only = summarize({&t.records}, {1});
  pfc_only.all.slowdown_p99 *= 2;
  pfc_only.paused_ns *= 4;
  h.comparisons.emplace_back("PFC only", summary_json({"b", "twin", "x"}, pfc_only, {}));
  h.files.emplace_back("capture.pcapng", "../capture.pcapng");
  const run_analysis a = analyze_run(t.records, h, paths_for_run(t.records, &t.config.topology, t.config.seed, h));
  const std::string html = report_html(a);
  const auto config = html.substr(html.find("id=\"table-configuration\""));
  EXPECT_NE(config.find("<td>switch.ecn.kmin_bytes</td><td>50KB</td><td>1MiB</td>"), std::string::npos)
      << config.substr(0, 600);
  EXPECT_NE(config.find("<td>switch.ecn.pmax</td><td>0.2</td><td>0.05</td>"), std::string::npos);
  EXPECT_NE(html.find("2 of "), std::string::npos) << "the count of settings that differ";
  EXPECT_NE(html.find("id=\"table-comparisons\""), std::string::npos);
  EXPECT_NE(html.find("Against PFC only, this run&#39;s p99 slowdown is 50% lower and its pause time is 75% lower"),
            std::string::npos)
      << html.substr(html.find("id=\"comparisons\""), 400);
  EXPECT_NE(html.find("<a href=\"../capture.pcapng\">capture.pcapng</a>"), std::string::npos);
  for (const char* reading : {"flows completed; FCT p50 ", "PFC stopped ", "The deepest queue reached ",
                              "bandwidth shared with other flows, and "})
    EXPECT_NE(html.find(reading), std::string::npos) << reading;
  // No time is printed as a raw count of microseconds with three decimals.
  const auto attribution = html.substr(html.find("id=\"table-attribution\""));
  EXPECT_EQ(attribution.substr(0, attribution.find("</table>")).find(".000<"), std::string::npos);
  EXPECT_NE(attribution.find("<th>sharing</th>"), std::string::npos);
}

TEST(report, csv_and_json_carry_the_same_tables) {
  const run_analysis a = analyzed_spreading_run();
  const auto dir = std::filesystem::temp_directory_path() / ("rlr-report-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(write_report(dir.string(), a).ok());
  for (const char* f : {"report.html", "report.json", "flows.csv", "hops.csv", "pauses.csv", "ports.csv", "storms.csv",
                        "victims.csv", "victim_ports.csv", "attribution.csv", "correlations.csv"})
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
  const std::string flows = read_text((dir / "flows.csv").string());
  EXPECT_EQ(flows.substr(0, flows.find('\n')),
            "flow,src,dst,qp,priority,kind,bytes,start_ns,end_ns,fct_ns,ideal_fct_ns,slowdown,paused_ns,ce_fraction,"
            "cnps,retransmits,queueing_ns,victim");
  EXPECT_EQ(count(flows, "\n"), 1u + 8u);
  EXPECT_EQ(count(flows, ",yes\n"), 2u) << "two victims";
  EXPECT_EQ(count(read_text((dir / "hops.csv").string()), "\n"), 1u + 8u * 4u) << "four hops per flow";
  EXPECT_EQ(count(read_text((dir / "pauses.csv").string()), "\n"), 1u + a.records.pauses.size());
  const auto j = nlohmann::json::parse(read_text((dir / "report.json").string()));
  EXPECT_EQ(j.at("run_id"), "test-run");
  EXPECT_EQ(j.at("flows").size(), 8u);
  EXPECT_EQ(j.at("victims").size(), 2u);
  EXPECT_EQ(j.at("summary").at("completed"), 8);
  EXPECT_EQ(j.at("correlations").size(), 5u);
  EXPECT_TRUE(j.at("victims_from_queue_samples").get<bool>());
  std::filesystem::remove_all(dir);
}

TEST(report, counter_derived_pauses_are_named_by_source) {
  // A lab-like run: no model pauses, only an mlx5 NIC's pause duration counter.
  run_records r;
  r.backend = "lab";
  r.hosts = {"h1", "h2"};
  r.devices = {"h1", "h2", "sw"};
  flow_record f;
  f.src = 0, f.dst = 1, f.qp = 1, f.priority = 3, f.bytes = 1 << 20, f.start_ns = 0, f.end_ns = 3'000'000,
  f.fct_ns = 3'000'000, f.ideal_fct_ns = 100'000;
  r.flows = {f};
  r.counters = {{0, 0, "nic.rx_prio3_pause_duration", 0, 0}, {0, 0, "nic.rx_prio3_pause_duration", 2'000'000, 500}};
  report_header h;
  h.run_id = "lab-run";
  const path_fn paths = paths_for_run(r, nullptr, 0, h);
  const run_analysis a = analyze_run(r, h, paths);
  ASSERT_EQ(a.records.pauses.size(), 1u);
  EXPECT_EQ(a.records.pauses[0].source, pause_source::counter);
  EXPECT_EQ(a.flows[0].paused_ns, 500'000) << "host 0's NIC paused 500 us during the flow";
  const std::string html = report_html(a);
  EXPECT_NE(html.find(">h0:0 p3 (counter)</text>"), std::string::npos) << "host 0 is h0, whatever the lab called it";
  EXPECT_NE(html.find("derived from pause counters"), std::string::npos);
  EXPECT_NE(html.find("single-switch layout"), std::string::npos);
  EXPECT_NE(html.find("estimated"), std::string::npos) << "marks over time are estimated without events";
}

TEST(report, the_spec_sets_paths_and_port_rates) {
  const auto t = scenarios::two_incasts_and_bystanders();
  report_header h;
  h.backend = "twin";
  const run_analysis a = analyze_run_with_spec(t.records, h, scenarios::leaf_spine_yaml, t.config.seed);
  EXPECT_NE(a.header.path_source.find("twin routing"), std::string::npos);
  ASSERT_EQ(a.flows.size(), 8u);
  std::size_t checked = 0;
  for (const auto& c : a.flows)
    for (const auto& e : c.hops) {
      if (!e.hop.is_switch || !e.queue_mean_bytes || *e.queue_mean_bytes == 0) continue;
      // leaf0's uplink (port 8) and every spine port drain at 800 Gb/s, edge ports at 100.
      const bool uplink = (e.hop.device == 0 && e.hop.egress_port >= 8) || e.hop.device == 2;
      EXPECT_DOUBLE_EQ(*e.queueing_ns, *e.queue_mean_bytes * 8.0 / (uplink ? 800.0 : 100.0));
      ++checked;
    }
  EXPECT_GT(checked, 0u);
  // A spec that does not parse leaves the defaults and says so.
  const run_analysis bad = analyze_run_with_spec(t.records, h, "topology: [", t.config.seed);
  EXPECT_NE(bad.header.notes.front().find("could not be read"), std::string::npos);
}

// A k=4 fat-tree (spec to twin to report): an incast from the three other pods into h1
// makes edge0_0 pause the aggregation switches above it. The report's paths are the
// twin's five-switch routes, the pause shows on the incast flows' aggregation hop, and
// every port drains at its own link's speed (uplinks at 400 Gb/s).
TEST(report, per_hop_pauses_on_a_fat_tree) {
  constexpr const char* yaml = R"(
name: fat-tree-incast
backend: twin
seed: 3
topology: {type: fat_tree, k: 4, hosts: 16, link_gbps: 100, spine_link_gbps: 400, link_delay_ns: 1us}
switch: {buffer_bytes: 2MiB, pfc: {enabled: true, priorities: [3]}, ecn: {enabled: false}}
nic: {mtu_bytes: 1024, data_priority: 3, dcqcn: {enabled: false}}
workload: {incast: {receiver: 0, sender_hosts: "4,7,10,13,15", flow_bytes: 512KiB}}
twin: {stop_ns: 100ms, queue_sample_interval_ns: 1us}
)";
  auto spec = load_spec(yaml, "fat-tree.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  auto config = to_twin_config(*spec, spec->seed);
  ASSERT_TRUE(config.ok()) << config.error().message();
  auto load = make_workload(*spec, spec->seed);
  ASSERT_TRUE(load.ok()) << load.error().message();
  auto records = fabric::twin::run_twin(*config, **load);
  ASSERT_TRUE(records.ok()) << records.error().message();
  ASSERT_EQ(records->flows.size(), 5u);
  ASSERT_FALSE(records->pauses.empty());
  report_header h;
  h.backend = "twin";
  const run_analysis a = analyze_run_with_spec(*records, h, yaml, spec->seed);
  EXPECT_NE(a.header.path_source.find("twin routing"), std::string::npos);
  const auto device = [&](std::uint32_t d) { return a.records.devices.at(d); };
  std::int64_t paused_at_agg = 0;
  std::size_t queued = 0;
  for (const auto& c : a.flows) {
    ASSERT_EQ(c.hops.size(), 6u) << "NIC, edge, agg, core, agg, edge";
    EXPECT_EQ(device(c.hops[1].hop.device).rfind("edge", 0), 0u);
    EXPECT_EQ(device(c.hops[3].hop.device).rfind("core", 0), 0u);
    EXPECT_EQ(device(c.hops[4].hop.device).rfind("agg0_", 0), 0u);
    EXPECT_EQ(device(c.hops[5].hop.device), "edge0_0");
    EXPECT_EQ(c.hops[5].hop.egress_port, 0u) << "h1's port";
    paused_at_agg += c.hops[4].paused_ns;
    EXPECT_GT(c.paused_ns, 0) << "flow " << c.flow;
    for (const auto& e : c.hops) {
      if (!e.hop.is_switch || !e.queue_mean_bytes || *e.queue_mean_bytes == 0) continue;
      const bool to_host = e.hop.device == c.hops[5].hop.device && e.hop.egress_port < 2;
      EXPECT_DOUBLE_EQ(*e.queueing_ns, *e.queue_mean_bytes * 8.0 / (to_host ? 100.0 : 400.0));
      ++queued;
    }
  }
  EXPECT_GT(paused_at_agg, 0) << "edge0_0 paused the aggregation ports toward it";
  EXPECT_GT(queued, 0u);
}

TEST(report, paths_unknown_are_said_so) {
  run_records r;
  r.devices = {"leaf0", "leaf1"};
  report_header h;
  EXPECT_FALSE(static_cast<bool>(paths_for_run(r, nullptr, 0, h)));
  EXPECT_NE(h.path_source.find("unknown"), std::string::npos);
}

// A real-time run's start skew and the reasons it is degraded are on the page and in the
// JSON; a twin run (no offsets, not degraded) shows neither row.
TEST(report, start_skew_and_degraded_reasons_are_shown) {
  const auto t = scenarios::two_incasts_and_bystanders();
  report_header h;
  h.run_id = "skewed";
  run_records r = t.records;
  const std::string twin_html = report_html(analyze_run(r, h, paths_for_run(r, &t.config.topology, t.config.seed, h)));
  EXPECT_EQ(twin_html.find("<td>start skew</td>"), std::string::npos);
  EXPECT_EQ(twin_html.find("<td>degraded</td>"), std::string::npos);
  r.start_offsets_ns = {{"h1", 100'000}, {"h2", 2'600'000}};
  r.start_source = "capture";
  r.degraded = {"senders started 2.5 ms apart (h1 first, h2 last, from the capture), beyond "
                "timing.max_start_skew_ns 1 ms"};
  const run_analysis a = analyze_run(r, h, paths_for_run(r, &t.config.topology, t.config.seed, h));
  const std::string html = report_html(a);
  const auto row = html.find("<td>start skew</td>");
  ASSERT_NE(row, std::string::npos);
  EXPECT_EQ(html.substr(row, html.find("</tr>", row) - row), "<td>start skew</td><td>2.50 ms (from the capture)</td>");
  EXPECT_NE(html.find("<td>degraded</td><td>senders started 2.5 ms apart"), std::string::npos);
  const auto dir = std::filesystem::temp_directory_path() / ("rlr-skew-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(write_report(dir.string(), a).ok());
  const auto j = nlohmann::json::parse(read_text((dir / "report.json").string()));
  std::filesystem::remove_all(dir);
  EXPECT_EQ(j["start_skew_ns"], 2'500'000);
  ASSERT_EQ(j["degraded_reasons"].size(), 1u);
}

}  // namespace
}  // namespace rocelab::experiments

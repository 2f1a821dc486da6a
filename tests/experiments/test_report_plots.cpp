// Every report's plots show their data (svg_geometry.hpp): each report kind (run, tuning,
// multi-run, compare, buffers, qualify) is generated from a twin run or synthetic inputs
// shaped like the cases users met, each <svg> in it is parsed, and the test fails when a
// data point lies under the legend or outside the axes, a series has no visible mark, or
// the legend's text does not fit its box. Beside that: what the reports colour, how they
// write sizes and durations, and how they name hosts.
#include "rocelab/experiments/report/report.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "correlation_scenarios.hpp"
#include "rocelab/experiments/buffers/buffers.hpp"
#include "rocelab/experiments/compare/compare.hpp"
#include "rocelab/experiments/qualify/qualify.hpp"
#include "rocelab/experiments/report/multi_run_report.hpp"
#include "rocelab/experiments/tuning/tuning_baselines.hpp"
#include "rocelab/experiments/tuning/tuning_report.hpp"
#include "svg_geometry.hpp"

namespace rocelab::experiments {
namespace {

namespace geometry = rocelab::testing::svg_geometry;

// The problems of every plot in `html`; `min_plots`: how many plots the page must hold.
void expect_plots_show_their_data(const std::string& html, std::size_t min_plots, const std::string& report) {
  const auto plots = geometry::parse(html);
  EXPECT_GE(plots.size(), min_plots) << report;
  for (const auto& p : plots) {
    for (const auto& problem : geometry::problems(p)) ADD_FAILURE() << report << ": " << problem;
    if (p.cls == "rl-plot") {
      EXPECT_FALSE(p.lines.empty()) << report << ": svg " << p.id << " has no series";
    }
  }
}

// The page, kept in the build tree for a person (or Chromium) to look at:
// build/report-plots/<name>.html.
void keep_page(const std::string& name, const std::string& html) {
  const std::filesystem::path dir = std::filesystem::path(ROCELAB_BINARY_DIR) / "report-plots";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / (name + ".html")) << html;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// ------------------------------------------------------------------ run report

run_analysis spreading_run() {
  auto t = scenarios::two_incasts_and_bystanders();
  // A queue as deep as the one a user saw printed "11247390B".
  t.records.queues.push_back({0, 1, 3, 1'000'000, 11'247'390});
  report_header h;
  h.run_id = "plots";
  const path_fn paths = paths_for_run(t.records, &t.config.topology, t.config.seed, h);
  return analyze_run(t.records, h, paths);
}

TEST(report_plots, run_report_plots_show_their_data) {
  const run_analysis a = spreading_run();
  const std::string html = report_html(a);
  expect_plots_show_their_data(html, 6, "run report");
  keep_page("run-report", html);
}

TEST(report_plots, run_report_writes_sizes_for_people_and_names_hosts_as_the_spec_counts_them) {
  const run_analysis a = spreading_run();
  const std::string html = report_html(a);
  EXPECT_EQ(html.find("11247390B"), std::string::npos);
  EXPECT_NE(html.find("The deepest queue reached 10.7 MiB"), std::string::npos);
  // Host i of the spec is hi: the victims table names each flow's ends by their index.
  ASSERT_FALSE(a.victims.victims.empty());
  const auto victims = html.substr(html.find("id=\"table-victims\""));
  for (const auto& v : a.victims.victims) {
    const auto& f = a.records.flows[v.flow];
    const std::string ends = "<td>h" + std::to_string(f.src) + "</td><td>h" + std::to_string(f.dst) + "</td>";
    EXPECT_NE(victims.find(ends), std::string::npos) << ends;
  }
  // A host's NIC is named the same way where it pauses.
  EXPECT_EQ(html.find(">h16"), std::string::npos) << "16 hosts: h0 .. h15";
}

// ------------------------------------------------------------------ tuning report

// The user's tuning: PFC only with 17.7 s of pause time and the worst victim slowdown,
// the vendor defaults and trials with no pause at all, and trials with a little.
tuning_answer pfc_only_far_from_the_rest() {
  tuning_answer a;
  a.axes = {"victim.slowdown_p99", "paused_us"};
  auto point = [&](std::string label, std::string baseline, double x, double y, bool front) {
    pareto_point p;
    p.label = std::move(label);
    p.baseline = std::move(baseline);
    p.x = x, p.y = y, p.on_front = front;
    a.pareto.push_back(std::move(p));
  };
  point("pfc_only", pfc_only_baseline, 9.5, 17'674'000, true);
  point("vendor_default", vendor_default_baseline, 3.1, 0, false);
  for (int i = 0; i < 12; ++i)
    point("trial " + std::to_string(i), "", 1.5 + 0.3 * i, i < 4 ? 0.0 : 40.0 * i * i, i == 0 || i == 4);
  config_evaluation pfc, vendor;
  pfc.name = pfc.baseline = pfc_only_baseline;
  pfc.scored.objective = 9.5;
  vendor.name = vendor.baseline = vendor_default_baseline;
  vendor.scored.objective = 3.1;
  a.baselines = {pfc, vendor};
  a.best_label = "trial 0";
  a.best_trial = 0;
  a.best_objective = 1.5;
  a.best_ci = {5, 1.52, 0.1, 0.12, 1.4, 1.64};
  a.baseline_ci[pfc_only_baseline] = {5, 9.4, 0.3, 0.37, 9.03, 9.77};
  a.baseline_ci[vendor_default_baseline] = {5, 3.0, 0.2, 0.25, 2.75, 3.25};
  a.vs_baseline_ci[pfc_only_baseline] = {5, -7.88, 0.3, 0.37, -8.25, -7.51};
  a.vs_baseline_ci[vendor_default_baseline] = {5, -1.48, 0.2, 0.25, -1.73, -1.23};
  return a;
}

TEST(report_plots, tuning_report_plots_show_their_data) {
  const tuning_answer a = pfc_only_far_from_the_rest();
  const std::string html = tuning_report_html("incast", tuning_settings{}, a);
  expect_plots_show_their_data(html, 1, "tuning report");
  keep_page("tuning-report", html);
  const std::string svg = pareto_svg(a);
  EXPECT_NE(svg.find("(log; 0 at the floor)"), std::string::npos) << "17.7 s beside zeros: a log axis with a floor";
  EXPECT_NE(svg.find(">vendor_default</text>"), std::string::npos);
  EXPECT_NE(svg.find(">pfc_only (on the front)</text>"), std::string::npos) << "the legend text whole";
  EXPECT_NE(svg.find(" s</text>"), std::string::npos) << "pause time ticks in seconds";
  EXPECT_NE(html.find("class=\"l good\""), std::string::npos) << "trial 0 beats both baselines beyond their CIs";
}

TEST(report_plots, tuning_report_shades_the_best_only_beyond_the_paired_interval) {
  tuning_answer a = pfc_only_far_from_the_rest();
  a.vs_baseline_ci[vendor_default_baseline] = {5, -0.2, 0.3, 0.37, -0.57, 0.17};
  const std::string html = tuning_report_html("incast", tuning_settings{}, a);
  EXPECT_EQ(html.find("class=\"l good\""), std::string::npos) << "the vendor defaults are within the interval";
  EXPECT_NE(html.find("trial 0 (best)"), std::string::npos) << "still named the best";
}

// ------------------------------------------------------------------ multi-run report

// A run of 8 flows of one size (one bucket of slowdown by size: a one-point series).
report_run one_size_run(const std::string& id, double factor) {
  report_run r;
  r.id = id;
  r.name = "incast";
  r.backend = "twin";
  r.status = "completed";
  for (int i = 0; i < 8; ++i) {
    flow_record f;
    f.kind = workload_kind::incast;
    f.bytes = 1 << 20;
    f.ideal_fct_ns = 100'000;
    f.fct_ns = static_cast<std::int64_t>(100'000 * factor * (1 + i * 0.1));
    f.end_ns = f.fct_ns;
    r.flows.push_back(f);
  }
  run_records rec;
  rec.flows = r.flows;
  rec.totals.paused_ns = 2'000'000;
  rec.totals.pfc_pause_frames = 2000;
  r.summary = summarize({&rec}, {1});
  return r;
}

TEST(report_plots, multi_run_report_plots_show_their_data) {
  const std::string html = multi_run_html({one_size_run("1", 4.0), one_size_run("2", 2.0), one_size_run("3", 1.5)});
  expect_plots_show_their_data(html, 2, "multi-run report");
  const auto at = html.find("id=\"slowdown-by-size\"");
  ASSERT_NE(at, std::string::npos);
  const std::string slowdown = html.substr(at, html.find("</svg>", at) - at);
  EXPECT_EQ(count(slowdown, "class=\"point\""), 3u) << "one marker per run's one bucket";
}

// Three twin runs on the two-leaf fabric: a 6-to-1 incast of mixed sizes with bystanders,
// a 3-to-1 one, and one flow alone.
report_run twin_run(const std::string& id, const std::string& name, std::uint32_t senders) {
  std::vector<fabric::twin::message> m;
  const std::uint64_t sizes[] = {4 * 1024, 64 * 1024, 1024 * 1024};
  for (std::uint32_t s = 0; s < senders; ++s)
    for (const auto bytes : sizes) m.push_back(scenarios::msg(s, 8, bytes));
  if (senders > 1) {
    m.push_back(scenarios::msg(6, 12, 16 * 1024));
    m.push_back(scenarios::msg(7, 13, 256 * 1024));
  }
  const auto t = scenarios::run(m);
  report_run r;
  r.id = id;
  r.name = name;
  r.backend = "twin";
  r.status = "completed";
  r.flows = t.records.flows;
  r.summary = summarize({&t.records}, {t.config.seed});
  return r;
}

TEST(report_plots, multi_run_report_of_twin_runs_plots_show_their_data) {
  const std::string html = multi_run_html(
      {twin_run("1", "6-to-1 incast", 6), twin_run("2", "3-to-1 incast", 3), twin_run("3", "one flow alone", 1)});
  expect_plots_show_their_data(html, 2, "multi-run report of twin runs");
  keep_page("multi-run-report", html);
}

TEST(report_plots, multi_run_report_does_not_colour_changes_within_noise) {
  const std::string html = multi_run_html({one_size_run("1", 2.0), one_size_run("2", 2.004)});
  EXPECT_NE(html.find("(+0.2%)"), std::string::npos) << html;
  EXPECT_EQ(html.find("class=good"), std::string::npos);
  EXPECT_EQ(html.find("class=bad"), std::string::npos);
  const std::string apart = multi_run_html({one_size_run("1", 2.0), one_size_run("2", 3.0)});
  EXPECT_NE(apart.find("class=bad"), std::string::npos) << "50% slower is worse";
}

// ------------------------------------------------------------------ compare report

fabric_metrics fabric(const std::string& name, const std::string& link, double fct_scale) {
  fabric_metrics m;
  m.fabric = name;
  m.profile = name;
  m.link = link;
  m.routing = "ecmp";
  m.congestion = link == "uec" ? "none" : "dcqcn";
  m.has_allreduce = true;
  m.busbw_gbps = link == "uec" ? 370 : 360;
  m.algbw_gbps = m.busbw_gbps / 2;
  m.allreduce_time_ns = 1.2e6;
  m.has_incast = true;
  for (int i = 1; i <= 16; ++i) m.incast_fct_us.push_back(fct_scale * (100 + i * i * 30));
  m.incast_fct_p50_ns = static_cast<std::int64_t>(m.incast_fct_us[7] * 1e3);
  m.incast_fct_p99_ns = static_cast<std::int64_t>(m.incast_fct_us[15] * 1e3);
  m.cost.per_gpu_usd = 2000;
  m.cost.total_usd = 64000;
  m.usd_per_busbw_gbps = m.cost.per_gpu_usd / m.busbw_gbps;
  return m;
}

compare_result roce_against_uec() {
  compare_result r;
  r.name = "incast";
  r.hosts = 32;
  r.link_gbps = 400;
  fabric_metrics roce = fabric("roce-tuned", "roce", 1.0), uec = fabric("uec", "uec", 1.3);
  roce.paused_ns = 17'000'000, roce.pause_frames = 4000, roce.pause_intervals = 300;
  uec.retransmits = 193, uec.trims = 193;
  r.fabrics = {roce, uec};
  for (const std::uint32_t hosts : {16u, 128u, 1024u}) {
    scale_point p;
    p.hosts = hosts;
    p.allreduce_bytes = 64 << 20;
    p.busbw_gbps = {{"roce-tuned", 350.0 - hosts / 20.0}, {"uec", 365.0 - hosts / 40.0}};
    p.usd_per_busbw_gbps = {{"roce-tuned", 5.5}, {"uec", 6.0}};
    p.cheapest = "roce-tuned";
    r.scale.push_back(p);
  }
  return r;
}

// The cells of the row whose header is `label`.
std::string row_of(const std::string& html, const std::string& label) {
  const auto at = html.find("<tr><th>" + label + "</th>");
  if (at == std::string::npos) return "";
  return html.substr(at, html.find("</tr>", at) - at);
}

TEST(report_plots, compare_report_plots_show_their_data) {
  const std::string html = compare_html(roce_against_uec());
  expect_plots_show_their_data(html, 3, "compare report");
  keep_page("compare-report", html);
}

TEST(report_plots, compare_report_never_shades_a_nonzero_beside_a_zero_or_a_zero_as_best) {
  const std::string html = compare_html(roce_against_uec());
  const std::string loss = row_of(html, "drops / trims / retransmits");
  ASSERT_FALSE(loss.empty()) << html;
  EXPECT_EQ(loss.find("class=best"), std::string::npos) << "UEC's 193 beside RoCE's 0: " << loss;
  const std::string paused = row_of(html, "paused or credit-stalled (summed over ports)");
  ASSERT_FALSE(paused.empty());
  EXPECT_EQ(paused.find("class=best"), std::string::npos) << "a zero pause time is not shaded best: " << paused;
  EXPECT_NE(paused.find("17.0 ms"), std::string::npos) << paused;
  EXPECT_EQ(row_of(html, "all-reduce busbw (Gb/s, \u00b1 95% CI)").find("class=best"), std::string::npos) << "370 and 360: within 5%";
  EXPECT_NE(row_of(html, "incast FCT p99 (pooled; \u00b1 95% CI of the per-seed p99)").find("class=best"), std::string::npos) << "30% apart: the best is shaded";
}

// ------------------------------------------------------------------ buffers report

buffers_result two_profiles() {
  buffers_result r;
  r.spec_name = "incast";
  r.incast_flow_bytes = 256 * 1024;
  r.p99_target_ns = 800'000;
  for (const auto& [name, buffer] : {std::pair{std::string("shallow-buffer switch"), std::int64_t{12} << 20},
                                     std::pair{std::string("deep-buffer switch with a long name"), std::int64_t{8} << 30}}) {
    profile_buffers p;
    p.profile = name;
    p.ports = 32, p.port_gbps = 400;
    p.buffer_bytes = buffer;
    p.buffer_per_port_bytes = buffer / 32;
    p.headroom.per_pg_bytes = 150'000;
    p.headroom.reserved_bytes = buffer > (1 << 30) ? 0 : 9'600'000;
    p.max_degree_searched = 64;
    p.lossless_degree_pfc = buffer > (1 << 30) ? 64 : 24;
    p.lossless_degree_no_pfc = buffer > (1 << 30) ? 64 : 6;
    p.target = target_outcome::met;
    p.buffer_for_target_bytes = 24 << 20;
    for (int i = 0; i < 6; ++i) {
      buffer_probe probe;
      probe.search = "buffer_for_target";
      probe.degree = 16;
      probe.buffer_bytes = (std::int64_t{2} << 20) << i;
      probe.seeds = 3;
      probe.pfc = true;
      probe.fct_p99_ns = std::int64_t{3'000'000} >> i;
      p.probes.push_back(probe);
    }
    r.profiles.push_back(p);
  }
  return r;
}

TEST(report_plots, buffers_report_plots_show_their_data) {
  const std::string html = buffers_html(two_profiles());
  expect_plots_show_their_data(html, 3, "buffers report");
  keep_page("buffers-report", html);
  EXPECT_NE(html.find("(log; 0 at the floor)"), std::string::npos) << "no headroom beside 9 MB: zero at the floor";
}

// ------------------------------------------------------------------ qualify report

qualify_result ecn_curve() {
  qualify_result r;
  r.target = "soft switch";
  r.checks.push_back({"pfc.xoff_threshold", "XOFF at the configured depth", "bytes", 11'247'390, 11'247'000, 4096,
                      true, ""});
  r.ecn = {true, 20 * 1024, 200 * 1024, 0.2};
  for (int i = 0; i <= 10; ++i) {
    ecn_point p;
    p.depth_bytes = i * 24 * 1024;
    p.samples = 1000;
    const double d = static_cast<double>(p.depth_bytes);
    p.expected = d <= 20 * 1024 ? 0 : d >= 200 * 1024 ? 1 : 0.2 * (d - 20 * 1024) / (180 * 1024);
    p.measured = p.expected;
    p.ci_low = std::max(0.0, p.expected - 0.05), p.ci_high = std::min(1.0, p.expected + 0.05);
    p.pass = true;
    r.ecn_curve.push_back(p);
  }
  return r;
}

TEST(report_plots, qualify_report_plots_show_their_data) {
  const std::string html = qualify_html(ecn_curve());
  expect_plots_show_their_data(html, 1, "qualify report");
  keep_page("qualify-report", html);
  EXPECT_EQ(html.find("11247390"), std::string::npos);
  EXPECT_NE(html.find("10.73 MiB"), std::string::npos) << html;
}

}  // namespace
}  // namespace rocelab::experiments

#pragma once
// The run report (`rocelab report RUN`): the correlation of one run (correlation.hpp,
// victims.hpp, attribution.hpp) as a self-contained HTML page with inline SVG plots (no
// scripts, no external assets) and the same tables as CSV and JSON.
//
// The page: a summary; FCT CDF per workload kind; slowdown by flow size; slowdown against
// pause exposure; the pause timeline per (device, port, priority) with each source
// named; queue depth over time; CE marks and CNPs over time; and the tables: pause
// sources, paused ports, PFC storms, victims and where they were paused, the attribution
// of the slowest flows, the rank correlations with slowdown, and the slowest flows with
// their per-hop figures.
//
// Files written by write_report into a directory:
//   report.html, report.json (everything below in one object), flows.csv (one row per
//   flow), hops.csv (one row per flow and hop), pauses.csv (every interval with its
//   source, counter-derived ones included), ports.csv, storms.csv, victims.csv,
//   attribution.csv, correlations.csv.

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rocelab/common/output_file.hpp"
#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/experiments/analysis/attribution.hpp"
#include "rocelab/experiments/analysis/correlation.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/analysis/victims.hpp"

namespace rocelab::experiments {

struct report_options {
  correlation_options correlation;
  victim_options victims;
  attribution_options attribution;
  storm_options storms;
  counter_pause_options counter_pauses;
  std::size_t max_flow_rows = 50;       // slowest flows listed in the HTML table (CSV: all)
  std::size_t max_timeline_rows = 32;   // most-paused ports in the pause timeline
  std::size_t max_queue_series = 8;     // deepest queues in the queue plot
  std::size_t max_scatter_points = 5000;  // flows drawn in scatter plots (evenly thinned)
  std::size_t time_bins = 100;          // bins of the marks/CNPs plot
};

// What the report says about the run and how its paths were found.
struct report_header {
  std::string run_id;
  std::string name;
  std::string backend;
  std::string status;       // the store's run status, when known
  std::string path_source;  // "twin routing", "single-switch layout", or why paths are unknown
  std::vector<std::string> notes;  // shown under the summary (what was estimated, what is missing)
  // Sim-to-real: the twin's prediction for this run's configuration (summary JSON, as
  // `rocelab tune --verify` stores it with the measured run), shown beside the measurement
  // (sim_to_real.hpp: p50/p99 FCT and pause time within 15%, or the terms that differ).
  std::string predicted_summary_json;
  std::string prediction_method;  // how the prediction was made, for the reader ("replayed ...")
  // The twin's per-flow transmit timelines of that replay (flow_timeline.hpp samples),
  // drawn beside this run's; empty: none stored.
  std::vector<counter_sample> predicted_flow_timeline;
  // Other runs to show beside this one (the baselines of a tuning, the runs it is compared
  // with): a label and the run's summary JSON (summary.hpp) each.
  std::vector<std::pair<std::string, std::string>> comparisons;
  // The switch and NIC settings the run used (spec path, value, the spec's default), filled
  // from the run's spec by analyze_run_with_spec.
  std::vector<std::array<std::string, 3>> configuration;
  // Files kept with the run (the virtual lab's capture.pcapng), linked from the page: a
  // label and a path relative to the report's directory or absolute.
  std::vector<std::pair<std::string, std::string>> files;
};

struct run_analysis {
  report_header header;
  run_records records;                   // the run's records, pauses extended by counter-derived ones
  counter_pause_result counter_pauses;
  std::vector<flow_correlation> flows;
  victim_analysis victims;
  std::vector<flow_attribution> tail;
  std::vector<rank_correlation> correlations;
  std::vector<port_pause_summary> ports;
  std::vector<pfc_storm> storms;
  flow_stats stats;
  std::map<std::string, flow_stats> by_kind;
  bool marks_from_events = false;        // marks/CNPs over time from congestion_event records, else estimated
};

// Correlates the run. `paths` may be empty (per-hop figures and victims are then left
// out, and the header says so).
[[nodiscard]] run_analysis analyze_run(run_records records, report_header header, const path_fn& paths,
                                       const report_options& options = {});

// The paths of a run by its backend and devices: the twin's routing when `topology` is
// given (twin runs), else a single-switch layout inferred from the device names; sets
// header.path_source either way.
[[nodiscard]] path_fn paths_for_run(const run_records& records, const fabric::twin::topology_config* topology,
                                    std::uint64_t seed, report_header& header);

// The link, switch and NIC settings of `spec` as the report states them (spec path, value,
// the spec's default), in the field table's order.
[[nodiscard]] std::vector<std::array<std::string, 3>> run_configuration(const experiment_spec& spec);

// The analysis of a run whose resolved spec is known (the run store keeps it with every
// run): the spec's RoCE MTU and link speeds set the CE fraction, the ports' drain rates
// and the retransmission cost; twin runs get the twin's routing for the run's seed,
// other backends the single-switch layout. An empty or unreadable spec leaves the
// defaults and inferred paths, and the notes say so.
[[nodiscard]] run_analysis analyze_run_with_spec(run_records records, report_header header, std::string_view spec_yaml,
                                                 std::uint64_t seed, report_options options = {});

[[nodiscard]] std::string report_html(const run_analysis& a, const report_options& options = {});
// file name -> contents, for every CSV and report.json.
[[nodiscard]] std::map<std::string, std::string> report_tables(const run_analysis& a);

// Creates `dir` and writes report.html and the tables (common/output_file.hpp: never
// through a symlink; with refuse, a directory holding one of them already is refused
// before any is written); errors name the file.
[[nodiscard]] status write_report(const std::string& dir, const run_analysis& a, const report_options& options = {},
                                  existing_output existing = existing_output::refuse);

}  // namespace rocelab::experiments

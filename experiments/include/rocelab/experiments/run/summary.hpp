#pragma once
// The summary of a run (or of its repeats pooled): flow completion times and slowdowns
// at percentiles, PFC/ECN/CNP totals and all-reduce bandwidth, as `rocelab run --json`
// prints it and summary.json stores it.
//
// Percentiles are nearest-rank (the p-th percentile of n sorted values is the value at
// rank ceil(p/100 x n), 1-based; p0 is the minimum): always an observed value, no
// interpolation, so p99 of 16 flows is the largest. Over completed flows only; flows
// that did not finish count in `flows` but not in `completed`.
// Slowdown = fct / ideal_fct (ideal: alone on an idle path), over completed flows with an
// ideal time.
// All-reduce: nccl-tests averages the time over iterations and derives the bandwidths
// from the mean time; so do we (algbw = bytes / mean time, busbw = algbw x 2(n-1)/n).

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"

namespace rocelab::experiments {

// Nearest-rank percentile of sorted values; 0 when empty.
[[nodiscard]] double percentile(std::span<const double> sorted, double p);
[[nodiscard]] std::int64_t percentile(std::span<const std::int64_t> sorted, double p);

struct flow_stats {
  std::uint64_t flows = 0;
  std::uint64_t completed = 0;
  std::int64_t fct_p50_ns = 0, fct_p99_ns = 0, fct_max_ns = 0;
  double slowdown_p50 = 0, slowdown_p99 = 0;
};

struct allreduce_stats {
  std::string algorithm;
  std::uint32_t ranks = 0;
  std::uint64_t bytes = 0;
  std::uint64_t iterations = 0;
  double time_mean_ns = 0;
  double algbw_gbps = 0, busbw_gbps = 0;
};

struct run_summary {
  std::vector<std::uint64_t> seeds;  // one per run pooled in
  flow_stats all;
  std::map<std::string, flow_stats> by_kind;  // "incast", "background", ...
  std::uint64_t pause_frames = 0;
  std::int64_t paused_ns = 0;
  std::uint64_t ce_marked = 0, cnp = 0, drops = 0, retransmits = 0;
  // false when a run pooled in did not measure them (run_totals): "cnp" / "retransmits"
  // are then null in the JSON, and objectives on them fail instead of reading 0.
  bool cnp_measured = true, retransmits_measured = true;
  std::optional<allreduce_stats> allreduce;
  std::int64_t simulated_ns = 0;  // the longest of the runs
  // Why the results are not the fabric's behaviour (run_records::degraded of each run);
  // non-empty: "degraded": true and "degraded_reasons" in the JSON.
  std::vector<std::string> degraded;
  // The capture beside a virtual run: "capture_file" (the kept file's name in the run
  // directory, the first run's when pooled; absent when not kept) and "capture" {frames,
  // mirrored, loss} summed over the runs.
  std::optional<run_records::capture_info> capture;
  // Armed starts: "start_skew_ns", the spread (max - min) of the senders' start offsets
  // against the schedule, the largest of the runs pooled (0 on the twin, which starts on
  // schedule); "start_offsets_ns" {host: ns} and "start_source" of the first run that
  // measured them (run_records::start_offsets_ns).
  std::int64_t start_skew_ns = 0;
  std::map<std::string, std::int64_t> start_offsets_ns;
  std::string start_source;
  // "start_clock" and "start_clock_uncertainty_ns" (run_records::start_clock) when a run
  // measured its starts across hosts: the first such run's clock, the largest uncertainty.
  std::string start_clock;
  std::int64_t start_clock_uncertainty_ns = 0;
};

[[nodiscard]] flow_stats flow_statistics(std::span<const flow_record> flows);

// Pools the runs (one per seed) into one summary.
[[nodiscard]] run_summary summarize(const std::vector<const run_records*>& runs, const std::vector<std::uint64_t>& seeds);

struct summary_header {
  std::string run_id;
  std::string backend;
  std::string name;
};

// The summary object: run_id, backend, name, seeds, flows, completed, fct_ns {p50, p99,
// max}, slowdown {p50, p99}, pfc {pause_frames, paused_ns}, ecn {ce_marked}, cnp, drops,
// retransmits, allreduce {algbw_gbps, busbw_gbps, ...} when there was one, by_kind, and
// runs: the same fields for each repeat.
[[nodiscard]] std::string summary_json(const summary_header& header, const run_summary& aggregate,
                                       const std::vector<run_summary>& each);

// The summary back from its JSON (what a controller returns for a run): the pooled
// summary and each repeat's, as far as the JSON carries them (every field summary_json
// writes). Errors: not JSON, not an object.
struct parsed_summary {
  run_summary aggregate;
  std::vector<run_summary> each;
};
[[nodiscard]] result<parsed_summary> parse_summary_json(std::string_view text);

}  // namespace rocelab::experiments

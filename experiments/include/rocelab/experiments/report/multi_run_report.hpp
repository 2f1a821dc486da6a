#pragma once
// Several runs side by side (`rocelab report A B [C ...]`): one self-contained HTML page
// (inline SVG, no scripts) that overlays their FCT CDFs and their p99 slowdown by flow
// size, bars of their pause time, and a table of the key results (summary_metrics.hpp)
// with each run's change against the first; and the same table as JSON and CSV.
//
// Files written by write_multi_run_report into a directory: report.html, report.json
// ({runs: [{id, name, backend, status, overrides, results}], changes: [{metric, run,
// change, change_percent}]}), results.csv (metric, then one column per run).

#include <string>
#include <utility>
#include <vector>

#include "rocelab/common/output_file.hpp"
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/experiments/run/summary.hpp"

namespace rocelab::experiments {

struct report_run {
  std::string id;  // the store's run id, as the reader names it
  std::string name;
  std::string backend;
  std::string status;
  std::vector<std::pair<std::string, std::string>> overrides;  // spec path, value
  run_summary summary;
  std::vector<flow_record> flows;
};

// Flow-size buckets of the slowdown plot: powers of two of bytes; per bucket with a
// completed flow that has an ideal time, the bucket's geometric centre and the p99
// slowdown (nearest rank).
struct size_bucket {
  double bytes = 0;
  double slowdown_p99 = 0;
  std::size_t flows = 0;
};
[[nodiscard]] std::vector<size_bucket> slowdown_by_size(const std::vector<flow_record>& flows);

[[nodiscard]] std::string multi_run_html(const std::vector<report_run>& runs);
[[nodiscard]] std::string multi_run_json(const std::vector<report_run>& runs);
// Errors: fewer than two runs (invalid_argument); the directory or a file cannot be written;
// with refuse, one of the files exists already (common/output_file.hpp; nothing written).
[[nodiscard]] status write_multi_run_report(const std::string& dir, const std::vector<report_run>& runs,
                                            existing_output existing = existing_output::refuse);

}  // namespace rocelab::experiments

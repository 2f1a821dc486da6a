// rocelab report RUN [--db rocelab.db] [--out DIR]: correlates one run of the run store
// (pauses per hop of every flow, victims of PFC, attribution of the slowest flows, PFC
// storms) and writes its self-contained HTML report with the same tables as CSV and JSON.
// rocelab report A B [C ...]: the runs side by side instead (report/multi_run_report.hpp):
// FCT CDFs and slowdown by size overlaid, pause time, key results with their changes.
// Exit codes: 0 written; 1 the store or the output failed; 2 usage (no such run).
#include <cstdio>
#include <iostream>
#include <set>

#include "command.hpp"
#include "rocelab/common/output_file.hpp"
#include "number_checks.hpp"
#include "run_overrides.hpp"
#include "rocelab/common/units.hpp"
#include "rocelab/experiments/report/multi_run_report.hpp"
#include "rocelab/experiments/report/report.hpp"
#include "rocelab/experiments/run/flow_timeline.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::cli {
namespace {

struct report_args {
  std::vector<std::int64_t> runs;
  std::int64_t run = 0;
  std::string db = "rocelab.db";
  std::string out;
  bool force = false;  // --out: replace what is there
  double storm_ms = 200;
  double congested_kb = 32;
  double percentile = 99;
  std::vector<std::int64_t> vs;
};

// A directory named with --out is the user's: what is there is replaced only with --force.
// The default report-RUN is the run's own report, written again by each report of it.
existing_output report_outputs(const report_args& a) {
  return a.out.empty() || a.force ? existing_output::replace : existing_output::refuse;
}

// The summary JSON of a stored run, for the report's comparison table.
result<std::string> stored_summary_json(const store::run_store& store, const store::run_info& info) {
  auto records = store.load(info.id);
  if (!records) return records.error().with_context("loading run " + std::to_string(info.id));
  const experiments::run_summary s = experiments::summarize({&*records}, {info.seed});
  return experiments::summary_json({std::to_string(info.id), info.backend, info.name}, s, {});
}

// rocelab report A B [C ...]: the runs' flows and summaries side by side.
int side_by_side(const store::run_store& store, const report_args& a) {
  std::vector<experiments::report_run> runs;
  std::string dir = a.out;
  for (const std::int64_t id : a.runs) {
    auto info = store.run(id);
    if (!info) {
      std::cerr << "rocelab report: run " << id << ": " << info.error().message() << "\n";
      return info.error().code() == error_code::not_found ? 2 : 1;
    }
    auto records = store.load(id, store::load_parts::summary());
    if (!records) {
      std::cerr << "rocelab report: loading run " << id << ": " << records.error().message() << "\n";
      return 1;
    }
    experiments::report_run r;
    r.id = std::to_string(id);
    r.name = info->name;
    r.backend = info->backend;
    r.status = store::to_string(info->status);
    r.overrides = overrides_of(*info);
    r.summary = experiments::summarize({&*records}, {info->seed});
    r.flows = std::move(records->flows);
    runs.push_back(std::move(r));
    if (a.out.empty()) dir += (dir.empty() ? "report-" : "-") + std::to_string(id);
  }
  if (auto st = experiments::write_multi_run_report(dir, runs, report_outputs(a)); !st.ok()) {
    std::cerr << "rocelab report: " << st.message() << "\n";
    return 1;
  }
  for (const auto& r : runs)
    std::printf("run         %s (%s, %s, %s), fct p99 %s, slowdown p99 %.2f\n", r.id.c_str(), r.name.c_str(),
                r.backend.c_str(), r.status.c_str(),
                readable_duration(static_cast<double>(r.summary.all.fct_p99_ns)).c_str(), r.summary.all.slowdown_p99);
  std::printf("report      %s/report.html (side by side), report.json, results.csv\n", dir.c_str());
  return 0;
}

std::function<int()> setup_report(CLI::App& app) {
  auto a = std::make_shared<report_args>();
  app.description("Correlate a stored run's pauses, marks and queues with its flows and write the HTML report "
                  "(inline SVG, no external assets) plus CSV and JSON tables");
  app.add_option("RUN", a->runs,
                 "The run's id in the store (rocelab runs lists them); several ids: those runs side by side")
      ->required();
  app.add_option("--db", a->db, "The run store")->capture_default_str();
  app.add_option("--out", a->out, "Directory for report.html and the tables (default: report-RUN)");
  app.add_flag("--force", a->force,
               "--out: replace a report that is there already (without it such a directory is refused, nothing "
               "written); the default report-RUN is the run's own and is always replaced. Never writes through a "
               "symlink");
  app.add_option("--storm-ms", a->storm_ms,
                 "A port paused continuously for longer than this is a PFC storm (SONiC pfcwd detection_time)")
      ->capture_default_str()
      ->check(finite_in(1e-6, 1e9, "ms"));
  app.add_option("--congested-kb", a->congested_kb,
                 "A destination port is congested when its queue reaches this (KiB) with fan-in")
      ->capture_default_str()
      ->check(finite_in(0, 1e12, "KiB"));
  app.add_option("--vs", a->vs,
                 "Another stored run to show beside this one (repeatable); a tuning's baselines on the same "
                 "backend are shown without asking");
  app.add_option("--percentile", a->percentile, "Attribute flows at this slowdown percentile and above")
      ->capture_default_str()
      ->check(finite_in(0, 100, ""));
  return [a]() -> int {
    auto store = store::run_store::open(a->db, store::open_mode::read_only);
    if (!store.ok()) {
      std::cerr << "rocelab report: " << store.error().message() << "\n";
      return 1;
    }
    if (a->runs.size() > 1) return side_by_side(*store, *a);
    a->run = a->runs.front();
    auto info = store->run(a->run);
    if (!info.ok()) {
      std::cerr << "rocelab report: run " << a->run << ": " << info.error().message() << "\n";
      return info.error().code() == error_code::not_found ? 2 : 1;
    }
    auto records = store->load(a->run);
    if (!records.ok()) {
      std::cerr << "rocelab report: loading run " << a->run << ": " << records.error().message() << "\n";
      return 1;
    }
    experiments::report_options options;
    options.storms.threshold_ns = static_cast<std::int64_t>(a->storm_ms * 1e6);
    options.victims.congested_queue_bytes = static_cast<std::uint64_t>(a->congested_kb * 1024);
    options.attribution.percentile = a->percentile;
    experiments::report_header header;
    header.run_id = std::to_string(info->id);
    header.name = info->name;
    header.backend = info->backend;
    header.status = store::to_string(info->status);
    if (!info->error.empty()) header.notes.push_back("run " + header.status + ": " + info->error);
    if (auto p = info->parameters.find("sim_to_real.predicted"); p != info->parameters.end())
      header.predicted_summary_json = p->second;
    if (auto p = info->parameters.find("sim_to_real.method"); p != info->parameters.end())
      header.prediction_method = p->second;
    if (auto p = info->parameters.find("sim_to_real.predicted_flow_timeline"); p != info->parameters.end()) {
      if (auto t = experiments::parse_flow_timeline_json(p->second))
        header.predicted_flow_timeline = std::move(*t);
      else
        header.notes.push_back("the twin's replayed flow timelines are unreadable: " + t.error().message());
    }
    if (auto p = info->parameters.find("capture_file"); p != info->parameters.end())
      header.files.emplace_back("capture.pcapng", p->second);
    std::vector<store::run_info> beside;
    for (const std::int64_t id : a->vs) {
      auto other = store->run(id);
      if (!other) {
        std::cerr << "rocelab report: --vs " << id << ": " << other.error().message() << "\n";
        return other.error().code() == error_code::not_found ? 2 : 1;
      }
      beside.push_back(std::move(*other));
    }
    // A tuning's baselines on this run's backend and seed: the lab's re-checks name theirs
    // ("tuning.baseline"), the twin's runs carry a role ("baseline pfc_only").
    const auto baseline_of = [](const store::run_info& r) -> std::string {
      if (auto b = r.parameters.find("tuning.baseline"); b != r.parameters.end()) return b->second;
      if (auto role = r.parameters.find("tuning.role"); role != r.parameters.end() && role->second.starts_with("baseline "))
        return role->second.substr(9);
      return "";
    };
    if (info->sweep && baseline_of(*info).empty()) {
      auto all = store->runs();
      if (!all) {
        std::cerr << "rocelab report: " << all.error().message() << "\n";
        return 1;
      }
      std::set<std::string> seen;
      for (auto& r : *all)
        if (r.sweep == info->sweep && r.id != info->id && r.backend == info->backend && r.seed == info->seed &&
            r.status == store::run_status::completed && !baseline_of(r).empty() && seen.insert(baseline_of(r)).second)
          beside.push_back(std::move(r));
    }
    for (const auto& other : beside) {
      auto json = stored_summary_json(*store, other);
      if (!json) {
        std::cerr << "rocelab report: " << json.error().message() << "\n";
        return 1;
      }
      const std::string baseline = baseline_of(other);
      header.comparisons.emplace_back((baseline.empty() ? "run " : baseline + ", run ") + std::to_string(other.id),
                                      std::move(*json));
    }
    if (records->backend.empty()) records->backend = info->backend;
    const auto analysis = experiments::analyze_run_with_spec(std::move(records).value(), header, info->spec_yaml,
                                                             info->seed, options);
    const std::string dir = a->out.empty() ? "report-" + std::to_string(a->run) : a->out;
    if (auto st = experiments::write_report(dir, analysis, options, report_outputs(*a)); !st.ok()) {
      std::cerr << "rocelab report: " << st.message() << "\n";
      return 1;
    }
    std::printf("run         %lld (%s, %s, %s)\n", static_cast<long long>(info->id), info->name.c_str(),
                info->backend.c_str(), header.status.c_str());
    std::printf("flows       %llu, completed %llu, slowdown p50 %.2f p99 %.2f\n",
                static_cast<unsigned long long>(analysis.stats.flows),
                static_cast<unsigned long long>(analysis.stats.completed), analysis.stats.slowdown_p50,
                analysis.stats.slowdown_p99);
    std::printf("pauses      %zu intervals on %zu ports (%zu from counters), %zu storms\n",
                analysis.records.pauses.size(), analysis.ports.size(), analysis.counter_pauses.intervals.size(),
                analysis.storms.size());
    std::printf("victims     %zu flows; %zu congested destination ports\n", analysis.victims.victims.size(),
                analysis.victims.congested_ports.size());
    std::printf("paths       %s\n", analysis.header.path_source.c_str());
    for (const auto& n : analysis.header.notes) std::printf("note        %s\n", n.c_str());
    std::printf("report      %s/report.html\n", dir.c_str());
    return 0;
  };
}

}  // namespace

ROCELAB_COMMAND(report, setup_report);

}  // namespace rocelab::cli

// rocelab compare SPEC [--fabrics ib,roce-tuned,roce-default] [--set path=value]...
//                 [--compute-ms X] [--scale 64,128,...] [--out DIR] [--db FILE] [--json]:
// the fabric decision report. Runs the spec's workloads on the twin once per fabric
// (experiments/compare/compare.hpp), writes report.html and report.json into DIR (default
// runs/compare-<time>), stores every run in the run store (--db; by default DIR/rocelab.db
// with --out, else rocelab.db; --no-store to skip) and prints a table, or the JSON with --json.
// With --executor local|slurm --workers N [--slurm-opt K=V]... [--listen ADDR] the twin runs
// go to N workers (cli/sweep_executor.hpp), the scale sweep's N at a time; the report is
// the same as run here.
// Exit codes: 0 done; 1 a run or the store failed; 2 usage, spec or profile errors;
// 130 interrupted (--executor only).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "command.hpp"
#include "number_checks.hpp"
#include "output_files.hpp"
#include "progress_line.hpp"
#include "stop_signal.hpp"
#include "executor_flags.hpp"
#include "rocelab/cli/sweep_executor.hpp"
#include "rocelab/common/units.hpp"
#include "rocelab/experiments/compare/compare.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::cli {
namespace {

struct compare_args {
  executor_flags flags;
  std::string spec;
  std::string fabrics;
  std::vector<std::string> sets;
  std::optional<double> compute_ms;
  std::string scale;
  std::optional<std::uint32_t> seeds;
  std::string out;
  bool force = false;  // --out: replace outputs there
  std::string db;  // empty: rocelab.db, or DIR/rocelab.db with --out DIR
  bool no_store = false;
  bool json = false;
  bool quiet = false;  // no progress line
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

void print_table(const experiments::compare_result& r) {
  std::printf("%-28s", "");
  for (const auto& m : r.fabrics) std::printf("%18s", m.fabric.c_str());
  std::printf("\n");
  auto line = [&](const char* label, auto get) {
    std::printf("%-28s", label);
    for (const auto& m : r.fabrics) std::printf("%18s", get(m).c_str());
    std::printf("\n");
  };
  auto num = [](const char* f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return std::string(b);
  };
  // "value ±h": the metric's mean over the seeds and its 95% CI half width.
  auto with_ci = [&](const experiments::fabric_metrics& m, const char* metric, double scale) {
    const auto it = m.ci.find(metric);
    if (it == m.ci.end()) return std::string("-");
    return num("%.1f", it->second.mean / scale) + num(" \u00b1%.1f", it->second.half_width / scale);
  };
  line("allreduce busbw (Gb/s)", [&](const auto& m) { return with_ci(m, "allreduce.busbw_gbps", 1); });
  line("allreduce time (us)", [&](const auto& m) { return num("%.1f", m.allreduce_time_ns / 1e3); });
  line("link util mean/max", [&](const auto& m) {
    return num("%.0f%%", 100 * m.link_util_mean) + "/" + num("%.0f%%", 100 * m.link_util_max);
  });
  line("step communicating", [&](const auto& m) { return num("%.2f%%", 100 * m.comm_share); });
  line("incast FCT p50 (us)", [&](const auto& m) { return num("%.1f", m.incast_fct_p50_ns / 1e3); });
  line("incast FCT p99 (us)", [&](const auto& m) { return with_ci(m, "incast.fct_p99_ns", 1e3); });
  line("small msg FCT p99 (us)", [&](const auto& m) { return with_ci(m, "small.fct_p99_ns", 1e3); });
  line("paused/stalled (us)", [&](const auto& m) { return num("%.1f", m.paused_ns / 1e3); });
  line("drops / retransmits", [&](const auto& m) {
    return std::to_string(m.drops) + "/" + std::to_string(m.retransmits);
  });
  line("cost per GPU (USD)", [&](const auto& m) { return num("%.0f", m.cost.per_gpu_usd); });
  line("USD per GPU per Gb/s", [&](const auto& m) {
    const auto it = m.ci.find("usd_per_busbw_gbps");
    return it == m.ci.end() ? std::string("-") : num("%.2f", it->second.mean) + num(" \u00b1%.2f", it->second.half_width);
  });
  std::printf("(means over %u seeds per fabric, \u00b1 the 95%% CI half width; incast and small-message p99 per seed)\n",
              r.seeds);
  for (const auto& m : r.fabrics) std::printf("cost basis  %s: %s\n", m.fabric.c_str(), experiments::cost_basis_text(m.cost).c_str());
  for (const auto& v : r.verdicts) std::printf("verdict     %s\n", experiments::verdict_text(v, r.fabrics).c_str());
  for (const auto& p : r.scale) {
    std::printf("scale %5u hosts, all-reduce %s: ", p.hosts, format_size(p.allreduce_bytes).c_str());
    for (const auto& [f, bw] : p.busbw_gbps) std::printf("%s %.1f Gb/s ($%.2f/Gb/s)  ", f.c_str(), bw, p.usd_per_busbw_gbps.at(f));
    std::string tied;
    for (const auto& t : p.cheapest_tied) tied += " = " + t;
    std::printf("cheapest %s%s\n", p.cheapest.c_str(), tied.empty() ? "" : (tied + " (tie)").c_str());
  }
  for (const auto& c : r.crossovers) std::printf("crossover: %s\n", c.c_str());
}

std::function<int()> setup(CLI::App& app) {
  auto a = std::make_shared<compare_args>();
  app.description("RoCE or InfiniBand: run a spec on several fabrics and write the decision report");
  app.add_option("spec", a->spec, "experiment spec with an optional compare: section (examples/compare-fabrics.yaml)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--fabrics", a->fabrics, "comma-separated: ib, roce-tuned, roce-default, roce-deep, or profile names");
  app.add_option("--set", a->sets, "override a spec field: path=value; repeatable")->allow_extra_args(false);
  app.add_option("--compute-ms", a->compute_ms, "GPU compute time per training step, ms")
      ->check(finite_in(0, 1e9, "ms"));
  app.add_option("--seeds", a->seeds, "seeds per fabric and scenario (at least 3; the spec's repeats if more)")
      ->check(CLI::Range(3u, 1000u));
  app.add_option("--scale", a->scale, "scale sweep host counts, comma-separated (e.g. 64,128,256)");
  app.add_option("--out", a->out, "report directory (default runs/compare-<time>)");
  app.add_flag("--force", a->force, force_help);
  app.add_option("--db", a->db,
                 "run store the runs are written to (default rocelab.db; with --out, DIR/rocelab.db beside the report)");
  app.add_flag("--no-store", a->no_store, "do not write the runs to the run store");
  app.add_flag("--json", a->json, "print the report's JSON");
  app.add_flag("--quiet", a->quiet, "no progress line on a terminal");
  add_executor_flags(app, a->flags, "--executor: workers, and runs in flight (default 2)");
  return [a]() -> int {
    experiments::compare_settings settings;
    auto spec = experiments::load_compare_spec(a->spec, settings);
    if (!spec.ok()) {
      std::cerr << "rocelab compare: " << spec.error().message() << "\n";
      return 2;
    }
    for (const std::string& set : a->sets) {
      if (status st = experiments::apply_override(*spec, set); !st.ok()) {
        std::cerr << "rocelab compare: --set " << set << ": " << st.message() << "\n";
        return 2;
      }
    }
    if (!a->fabrics.empty()) settings.fabrics = split(a->fabrics);
    if (a->compute_ms) settings.compute_ms_per_step = *a->compute_ms;
    if (a->seeds) settings.seeds = *a->seeds;
    if (!a->scale.empty()) {
      settings.scale_hosts.clear();
      for (const auto& s : split(a->scale)) {
        try {
          settings.scale_hosts.push_back(static_cast<std::uint32_t>(std::stoul(s)));
        } catch (const std::exception&) {
          std::cerr << "rocelab compare: --scale: '" << s << "' is not a host count\n";
          return 2;
        }
      }
    }
    if (status st = experiments::load_profiles(settings); !st.ok()) {
      std::cerr << "rocelab compare: " << st.message() << "\n";
      return 2;
    }
    std::optional<store::run_store> db;
    if (!a->no_store) {
      // A comparison given its own directory keeps its runs there too.
      if (a->db.empty()) {
        a->db = "rocelab.db";
        if (!a->out.empty()) {
          std::error_code ec;
          std::filesystem::create_directories(a->out, ec);
          a->db = (std::filesystem::path(a->out) / "rocelab.db").string();
        }
      }
      auto opened = store::run_store::open(a->db);
      if (!opened.ok()) {
        std::cerr << "rocelab compare: " << opened.error().message() << "\n";
        return 1;
      }
      db.emplace(std::move(opened).value());
    }
    std::optional<stop_signal> stop;
    int executor_exit = 0;
    std::unique_ptr<sweep_executor> workers =
        start_executor(a->flags, "rocelab compare", db ? a->db : std::string(), stop, executor_exit);
    if (executor_exit != 0) return executor_exit;
    if (workers) {
      settings.runner = workers->runner();
      settings.parallelism = a->flags.workers;
      settings.cancel_requested = [&stop, &workers] { return stop->requested() || !workers->failure().empty(); };
    }
    // Each step on a terminal's status line; nothing in a pipe.
    progress_line progress(a->quiet || a->json);
    auto result = experiments::run_compare(*spec, settings, db ? &*db : nullptr, [&](const std::string& line) {
      progress.update(workers ? line + "  [" + workers->progress() + "]" : line, true);
    });
    progress.finish();
    if (auto ended = end_executor(workers, !result.ok(), "rocelab compare", stop, a->json,
                                  "interrupted; the runs already made are stored"))
      return *ended;
    if (!result.ok()) {
      std::cerr << "rocelab compare: " << result.error().message() << "\n";
      return result.error().code() == error_code::invalid_argument ? 2 : 1;
    }
    const std::string json = experiments::compare_json(*result);
    auto written = write_report_files(a->out, "compare", {{"report.json", json},
                                                          {"report.html", experiments::compare_html(*result)}},
                                      output_policy(a->out, a->force));
    if (!written.ok()) {
      std::cerr << "rocelab compare: " << written.error().message() << "\n";
      return 1;
    }
    const std::string& dir = *written;
    if (a->json) {
      std::cout << json << "\n";
    } else {
      print_table(*result);
      std::printf("report      %s/report.html, %s/report.json%s\n", dir.c_str(), dir.c_str(),
                  db ? (", runs in " + a->db).c_str() : "");
    }
    return 0;
  };
}

}  // namespace

ROCELAB_COMMAND(compare, setup);

}  // namespace rocelab::cli

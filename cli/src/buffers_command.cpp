// `rocelab buffers`: switch buffer validation for a workload across switch profiles
// (experiments/buffers/buffers.hpp), on the twin; with --executor local|slurm --workers N
// [--slurm-opt K=V]... [--listen ADDR] the twin runs go to workers (cli/sweep_executor.hpp)
// and the result is the same. Exit codes: 0 done; 1 a run failed; 2 usage; 130 interrupted
// (--executor only).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "command.hpp"
#include "output_files.hpp"
#include "progress_line.hpp"
#include "stop_signal.hpp"
#include "executor_flags.hpp"
#include "rocelab/cli/sweep_executor.hpp"
#include "rocelab/common/units.hpp"
#include "rocelab/experiments/buffers/buffers.hpp"

namespace rocelab::cli {
namespace {

struct buffers_args {
  std::string spec;
  std::vector<std::string> profiles;
  std::vector<std::string> sets;
  std::string p99_target;
  std::string max_buffer_factor;
  std::uint32_t max_degree = 0;
  std::uint32_t seeds = 3;
  std::string out;
  bool force = false;  // --out: replace outputs there
  bool json = false;
  bool quiet = false;  // no progress line
  executor_flags flags;
};

std::string size_text(std::int64_t bytes) {
  char b[64];
  if (bytes >= 16 * 1024 * 1024)
    std::snprintf(b, sizeof b, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  else
    std::snprintf(b, sizeof b, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  return b;
}

void print_table(const experiments::buffers_result& r) {
  // Each profile's column is as wide as its whole name (or its widest value) plus a gap:
  // names like "RoCEv2 shallow-buffer Ethernet" are never cut or run together.
  std::vector<int> width;
  for (const auto& p : r.profiles) width.push_back(static_cast<int>(std::max<std::size_t>(p.profile.size(), 24)) + 3);
  std::printf("%-34s", "");
  for (std::size_t i = 0; i < r.profiles.size(); ++i) std::printf("%*s", width[i], r.profiles[i].profile.c_str());
  std::printf("\n");
  auto line = [&](const char* label, auto text) {
    std::printf("%-34s", label);
    for (std::size_t i = 0; i < r.profiles.size(); ++i) std::printf("%*s", width[i], text(r.profiles[i]).c_str());
    std::printf("\n");
  };
  line("buffer", [](const auto& p) { return size_text(p.buffer_bytes); });
  line("headroom per port and PG", [](const auto& p) { return size_text(p.headroom.per_pg_bytes); });
  line("headroom reserved (share)", [](const auto& p) {
    return size_text(p.headroom.reserved_bytes) + " (" + std::to_string(static_cast<int>(100 * p.headroom.reserved_share + 0.5)) + "%)";
  });
  line("loss-free incast, PFC on", [](const auto& p) {
    return std::to_string(p.lossless_degree_pfc) + " of " + std::to_string(p.max_degree_searched);
  });
  line("loss-free incast, PFC off", [](const auto& p) { return std::to_string(p.lossless_degree_no_pfc); });
  if (r.p99_target_ns > 0) {
    line("p99 FCT at the profile's buffer", [](const auto& p) {
      for (const auto& q : p.shortfalls)
        if (q.search == "buffer_for_target" && q.buffer_bytes == p.buffer_bytes) return std::string("drops with PFC on");
      return std::to_string(p.p99_at_profile_ns / 1000) + " us" + (p.target_met_by_profile ? " (ok)" : " (over)");
    });
    line("buffer for the p99 target", [](const auto& p) { return experiments::target_text(p); });
  }
  for (const auto& p : r.profiles)
    if (!p.shortfalls.empty()) std::printf("%s: %s\n", p.profile.c_str(), experiments::shortfall_text(p).c_str());
  std::printf("seeds       %u pooled per probe\n", r.seeds_per_probe);
  if (r.p99_target_ns > 0) std::printf("method      %s\n", r.target_rule.c_str());
}

std::function<int()> setup(CLI::App& app) {
  auto a = std::make_shared<buffers_args>();
  app.description("Validate switch buffers for a workload: PFC headroom, loss-free incast degree, buffer for a p99 target");
  app.add_option("spec", a->spec, "experiment spec with an incast workload")->required()->check(CLI::ExistingFile);
  app.add_option("--profile", a->profiles, "switch profile YAML (examples/fabric-profiles/*.yaml); repeatable")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--set", a->sets, "override a spec field: path=value; repeatable")->allow_extra_args(false);
  app.add_option("--p99-target", a->p99_target, "p99 FCT target for the buffer search (e.g. 500us, 2ms)");
  app.add_option("--max-buffer-factor", a->max_buffer_factor, "search the buffer up to this x the profile's (8)");
  app.add_option("--max-degree", a->max_degree, "largest incast degree searched (default: radix - 1)");
  app.add_option("--seeds", a->seeds, "seeds pooled per probe (at least 3; the spec's repeats if more)")
      ->check(CLI::Range(3u, 1000u));
  app.add_option("--out", a->out, "report directory (default runs/buffers-<time>)");
  app.add_flag("--force", a->force, force_help);
  app.add_flag("--json", a->json, "print the result's JSON");
  app.add_flag("--quiet", a->quiet, "no progress line on a terminal");
  add_executor_flags(app, a->flags, "--executor: workers (default 2)");
  return [a]() -> int {
    auto spec = experiments::load_spec_file(a->spec);
    if (!spec.ok()) {
      std::cerr << "rocelab buffers: " << spec.error().message() << "\n";
      return 2;
    }
    for (const std::string& set : a->sets)
      if (status st = experiments::apply_override(*spec, set); !st.ok()) {
        std::cerr << "rocelab buffers: --set " << set << ": " << st.message() << "\n";
        return 2;
      }
    std::vector<experiments::fabric_profile_file> profiles;
    for (const std::string& path : a->profiles) {
      auto p = experiments::load_fabric_profile(path);
      if (!p.ok()) {
        std::cerr << "rocelab buffers: " << p.error().message() << "\n";
        return 2;
      }
      profiles.push_back(std::move(p).value());
    }
    experiments::buffers_settings settings;
    settings.max_degree = a->max_degree;
    settings.seeds_per_probe = a->seeds;
    if (!a->p99_target.empty()) {
      auto t = parse_duration_ns(a->p99_target);
      if (!t.ok()) {
        std::cerr << "rocelab buffers: --p99-target: " << t.error().message() << "\n";
        return 2;
      }
      settings.p99_target_ns = *t;
    }
    if (!a->max_buffer_factor.empty()) {
      try {
        settings.max_buffer_factor = std::stod(a->max_buffer_factor);
      } catch (const std::exception&) {
        std::cerr << "rocelab buffers: --max-buffer-factor: '" << a->max_buffer_factor << "' is not a number\n";
        return 2;
      }
    }
    std::optional<stop_signal> stop;
    int executor_exit = 0;
    std::unique_ptr<sweep_executor> workers =
        start_executor(a->flags, "rocelab buffers", std::string(), stop, executor_exit);
    if (executor_exit != 0) return executor_exit;
    if (workers) {
      settings.runner = workers->runner();
      settings.cancel_requested = [&stop, &workers] { return stop->requested() || !workers->failure().empty(); };
    }
    // Each step on a terminal's status line; nothing in a pipe.
    progress_line progress(a->quiet || a->json);
    auto result = experiments::validate_buffers(*spec, profiles, settings, [&](const std::string& line) {
      progress.update(workers ? line + "  [" + workers->progress() + "]" : line, true);
    });
    progress.finish();
    if (auto ended = end_executor(workers, !result.ok(), "rocelab buffers", stop, a->json, "interrupted"))
      return *ended;
    if (!result.ok()) {
      std::cerr << "rocelab buffers: " << result.error().message() << "\n";
      return result.error().code() == error_code::invalid_argument ? 2 : 1;
    }
    const std::string json = experiments::buffers_json(*result);
    auto written = write_report_files(a->out, "buffers", {{"buffers.json", json},
                                                          {"buffers.html", experiments::buffers_html(*result)}},
                                      output_policy(a->out, a->force));
    if (!written.ok()) {
      std::cerr << "rocelab buffers: " << written.error().message() << "\n";
      return 1;
    }
    const std::string& dir = *written;
    if (a->json) {
      std::cout << json << "\n";
    } else {
      print_table(*result);
      std::printf("report      %s/buffers.html, %s/buffers.json\n", dir.c_str(), dir.c_str());
    }
    return 0;
  };
}

}  // namespace

ROCELAB_COMMAND(buffers, setup);

}  // namespace rocelab::cli

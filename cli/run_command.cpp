// rocelab run SPEC.yaml [--set path=value]... [--json] [--out DIR]: runs an experiment
// spec on its backend and writes the run directory (records as CSV, summary.json and the
// resolved spec.yaml). Exit codes: 0 ran; 1 the run failed (I/O, backend); 2 usage or an
// invalid spec (the message names file:line and the field).
// rocelab run --hpcc config.txt [--json] [--out DIR]: runs a scenario of the HPCC ns-3
// simulator unchanged on the twin in compatibility mode, writing its fct.txt and pfc.txt
// into the run directory beside our records.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "command.hpp"
#include "rocelab/experiments/hpcc_ns3.hpp"
#include "rocelab/experiments/run_directory.hpp"
#include "rocelab/experiments/runner.hpp"
#include "rocelab/experiments/spec.hpp"
#include "rocelab/experiments/summary.hpp"

namespace rocelab::cli {
namespace {

struct run_args {
  std::string spec;
  std::string hpcc;
  std::vector<std::string> sets;
  bool json = false;
  std::string out;
  bool keep_lab = false;
};

void print_text(const std::string& run_id, const experiments::experiment_spec& spec,
                const experiments::run_summary& s, const std::string& dir) {
  std::printf("run         %s (%s%s%s)\n", run_id.c_str(), spec.backend.c_str(), spec.name.empty() ? "" : ", ",
              spec.name.c_str());
  std::printf("seeds       ");
  for (std::size_t i = 0; i < s.seeds.size(); ++i)
    std::printf("%s%llu", i ? "," : "", static_cast<unsigned long long>(s.seeds[i]));
  std::printf("\nflows       %llu, completed %llu\n", static_cast<unsigned long long>(s.all.flows),
              static_cast<unsigned long long>(s.all.completed));
  std::printf("fct         p50 %.3f us, p99 %.3f us, max %.3f us\n", static_cast<double>(s.all.fct_p50_ns) / 1e3,
              static_cast<double>(s.all.fct_p99_ns) / 1e3, static_cast<double>(s.all.fct_max_ns) / 1e3);
  std::printf("slowdown    p50 %.2f, p99 %.2f\n", s.all.slowdown_p50, s.all.slowdown_p99);
  for (const auto& [kind, k] : s.by_kind)
    if (s.by_kind.size() > 1)
      std::printf("  %-10s %llu flows, fct p50 %.3f us, p99 %.3f us, slowdown p50 %.2f, p99 %.2f\n", kind.c_str(),
                  static_cast<unsigned long long>(k.flows), static_cast<double>(k.fct_p50_ns) / 1e3,
                  static_cast<double>(k.fct_p99_ns) / 1e3, k.slowdown_p50, k.slowdown_p99);
  std::printf("pfc         %llu pause frames, %.3f us paused\n", static_cast<unsigned long long>(s.pause_frames),
              static_cast<double>(s.paused_ns) / 1e3);
  std::printf("ecn         %llu CE-marked, %llu CNPs\n", static_cast<unsigned long long>(s.ce_marked),
              static_cast<unsigned long long>(s.cnp));
  std::printf("loss        %llu drops, %llu retransmits\n", static_cast<unsigned long long>(s.drops),
              static_cast<unsigned long long>(s.retransmits));
  if (s.allreduce)
    std::printf("allreduce   %s, %u ranks, %llu bytes, %llu iterations: algbw %.2f Gb/s, busbw %.2f Gb/s\n",
                s.allreduce->algorithm.c_str(), s.allreduce->ranks,
                static_cast<unsigned long long>(s.allreduce->bytes),
                static_cast<unsigned long long>(s.allreduce->iterations), s.allreduce->algbw_gbps,
                s.allreduce->busbw_gbps);
  std::printf("simulated   %.3f us\n", static_cast<double>(s.simulated_ns) / 1e3);
  std::printf("records     %s\n", dir.c_str());
}

status write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return status::from_errno("writing " + path);
  return status::success();
}

int run_hpcc(const run_args& args) {
  auto scenario = experiments::load_hpcc_scenario(args.hpcc);
  if (!scenario) {
    std::cerr << "rocelab run: " << scenario.error().message() << "\n";
    return 2;
  }
  for (const auto& note : scenario->notes) std::cerr << "rocelab run: note: " << note << "\n";
  auto records = experiments::run_hpcc_scenario(*scenario);
  if (!records) {
    std::cerr << "rocelab run: " << records.error().message() << "\n";
    return 1;
  }
  const std::string run_id = experiments::make_run_id(std::chrono::system_clock::now(), std::random_device{}());
  const std::uint64_t seed = scenario->config.seed;
  const experiments::run_summary summary = experiments::summarize({&*records}, {seed});
  const std::string json = experiments::summary_json({run_id, "twin", "hpcc-ns3:" + args.hpcc}, summary, {summary});
  const std::string dir = args.out.empty() ? "runs/" + run_id : args.out;
  const std::string header = "# Run " + run_id + ": HPCC ns-3 scenario " + args.hpcc +
                             " on the twin in compatibility mode (no rocelab spec)\n";
  if (auto st = experiments::write_run_directory(dir, {header, json, {seed}, {&*records}}); !st.ok()) {
    std::cerr << "rocelab run: " << st.message() << "\n";
    return 1;
  }
  // The simulator's own output files, named as its config names them.
  const auto name_of = [](const std::string& configured, const char* fallback) {
    return configured.empty() ? std::string(fallback) : std::filesystem::path(configured).filename().string();
  };
  for (auto [name, text] : {std::pair{name_of(scenario->fct_output, "fct.txt"), experiments::format_hpcc_fct(*scenario, *records)},
                            std::pair{name_of(scenario->pfc_output, "pfc.txt"), experiments::format_hpcc_pfc(*scenario, *records)}})
    if (auto st = write_text(dir + "/" + name, text); !st.ok()) {
      std::cerr << "rocelab run: " << st.message() << "\n";
      return 1;
    }
  if (args.json) {
    std::cout << json << "\n";
  } else {
    experiments::experiment_spec shown;
    shown.backend = "twin";
    shown.name = "hpcc-ns3 " + args.hpcc;
    print_text(run_id, shown, summary, dir);
  }
  return 0;
}

std::function<int()> setup(CLI::App& app) {
  auto args = std::make_shared<run_args>();
  app.description("Run an experiment spec (YAML) and write its run directory");
  app.add_option("spec", args->spec, "experiment spec (see examples/)")->check(CLI::ExistingFile);
  app.add_option("--hpcc", args->hpcc, "run an HPCC ns-3 scenario (its config.txt) unchanged, in compatibility mode")
      ->check(CLI::ExistingFile);
  app.add_option("--set", args->sets, "override a field: path=value (e.g. switch.ecn.kmin_bytes=20KiB); repeatable")
      ->allow_extra_args(false);
  app.add_flag("--json", args->json, "print the summary as one JSON object");
  app.add_option("--out", args->out, "run directory (default runs/<run_id>)");
  app.add_flag("--keep-lab", args->keep_lab,
               "backend virtual: leave the lab this run brought up (lab 'run') running afterwards");
  return [args] {
    if (args->spec.empty() == args->hpcc.empty()) {
      std::cerr << "rocelab run: give a spec file or --hpcc config.txt (one of them)\n";
      return 2;
    }
    if (!args->hpcc.empty()) {
      if (!args->sets.empty()) {
        std::cerr << "rocelab run: --set applies to specs; edit the HPCC config.txt instead\n";
        return 2;
      }
      return run_hpcc(*args);
    }
    auto spec = experiments::load_spec_file(args->spec);
    if (!spec) {
      std::cerr << "rocelab run: " << spec.error().message() << "\n";
      return 2;
    }
    for (const std::string& set : args->sets)
      if (auto st = experiments::apply_override(*spec, set); !st.ok()) {
        std::cerr << "rocelab run: " << st.message() << "\n";
        return 2;
      }
    if (auto st = experiments::validate(*spec); !st.ok()) {
      std::cerr << "rocelab run: " << st.message() << "\n";
      return 2;
    }

    const std::string run_id = experiments::make_run_id(std::chrono::system_clock::now(), std::random_device{}());
    const std::uint32_t repeats = spec->repeats;
    experiments::virtual_backend_options virtual_options;
    virtual_options.keep_lab = args->keep_lab;
    auto ran = experiments::run_experiment(
        *spec,
        [&](std::uint32_t i, std::uint64_t seed) {
          if (repeats > 1) std::cerr << "rocelab run: repeat " << i + 1 << "/" << repeats << " (seed " << seed << ")\n";
        },
        virtual_options);
    if (!ran) {
      std::cerr << "rocelab run: " << ran.error().message() << "\n";
      return ran.error().code() == error_code::invalid_argument ? 2 : 1;
    }

    std::vector<const run_records*> all;
    std::vector<experiments::run_summary> each;
    for (std::size_t i = 0; i < ran->repeats.size(); ++i) {
      all.push_back(&ran->repeats[i]);
      each.push_back(experiments::summarize({&ran->repeats[i]}, {ran->seeds[i]}));
    }
    const experiments::run_summary aggregate = experiments::summarize(all, ran->seeds);
    const std::string json = experiments::summary_json({run_id, spec->backend, spec->name}, aggregate, each);

    std::string header = "# Resolved spec of run " + run_id + " from " + args->spec;
    for (const std::string& set : args->sets) header += " --set " + set;
    const std::string dir = args->out.empty() ? "runs/" + run_id : args->out;
    if (auto st = experiments::write_run_directory(
            dir, {header + "\n" + experiments::to_yaml(*spec), json, ran->seeds, all});
        !st.ok()) {
      std::cerr << "rocelab run: " << st.message() << "\n";
      return 1;
    }
    if (args->json) {
      std::cout << json << "\n";
    } else {
      print_text(run_id, *spec, aggregate, dir);
    }
    return 0;
  };
}

}  // namespace

ROCELAB_COMMAND(run, setup);

}  // namespace rocelab::cli

// rocelab run SPEC.yaml [--set path=value]... [--json] [--out DIR] [--force]: runs an
// experiment spec on its backend and writes the run directory (records as CSV,
// summary.json, the resolved spec.yaml, and records.db: the run as the store keeps it, for
// `runs import`). An --out DIR holding a run directory's files is refused before the run
// unless --force; no file is written through a symlink. A run the store cannot keep (a
// full disk) still writes its directory and exits 1 saying so. Exit codes: 0 ran,
// completed; 1 the run failed (I/O, backend, the store); 2 usage
// or an invalid spec (the message names file:line and the field); 3 ran, but the store keeps
// it partial (store/run_ending.hpp: "partial: 0 of 16 flows completed"), directory written;
// 130 interrupted.
// Every spec run goes through a controller into the run store: without
// --controller an embedded one (store --db, default rocelab.db in the working directory);
// with --controller ADDR --token-file F the spec is submitted to that running controller,
// which stores it (the run directory is then not written here; the records are in its
// store). The JSON summary carries the store's run id as store_run_id.
// rocelab run --hpcc config.txt [--json] [--out DIR]: runs a scenario of the HPCC ns-3
// simulator unchanged on the twin in compatibility mode, writing its fct.txt and pfc.txt
// into the run directory beside our records.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "number_checks.hpp"
#include "output_files.hpp"
#include "progress_line.hpp"
#include "run_progress_text.hpp"
#include "run_records_file.hpp"
#include "stop_signal.hpp"
#include "rocelab/cli/in_process_agents.hpp"
#include "rocelab/common/units.hpp"
#include "rocelab/controller/client.hpp"
#include "rocelab/controller/controller.hpp"
#include "rocelab/experiments/run/run_directory.hpp"
#include "rocelab/experiments/run/backend_traits.hpp"
#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/spec/hpcc_ns3.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/spec/spec_files.hpp"
#include "rocelab/protocol/security.hpp"
#include "rocelab/store/run_ending.hpp"
#include "rocelab/store/whole_run.hpp"
#include "rocelab/traffic/soft_nic/nic_fleet.hpp"

namespace rocelab::cli {
namespace {

// A run the store keeps as partial (fewer flows completed than it has, or a host lost):
// its records, directory and summary are written, and scripts learn it is not whole.
constexpr int partial_exit_status = 3;

struct run_args {
  std::string spec;
  std::string hpcc;
  std::vector<std::string> sets;
  bool json = false;
  bool quiet = false;  // no progress line
  std::string out;
  bool force = false;  // --out: replace the outputs there
  bool keep_lab = false;
  bool no_capture_file = false;
  bool capture_libpcap = false;
  std::string controller;
  std::string token_file;
  double reconnect_s = 60;
  std::string db = "rocelab.db";
  bool db_given = false;  // with --controller: the controller's store, read if it does not come back
  std::uint64_t hpcc_seed = 0;  // 0: the scenario's default
};

// The run's summary JSON with the store's run id after run_id (key order kept), and how
// the store finished it: status (completed | partial | ...) and, when there is one, its
// note ("0 of 16 flows completed").
std::string with_store_id(const std::string& json, std::int64_t store_run, const std::string& run_status,
                          const std::string& note) {
  auto j = nlohmann::ordered_json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return json;
  nlohmann::ordered_json out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    out[it.key()] = it.value();
    if (it.key() == "run_id") out["store_run_id"] = store_run;
  }
  if (!out.contains("store_run_id")) out["store_run_id"] = store_run;
  out["status"] = run_status;
  if (!note.empty()) out["status_note"] = note;
  return out.dump(2);
}

// 32 random bytes as hex: the embedded controller's token, never written anywhere.
std::string random_token() {
  std::random_device rd;
  std::string t;
  static constexpr char hex[] = "0123456789abcdef";
  for (int i = 0; i < 32; ++i) {
    const auto v = rd();
    t += hex[v & 0xf];
    t += hex[(v >> 4) & 0xf];
  }
  return t;
}

int run_remote(const run_args& args) {
  auto token = protocol::read_token_file(args.token_file);
  if (!token) {
    std::cerr << "rocelab run: " << token.error().message() << "\n";
    return 2;
  }
  // The spec is resolved here and sent as data: the files it names (a CDF) are read on
  // this host and inlined, since the controller opens no path a client names.
  auto spec = experiments::load_spec_file(args.spec);
  if (!spec) {
    std::cerr << "rocelab run: " << spec.error().message() << "\n";
    return 2;
  }
  for (const std::string& set : args.sets)
    if (auto st = experiments::apply_override(*spec, set); !st.ok()) {
      std::cerr << "rocelab run: " << st.message() << "\n";
      return 2;
    }
  if (auto st = experiments::inline_file_references(*spec); !st.ok()) {
    std::cerr << "rocelab run: " << st.message() << "\n";
    return 2;
  }
  if (auto st = experiments::validate(*spec); !st.ok()) {
    std::cerr << "rocelab run: " << st.message() << "\n";
    return 2;
  }
  // The overrides go along for the store's parameters; one that names a file carries the
  // inlined value instead.
  std::vector<std::string> sets;
  for (const std::string& set : args.sets) {
    const std::string path = set.substr(0, set.find('='));
    const auto& files = experiments::file_reference_fields();
    if (std::find(files.begin(), files.end(), path) != files.end()) {
      if (auto value = experiments::get_field(*spec, path); value.ok()) sets.push_back(path + "=" + *value);
    } else {
      sets.push_back(set);
    }
  }
  controller::submit_options o;
  o.controller = args.controller;
  o.reconnect_window = std::chrono::milliseconds(static_cast<std::int64_t>(args.reconnect_s * 1000));
  o.token = *token;
  // Ctrl-C closes our connection; the controller then stops the run and stores it
  // interrupted with what it measured.
  stop_signal stop;
  o.cancel_requested = [&stop] { return stop.requested(); };
  if (args.db_given) o.store_path = args.db;
  auto done = controller::submit_spec(o, experiments::to_yaml(*spec), args.spec, sets);
  if (stop.requested()) {
    std::cerr << "rocelab run: interrupted; the controller at " << args.controller
              << " stores the run as interrupted with what it measured\n";
    return stop_signal::exit_status;
  }
  if (!done) {
    std::cerr << "rocelab run: " << done.error().message() << "\n";
    return 1;
  }
  if (done->status == "failed" && done->run == 0) {
    std::cerr << "rocelab run: " << done->error << "\n";
    return 2;
  }
  if (!args.out.empty())
    std::cerr << "rocelab run: note: --out is not written for a remote run; its records are run "
              << done->run << " in the controller's store\n";
  if (args.json && !done->summary_json.empty()) {
    std::cout << with_store_id(done->summary_json, done->run, done->status, done->error) << "\n";
  } else {
    std::printf("run         %lld in the controller's store (%s)\n", static_cast<long long>(done->run),
                done->status.c_str());
    if (!done->error.empty())
      std::printf("%s %s\n", done->status == "partial" ? "status      partial:" : "error      ", done->error.c_str());
    if (!done->summary_json.empty()) std::printf("summary     %s\n", done->summary_json.c_str());
  }
  if (done->status == "partial") return partial_exit_status;
  return done->status == "completed" ? 0 : 1;
}

// The run as the embedded controller begins it in the store (controller/run_lifecycle.cpp):
// the spec as its backend ran it (`ran_yaml`), the --set values as parameters, and a
// virtual run's capture file.
store::new_run stored_run_of(const experiments::experiment_spec& spec, const std::string& ran_yaml,
                             const std::vector<std::string>& sets, const std::string& capture_file) {
  store::new_run nr;
  nr.name = spec.name;
  nr.backend = spec.backend;
  nr.seed = spec.seed;
  nr.spec_yaml = ran_yaml;
  for (const auto& set : sets)
    if (const auto eq = set.find('='); eq != std::string::npos) nr.parameters[set.substr(0, eq)] = set.substr(eq + 1);
  if (experiments::backend_traits_of(spec.backend).takes_capture_file && !capture_file.empty()) {
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(capture_file, ec);
    nr.parameters["capture_file"] = ec ? capture_file : absolute.string();
  }
  return nr;
}

void print_text(const std::string& run_id, const experiments::experiment_spec& spec,
                const experiments::run_summary& s, const std::string& dir) {
  std::printf("run         %s (%s%s%s)\n", run_id.c_str(), spec.backend.c_str(), spec.name.empty() ? "" : ", ",
              spec.name.c_str());
  std::printf("seeds       ");
  for (std::size_t i = 0; i < s.seeds.size(); ++i)
    std::printf("%s%llu", i ? "," : "", static_cast<unsigned long long>(s.seeds[i]));
  std::printf("\nflows       %llu, completed %llu\n", static_cast<unsigned long long>(s.all.flows),
              static_cast<unsigned long long>(s.all.completed));
  auto t = [](auto ns) { return readable_duration(static_cast<double>(ns)); };
  std::printf("fct         p50 %s, p99 %s, max %s\n", t(s.all.fct_p50_ns).c_str(), t(s.all.fct_p99_ns).c_str(),
              t(s.all.fct_max_ns).c_str());
  std::printf("slowdown    p50 %.2f, p99 %.2f\n", s.all.slowdown_p50, s.all.slowdown_p99);
  for (const auto& [kind, k] : s.by_kind)
    if (s.by_kind.size() > 1)
      std::printf("  %-10s %llu flows, fct p50 %s, p99 %s, slowdown p50 %.2f, p99 %.2f\n", kind.c_str(),
                  static_cast<unsigned long long>(k.flows), t(k.fct_p50_ns).c_str(), t(k.fct_p99_ns).c_str(),
                  k.slowdown_p50, k.slowdown_p99);
  std::printf("pfc         %llu pause frames, %s paused\n", static_cast<unsigned long long>(s.pause_frames),
              t(s.paused_ns).c_str());
  // A count the NICs did not measure is said so, never printed as 0.
  const auto count = [](std::uint64_t v, bool measured, const char* what) {
    return measured ? std::to_string(v) + " " + what : std::string(what) + " not measured";
  };
  std::printf("ecn         %llu CE-marked, %s\n", static_cast<unsigned long long>(s.ce_marked),
              count(s.cnp, s.cnp_measured, "CNPs").c_str());
  std::printf("loss        %llu drops, %s\n", static_cast<unsigned long long>(s.drops),
              count(s.retransmits, s.retransmits_measured, "retransmits").c_str());
  if (s.capture)
    std::printf("capture     %s%s%llu frames of %llu mirrored, %llu lost\n",
                s.capture->file.empty() ? "" : (dir + "/" + s.capture->file).c_str(), s.capture->file.empty() ? "" : ": ",
                static_cast<unsigned long long>(s.capture->captured), static_cast<unsigned long long>(s.capture->mirrored),
                static_cast<unsigned long long>(s.capture->loss));
  for (const auto& d : s.degraded) std::printf("DEGRADED    %s\n", d.c_str());
  if (s.allreduce)
    std::printf("allreduce   %s, %u ranks, %llu bytes, %llu iterations: algbw %.2f Gb/s, busbw %.2f Gb/s\n",
                s.allreduce->algorithm.c_str(), s.allreduce->ranks,
                static_cast<unsigned long long>(s.allreduce->bytes),
                static_cast<unsigned long long>(s.allreduce->iterations), s.allreduce->algbw_gbps,
                s.allreduce->busbw_gbps);
  if (!s.start_offsets_ns.empty())
    std::printf("start skew  %s between the %zu senders' first messages (measured by %s)\n", t(s.start_skew_ns).c_str(),
                s.start_offsets_ns.size(), s.start_source.c_str());
  if (experiments::backend_traits_of(spec.backend).simulated)
    std::printf("simulated   %s\n", t(s.simulated_ns).c_str());
  std::printf("records     %s\n", dir.c_str());
}

int run_hpcc(const run_args& args) {
  auto scenario = experiments::load_hpcc_scenario(args.hpcc);
  if (!scenario) {
    std::cerr << "rocelab run: " << scenario.error().message() << "\n";
    return 2;
  }
  for (const auto& note : scenario->notes) std::cerr << "rocelab run: note: " << note << "\n";
  if (args.hpcc_seed != 0) scenario->config.seed = args.hpcc_seed;
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
  if (auto st = experiments::write_run_directory(dir, {header, json, {seed}, {&*records}},
                                                 output_policy(args.out, args.force));
      !st.ok()) {
    std::cerr << "rocelab run: " << st.message() << "\n";
    return 1;
  }
  // The simulator's own output files, named as its config names them.
  const auto name_of = [](const std::string& configured, const char* fallback) {
    return configured.empty() ? std::string(fallback) : std::filesystem::path(configured).filename().string();
  };
  for (auto [name, text] : {std::pair{name_of(scenario->fct_output, "fct.txt"), experiments::format_hpcc_fct(*scenario, *records)},
                            std::pair{name_of(scenario->pfc_output, "pfc.txt"), experiments::format_hpcc_pfc(*scenario, *records)}})
    if (auto st = write_text(dir + "/" + name, text, output_policy(args.out, args.force)); !st.ok()) {
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
  app.add_option("--seed", args->hpcc_seed,
                 "with --hpcc: the seed of the twin's random ECN marking (default 1); one seed, one result")
      ->check(CLI::PositiveNumber);
  app.add_option("--controller", args->controller, "submit to a running controller (host:port) instead of running here");
  app.add_option("--token-file", args->token_file, "the lab token for --controller (first line, mode 600)");
  app.add_option("--reconnect-s", args->reconnect_s,
                 "--controller: how long to keep asking for the run's outcome after the connection is lost")
      ->capture_default_str()
      ->check(finite_in(0, 86400, "s"));
  auto* db = app.add_option("--db", args->db,
                            "the run store of the embedded controller; with --controller, that controller's store, "
                            "read for the run's outcome if the controller does not come back")
                 ->capture_default_str();
  app.add_option("--set", args->sets, "override a field: path=value (e.g. switch.ecn.kmin_bytes=20KiB); repeatable")
      ->allow_extra_args(false);
  app.add_flag("--json", args->json, "print the summary as one JSON object");
  app.add_flag("--quiet", args->quiet, "no progress line on a terminal (virtual-lab runs)");
  app.add_option("--out", args->out,
                 "run directory (default runs/<run_id>): the records as CSV, summary.json, spec.yaml and records.db "
                 "(the run as stored, for `rocelab runs import DIR`)");
  app.add_flag("--force", args->force, force_help);
  app.add_flag("--keep-lab", args->keep_lab,
               "backend virtual: leave the lab this run brought up (lab 'run') running afterwards");
  app.add_flag("--no-capture-file", args->no_capture_file,
               "backend virtual: analyse the run's capture but do not keep it as capture.pcapng in the run directory");
  app.add_flag("--capture-libpcap", args->capture_libpcap,
               "backend virtual: capture with libpcap, which the kernel stamps as each copy arrives, instead of DPDK's "
               "af_packet PMD, which stamps a burst when it polls (a capture starved of CPU compresses its times)");
  return [args, db] {
    args->db_given = db->count() > 0;
    // A run directory the user named that holds a run already is refused before the run.
    if (!args->out.empty() && !args->force && args->controller.empty())
      if (auto st = check_outputs_absent(args->out, experiments::run_directory_files()); !st.ok()) {
        std::cerr << "rocelab run: " << st.message() << "\n";
        return 2;
      }
    if (args->spec.empty() == args->hpcc.empty()) {
      std::cerr << "rocelab run: give a spec file or --hpcc config.txt (one of them)\n";
      return 2;
    }
    if (args->hpcc_seed != 0 && args->hpcc.empty()) {
      std::cerr << "rocelab run: --seed applies to --hpcc; a spec sets its seed with --set seed=N\n";
      return 2;
    }
    if (!args->hpcc.empty()) {
      if (!args->sets.empty()) {
        std::cerr << "rocelab run: --set applies to specs; edit the HPCC config.txt instead\n";
        return 2;
      }
      return run_hpcc(*args);
    }
    if (!args->controller.empty()) {
      if (args->token_file.empty()) {
        std::cerr << "rocelab run: --controller needs --token-file\n";
        return 2;
      }
      return run_remote(*args);
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
    // The embedded controller: the same lifecycle and store as a standalone one, on a
    // loopback port with a token of its own.
    controller::controller_options co;
    co.listen = "127.0.0.1:0";
    co.db_path = args->db;
    co.token = random_token();
    co.log = false;
    co.virtual_options.keep_lab = args->keep_lab;
    co.virtual_options.capture_dpdk = !args->capture_libpcap;
    // The virtual lab's NICs and switch run SCHED_FIFO on this machine: the agents' thread
    // that relays their posts and completions runs above the NICs (nic_fleet.hpp).
    co.launcher = std::make_shared<in_process_agents>(traffic::soft_nic::lab_relay_rt_priority);
    const std::string dir = args->out.empty() ? "runs/" + run_id : args->out;
    if (experiments::backend_traits_of(spec->backend).takes_capture_file && !args->no_capture_file) {
      // The capture is written there while the run goes; the rest of the directory after it.
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (ec) {
        std::cerr << "rocelab run: creating " << dir << ": " << ec.message() << "\n";
        return 1;
      }
      co.virtual_options.capture_file = dir + "/capture.pcapng";
    }
    auto ctl = controller::controller::start(co);
    if (!ctl) {
      std::cerr << "rocelab run: " << ctl.error().message() << "\n";
      return 1;
    }
    controller::run_request request;
    request.source_name = args->spec;
    request.sets = args->sets;
    request.on_repeat = [&](std::uint32_t i, std::uint64_t seed) {
      if (repeats > 1) std::cerr << "rocelab run: repeat " << i + 1 << "/" << repeats << " (seed " << seed << ")\n";
    };
    // Ctrl-C ends the run where it is; the store keeps it, marked interrupted.
    stop_signal stop;
    request.cancel_requested = [&stop] { return stop.requested(); };
    // A real-time run's workload on a terminal's status line; nothing in a pipe.
    progress_line progress(args->quiet || args->json, std::chrono::milliseconds(500));
    const auto started = std::chrono::steady_clock::now();
    if (progress.shown()) {
      request.on_progress = [&](const experiments::run_progress& p) {
        if (!progress.due()) return;
        progress.update(virtual_run_progress_text(
            p, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()));
      };
    }
    auto outcome = (*ctl)->run_spec(*spec, request);
    progress.finish();
    if (!outcome) {
      std::cerr << "rocelab run: " << outcome.error().message() << "\n";
      return outcome.error().code() == error_code::invalid_argument ? 2 : 1;
    }
    const bool partial = outcome->status == "partial";
    // The store could not keep a run that ran: its directory and records.db still hold it.
    const bool unstored = !outcome->store_error.empty();
    if (outcome->status != "completed" && !partial && !unstored) {
      std::cerr << "rocelab run: run " << outcome->run << " " << outcome->status << ": " << outcome->error << "\n";
      if (outcome->status == "interrupted") {
        // The run is committed in the store as interrupted. Freeing millions of records
        // and checkpointing the store's log would outlast what a Ctrl-C should take; the
        // next open of the store finds the log and keeps every committed row.
        std::cout.flush();
        std::cerr.flush();
        std::fflush(nullptr);
        ::_exit(stop_signal::exit_status);
      }
      return 1;
    }
    auto* ran = &outcome->result;
    std::vector<const run_records*> all;
    std::vector<experiments::run_summary> each;
    for (std::size_t i = 0; i < ran->repeats.size(); ++i) {
      all.push_back(&ran->repeats[i]);
      each.push_back(experiments::summarize({&ran->repeats[i]}, {ran->seeds[i]}));
    }
    const experiments::run_summary aggregate = experiments::summarize(all, ran->seeds);
    const std::string json =
        with_store_id(experiments::summary_json({run_id, spec->backend, spec->name}, aggregate, each), outcome->run,
                      outcome->status, outcome->error);

    // The spec as its backend ran it, as the controller stored it (run_lifecycle.cpp).
    const std::string ran_yaml =
        experiments::to_yaml(experiments::local_backends(co.virtual_options).as_run_here(*spec));
    std::string header = "# Resolved spec of run " + run_id + " from " + args->spec;
    for (const std::string& set : args->sets) header += " --set " + set;
    if (auto st = experiments::write_run_directory(
            dir, {header + "\n" + ran_yaml, json, ran->seeds, all},
            output_policy(args->out, args->force));
        !st.ok()) {
      std::cerr << "rocelab run: " << st.message() << "\n";
      if (unstored) std::cerr << "rocelab run: run " << outcome->run << " is lost: " << outcome->store_error << "\n";
      return 1;
    }
    // records.db: the run as the store keeps it (the controller's begin, agents, appends
    // and ending, store/run_ending.hpp), for `rocelab runs import`.
    store::whole_run whole;
    whole.run = stored_run_of(*spec, ran_yaml, args->sets, co.virtual_options.capture_file);
    const store::run_ending ending = store::ending_of(all);
    whole.status = ending.status;
    whole.error = ending.note;
    for (const auto& a : outcome->agents)
      whole.agents.push_back({a.name, a.address, a.clock_offset_ns, a.clock_uncertainty_ns, a.alive ? "ok" : "lost"});
    all.clear();
    whole.repeats = std::move(ran->repeats);
    if (auto st = write_run_records_file(dir, whole, output_policy(args->out, args->force)); !st.ok()) {
      std::cerr << "rocelab run: " << st.message() << "\n";
      if (unstored) std::cerr << "rocelab run: run " << outcome->run << " is lost: " << outcome->store_error << "\n";
      return 1;
    }
    if (unstored) {
      if (args->json) std::cout << json << "\n";
      std::cerr << "rocelab run: the store " << args->db << " could not keep run " << outcome->run << " ("
                << outcome->store_error << "); every record is in " << dir << ": store it there later with `rocelab "
                << "runs import " << dir << " --db " << args->db << "`\n";
      return 1;
    }
    if (args->json) {
      std::cout << json << "\n";
    } else {
      print_text(run_id, *spec, aggregate, dir);
      std::printf("store       run %lld in %s\n", static_cast<long long>(outcome->run), args->db.c_str());
      if (partial) std::printf("status      partial: %s\n", outcome->error.c_str());
    }
    if (partial) {
      std::cerr << "rocelab run: run " << outcome->run << " partial: " << outcome->error << "\n";
      return partial_exit_status;
    }
    return 0;
  };
}

}  // namespace

ROCELAB_COMMAND(run, setup);

}  // namespace rocelab::cli

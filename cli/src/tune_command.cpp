// rocelab tune SPEC [--budget N] [--method bayes|grid|random] [--json] [--db F] [--jobs J]
//                   [--set path=value]... [--resume SWEEP] [--name NAME] [--export-dir DIR]
//                   [--verify N] [--verify-runs R] [--calibration FILE | --no-calibration]
//                   [--lab-name NAME] [--ports P,...] [--nic-if IF]
//                   [--fresh-seeds N] [--export-for GBPS]
//                   [--executor local|slurm --workers N [--slurm-opt K=V]...
//                    [--listen ADDR | --controller ADDR --token-file F]]
// Searches the parameters of the spec's `tuning:` section (experiments/tuning/tuning_spec.hpp) on
// the twin, trials in parallel, each stored in the run store (sweeps, trials, runs); an
// interrupted sweep (Ctrl-C, kill, crash) resumes with --resume or by running the same
// command again. PFC only and the vendor defaults run beside the trials as candidates
// (experiments/tuning/tuning_baselines.hpp); the best of all is re-run with the baselines on
// fresh seeds for a 95% confidence interval. Writes the best configuration as a spec,
// the tuning's HTML page and, when it is a hardware configuration (or --export-for
// derives one), SONiC config_db JSON and mlx5 sysfs settings; with --verify N re-runs the
// N best configurations and the baselines on the virtual lab (backend virtual, root), each
// R times (default 3), and prints predicted (twin) against measured with the lab's CIs and
// whether the lab ranks them as the twin does. The twin predicting them models the lab's
// own calibration: taken first (rocelab calibrate, written to calibration.yaml beside the
// exports), or the one --calibration names; --no-calibration predicts with the spec alone.
// Exit codes: 0 done; 1 a run, store or export failed; 2 usage or an invalid spec;
// 3 done, but --verify did not measure every configuration (without root: none); the
// twin's answer and exports are written, sim_to_real.txt says why per row;
// 130 interrupted (what ran is stored).
// --executor runs the trials on N workers (cli/sweep_executor.hpp: worker processes here,
// or a Slurm job array), N trials in flight from one model (kriging believer batches);
// each stored trial's run names its worker, host, Slurm job and node (worker.* parameters).
// With --controller the workers attach to that running controller, which runs and stores
// the trials' runs (the trials here name its run ids).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "executor_flags.hpp"
#include "rocelab/cli/sweep_executor.hpp"
#include "output_files.hpp"
#include "progress_line.hpp"
#include "rocelab/experiments/lab/local_backends.hpp"
#include "rocelab/experiments/lab/sweep_exports.hpp"
#include "rocelab/experiments/run/backend_traits.hpp"
#include "rocelab/experiments/tuning/sweep_session.hpp"
#include "rocelab/experiments/tuning/tuning_answer.hpp"
#include "rocelab/experiments/tuning/tuning_baselines.hpp"
#include "rocelab/experiments/tuning/tuning_edges.hpp"
#include "rocelab/experiments/tuning/tuning_spec.hpp"
#include "rocelab/experiments/tuning/tuning_trials.hpp"
#include "rocelab/experiments/tuning/tuning_verify.hpp"
#include "rocelab/experiments/lab/sweep_verify.hpp"

namespace rocelab::cli {
namespace {

std::atomic<bool> tune_stop{false};
void on_tune_signal(int) { tune_stop.store(true); }

struct tune_args {
  std::string spec;
  std::uint32_t budget = 0;
  std::string method;
  bool json = false;
  bool quiet = false;  // no progress line
  std::string db = "rocelab.db";
  std::uint32_t jobs = 0;
  std::vector<std::string> sets;
  std::int64_t resume = 0;
  std::string name;
  std::string export_dir;
  bool force = false;  // --export-dir: replace the exports there
  std::uint32_t verify = 0;
  std::uint32_t verify_runs = 3;
  std::string calibration;       // --verify: a calibration taken earlier; empty: take one now
  bool no_calibration = false;
  std::string lab_name = "tune";
  std::vector<std::string> ports;
  std::string nic_if = "IF";
  std::uint32_t fresh_seeds = 5;
  double export_for_gbps = 0;
  executor_flags exec;
};

int fail(const std::string& message, int code) {
  std::cerr << "rocelab tune: " << message << "\n";
  return code;
}

// One line on stderr, redrawn in place on a terminal after each trial: a bar, the count
// and the best so far with its values (nothing in a pipe or with --quiet).
class progress_bar {
 public:
  progress_bar(std::uint32_t total, const experiments::tuning_settings& s, bool quiet)
      : total_(total), settings_(s), line_(quiet) {}
  std::function<std::string()> workers;  // the executor's state, when trials run on workers
  void update(const std::vector<experiments::trial>& done, const experiments::trial& last) {
    const experiments::trial* best = experiments::best_trial(done);
    constexpr int width = 24;
    const int filled = total_ ? static_cast<int>(width * done.size() / total_) : width;
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(width, '.');
    char line[512];
    std::snprintf(line, sizeof line, "[%s] %zu/%u", bar.c_str(), done.size(), total_);
    std::string text = line;
    if (!last.evaluated) text += "  trial " + std::to_string(last.index) + " failed: " + last.error.substr(0, 80);
    if (best) {
      std::snprintf(line, sizeof line, "  best %.4g (trial %u: %s)", best->objective, best->index,
                    experiments::describe_values(settings_, best->values).c_str());
      text += line;
    } else {
      text += "  no feasible trial yet";
    }
    if (workers) text += "  [" + workers() + "]";
    line_.update(text, true);
  }
  void finish() { line_.finish(); }
  void set_total(std::uint32_t total) { total_ = total; }

 private:
  std::uint32_t total_;
  const experiments::tuning_settings& settings_;
  progress_line line_;
};

nlohmann::json params_json(const experiments::tuning_settings& s, const std::vector<double>& values) {
  nlohmann::json j = nlohmann::json::object();
  const std::vector<double> v = experiments::applied_values(s, values);
  for (std::size_t i = 0; i < s.parameters.size(); ++i) j[s.parameters[i].path] = v[i];
  return j;
}

std::function<int()> setup(CLI::App& app) {
  auto args = std::make_shared<tune_args>();
  app.description("Tune switch and NIC settings on the twin for the objective of the spec's tuning: section");
  app.add_option("spec", args->spec, "experiment spec with a tuning: section (examples/tune-incast.yaml)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--budget", args->budget, "trials (default: the spec's tuning.budget)");
  app.add_option("--method", args->method, "bayes | grid | random (default: the spec's tuning.method)");
  app.add_flag("--json", args->json, "print one JSON object: best {params, objective}, trials, exports");
  app.add_flag("--quiet", args->quiet, "no progress line on a terminal");
  app.add_option("--db", args->db, "run store (SQLite) the sweep and its trials go to (default rocelab.db)");
  app.add_option("--jobs", args->jobs, "trials at once (default: the spec's tuning.parallelism)");
  app.add_option("--set", args->sets, "override a spec field: path=value; repeatable")->allow_extra_args(false);
  app.add_option("--resume", args->resume, "continue sweep SWEEP (same spec, --set values and method)");
  app.add_option("--name", args->name, "the sweep's name (default: tuning.name or the spec's name)");
  app.add_option("--export-dir", args->export_dir,
                 "where best.yaml, config_db.json, mlx5_sysfs.txt and trials.csv go (default runs/tune-<sweep>)");
  app.add_flag("--force", args->force,
               "--export-dir: replace exports that are there already (without it such a directory is refused before "
               "the sweep starts); the default runs/tune-<sweep> is the sweep's own. Never writes through a symlink");
  app.add_option("--verify", args->verify,
                 "re-run the N best configurations on the virtual lab (backend virtual, needs root) and compare");
  app.add_option("--verify-runs", args->verify_runs,
                 "--verify: runs of each configuration on the virtual lab, for its run-to-run 95% CI (default 3)")
      ->check(CLI::Range(1, 100));
  auto* cal = app.add_option("--calibration", args->calibration,
                             "--verify: the twin models this calibration of the lab (rocelab calibrate) instead of "
                             "one taken now");
  app.add_flag("--no-calibration", args->no_calibration,
               "--verify: the twin predicts from the spec alone (ideal NICs and switch), uncalibrated")
      ->excludes(cal);
  app.add_option("--lab-name", args->lab_name, "--verify: the virtual lab's name (default tune)");
  app.add_option("--ports", args->ports, "switch ports of the SONiC export (default Ethernet0, Ethernet4, ...)")
      ->delimiter(',');
  app.add_option("--nic-if", args->nic_if, "the RoCE netdev the mlx5 sysfs export names (default IF)");
  app.add_option("--fresh-seeds", args->fresh_seeds,
                 "seeds the best and the baselines are re-run on for the confidence interval (default 5, at least 2)")
      ->check(CLI::Range(2, 1000));
  app.add_option("--export-for", args->export_for_gbps,
                 "link speed (Gb/s) of the hardware the exports are for: derives hardware values from a lab-scaled "
                 "spec (default: export only a spec already at a real port speed)");
  add_executor_flags(app, args->exec, "--executor: workers, and trials in flight (default 2)", true);
  return [args]() -> int {
    std::optional<executor_options> executor;
    if (auto o = executor_options_from(args->exec); o.ok())
      executor = std::move(*o);
    else if (o.error().code() != error_code::not_found)
      return fail(o.error().message(), 2);
    // A directory the user named that holds exports already is refused before the sweep.
    if (!args->export_dir.empty() && !args->force)
      if (auto st = check_outputs_absent(args->export_dir, experiments::sweep_export_names()); !st.ok()) return fail(st.message(), 2);
    auto spec = experiments::load_spec_file(args->spec);
    if (!spec) return fail(spec.error().message(), 2);
    for (const std::string& set : args->sets)
      if (auto st = experiments::apply_override(*spec, set); !st.ok()) return fail(st.message(), 2);
    if (auto st = experiments::validate(*spec); !st.ok()) return fail(st.message(), 2);
    if (!experiments::backend_traits_of(spec->backend).simulated)
      return fail("sweeps run on the twin (backend: twin); the virtual lab re-checks the best with --verify", 2);
    auto loaded = experiments::load_tuning_file(args->spec, *spec);
    if (!loaded) return fail(loaded.error().message(), 2);
    experiments::sweep_request request;
    request.budget = args->budget;
    request.parallelism = executor ? args->exec.workers : args->jobs;
    request.name = args->name;
    request.method = args->method;
    request.default_name = std::filesystem::path(args->spec).stem().string();
    auto settings = experiments::resolve_settings(std::move(*loaded), request);
    if (!settings) return fail(settings.error().message(), 2);

    auto db = store::run_store::open(args->db);
    if (!db) return fail(db.error().message(), 1);
    auto opened = experiments::sweep_session::open(
        *db, *spec, *settings, args->resume ? std::optional<std::int64_t>(args->resume) : std::nullopt);
    if (!opened) return fail(opened.error().message(), opened.error().code() == error_code::invalid_argument ? 2 : 1);
    const std::uint32_t total = experiments::planned_trials(*settings);
    if (opened->resumed())
      std::cerr << "rocelab tune: resuming sweep " << opened->id() << " (" << settings->name << ") at trial "
                << opened->stored_trials().size() << " of " << total << "\n";
    else
      std::cerr << "rocelab tune: sweep " << opened->id() << " (" << settings->name << "), "
                << experiments::to_string(settings->method) << ", " << total << " trials, "
                << settings->parallelism << " at a time, into " << args->db << "\n";
    std::cerr << "rocelab tune: minimizing " << experiments::describe(settings->objective) << "\n";

    struct sigaction sa {}, old_int {}, old_term {};
    sa.sa_handler = on_tune_signal;
    ::sigaction(SIGINT, &sa, &old_int);
    ::sigaction(SIGTERM, &sa, &old_term);
    std::unique_ptr<sweep_executor> workers;
    if (executor) {
      executor_options eo = *executor;
      eo.db = args->db;
      eo.stop_requested = [] { return tune_stop.load(); };
      eo.log = [](const std::string& line) { std::cerr << "rocelab tune: " << line << "\n"; };
      auto started = sweep_executor::start(std::move(eo));
      if (!started) {
        ::sigaction(SIGINT, &old_int, nullptr);
        ::sigaction(SIGTERM, &old_term, nullptr);
        return fail(started.error().message(), started.error().code() == error_code::invalid_argument ? 2 : 1);
      }
      workers = std::move(*started);
    }
    std::map<std::uint32_t, std::map<std::string, std::string>> placements;  // trial index -> where it ran
    const std::size_t resumed_trials = opened->stored_trials().size();
    std::vector<experiments::trial> done = opened->stored_trials();
    progress_bar bar(total, *settings, args->quiet);
    experiments::sweep_hooks hooks;
    hooks.stop = &tune_stop;
    if (workers) bar.workers = [&workers] { return workers->progress(); };
    // After the session stored the trial.
    hooks.on_trial = [&](experiments::trial& t, experiments::trial_payload& p) -> status {
      if (!p.placement.empty()) placements[t.index] = p.placement;
      done.push_back(t);
      bar.update(done, t);
      return status::success();
    };
    const auto make_evaluator = [&](const experiments::tuning_settings& s) {
      bar.set_total(experiments::planned_trials(s));
      return workers ? experiments::spec_evaluator(*spec, s, workers->runner())
                     : experiments::spec_evaluator(*spec, s, experiments::local_backends());
    };
    auto swept = opened->run(make_evaluator, hooks);
    bar.finish();
    std::string workers_failed;
    nlohmann::json executor_json;
    if (workers) {
      workers_failed = workers->failure();
      const auto states = workers->finish(!swept || swept->interrupted);
      executor_json = {{"kind", args->exec.executor},
                       {"workers", args->exec.workers},
                       {"controller", workers->controller_address()},
                       {"attached", !args->exec.controller.empty()}};
      if (!workers->slurm_job().empty()) {
        executor_json["slurm_job"] = workers->slurm_job();
        executor_json["slurm_tasks"] = states;
        for (const auto& line : states) std::cerr << "rocelab tune: Slurm task " << line << "\n";
      }
      workers.reset();
    }
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
    if (!swept) return fail(swept.error().message(), 1);
    // From here on the settings are the final search's (widened ranges, when widened).
    *settings = swept->settings;
    const std::vector<experiments::trial>* trials = &swept->trials;
    const bool interrupted = swept->interrupted;
    if (interrupted && !workers_failed.empty() && !tune_stop.load())
      return fail("the sweep's workers failed: " + workers_failed + "; what ran is stored, resume with: rocelab tune " +
                      args->spec + " --resume " + std::to_string(opened->id()) + " --db " + args->db,
                  1);
    if (interrupted)
      std::cerr << "rocelab tune: interrupted after " << trials->size() << " trials; resume with: rocelab tune "
                << args->spec << " --resume " << opened->id() << " --db " << args->db << "\n";

    nlohmann::json out;
    out["sweep"] = opened->id();
    out["name"] = settings->name;
    out["method"] = experiments::to_string(settings->method);
    out["budget"] = swept->planned;
    out["seeds"] = experiments::search_seed_count(*spec, *settings);
    out["resumed_trials"] = resumed_trials;
    out["interrupted"] = interrupted;
    out["objective"] = experiments::describe(settings->objective);
    out["db"] = args->db;
    if (!executor_json.is_null()) out["executor"] = executor_json;
    nlohmann::json jt = nlohmann::json::array();
    for (const experiments::trial& t : *trials) {
      nlohmann::json row{{"index", t.index}, {"params", params_json(*settings, t.values)}, {"evaluated", t.evaluated},
                         {"feasible", t.evaluated && t.feasible}};
      if (t.evaluated) row["objective"] = t.objective;
      if (!t.violated.empty()) row["violated"] = t.violated;
      if (!t.error.empty()) row["error"] = t.error;
      if (t.run_id) row["run"] = t.run_id;
      if (auto it = placements.find(t.index); it != placements.end()) row["placement"] = it->second;
      jt.push_back(std::move(row));
    }
    out["trials"] = std::move(jt);
    if (interrupted) {
      out["best"] = nullptr;
      if (args->json) std::cout << out.dump(2) << "\n";
      return 130;
    }

    // Baselines, the recommendation among trials and baselines, fresh seeds, the front.
    experiments::answer_options ao;
    ao.fresh_seeds = args->fresh_seeds;
    ao.parallelism = settings->parallelism;
    ao.log = [](const std::string& line) { std::cerr << "rocelab tune: " << line << "\n"; };
    auto answer = opened->answer(*swept, ao, experiments::local_config_runner(experiments::local_backends()));
    if (!answer) {
      out["best"] = nullptr;
      if (args->json) std::cout << out.dump(2) << "\n";
      return fail(answer.error().message(), 1);
    }
    const auto answer_json = nlohmann::json::parse(experiments::answer_json_text(*settings, *answer));
    for (const auto& [key, value] : answer_json.items()) out[key] = value;
    const experiments::trial* best = nullptr;
    if (answer->best_trial)
      for (const experiments::trial& t : *trials)
        if (t.index == *answer->best_trial) best = &t;
    if (best && best->run_id) out["best"]["run"] = best->run_id;

    const std::string dir = args->export_dir.empty() ? "runs/tune-" + std::to_string(opened->id()) : args->export_dir;
    experiments::sweep_export_request er;
    er.dir = dir;
    er.switch_ports = args->ports;
    er.nic_interface = args->nic_if;
    er.export_for_gbps = args->export_for_gbps;
    auto exports = experiments::sweep_export_files(opened->id(), *spec, *settings, *trials, *answer, er);
    if (!exports) return fail(exports.error().message(), 1);
    out["exports"] = nlohmann::json::parse(exports->json_text);
    const std::string& refused = exports->refused;
    if (!refused.empty())
      std::cerr << "rocelab tune: no SONiC or mlx5 export: " << refused
                << (args->export_for_gbps > 0 ? std::string()
                                              : ". Give --export-for <Gb/s> (e.g. 100) to derive the hardware values")
                << "\n";
    if (auto st = experiments::write_sweep_exports(*exports, dir, output_policy(args->export_dir, args->force));
        !st.ok())
      return fail(st.message(), 1);

    // Sim-to-real: the baselines and the best configurations again on the virtual lab,
    // each beside the twin replaying what the lab ran.
    std::vector<experiments::verify_row> verified;
    if (args->verify && !interrupted) {
      experiments::sweep_verify_request vr;
      vr.best = args->verify;
      vr.runs = args->verify_runs;
      vr.lab_name = args->lab_name;
      vr.calibration_file = args->calibration;
      vr.calibrate = !args->no_calibration;
      vr.dir = dir;
      vr.existing = output_policy(args->export_dir, args->force);
      vr.log = [](const std::string& line) { std::cerr << "rocelab tune: " << line << "\n"; };
      auto verification = experiments::verify_sweep(*db, opened->id(), *spec, *settings, *trials, *answer, vr);
      if (!verification) return fail(verification.error().message(), 1);
      out["calibration"] = {{"id", verification->calibration_id ? nlohmann::json(*verification->calibration_id)
                                                                 : nlohmann::json(nullptr)},
                            {"label", verification->calibration_label}};
      verified = std::move(verification->rows);
      out["sim_to_real"] = nlohmann::json::parse(experiments::verify_json_text(verified));
      out["sim_to_real_ranking"] = nlohmann::json::parse(experiments::verify_ranking_json_text(verified));
    }

    if (args->json) {
      std::cout << out.dump(2) << "\n";
    } else {
      std::printf("sweep       %lld (%s, %s), %zu trials\n", static_cast<long long>(opened->id()), settings->name.c_str(),
                  experiments::to_string(settings->method), trials->size());
      std::printf("objective   %s\n", experiments::describe(settings->objective).c_str());
      for (const auto& b : answer->baselines)
        std::printf("baseline    %-15s %.6g%s\n", b.baseline.c_str(), b.scored.objective,
                    b.scored.feasible ? "" : ("  (infeasible: " + b.scored.violated + ")").c_str());
      if (answer->contender_trial)
        std::printf("contender   %s: %s (the best trial on the %u common seeds)\n",
                    answer->contender_fresh.name.c_str(),
                    experiments::describe_values(*settings, answer->contender_values).c_str(),
                    experiments::search_seed_count(*spec, *settings));
      std::printf("answer      %s\n", experiments::answer_sentence(*settings, *answer).c_str());
      std::istringstream evidence(experiments::answer_evidence_text(*answer));
      for (std::string line; std::getline(evidence, line);) std::printf("answer      %s\n", line.c_str());
      std::printf("report      %s/tuning.html\n", dir.c_str());
      if (refused.empty())
        std::printf("exports     %s/{best.yaml,config_db.json,mlx5_sysfs.txt,export.txt,trials.csv}\n", dir.c_str());
      else
        std::printf("exports     %s/{best.yaml,trials.csv}; no hardware export (see above)\n", dir.c_str());
      if (!verified.empty()) std::printf("\n%s", experiments::verify_table(verified).c_str());
    }
    // The twin's answer and exports stand; a verify that did not measure every
    // configuration is not an agreement, and says so in the exit status.
    if (const std::size_t measured = experiments::measured_count(verified); measured < verified.size()) {
      std::cerr << "rocelab tune: --verify measured " << measured << " of " << verified.size()
                << " configurations on the virtual lab (why: above and in " << dir
                << "/sim_to_real.txt); the twin's answer and exports are written\n";
      return 3;
    }
    return 0;
  };
}

}  // namespace

ROCELAB_COMMAND(tune, setup);

}  // namespace rocelab::cli

// rocelab tune SPEC [--budget N] [--method bayes|grid|random] [--json] [--db F] [--jobs J]
//                   [--set path=value]... [--resume SWEEP] [--name NAME] [--export-dir DIR]
//                   [--verify N] [--lab-name NAME] [--ports P,...] [--nic-if IF]
// Searches the parameters of the spec's `tuning:` section (experiments/tuning_spec.hpp) on
// the twin, trials in parallel, each stored in the run store (sweeps, trials, runs); an
// interrupted sweep (Ctrl-C, kill, crash) resumes with --resume or by running the same
// command again. Writes the best configuration as a spec, SONiC config_db JSON and mlx5
// sysfs settings; with --verify N re-runs the N best configurations on the virtual lab
// (backend virtual, root) and prints predicted (twin) against measured.
// Exit codes: 0 done; 1 a run, store or export failed; 2 usage or an invalid spec;
// 130 interrupted (what ran is stored).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "output_files.hpp"
#include "rocelab/experiments/exports.hpp"
#include "rocelab/experiments/runner.hpp"
#include "rocelab/experiments/sweep.hpp"
#include "rocelab/experiments/tuning_spec.hpp"
#include "rocelab/experiments/tuning_trials.hpp"
#include "rocelab/experiments/tuning_verify.hpp"

namespace rocelab::cli {
namespace {

std::atomic<bool> tune_stop{false};
void on_tune_signal(int) { tune_stop.store(true); }

struct tune_args {
  std::string spec;
  std::uint32_t budget = 0;
  std::string method;
  bool json = false;
  std::string db = "rocelab.db";
  std::uint32_t jobs = 0;
  std::vector<std::string> sets;
  std::int64_t resume = 0;
  std::string name;
  std::string export_dir;
  std::uint32_t verify = 0;
  std::string lab_name = "tune";
  std::vector<std::string> ports;
  std::string nic_if = "IF";
};

int fail(const std::string& message, int code) {
  std::cerr << "rocelab tune: " << message << "\n";
  return code;
}

// One line on stderr per trial, redrawn in place on a terminal: a bar, the count and the
// best so far with its values.
class progress_bar {
 public:
  progress_bar(std::uint32_t total, const experiments::tuning_settings& s)
      : total_(total), settings_(s), tty_(::isatty(STDERR_FILENO) != 0) {}
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
    if (tty_) std::cerr << "\r\033[K" << text << std::flush;
    else std::cerr << text << "\n";
  }
  void finish() {
    if (tty_) std::cerr << "\n";
  }

 private:
  std::uint32_t total_;
  const experiments::tuning_settings& settings_;
  bool tty_;
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
  app.add_option("--db", args->db, "run store (SQLite) the sweep and its trials go to (default rocelab.db)");
  app.add_option("--jobs", args->jobs, "trials at once (default: the spec's tuning.parallelism)");
  app.add_option("--set", args->sets, "override a spec field: path=value; repeatable")->allow_extra_args(false);
  app.add_option("--resume", args->resume, "continue sweep SWEEP (same spec, --set values and method)");
  app.add_option("--name", args->name, "the sweep's name (default: tuning.name or the spec's name)");
  app.add_option("--export-dir", args->export_dir,
                 "where best.yaml, config_db.json, mlx5_sysfs.txt and trials.csv go (default runs/tune-<sweep>)");
  app.add_option("--verify", args->verify,
                 "re-run the N best configurations on the virtual lab (backend virtual, needs root) and compare");
  app.add_option("--lab-name", args->lab_name, "--verify: the virtual lab's name (default tune)");
  app.add_option("--ports", args->ports, "switch ports of the SONiC export (default Ethernet0, Ethernet4, ...)")
      ->delimiter(',');
  app.add_option("--nic-if", args->nic_if, "the RoCE netdev the mlx5 sysfs export names (default IF)");
  return [args]() -> int {
    auto spec = experiments::load_spec_file(args->spec);
    if (!spec) return fail(spec.error().message(), 2);
    for (const std::string& set : args->sets)
      if (auto st = experiments::apply_override(*spec, set); !st.ok()) return fail(st.message(), 2);
    if (auto st = experiments::validate(*spec); !st.ok()) return fail(st.message(), 2);
    if (spec->backend != "twin")
      return fail("sweeps run on the twin (backend: twin); the virtual lab re-checks the best with --verify", 2);
    auto settings = experiments::load_tuning_file(args->spec, *spec);
    if (!settings) return fail(settings.error().message(), 2);
    if (args->budget) settings->budget = args->budget;
    if (args->jobs) settings->parallelism = args->jobs;
    if (!args->name.empty()) settings->name = args->name;
    if (settings->name.empty()) settings->name = std::filesystem::path(args->spec).stem().string();
    if (!args->method.empty()) {
      auto m = experiments::parse_tuning_method(args->method);
      if (!m) return fail(m.error().message(), 2);
      settings->method = *m;
    }
    if (auto st = experiments::validate(*settings); !st.ok()) return fail(st.message(), 2);

    auto db = store::run_store::open(args->db);
    if (!db) return fail(db.error().message(), 1);
    auto opened = experiments::open_sweep(*db, *spec, *settings,
                                          args->resume ? std::optional<std::int64_t>(args->resume) : std::nullopt);
    if (!opened) return fail(opened.error().message(), opened.error().code() == error_code::invalid_argument ? 2 : 1);
    const std::uint32_t total = settings->method == experiments::tuning_method::grid
                                    ? static_cast<std::uint32_t>(experiments::grid(*settings, settings->budget).size())
                                    : settings->budget;
    if (opened->resumed)
      std::cerr << "rocelab tune: resuming sweep " << opened->id << " (" << settings->name << ") at trial "
                << opened->trials.size() << " of " << total << "\n";
    else
      std::cerr << "rocelab tune: sweep " << opened->id << " (" << settings->name << "), "
                << experiments::to_string(settings->method) << ", " << total << " trials, "
                << settings->parallelism << " at a time, into " << args->db << "\n";
    std::cerr << "rocelab tune: minimizing " << experiments::describe(settings->objective) << "\n";

    struct sigaction sa {}, old_int {}, old_term {};
    sa.sa_handler = on_tune_signal;
    ::sigaction(SIGINT, &sa, &old_int);
    ::sigaction(SIGTERM, &sa, &old_term);
    const std::size_t resumed_trials = opened->trials.size();
    std::vector<experiments::trial> done = opened->trials;
    progress_bar bar(total, *settings);
    auto store_hook = experiments::store_trials(*db, opened->id, *spec, *settings);
    experiments::sweep_hooks hooks;
    hooks.stop = &tune_stop;
    hooks.on_trial = [&](experiments::trial& t, experiments::trial_payload& p) -> status {
      ROCELAB_RETURN_IF_ERROR(store_hook(t, p));
      done.push_back(t);
      bar.update(done, t);
      return status::success();
    };
    auto trials = experiments::run_sweep(*settings, experiments::spec_evaluator(*spec, *settings), opened->trials, hooks);
    bar.finish();
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
    if (!trials) return fail(trials.error().message(), 1);
    const bool interrupted = trials->size() < total;
    if (interrupted)
      std::cerr << "rocelab tune: interrupted after " << trials->size() << " trials; resume with: rocelab tune "
                << args->spec << " --resume " << opened->id << " --db " << args->db << "\n";

    const experiments::trial* best = experiments::best_trial(*trials);
    nlohmann::json out;
    out["sweep"] = opened->id;
    out["name"] = settings->name;
    out["method"] = experiments::to_string(settings->method);
    out["budget"] = total;
    out["resumed_trials"] = resumed_trials;
    out["interrupted"] = interrupted;
    out["objective"] = experiments::describe(settings->objective);
    out["db"] = args->db;
    nlohmann::json jt = nlohmann::json::array();
    for (const experiments::trial& t : *trials) {
      nlohmann::json row{{"index", t.index}, {"params", params_json(*settings, t.values)}, {"evaluated", t.evaluated},
                         {"feasible", t.evaluated && t.feasible}};
      if (t.evaluated) row["objective"] = t.objective;
      if (!t.violated.empty()) row["violated"] = t.violated;
      if (!t.error.empty()) row["error"] = t.error;
      if (t.run_id) row["run"] = t.run_id;
      jt.push_back(std::move(row));
    }
    out["trials"] = std::move(jt);
    if (!best) {
      out["best"] = nullptr;
      if (args->json) std::cout << out.dump(2) << "\n";
      std::cerr << "rocelab tune: no trial met the constraints (" << experiments::describe(settings->objective) << ")\n";
      return interrupted ? 130 : 1;
    }
    out["best"] = {{"trial", best->index}, {"params", params_json(*settings, best->values)}, {"objective", best->objective}};
    if (best->run_id) out["best"]["run"] = best->run_id;
    if (auto m = nlohmann::json::parse(best->metrics_json, nullptr, false); !m.is_discarded()) out["best"]["summary"] = m;

    // Exports of the winner.
    auto best_spec = experiments::apply_trial(*spec, *settings, best->values);
    if (!best_spec) return fail(best_spec.error().message(), 1);
    const std::string dir = args->export_dir.empty() ? "runs/tune-" + std::to_string(opened->id) : args->export_dir;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return fail("creating " + dir + ": " + ec.message(), 1);
    experiments::export_options eo;
    eo.switch_ports = args->ports;
    eo.nic_interface = args->nic_if;
    auto config_db = experiments::sonic_config_db_json(*best_spec, eo);
    if (!config_db) return fail(config_db.error().message(), 1);
    std::string csv = "index";
    for (const auto& p : settings->parameters) csv += "," + p.path;
    csv += ",objective,feasible,run,error\n";
    for (const experiments::trial& t : *trials) {
      csv += std::to_string(t.index);
      for (double v : experiments::applied_values(*settings, t.values)) csv += "," + nlohmann::json(v).dump();
      csv += "," + (t.evaluated ? nlohmann::json(t.objective).dump() : std::string()) + "," +
             (t.evaluated && t.feasible ? "1" : "0") + "," + (t.run_id ? std::to_string(t.run_id) : "") + "," +
             (t.error.empty() ? "" : nlohmann::json(t.error).dump()) + "\n";
    }
    const std::string header = "# The best configuration of sweep " + std::to_string(opened->id) + " (" + settings->name +
                               "), trial " + std::to_string(best->index) + ", objective " +
                               nlohmann::json(best->objective).dump() + "\n# " +
                               experiments::describe(settings->objective) + "\n";
    for (const auto& [name, text] : {std::pair<std::string, std::string>{"best.yaml", header + experiments::to_yaml(*best_spec)},
                                     {"config_db.json", *config_db},
                                     {"mlx5_sysfs.txt", experiments::mlx5_sysfs_settings(*best_spec, eo)},
                                     {"trials.csv", csv}})
      if (auto st = write_text(dir + "/" + name, text); !st.ok()) return fail(st.message(), 1);
    out["exports"] = {{"dir", dir},
                      {"spec", dir + "/best.yaml"},
                      {"sonic_config_db", dir + "/config_db.json"},
                      {"mlx5_sysfs", dir + "/mlx5_sysfs.txt"},
                      {"trials_csv", dir + "/trials.csv"}};

    // Sim-to-real: the best configurations again on the virtual lab.
    std::vector<experiments::verify_row> verified;
    if (args->verify && !interrupted) {
      experiments::virtual_backend_options vo;
      vo.lab_name = args->lab_name;
      auto rows = experiments::verify_on_backend(*spec, *settings, *trials, args->verify, "virtual", vo, &*db,
                                                 opened->id, [](const std::string& line) {
                                                   std::cerr << "rocelab tune: " << line << "\n";
                                                 });
      if (!rows) return fail(rows.error().message(), 1);
      verified = std::move(*rows);
      out["sim_to_real"] = nlohmann::json::parse(experiments::verify_json_text(verified));
      if (auto st = write_text(dir + "/sim_to_real.txt", experiments::verify_table(verified)); !st.ok())
        return fail(st.message(), 1);
    }

    if (args->json) {
      std::cout << out.dump(2) << "\n";
    } else {
      std::printf("sweep       %lld (%s, %s), %zu trials%s\n", static_cast<long long>(opened->id),
                  settings->name.c_str(), experiments::to_string(settings->method), trials->size(),
                  interrupted ? " (interrupted)" : "");
      std::printf("objective   %s\n", experiments::describe(settings->objective).c_str());
      std::printf("best        %.6g at trial %u: %s\n", best->objective, best->index,
                  experiments::describe_values(*settings, best->values).c_str());
      std::printf("exports     %s/{best.yaml,config_db.json,mlx5_sysfs.txt,trials.csv}\n", dir.c_str());
      if (!verified.empty()) std::printf("\n%s", experiments::verify_table(verified).c_str());
    }
    return interrupted ? 130 : 0;
  };
}

}  // namespace

ROCELAB_COMMAND(tune, setup);

}  // namespace rocelab::cli

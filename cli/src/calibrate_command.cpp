// `rocelab calibrate SPEC`: measures the spec's virtual lab (experiments/calibration/
// calibrate_lab.hpp) and writes the calibration file the twin reads (twin.calibration).
// Exit: 0 written, 1 the measurement or the file failed, 2 usage (a twin or lab backend
// included: those are refused with the reason).
#include <chrono>
#include <iostream>

#include "command.hpp"
#include "output_files.hpp"
#include "progress_line.hpp"
#include "rocelab/experiments/lab/calibrate_lab.hpp"
#include "rocelab/experiments/calibration/calibration.hpp"
#include "rocelab/experiments/calibration/calibration_text.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::cli {
namespace {

struct calibrate_args {
  std::string spec;
  std::vector<std::string> sets;
  std::string out;
  std::string db;
  bool force = false;
  std::uint32_t pings = 200;
  std::string lab = "cal";
  bool keep_lab = false;
  bool no_cnp_loop = false;
  bool under_load = false;
  std::string log_dir;
  bool json = false;
  bool quiet = false;
};

std::function<int()> setup(CLI::App& app) {
  auto a = std::make_shared<calibrate_args>();
  app.description("Measure the spec's virtual lab for the twin: base RTT per host pair, send and receive processing "
                  "per host, forwarding latency per switch port, achieved line rate per host, the CNP loop "
                  "(docs/calibrate.md)");
  app.add_option("spec", a->spec, "experiment spec (backend virtual)")->required()->check(CLI::ExistingFile);
  app.add_option("--set", a->sets, "override a spec field: path=value; repeatable")->allow_extra_args(false);
  app.add_option("--out", a->out, "the calibration file (default runs/calibration-<unix time>.yaml)");
  app.add_flag("--force", a->force, "replace --out if it exists");
  app.add_option("--db", a->db, "also keep the calibration in this run store (once per text)");
  app.add_option("--pings", a->pings, "64-byte WRITEs per pair and direction for the base RTT")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u));
  app.add_option("--lab", a->lab, "the lab to use or bring up")->capture_default_str();
  app.add_flag("--keep-lab", a->keep_lab, "leave a lab brought up for the calibration up afterwards");
  app.add_flag("--no-cnp-loop", a->no_cnp_loop, "skip the CNP loop (left not measured in the file)");
  app.add_flag("--under-load", a->under_load,
               "then run the spec's own workload and take the host and port delays from it (how the hosts answer "
               "beside the others' traffic)");
  app.add_option("--log-dir", a->log_dir, "keep each soft NIC's log here");
  app.add_flag("--json", a->json, "print the calibration as JSON instead of the table");
  app.add_flag("--quiet", a->quiet, "no progress line on a terminal");
  return [a]() -> int {
    auto spec = experiments::load_spec_file(a->spec);
    if (!spec.ok()) {
      std::cerr << "rocelab calibrate: " << spec.error().message() << "\n";
      return 2;
    }
    for (const std::string& set : a->sets)
      if (status st = experiments::apply_override(*spec, set); !st.ok()) {
        std::cerr << "rocelab calibrate: --set " << set << ": " << st.message() << "\n";
        return 2;
      }
    if (status st = experiments::validate(*spec); !st.ok()) {
      std::cerr << "rocelab calibrate: " << st.message() << "\n";
      return 2;
    }
    if (status st = experiments::calibration_refusal(*spec); !st.ok()) {
      std::cerr << "rocelab calibrate: " << st.message() << "\n";
      return 2;
    }
    std::string out = a->out;
    auto existing = a->force ? existing_output::replace : existing_output::refuse;
    if (out.empty()) {
      const auto now = std::chrono::system_clock::now().time_since_epoch();
      out = "runs/calibration-" + std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now).count()) + ".yaml";
      existing = existing_output::replace;
    }
    progress_line progress(a->quiet || a->json);
    experiments::calibrate_options o;
    o.pings = a->pings;
    o.lab_name = a->lab;
    o.keep_lab = a->keep_lab;
    o.cnp_loop = !a->no_cnp_loop;
    o.under_load = a->under_load;
    o.log_dir = a->log_dir;
    o.on_step = [&progress](const std::string& what) { progress.update(what, true); };
    auto cal = experiments::calibrate_lab(*spec, o);
    progress.finish();
    if (!cal.ok()) {
      std::cerr << "rocelab calibrate: " << cal.error().message() << "\n";
      return cal.error().code() == error_code::invalid_argument ? 2 : 1;
    }
    if (status st = experiments::write_calibration_file(*cal, out, existing); !st.ok()) {
      std::cerr << "rocelab calibrate: " << st.message() << "\n";
      return 1;
    }
    // Kept with the runs it calibrates: a twin run naming this file records its id.
    std::string stored;
    if (!a->db.empty()) {
      auto db = store::run_store::open(a->db);
      if (!db.ok()) {
        std::cerr << "rocelab calibrate: " << db.error().message() << " (the calibration is in " << out << ")\n";
        return 1;
      }
      auto id = db->add_calibration(cal->lab, cal->taken_at, experiments::calibration_yaml(*cal));
      if (!id.ok()) {
        std::cerr << "rocelab calibrate: " << id.error().message() << " (the calibration is in " << out << ")\n";
        return 1;
      }
      stored = "; stored as calibration " + std::to_string(*id) + " in " + a->db;
    }
    if (a->json) {
      std::cout << experiments::calibration_json(*cal) << "\n";
    } else {
      std::cout << experiments::calibration_table(*cal);
      std::cout << "\ncalibration " << out << " (give it to the twin: twin.calibration: " << out << ")" << stored << "\n";
    }
    return 0;
  };
}

}  // namespace

ROCELAB_COMMAND(calibrate, setup);

}  // namespace rocelab::cli

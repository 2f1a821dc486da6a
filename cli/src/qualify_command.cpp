// `rocelab qualify SPEC.yaml`: switch qualification (experiments/qualify/qualify.hpp) of the
// spec's switch against the spec's own settings: PFC XOFF/XON and headroom, the lossy
// shared-buffer limit, the ECN marking curve (repeated fills per depth), a PFC storm
// with the watchdog's reaction; with --nic-check, a run of the spec with a capture and
// its NIC counters checked against what the capture saw.
//   backend twin:    the switch model in virtual time (the twin's switch as it builds it);
//   backend virtual: the virtual lab's soft switch, probed with real frames from the
//                    lab's host namespaces (root).
// Exit: 0 every check passed, 1 a check failed or the target failed, 2 usage.
#include <cstdio>
#include <iostream>

#include "command.hpp"
#include "output_files.hpp"
#include "progress_line.hpp"
#include "stop_signal.hpp"
#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/qualify/qualify.hpp"
#include "rocelab/experiments/lab/local_backends.hpp"
#include "rocelab/experiments/lab/qualify_lab.hpp"
#include "rocelab/experiments/qualify/qualify_model.hpp"
#include "rocelab/experiments/run/backend_traits.hpp"
#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/fabric/twin/frames.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::cli {
namespace {

struct qualify_args {
  std::string spec;
  std::vector<std::string> sets;
  std::uint32_t samples = 200;
  std::uint32_t points = 7;
  std::uint32_t frame_bytes = 0;
  bool no_watchdog = false;
  bool nic_check = false;
  std::string out;
  bool force = false;  // --out: replace outputs there
  bool json = false;
  bool quiet = false;  // no progress line
};

std::function<int()> setup(CLI::App& app) {
  auto a = std::make_shared<qualify_args>();
  app.description("Qualify the spec's switch against its settings: PFC thresholds, headroom, shared limits, "
                  "ECN marking curve, PFC storm and watchdog");
  app.add_option("spec", a->spec, "experiment spec (its backend picks the switch: twin or virtual)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--set", a->sets, "override a spec field: path=value; repeatable")->allow_extra_args(false);
  app.add_option("--samples", a->samples, "fills per ECN depth point (at least 200 for the report)")
      ->capture_default_str();
  app.add_option("--points", a->points, "ECN depth points (one below Kmin, one above Kmax)")->capture_default_str();
  app.add_option("--frame-bytes", a->frame_bytes, "probe frame size (default: a full RoCE frame at the spec's MTU)");
  app.add_flag("--no-watchdog", a->no_watchdog, "skip the PFC storm checks");
  app.add_flag("--nic-check", a->nic_check,
               "also run the spec with a capture and check NIC counters against it (backend virtual)");
  app.add_option("--out", a->out, "report directory (default runs/qualify-<time>)");
  app.add_flag("--force", a->force, force_help);
  app.add_flag("--json", a->json, "print the result's JSON");
  app.add_flag("--quiet", a->quiet, "no progress line on a terminal");
  return [a]() -> int {
    auto spec = experiments::load_spec_file(a->spec);
    if (!spec.ok()) {
      std::cerr << "rocelab qualify: " << spec.error().message() << "\n";
      return 2;
    }
    for (const std::string& set : a->sets)
      if (status st = experiments::apply_override(*spec, set); !st.ok()) {
        std::cerr << "rocelab qualify: --set " << set << ": " << st.message() << "\n";
        return 2;
      }
    if (status st = experiments::validate(*spec); !st.ok()) {
      std::cerr << "rocelab qualify: " << st.message() << "\n";
      return 2;
    }
    if (a->samples < 200)
      std::cerr << "rocelab qualify: note: " << a->samples << " fills per ECN point (qualification asks 200)\n";

    stop_signal stop;
    experiments::qualify_plan plan;
    plan.ecn_samples = a->samples;
    plan.ecn_points = a->points;
    plan.frame_bytes = a->frame_bytes > 0 ? a->frame_bytes
                                          : static_cast<std::uint32_t>(fabric::twin::roce_max_frame_bytes(spec->nic.mtu_bytes));
    plan.watchdog = !a->no_watchdog;
    plan.lossless_priority = static_cast<std::uint8_t>(spec->nic.data_priority);
    plan.cancel_requested = [&stop] { return stop.requested(); };
    // "check i of n" on a terminal's status line; nothing in a pipe.
    progress_line progress(a->quiet || a->json);
    plan.on_step = [&progress](std::size_t i, std::size_t n, const std::string& what) {
      progress.update("check " + std::to_string(i) + " of " + std::to_string(n) + ": " + what, true);
    };

    result<experiments::qualify_result> result = status(error_code::unsupported, "");
    const experiments::backend_traits backend = experiments::backend_traits_of(spec->backend);
    if (backend.kind == experiments::backend_kind::twin) {
      auto twin = experiments::to_twin_config(*spec, spec->seed);
      if (!twin.ok()) {
        std::cerr << "rocelab qualify: " << twin.error().message() << "\n";
        return 2;
      }
      auto cfg = fabric::twin::switch_config_of(*twin);
      if (!cfg.ok()) {
        std::cerr << "rocelab qualify: " << cfg.error().message() << "\n";
        return 2;
      }
      experiments::model_switch_under_test target;
      result = experiments::qualify_switch(target, *cfg, plan);
    } else if (backend.kind == experiments::backend_kind::virtual_lab) {
      result = experiments::qualify_virtual_lab(*spec, plan);
    } else {
      std::cerr << "rocelab qualify: backend '" << spec->backend
                << "': a real switch is qualified through its driver with hosts to send from, which this lab has "
                   "not got; use backend twin or virtual\n";
      return 2;
    }
    progress.finish();
    if (!result.ok()) {
      std::cerr << "rocelab qualify: " << result.error().message() << "\n";
      if (stop.requested()) return stop_signal::exit_status;
      return result.error().code() == error_code::invalid_argument ? 2 : 1;
    }
    if (a->nic_check) {
      if (backend.kind != experiments::backend_kind::virtual_lab) {
        std::cerr << "rocelab qualify: note: --nic-check needs a capture; the twin has none (use backend virtual)\n";
      } else {
        experiments::virtual_backend_options vo;
        vo.capture = true;
        auto ran = experiments::run_experiment(*spec, {}, vo, [&stop] { return stop.requested(); });
        if (!ran.ok() || ran->repeats.empty()) {
          std::cerr << "rocelab qualify: the NIC check's run: "
                    << (ran.ok() ? std::string("no repeat ran") : ran.error().message()) << "\n";
          return 1;
        }
        auto nic = experiments::nic_capture_checks(ran->repeats.front());
        if (!nic)
          std::cerr << "rocelab qualify: note: the run has no capture; NIC counters not checked\n";
        else
          result->checks.insert(result->checks.end(), nic->begin(), nic->end());
      }
    }
    const std::string json = experiments::qualify_json(*result);
    auto written = write_report_files(a->out, "qualify", {{"qualify.json", json},
                                                          {"qualify.html", experiments::qualify_html(*result)}},
                                      output_policy(a->out, a->force));
    if (!written.ok()) {
      std::cerr << "rocelab qualify: " << written.error().message() << "\n";
      return 1;
    }
    if (a->json) {
      std::cout << json << "\n";
    } else {
      std::cout << experiments::qualify_table(*result);
      std::printf("report      %s/qualify.html, %s/qualify.json\n", written->c_str(), written->c_str());
    }
    return result->passed() ? 0 : 1;
  };
}

}  // namespace

ROCELAB_COMMAND(qualify, setup);

}  // namespace rocelab::cli

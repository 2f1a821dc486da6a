#include "rocelab/experiments/lab/sweep_verify.hpp"

#include "rocelab/experiments/calibration/calibration.hpp"
#include "rocelab/experiments/lab/calibrate_lab.hpp"
#include "rocelab/experiments/lab/local_backends.hpp"
#include "rocelab/experiments/lab/virtual_backend.hpp"

namespace rocelab::experiments {
namespace {

struct chosen_calibration {
  std::optional<calibration> cal;
  std::string label;  // which calibration, or why there is none
};

std::string calibration_label(const calibration& c, const std::string& path) {
  return (c.lab == "virtual" ? std::string("the virtual lab") : "lab '" + c.lab + "'") + ", taken " + c.taken_at +
         " (" + path + ")";
}

result<chosen_calibration> choose_calibration(const experiment_spec& spec, const sweep_verify_request& r) {
  if (!r.calibrate) return chosen_calibration{std::nullopt, "--no-calibration"};
  if (!r.calibration_file.empty()) {
    auto c = read_calibration_file(r.calibration_file);
    if (!c) return c.error().with_context("--calibration");
    return chosen_calibration{*c, calibration_label(*c, r.calibration_file)};
  }
  experiment_spec lab = spec;
  lab.backend = "virtual";
  calibrate_options options;
  options.lab_name = r.lab_name;
  options.on_step = [&r](const std::string& step) {
    if (r.log) r.log("calibrating the lab: " + step);
  };
  auto c = calibrate_lab(lab, options);
  // A lab that cannot be brought up here fails the verify's rows too, which say why once.
  if (!c && c.error().code() == error_code::unavailable)
    return chosen_calibration{std::nullopt, "the virtual lab cannot run here (the verify says why)"};
  if (!c) return chosen_calibration{std::nullopt, "the lab's calibration failed: " + c.error().message()};
  const std::string path = r.dir + "/calibration.yaml";
  ROCELAB_RETURN_IF_ERROR(write_calibration_file(*c, path, r.existing));
  return chosen_calibration{*c, calibration_label(*c, path)};
}

}  // namespace

result<sweep_verification> verify_sweep(store::run_store& db, std::int64_t sweep, const experiment_spec& spec,
                                        const tuning_settings& settings, const std::vector<trial>& trials,
                                        const tuning_answer& answer, const sweep_verify_request& request) {
  std::vector<verify_config> configs;
  for (const auto& b : answer.baselines) configs.push_back({b.name, b.baseline, b.params});
  auto picks = best_trial_configs(spec, settings, trials, request.best);
  if (!picks) return picks.error();
  configs.insert(configs.end(), picks->begin() + 1, picks->end());  // [0] is the spec as written

  verify_options options;
  options.runs = request.runs;
  options.objective = &settings.objective;
  auto chosen = choose_calibration(spec, request);
  if (!chosen) return chosen.error();
  sweep_verification out;
  if (chosen->cal) {
    options.calibration = calibration_yaml(*chosen->cal);
    options.calibration_label = chosen->label;
    auto id = db.add_calibration(chosen->cal->lab, chosen->cal->taken_at, options.calibration);
    if (!id) return id.error();
    out.calibration_id = *id;
    out.calibration_label = chosen->label;
  } else {
    if (request.log) request.log("the twin predicts uncalibrated: " + chosen->label);
    out.calibration_label = "none: " + chosen->label;
  }
  virtual_backend_options vo;
  vo.lab_name = request.lab_name;
  auto rows = verify_configs(spec, configs, "virtual", local_backends(vo), &db, sweep, request.log, options);
  if (!rows) return rows.error();
  out.rows = std::move(*rows);
  ROCELAB_RETURN_IF_ERROR(write_output_file(request.dir + "/sim_to_real.txt", verify_table(out.rows), request.existing));
  return out;
}

}  // namespace rocelab::experiments

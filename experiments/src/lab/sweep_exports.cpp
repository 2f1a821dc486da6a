#include "rocelab/experiments/lab/sweep_exports.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>

#include "rocelab/experiments/lab/sonic_export.hpp"
#include "rocelab/experiments/tuning/exports.hpp"
#include "rocelab/experiments/tuning/tuning_answer.hpp"
#include "rocelab/experiments/tuning/tuning_report.hpp"
#include "rocelab/experiments/tuning/tuning_spec.hpp"

namespace rocelab::experiments {
namespace {

// The answer's spec: the best trial's values, or the winning baseline's fields.
result<experiment_spec> answer_spec(const experiment_spec& spec, const tuning_settings& settings,
                                    const std::vector<trial>& trials, const tuning_answer& answer) {
  if (answer.best_trial) {
    for (const trial& t : trials)
      if (t.index == *answer.best_trial) return apply_trial(spec, settings, t.values);
  } else {
    for (const auto& c : baseline_configs(settings))
      if (c.name == answer.best_baseline) return apply_baseline(spec, c);
  }
  return status(error_code::not_found, "the answer names no trial or baseline of the sweep");
}

std::string trials_csv(const tuning_settings& settings, const std::vector<trial>& trials) {
  std::string csv = "index";
  for (const auto& p : settings.parameters) csv += "," + p.path;
  csv += ",objective,feasible,run,error\n";
  for (const trial& t : trials) {
    csv += std::to_string(t.index);
    for (double v : applied_values(settings, t.values)) csv += "," + nlohmann::json(v).dump();
    csv += "," + (t.evaluated ? nlohmann::json(t.objective).dump() : std::string()) + "," +
           (t.evaluated && t.feasible ? "1" : "0") + "," + (t.run_id ? std::to_string(t.run_id) : "") + "," +
           (t.error.empty() ? "" : nlohmann::json(t.error).dump()) + "\n";
  }
  return csv;
}

}  // namespace

const std::vector<std::string>& sweep_export_names() {
  static const std::vector<std::string> names{"best.yaml",      "trials.csv", "tuning.html",   "config_db.json",
                                              "mlx5_sysfs.txt", "export.txt", "hardware.yaml", "sim_to_real.txt",
                                              "calibration.yaml"};
  return names;
}

result<sweep_exports> sweep_export_files(std::int64_t sweep, const experiment_spec& spec,
                                         const tuning_settings& settings, const std::vector<trial>& trials,
                                         const tuning_answer& answer, const sweep_export_request& request) {
  auto best_spec = answer_spec(spec, settings, trials, answer);
  if (!best_spec) return best_spec.error().with_context("exporting sweep " + std::to_string(sweep));
  const std::string id = std::to_string(sweep);
  const std::string& dir = request.dir;
  // What the exports hold: the answer of the rule, a baseline when no trial beat both.
  const std::string answer_words = answer_choice_words(answer);
  const std::string header = "# The answer of sweep " + id + " (" + settings.name + "): " + answer_words +
                             "; objective " + nlohmann::json(answer.best_objective).dump() +
                             " on the search seeds\n# " + describe(settings.objective) + "\n";
  sweep_exports out;
  out.files = {{"best.yaml", header + to_yaml(*best_spec)},
               {"trials.csv", trials_csv(settings, trials)},
               {"tuning.html", tuning_report_html(settings.name + " (sweep " + id + ")", settings, answer)}};
  nlohmann::json j = {{"dir", dir}, {"spec", dir + "/best.yaml"}, {"trials_csv", dir + "/trials.csv"},
                      {"report", dir + "/tuning.html"}};

  // Hardware exports: only a configuration in hardware units (exports.hpp).
  const bool derived = request.export_for_gbps > 0;
  result<experiment_spec> hw_spec =
      derived ? hardware_equivalent(*best_spec, request.export_for_gbps) : result<experiment_spec>(*best_spec);
  if (hw_spec && !derived)
    if (auto st = check_hardware_export(*hw_spec); !st.ok()) hw_spec = st;
  if (hw_spec) {
    export_options eo;
    eo.switch_ports = request.switch_ports;
    eo.nic_interface = request.nic_interface;
    auto config_db = sonic_config_db_json(*hw_spec, eo);
    if (!config_db) return config_db.error().with_context("exporting sweep " + id);
    const std::string target = export_target_text(*hw_spec);
    out.files.emplace_back("config_db.json", *config_db);
    out.files.emplace_back("mlx5_sysfs.txt", mlx5_sysfs_settings(*hw_spec, eo));
    out.files.emplace_back("export.txt", "The exports of sweep " + id + " are " + answer_words + ", " + target + ".\n" +
                                             (derived ? "Derived from the answer's spec for this link speed "
                                                        "(hardware.yaml): tune on the twin at this speed to confirm.\n"
                                                      : std::string()));
    if (derived)
      out.files.emplace_back("hardware.yaml", "# " + answer.best_label + " of sweep " + id + " in hardware units " +
                                                  target + "\n" + to_yaml(*hw_spec));
    j["sonic_config_db"] = dir + "/config_db.json";
    j["mlx5_sysfs"] = dir + "/mlx5_sysfs.txt";
    j["target"] = {{"link_gbps", hw_spec->topology.link_gbps},
                   {"nic", "NVIDIA ConnectX-4 or later (mlx5)"},
                   {"switch", "SONiC"},
                   {"text", target},
                   {"derived", derived}};
    if (derived) j["hardware_spec"] = dir + "/hardware.yaml";
  } else {
    out.refused = hw_spec.error().message();
    j["refused"] = out.refused;
    out.stale = {"config_db.json", "mlx5_sysfs.txt", "export.txt", "hardware.yaml"};
  }
  out.json_text = j.dump();
  return out;
}

status write_sweep_exports(const sweep_exports& exports, const std::string& dir, existing_output existing) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return status(error_code::io_error, "creating " + dir + ": " + ec.message());
  for (const std::string& stale : exports.stale) std::filesystem::remove(dir + "/" + stale, ec);
  for (const auto& [name, text] : exports.files)
    ROCELAB_RETURN_IF_ERROR(write_output_file(dir + "/" + name, text, existing));
  return status::success();
}

}  // namespace rocelab::experiments

#pragma once
// What a sweep exports once it is answered (rocelab tune writes them; lab.tune can):
// best.yaml (the answer's spec: the best trial's values or the winning baseline's fields,
// headed by the answer in words), trials.csv, tuning.html, and when the answer is a
// hardware configuration (or `export_for_gbps` derives one, hardware.yaml) the SONiC
// config_db JSON, the mlx5 sysfs settings and export.txt naming the target. In the lab
// adapter because the config_db comes from the SONiC driver's emitter (sonic_export.hpp).
// sweep_export_files is pure (the texts); write_sweep_exports writes them.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "rocelab/common/output_file.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/tuning/tuning.hpp"
#include "rocelab/experiments/tuning/tuning_baselines.hpp"

namespace rocelab::experiments {

struct sweep_export_request {
  std::string dir;                        // where the files go (named in `json_text`)
  std::vector<std::string> switch_ports;  // the SONiC export's ports (empty: SONiC's defaults)
  std::string nic_interface = "IF";       // the netdev the mlx5 sysfs paths name
  double export_for_gbps = 0;             // > 0: derive hardware values for this link speed
};

// Every file a sweep may export, for a check that a directory holds none before a sweep.
[[nodiscard]] const std::vector<std::string>& sweep_export_names();

struct sweep_exports {
  std::vector<std::pair<std::string, std::string>> files;  // file name in the dir -> text
  // Hardware files an earlier tuning may have left in the dir: none may stay beside
  // exports that have no hardware configuration.
  std::vector<std::string> stale;
  std::string refused;    // why there is no hardware export; empty when there is one
  std::string json_text;  // the "exports" object of rocelab tune --json
};

// Errors: the answer's spec cannot be made (a trial's values or a baseline's fields do not
// apply), the SONiC emitter refusing the values.
[[nodiscard]] result<sweep_exports> sweep_export_files(std::int64_t sweep, const experiment_spec& spec,
                                                       const tuning_settings& settings,
                                                       const std::vector<trial>& trials, const tuning_answer& answer,
                                                       const sweep_export_request& request);

// Creates `dir`, removes the stale hardware files there, writes every file through
// output_file (`existing`: refuse an output that is there already, or replace it).
// Errors: the directory or a file cannot be made, naming it.
[[nodiscard]] status write_sweep_exports(const sweep_exports& exports, const std::string& dir,
                                         existing_output existing);

}  // namespace rocelab::experiments

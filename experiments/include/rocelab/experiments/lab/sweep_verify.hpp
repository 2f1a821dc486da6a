#pragma once
// A sweep's --verify, as a front end asks it once the sweep is answered: the baselines (what
// the best must beat on the lab too) and the `best` best trials, each run `runs` times on the
// virtual lab beside the twin replaying what the lab ran (tuning_verify.hpp), the twin
// calibrated by the lab's own calibration: the one the request names, else one taken now on
// the lab the verify runs on (written as calibration.yaml in `dir`), or none when asked or
// when it cannot be taken here (then the rows say why they are not measured either). The
// calibration is kept in the store with the runs it calibrates; sim_to_real.txt is written
// in `dir`. In the lab adapter because it brings the virtual lab up.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rocelab/common/output_file.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/tuning/tuning.hpp"
#include "rocelab/experiments/tuning/tuning_baselines.hpp"
#include "rocelab/experiments/tuning/tuning_verify.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::experiments {

struct sweep_verify_request {
  std::uint32_t best = 1;             // trials verified beside the baselines
  std::uint32_t runs = 3;             // lab runs of each configuration
  std::string lab_name = "tune";
  std::string calibration_file;       // a calibration taken earlier; empty: take the lab's now
  bool calibrate = true;              // false: the twin predicts from the spec alone
  std::string dir;                    // calibration.yaml and sim_to_real.txt
  existing_output existing = existing_output::replace;
  std::function<void(const std::string&)> log;
};

struct sweep_verification {
  std::vector<verify_row> rows;
  std::optional<std::int64_t> calibration_id;  // in the store; none: uncalibrated
  std::string calibration_label;               // which calibration, or "none: why"
};

// Errors: a calibration file that cannot be read (naming it), a configuration that cannot
// be set, the twin's or the store's failures, the files that cannot be written. A lab run
// that fails is a row with its error, not an error (verify_configs).
[[nodiscard]] result<sweep_verification> verify_sweep(store::run_store& db, std::int64_t sweep,
                                                      const experiment_spec& spec, const tuning_settings& settings,
                                                      const std::vector<trial>& trials, const tuning_answer& answer,
                                                      const sweep_verify_request& request);

}  // namespace rocelab::experiments

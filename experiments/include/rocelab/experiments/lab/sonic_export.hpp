#pragma once
// A tuned configuration's switch side (tuning/exports.hpp: export_switch_settings) as
// SONiC config_db JSON: WRED_PROFILE/QUEUE for ECN, PORT_QOS_MAP for PFC,
// BUFFER_PROFILE/BUFFER_PG for the lossless PG, DSCP_TO_TC_MAP for the lossless class.
// Written by the SONiC driver's emitter (fabric/drivers/sonic_switch_driver.hpp:
// to_config_db), so what is exported is exactly what `rocelab` would apply over SSH; that
// emitter belongs to the drivers adapter, hence this lives in the lab adapter
// (rocelab::experiments_lab). Pure; no I/O.

#include <string>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/tuning/exports.hpp"

namespace rocelab::experiments {

// config_db JSON ({"WRED_PROFILE": {...}, "QUEUE": {...}, ...}), pretty-printed.
// Errors: the spec's values out of the driver's ranges.
[[nodiscard]] result<std::string> sonic_config_db_json(const experiment_spec& spec, const export_options& options);

}  // namespace rocelab::experiments

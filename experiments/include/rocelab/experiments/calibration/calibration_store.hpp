#pragma once
// A twin run's calibration in the run store: the calibration its spec's twin.calibration
// names, kept once per text (store::run_store::add_calibration) and recorded as the run's,
// so a run says which lab it modelled even after the file changed.

#include <cstdint>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::experiments {

// For a twin run whose spec sets twin.calibration: stores the calibration (as
// calibration_yaml writes it, so the same measurement is one row however it was
// formatted or inlined) and records it for `run`. Other backends model no calibration,
// and a spec without one stores nothing. Errors name the field and the file.
[[nodiscard]] status record_calibration(store::run_store& db, std::int64_t run, const experiment_spec& spec);

}  // namespace rocelab::experiments

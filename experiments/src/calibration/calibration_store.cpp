#include "rocelab/experiments/calibration/calibration_store.hpp"

#include "rocelab/experiments/calibration/calibration.hpp"
#include "rocelab/experiments/run/backend_traits.hpp"
#include "rocelab/experiments/spec/build.hpp"

namespace rocelab::experiments {

status record_calibration(store::run_store& db, std::int64_t run, const experiment_spec& spec) {
  if (!backend_traits_of(spec.backend).simulated || spec.twin.calibration.empty()) return status::success();
  auto cal = calibration_of(spec);
  if (!cal) return cal.error();
  auto id = db.add_calibration(cal->lab, cal->taken_at, calibration_yaml(*cal));
  if (!id) return id.error();
  return db.set_calibration(run, *id);
}

}  // namespace rocelab::experiments

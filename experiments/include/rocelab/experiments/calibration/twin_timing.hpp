#pragma once
// What the twin models from a lab's calibration (fabric::twin::lab_timing): its hosts,
// found by name among the topology's ("h1" is host index 0, as every backend's records
// name them), and its switch ports. A spec's twin.calibration comes here through
// to_twin_config (spec/build.hpp).

#include <string>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/calibration/calibration.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::experiments {

// The calibration's link speed may differ from the topology's by this much (relative)
// and still describe it.
inline constexpr double calibration_link_tolerance = 0.01;

// Per host: its send and receive processing and achieved rate. Per switch port: on a
// single switch the port's own forwarding where the calibration measured it, elsewhere
// (and on every port of a leaf-spine) every port's samples pooled. Errors name `source`
// and what does not fit: a topology host the calibration lacks, a link speed more than
// calibration_link_tolerance from the topology's.
[[nodiscard]] result<fabric::twin::lab_timing> lab_timing_of(const calibration& c,
                                                             const fabric::twin::topology_config& topology,
                                                             const std::string& source);

}  // namespace rocelab::experiments

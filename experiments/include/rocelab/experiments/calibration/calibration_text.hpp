#pragma once
// A calibration for a reader: the table `rocelab calibrate` prints (per host send and
// receive processing p50/p99 and achieved rate, per port forwarding p50/p99, per pair RTT
// p50/p99, the CNP loop) and the same as JSON (--json). Times in microseconds in the
// table, nanoseconds in the JSON; a delay not measured reads "not measured" / null.

#include <string>

#include "rocelab/experiments/calibration/calibration.hpp"

namespace rocelab::experiments {

[[nodiscard]] std::string calibration_table(const calibration& c);
[[nodiscard]] std::string calibration_json(const calibration& c);  // one JSON object

}  // namespace rocelab::experiments

#pragma once
// The ranges the backends enforce on spec values, in one table, so that a spec outside
// them is refused when it is checked (validate) with its file:line and field, not later by
// a backend that no longer knows where the value came from. The field table (spec.cpp)
// keeps the ranges of a value on its own; these rows are what a backend adds: the twin's
// 16-bit port and device numbers, rates in whole bit/s in 64 bits, and values derived
// from several fields (a leaf-spine's uplink rate).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::experiments {

struct spec_limit {
  std::string path;    // the field an error names
  double lo = 0, hi = 0;
  std::string unit;    // printed after the numbers ("Gb/s"), may be empty
  std::string reason;  // which backend needs it, and why
  // The value to check; nullopt when the row does not apply to this spec.
  std::function<std::optional<double>(const experiment_spec&)> value;
};

[[nodiscard]] const std::vector<spec_limit>& spec_limits();

// invalid_argument "file:line: path: value is outside lo..hi: reason" for the first row
// the spec breaks.
[[nodiscard]] status check_limits(const experiment_spec& spec);

}  // namespace rocelab::experiments

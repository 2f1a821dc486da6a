#pragma once
// The files a spec names, and the rule that a spec received from another host names none.
//
// workload.background.cdf names a built-in CDF (websearch, hadoop), a CDF file (relative to
// the spec's folder), or carries the CDF itself: a value with a line break is the CDF's
// points in the file format (flow_size_cdf.hpp). twin.calibration names a calibration file
// or, with a line break, carries its YAML. workload.flow_list names a flow list file or,
// with a line break, carries its text (traffic/flow_list.hpp). A client that sends a spec
// to a controller inlines the files first (inline_file_references), and the controller
// refuses a received spec that still names a file (refuse_file_references): a token holder
// must not make the controller's host open paths of the holder's choosing.

#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::experiments {

// The spec fields whose value may name a file.
[[nodiscard]] const std::vector<std::string>& file_reference_fields();

// Whether a workload.background.cdf value carries the points rather than a name.
[[nodiscard]] bool is_inline_cdf(std::string_view value);
// Whether a twin.calibration value carries the calibration's YAML rather than a path.
[[nodiscard]] bool is_inline_calibration(std::string_view value);
// Whether a workload.flow_list value carries the flows rather than a path.
[[nodiscard]] bool is_inline_flow_list(std::string_view value);

// Whether the value of a file-reference field names a file (not a built-in, not inline).
[[nodiscard]] bool names_file(std::string_view field, std::string_view value);

// Reads each file the spec names (bounded, regular files only; relative paths from
// spec.base_dir) and puts its contents in the field's place. Errors name the field's
// origin and the path.
[[nodiscard]] status inline_file_references(experiment_spec& spec);

// invalid_argument naming the field's origin when a file-reference field names a file.
[[nodiscard]] status refuse_file_references(const experiment_spec& spec);

}  // namespace rocelab::experiments

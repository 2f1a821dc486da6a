#include "rocelab/experiments/spec/spec_files.hpp"

#include <filesystem>

#include "rocelab/common/bounded_file.hpp"
#include "rocelab/traffic/flow_size_cdf.hpp"

namespace rocelab::experiments {
namespace {

constexpr std::string_view cdf_field = "workload.background.cdf";
constexpr std::string_view calibration_field = "twin.calibration";
constexpr std::string_view flow_list_field = "workload.flow_list";
constexpr std::size_t max_calibration_bytes = 16u << 20;

status bad(const std::string& what) { return {error_code::invalid_argument, what}; }

std::string origin_of(const experiment_spec& spec, const std::string& path) {
  if (auto it = spec.origins.find(path); it != spec.origins.end()) return it->second;
  return spec.source_file.empty() ? "(default)" : spec.source_file;
}

bool is_builtin_cdf(std::string_view value) {
  for (const auto& name : traffic::flow_size_cdf::builtin_names())
    if (value == name) return true;
  return false;
}

}  // namespace

const std::vector<std::string>& file_reference_fields() {
  static const std::vector<std::string> fields{std::string(cdf_field), std::string(calibration_field),
                                               std::string(flow_list_field)};
  return fields;
}

bool is_inline_cdf(std::string_view value) { return value.find('\n') != std::string_view::npos; }

bool is_inline_calibration(std::string_view value) { return value.find('\n') != std::string_view::npos; }

bool is_inline_flow_list(std::string_view value) { return value.find('\n') != std::string_view::npos; }

bool names_file(std::string_view field, std::string_view value) {
  if (field == cdf_field) return !value.empty() && !is_builtin_cdf(value) && !is_inline_cdf(value);
  if (field == calibration_field) return !value.empty() && !is_inline_calibration(value);
  if (field == flow_list_field) return !value.empty() && !is_inline_flow_list(value);
  return false;
}

namespace {

// The file's text in place of its path, after a comment naming the file (YAML and the CDF
// format both take `#` comments); the line break marks the value as inline.
status inline_one(experiment_spec& spec, std::string_view field, std::string& value, std::size_t max_bytes,
                  const char* what) {
  std::filesystem::path path(value);
  if (path.is_relative() && !spec.base_dir.empty()) path = std::filesystem::path(spec.base_dir) / path;
  auto text = read_bounded_file(path.string(), max_bytes, what);
  if (!text) return bad(origin_of(spec, std::string(field)) + ": " + std::string(field) + ": " + text.error().message());
  // Trailing blanks go, as a field's value loses them when it is read back.
  std::string inlined = "# " + path.filename().string() + "\n" + *text;
  inlined.erase(inlined.find_last_not_of(" \t\r\n") + 1);
  value = std::move(inlined);
  return status::success();
}

}  // namespace

status inline_file_references(experiment_spec& spec) {
  if (names_file(calibration_field, spec.twin.calibration))
    ROCELAB_RETURN_IF_ERROR(inline_one(spec, calibration_field, spec.twin.calibration, max_calibration_bytes,
                                       "calibration file"));
  // The comment inlining puts first names the file in the flow list's errors; every format
  // skips '#' lines.
  if (names_file(flow_list_field, spec.workload.flow_list))
    ROCELAB_RETURN_IF_ERROR(inline_one(spec, flow_list_field, spec.workload.flow_list, max_scenario_file_bytes,
                                       "flow list file"));
  background_spec& b = spec.workload.background;
  if (!b.enabled || !names_file(cdf_field, b.cdf)) return status::success();
  // The comment names where the points came from (reports, the stored spec).
  return inline_one(spec, cdf_field, b.cdf, max_cdf_file_bytes, "CDF file");
}

status refuse_file_references(const experiment_spec& spec) {
  if (names_file(calibration_field, spec.twin.calibration))
    return bad(origin_of(spec, std::string(calibration_field)) + ": " + std::string(calibration_field) +
               ": names a file, and a spec received over the network carries data, not paths (the client "
               "inlines the files a spec names: rocelab run --controller does)");
  if (names_file(flow_list_field, spec.workload.flow_list))
    return bad(origin_of(spec, std::string(flow_list_field)) + ": " + std::string(flow_list_field) +
               ": names a file, and a spec received over the network carries data, not paths (the client "
               "inlines the files a spec names: rocelab run --controller does)");
  const background_spec& b = spec.workload.background;
  if (b.enabled && names_file(cdf_field, b.cdf))
    return bad(origin_of(spec, std::string(cdf_field)) + ": " + std::string(cdf_field) +
               ": names a file, and a spec received over the network carries data, not paths (the client "
               "inlines the files a spec names: rocelab run --controller does)");
  return status::success();
}

}  // namespace rocelab::experiments

#include "rocelab/experiments/spec/spec_files.hpp"

#include <filesystem>

#include "rocelab/common/bounded_file.hpp"
#include "rocelab/traffic/flow_size_cdf.hpp"

namespace rocelab::experiments {
namespace {

constexpr std::string_view cdf_field = "workload.background.cdf";

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
  static const std::vector<std::string> fields{std::string(cdf_field)};
  return fields;
}

bool is_inline_cdf(std::string_view value) { return value.find('\n') != std::string_view::npos; }

bool names_file(std::string_view field, std::string_view value) {
  if (field == cdf_field) return !value.empty() && !is_builtin_cdf(value) && !is_inline_cdf(value);
  return false;
}

status inline_file_references(experiment_spec& spec) {
  background_spec& b = spec.workload.background;
  if (!b.enabled || !names_file(cdf_field, b.cdf)) return status::success();
  std::filesystem::path path(b.cdf);
  if (path.is_relative() && !spec.base_dir.empty()) path = std::filesystem::path(spec.base_dir) / path;
  auto text = read_bounded_file(path.string(), max_cdf_file_bytes, "CDF file");
  if (!text) return bad(origin_of(spec, std::string(cdf_field)) + ": " + std::string(cdf_field) + ": " +
                        text.error().message());
  // The comment names where the points came from (reports, the stored spec); the line
  // break it ends with marks the value as inline.
  // Trailing blanks go, as a field's value loses them when it is read back.
  std::string inlined = "# " + path.filename().string() + "\n" + *text;
  inlined.erase(inlined.find_last_not_of(" \t\r\n") + 1);
  b.cdf = std::move(inlined);
  return status::success();
}

status refuse_file_references(const experiment_spec& spec) {
  const background_spec& b = spec.workload.background;
  if (b.enabled && names_file(cdf_field, b.cdf))
    return bad(origin_of(spec, std::string(cdf_field)) + ": " + std::string(cdf_field) +
               ": names a file, and a spec received over the network carries data, not paths (the client "
               "inlines the files a spec names: rocelab run --controller does)");
  return status::success();
}

}  // namespace rocelab::experiments

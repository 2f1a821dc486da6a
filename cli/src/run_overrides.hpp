#pragma once
// A stored run's overrides: the store keeps the --set values a run started with among its
// parameters, beside notes the controller and the tuner add (capture file, tuning role,
// submission id). The overrides are the parameters that name a spec field.

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::cli {

[[nodiscard]] inline bool is_spec_field(const std::string& path) {
  static const std::set<std::string> fields = [] {
    std::set<std::string> s;
    for (const auto& f : experiments::field_table()) s.insert(f.path);
    return s;
  }();
  return fields.contains(path);
}

// (path, value) of each override, in path order.
[[nodiscard]] inline std::vector<std::pair<std::string, std::string>> overrides_of(const store::run_info& r) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [path, value] : r.parameters)
    if (is_spec_field(path)) out.emplace_back(path, value);
  return out;
}

}  // namespace rocelab::cli

#pragma once
// Where a spec value came from, for errors: "file:line" of the path, else of its nearest
// section, else the file with "(default)", else "(default)". Private to experiments/src.

#include <string>

#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::experiments {

inline std::string origin_of(const experiment_spec& spec, std::string path) {
  for (;;) {
    if (auto it = spec.origins.find(path); it != spec.origins.end()) return it->second;
    const auto dot = path.rfind('.');
    if (dot == std::string::npos) break;
    path.resize(dot);
  }
  return spec.source_file.empty() ? "(default)" : spec.source_file + " (default)";
}

}  // namespace rocelab::experiments

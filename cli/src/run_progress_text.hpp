#pragma once
// The text of a virtual-lab run's progress line: flows done of those started, elapsed
// time, and the PFC frames the switch has sent so far (left out while unknown).

#include <cstdio>
#include <string>

#include "rocelab/experiments/run/backend.hpp"

namespace rocelab::cli {

inline std::string virtual_run_progress_text(const experiments::run_progress& p, double elapsed_s) {
  char text[160];
  int n = std::snprintf(text, sizeof text, "flows done %llu of %llu started, %.1f s",
                        static_cast<unsigned long long>(p.completed), static_cast<unsigned long long>(p.posted),
                        elapsed_s);
  if (p.pause_frames && n > 0 && static_cast<std::size_t>(n) < sizeof text)
    std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), ", pauses so far %llu",
                  static_cast<unsigned long long>(*p.pause_frames));
  return text;
}

}  // namespace rocelab::cli

#pragma once
// The virtual lab that a run (run_virtual) and a calibration (calibrate_lab) take: private
// to the lab adapter, defined in virtual_backend.cpp.

#include <functional>
#include <string>

#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::experiments {

// The lab a run or a calibration uses: the one up under `lab_name` when it fits the spec
// (at least its hosts, its link rate, a live switch), else one brought up here from
// lab_options_for (on_bring_up is told first). `brought_up`: this call brought it up, so
// the caller takes it down. A lab under that name that does not fit is an error naming
// the command that takes it down.
struct spec_lab {
  agents::lab::lab_state state;
  bool brought_up = false;
};
[[nodiscard]] result<spec_lab> lab_for_spec(const experiment_spec& spec, const std::string& lab_name,
                                            const std::string& state_root, const std::string& rocelab_binary,
                                            const std::function<void()>& on_bring_up = {});

}  // namespace rocelab::experiments

#pragma once
// Runs a spec on the experiments core's backends (core_backends(): the twin), once per
// repeat (seeds seed .. seed+repeats-1). A spec whose backend is not registered there
// (virtual, lab) is unsupported, naming the registered ones; callers that run those build
// a registry with them (experiments/lab/local_backends.hpp, the controller).

#include <cstdint>
#include <functional>

#include "rocelab/experiments/run/backend.hpp"

namespace rocelab::experiments {

// core_backends().run(spec, {on_repeat, cancel_requested}); see run_hooks.
[[nodiscard]] result<experiment_result> run_experiment(
    const experiment_spec& spec, const std::function<void(std::uint32_t, std::uint64_t)>& on_repeat = {},
    const std::function<bool()>& cancel_requested = {});

}  // namespace rocelab::experiments

#pragma once
// Runs a validated spec on its backend, once per repeat (seeds seed .. seed+repeats-1).
// Backends: twin, virtual (virtual_backend.hpp: the namespace lab with soft NICs; needs
// root); `lab` says it is not available yet (unsupported).

#include <cstdint>
#include <functional>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec.hpp"
#include "rocelab/experiments/virtual_backend.hpp"

namespace rocelab::experiments {

struct experiment_result {
  std::vector<std::uint64_t> seeds;
  std::vector<run_records> repeats;  // one per seed
};

// `on_repeat(i, seed)` is called before each repeat starts (progress output).
// `virtual_options` is read by the virtual backend only.
// `cancel_requested` (twin): polled while the twin runs; once it returns true the current
// repeat ends where it is (its records so far are kept, unfinished flows incomplete) and
// no further repeat starts. The caller that answered true knows the result is partial.
[[nodiscard]] result<experiment_result> run_experiment(
    const experiment_spec& spec, const std::function<void(std::uint32_t, std::uint64_t)>& on_repeat = {},
    const virtual_backend_options& virtual_options = {}, const std::function<bool()>& cancel_requested = {});

}  // namespace rocelab::experiments

#include "rocelab/experiments/run/twin_backend.hpp"

#include "rocelab/experiments/spec/build.hpp"

namespace rocelab::experiments {

result<experiment_result> twin_backend::run(const experiment_spec& spec, const run_hooks& hooks) const {
  return run_repeats(spec, hooks, [&](std::uint32_t i, std::uint64_t seed) -> result<run_records> {
    auto config = to_twin_config(spec, seed);
    if (!config) return config.error();
    config->cancel_requested = hooks.cancel_requested;
    auto load = make_workload(spec, seed);
    if (!load) return load.error();
    auto records = fabric::twin::run_twin(*config, **load);
    if (!records) return records.error().with_context(repeat_context(i, seed));
    return std::move(*records);
  });
}

}  // namespace rocelab::experiments

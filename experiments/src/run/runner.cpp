#include "rocelab/experiments/run/runner.hpp"

namespace rocelab::experiments {

result<experiment_result> run_experiment(const experiment_spec& spec,
                                         const std::function<void(std::uint32_t, std::uint64_t)>& on_repeat,
                                         const std::function<bool()>& cancel_requested) {
  return core_backends().run(spec, {on_repeat, cancel_requested, {}});
}

}  // namespace rocelab::experiments

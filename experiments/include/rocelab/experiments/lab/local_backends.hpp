#pragma once
// The backends this process runs itself: the core's twin and the `virtual` backend (the
// virtual lab, virtual_backend.hpp: namespaces, the soft switch and soft NIC processes;
// needs root). Part of the experiments lab adapter (rocelab::experiments_lab).

#include <cstdint>
#include <functional>

#include "rocelab/experiments/lab/virtual_backend.hpp"
#include "rocelab/experiments/run/backend.hpp"
#include "rocelab/experiments/run/runner.hpp"

namespace rocelab::experiments {

// Each repeat is run_virtual with `options`; the run hooks' cancel_requested, when given,
// replaces options.cancel_requested. Each repeat keeps its own capture: the first under
// options.capture_file, the others with -r<i> before the extension (capture.pcapng,
// capture-r1.pcapng, ...).
class virtual_backend final : public backend {
 public:
  explicit virtual_backend(virtual_backend_options options) : options_(std::move(options)) {}
  [[nodiscard]] result<experiment_result> run(const experiment_spec& spec, const run_hooks& hooks) const override;
  // as_the_virtual_lab_runs_it.
  [[nodiscard]] experiment_spec as_run_here(const experiment_spec& spec) const override;

 private:
  virtual_backend_options options_;
};

// Registers a virtual_backend with `options` as `virtual`.
[[nodiscard]] status add_virtual_backend(backend_registry& registry, virtual_backend_options options = {});

// core_backends() with the virtual backend (`options`) added.
[[nodiscard]] backend_registry local_backends(virtual_backend_options options = {});

// local_backends(virtual_options).run(spec, {on_repeat, cancel_requested}).
[[nodiscard]] result<experiment_result> run_experiment(const experiment_spec& spec,
                                                       const std::function<void(std::uint32_t, std::uint64_t)>& on_repeat,
                                                       const virtual_backend_options& virtual_options,
                                                       const std::function<bool()>& cancel_requested = {});

}  // namespace rocelab::experiments

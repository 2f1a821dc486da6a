#include "rocelab/experiments/lab/local_backends.hpp"

#include <string>

#include "rocelab/experiments/run/backend_traits.hpp"

namespace rocelab::experiments {
namespace {

// capture.pcapng -> capture-r<i>.pcapng; a name without an extension gets the suffix.
std::string repeat_capture_file(const std::string& file, std::uint32_t i) {
  const auto dot = file.rfind('.');
  const auto slash = file.rfind('/');
  const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  const std::string suffix = "-r" + std::to_string(i);
  return has_ext ? file.substr(0, dot) + suffix + file.substr(dot) : file + suffix;
}

}  // namespace

result<experiment_result> virtual_backend::run(const experiment_spec& spec, const run_hooks& hooks) const {
  return run_repeats(spec, hooks, [&](std::uint32_t i, std::uint64_t seed) -> result<run_records> {
    virtual_backend_options options = options_;
    if (hooks.cancel_requested) options.cancel_requested = hooks.cancel_requested;
    if (hooks.on_progress) options.on_progress = hooks.on_progress;
    if (i > 0 && !options.capture_file.empty()) options.capture_file = repeat_capture_file(options.capture_file, i);
    auto records = run_virtual(spec, seed, options);
    if (!records) return records.error().with_context(repeat_context(i, seed));
    return std::move(*records);
  });
}

experiment_spec virtual_backend::as_run_here(const experiment_spec& spec) const {
  return as_the_virtual_lab_runs_it(spec);
}

status add_virtual_backend(backend_registry& registry, virtual_backend_options options) {
  return registry.add(std::string(backend_name(backend_kind::virtual_lab)),
                      std::make_shared<virtual_backend>(std::move(options)));
}

backend_registry local_backends(virtual_backend_options options) {
  backend_registry r = core_backends();
  // core_backends() holds the twin only, so `virtual` is free.
  (void)add_virtual_backend(r, std::move(options));
  return r;
}

result<experiment_result> run_experiment(const experiment_spec& spec,
                                         const std::function<void(std::uint32_t, std::uint64_t)>& on_repeat,
                                         const virtual_backend_options& virtual_options,
                                         const std::function<bool()>& cancel_requested) {
  return local_backends(virtual_options).run(spec, {on_repeat, cancel_requested, {}});
}

}  // namespace rocelab::experiments

// Kept apart from the rest of the library: it is the only part that needs the twin
// engine linked (spec, build and summary tests do not).
#include "rocelab/experiments/runner.hpp"

#include "rocelab/experiments/build.hpp"

namespace rocelab::experiments {

result<experiment_result> run_experiment(const experiment_spec& spec,
                                         const std::function<void(std::uint32_t, std::uint64_t)>& on_repeat,
                                         const virtual_backend_options& virtual_options,
                                         const std::function<bool()>& cancel_requested) {
  if (spec.backend != "twin" && spec.backend != "virtual")
    return status(error_code::unsupported,
                  "backend '" + spec.backend + "' is not available yet; use backend: twin or virtual");
  ROCELAB_RETURN_IF_ERROR(validate(spec));
  experiment_result out;
  for (std::uint32_t i = 0; i < spec.repeats; ++i) {
    if (i > 0 && cancel_requested && cancel_requested()) break;
    const std::uint64_t seed = spec.seed + i;
    if (on_repeat) on_repeat(i, seed);
    if (spec.backend == "virtual") {
      virtual_backend_options options = virtual_options;
      if (cancel_requested) options.cancel_requested = cancel_requested;
      // Each repeat keeps its own capture: the first under the given name, the others
      // with -r<i> before the extension (capture.pcapng, capture-r1.pcapng, ...).
      if (i > 0 && !options.capture_file.empty()) {
        const auto dot = options.capture_file.rfind('.');
        const auto slash = options.capture_file.rfind('/');
        const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash);
        const std::string suffix = "-r" + std::to_string(i);
        options.capture_file = has_ext ? options.capture_file.substr(0, dot) + suffix + options.capture_file.substr(dot)
                                       : options.capture_file + suffix;
      }
      auto records = run_virtual(spec, seed, options);
      if (!records)
        return records.error().with_context("repeat " + std::to_string(i) + " (seed " + std::to_string(seed) + ")");
      out.seeds.push_back(seed);
      out.repeats.push_back(std::move(*records));
      continue;
    }
    auto config = to_twin_config(spec, seed);
    if (!config) return config.error();
    config->cancel_requested = cancel_requested;
    auto load = make_workload(spec, seed);
    if (!load) return load.error();
    auto records = fabric::twin::run_twin(*config, **load);
    if (!records) return records.error().with_context("repeat " + std::to_string(i) + " (seed " + std::to_string(seed) + ")");
    out.seeds.push_back(seed);
    out.repeats.push_back(std::move(*records));
  }
  return out;
}

}  // namespace rocelab::experiments

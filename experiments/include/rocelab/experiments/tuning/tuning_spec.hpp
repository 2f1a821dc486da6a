#pragma once
// The `tuning:` section of an experiment spec: what `rocelab tune` searches and for what.
// It sits beside the experiment's own keys, which stay what `rocelab run` runs (the
// experiment loader skips this section); the tuner applies each trial's values to that
// spec through the same field table as `--set`.
//
//   tuning:
//     name: ecn-incast        # the sweep's name (default: the spec's name); resumes by it
//     method: bayes           # bayes | grid | random
//     budget: 30              # trials
//     parallelism: 2          # trials at once (twin runs in threads)
//     seed: 7                 # the proposals' randomness (runs use the spec's seed)
//     initial_points: 8       # bayes: space-filling trials before the model (default max(5, 2d+2))
//     parameters:             # spec paths with bounds in the field's own units
//       - {path: switch.ecn.kmin_bytes, min: 5KB, max: 1MB, log: true}
//       - {path: switch.ecn.kmax_bytes, min: 10KB, max: 4MB, log: true, at_least: switch.ecn.kmin_bytes}
//       - {path: switch.ecn.pmax, min: 0.01, max: 1, log: true, grid_points: 3}
//     objective:              # minimized: sum of weight x metric (objective.hpp names them)
//       - {metric: incast.slowdown_p99, weight: 1}
//       - {metric: paused_us, weight: 0.05}
//     constraints:
//       - {metric: drops, max: 0}
//       - {metric: allreduce.busbw_gbps, min: 80}
//     require_complete: true  # every flow must complete (default)
//
// Integer-valued fields (sizes, durations, integers, mlx5 knobs) are tuned as integers.
// Errors name file:line and the key.

#include <string>
#include <string_view>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/tuning/tuning.hpp"

namespace rocelab::experiments {

// Parses the `tuning:` section of a spec's YAML text. `spec` (loaded from the same text)
// supplies the field types and the default sweep name. Error: no tuning section.
[[nodiscard]] result<tuning_settings> load_tuning(std::string_view yaml_text, const std::string& source_name,
                                                  const experiment_spec& spec);
[[nodiscard]] result<tuning_settings> load_tuning_file(const std::string& path, const experiment_spec& spec);

// A parameter's numeric value as the field understands it (bytes, ns, Gb/s, plain), from
// text with units ("20KiB", "300us"); errors as set_field gives them.
[[nodiscard]] result<double> field_number(std::string_view path, std::string_view text);
// The text `set_field` takes for a tuned value of that field (integers exact).
[[nodiscard]] std::string field_text(std::string_view path, double value);
// Whether the field only takes integers (sizes, durations, integer and mlx5 knobs).
[[nodiscard]] bool integer_field(std::string_view path);

// The spec with a trial's values applied (at_least resolved), and the texts set.
[[nodiscard]] result<experiment_spec> apply_trial(const experiment_spec& base, const tuning_settings& settings,
                                                  std::span<const double> values,
                                                  std::map<std::string, std::string>* applied = nullptr);

}  // namespace rocelab::experiments

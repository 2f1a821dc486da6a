#include "rocelab/experiments/run/backend.hpp"
#include "rocelab/experiments/run/backend_traits.hpp"

#include "rocelab/experiments/run/twin_backend.hpp"

namespace rocelab::experiments {

status backend_registry::add(std::string name, std::shared_ptr<const backend> b) {
  if (name.empty() || !b) return status(error_code::invalid_argument, "registering a backend: no name or no backend");
  if (backends_.contains(name))
    return status(error_code::invalid_argument, "backend '" + name + "' is already registered");
  backends_.emplace(std::move(name), std::move(b));
  return status::success();
}

result<std::shared_ptr<const backend>> backend_registry::find(std::string_view name) const {
  if (auto it = backends_.find(name); it != backends_.end()) return it->second;
  std::string known;
  for (const auto& [n, b] : backends_) known += (known.empty() ? "" : ", ") + n;
  return status(error_code::unsupported, "backend '" + std::string(name) + "' is not registered here; registered: " +
                                             (known.empty() ? "none" : known));
}

std::vector<std::string> backend_registry::names() const {
  std::vector<std::string> out;
  for (const auto& [n, b] : backends_) out.push_back(n);
  return out;
}

experiment_spec backend_registry::as_run_here(const experiment_spec& spec) const {
  const auto b = find(spec.backend);
  return b.ok() ? (*b)->as_run_here(spec) : spec;
}

result<experiment_result> backend_registry::run(const experiment_spec& spec, const run_hooks& hooks) const {
  auto b = find(spec.backend);
  if (!b) return std::move(b).error();
  return (*b)->run(spec, hooks);
}

backend_registry core_backends() {
  backend_registry r;
  // A fresh registry has no names yet, so adding the twin cannot fail.
  (void)r.add(std::string(backend_name(backend_kind::twin)), std::make_shared<twin_backend>());
  return r;
}

std::string repeat_context(std::uint32_t index, std::uint64_t seed) {
  return "repeat " + std::to_string(index) + " (seed " + std::to_string(seed) + ")";
}

result<experiment_result> run_repeats(const experiment_spec& spec, const run_hooks& hooks,
                                      const repeat_runner& one_repeat) {
  ROCELAB_RETURN_IF_ERROR(validate(spec));
  experiment_result out;
  for (std::uint32_t i = 0; i < spec.repeats; ++i) {
    if (i > 0 && hooks.cancel_requested && hooks.cancel_requested()) break;
    const std::uint64_t seed = spec.seed + i;
    if (hooks.on_repeat) hooks.on_repeat(i, seed);
    auto records = one_repeat(i, seed);
    if (!records) return std::move(records).error();
    out.seeds.push_back(seed);
    out.repeats.push_back(std::move(*records));
  }
  return out;
}

}  // namespace rocelab::experiments

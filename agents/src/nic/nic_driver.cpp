#include "rocelab/agents/nic/nic_driver.hpp"

#include <charconv>

#include "rocelab/fabric/dcqcn.hpp"

namespace rocelab::agents::nic {

bool is_enable_setting(std::string_view canonical) noexcept {
  return canonical.starts_with("roce_rp/enable/") || canonical.starts_with("roce_np/enable/");
}

std::string_view knob_of(std::string_view canonical) noexcept {
  const auto slash = canonical.find('/');
  return slash == std::string_view::npos ? canonical : canonical.substr(slash + 1);
}

status validate_dcqcn_value(const std::string& canonical, const std::string& value) {
  std::int64_t v = 0;
  const auto* end = value.data() + value.size();
  if (auto [p, ec] = std::from_chars(value.data(), end, v); ec != std::errc{} || p != end || v < 0)
    return {error_code::invalid_argument, canonical + ": '" + value + "' is not a non-negative integer"};
  if (is_enable_setting(canonical)) {
    if (v > 1) return {error_code::invalid_argument, canonical + ": expects 0 or 1, not " + value};
    return status::success();
  }
  // The model's table holds the ranges the mlx5 documentation gives; knobs it does not
  // model (rpg_gd, cnp_prio_mode, ...) are passed through as integers.
  fabric::dcqcn_config probe = fabric::dcqcn_config::mlx5();
  const std::string knob(knob_of(canonical));
  // The model takes alpha = 1.0 (1024); the firmware's field stops at 1023.
  if (knob == "initial_alpha_value" && v > fabric::dcqcn_config::mlx5_max_initial_alpha_value)
    return {error_code::invalid_argument, canonical + ": " + value + " is outside the mlx5 firmware's range 0.." +
                                              std::to_string(fabric::dcqcn_config::mlx5_max_initial_alpha_value)};
  if (!probe.get(knob)) return status::success();
  if (auto st = probe.set(knob, v); !st.ok()) return {error_code::invalid_argument, canonical + ": " + st.message()};
  return status::success();
}

result<nic_settings> nic_driver::read_settings() {
  nic_settings out;
  for (const auto& name : setting_names()) {
    auto value = read_setting(name);
    if (!value.ok()) return value.error().with_context(std::string(kind()) + " " + interface_name());
    out.emplace(name, std::move(*value));
  }
  return out;
}

status nic_driver::apply(const nic_settings& settings) {
  const std::string context = "applying NIC settings to " + std::string(kind()) + " " + interface_name();
  not_set_.clear();
  std::vector<std::pair<std::string, std::string>> resolved;
  resolved.reserve(settings.size());
  std::vector<std::string> not_set;
  for (const auto& [name, value] : settings) {
    auto canonical = canonical_name(name);
    if (!canonical.ok()) return canonical.error().with_context(context);
    ROCELAB_RETURN_IF_ERROR(validate(*canonical, value).with_context(context));
    if (auto why = not_settable_reason(*canonical, value)) {
      not_set.push_back(*canonical + " = " + value + " not set: " + *why);
      continue;
    }
    resolved.emplace_back(std::move(*canonical), value);
  }
  not_set_ = std::move(not_set);
  // Snapshot everything before the first write, so a write failing half-way leaves a
  // complete record of what to put back.
  for (const auto& [name, value] : resolved) {
    if (snapshot_.contains(name)) continue;
    auto previous = read_setting(name);
    if (!previous.ok()) return previous.error().with_context(context + ": snapshot of " + name);
    snapshot_.emplace(name, std::move(*previous));
    order_.push_back(name);
  }
  for (const auto& [name, value] : resolved)
    ROCELAB_RETURN_IF_ERROR(write_setting(name, value).with_context(context));
  return commit().with_context(context);
}

status nic_driver::restore() {
  const std::string context = "restoring NIC settings of " + std::string(kind()) + " " + interface_name();
  status first;
  std::vector<std::string> restored;
  std::vector<std::string> kept;
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    if (auto st = write_setting(*it, snapshot_.at(*it)); !st.ok()) {
      if (first.ok()) first = st.with_context(context);
      kept.push_back(*it);
    } else {
      restored.push_back(*it);
    }
  }
  // Forget a snapshot only once it is durably back (the soft driver saves in commit()).
  if (auto st = commit(); !st.ok()) return st.with_context(context);
  for (const auto& name : restored) snapshot_.erase(name);
  order_.assign(kept.rbegin(), kept.rend());
  return first;
}

}  // namespace rocelab::agents::nic

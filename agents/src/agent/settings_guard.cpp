#include "rocelab/agents/agent/settings_guard.hpp"

#include <algorithm>

#include "rocelab/agents/nic/mlx5_driver.hpp"

namespace rocelab::agents::agent {

result<nic::nic_driver*> settings_guard::driver_for(const std::string& driver, const std::string& device) {
  if (driver != "mlx5")
    return status(error_code::unsupported, "settings driver '" + driver + "': this agent has mlx5 (sysfs ecn knobs)");
  const std::string key = driver + ":" + device;
  if (auto it = drivers_.find(key); it != drivers_.end()) return it->second.get();
  nic::mlx5_options o;
  o.ifname = device;
  o.sysfs_root = sysfs_root_;
  auto d = nic::mlx5_driver::open(std::move(o));
  if (!d) return d.error();
  auto* raw = d->get();
  drivers_[key] = std::move(*d);
  return raw;
}

namespace {

// The value a snapshot holds for `name`, which may be a bare knob name.
std::string previous_value(const nic::nic_settings& before, const std::string& name) {
  if (auto it = before.find(name); it != before.end()) return it->second;
  for (const auto& [canonical, value] : before)
    if (nic::knob_of(canonical) == name) return value;
  return {};
}

}  // namespace

result<std::vector<protocol::setting>> settings_guard::apply(const std::string& driver,
                                                               const std::vector<protocol::setting>& settings) {
  // Devices in the order they first appear, each with its settings in order.
  std::vector<std::pair<std::string, nic::nic_settings>> by_device;
  for (const auto& s : settings) {
    auto it = std::find_if(by_device.begin(), by_device.end(), [&](const auto& d) { return d.first == s.device; });
    if (it == by_device.end()) it = by_device.insert(by_device.end(), {s.device, {}});
    it->second[s.name] = s.value;
  }
  std::vector<protocol::setting> previous;
  not_set_.clear();
  for (const auto& [device, wanted] : by_device) {
    auto d = driver_for(driver, device);
    if (!d) return d.error().with_context("applying settings on " + device);
    auto before = (*d)->read_settings();
    if (!before) return before.error().with_context("applying settings on " + device);
    const bool had_snapshot = (*d)->has_snapshot();
    const status st = (*d)->apply(wanted);
    if ((*d)->has_snapshot() && !had_snapshot) changed_.push_back(*d);
    if (!st.ok()) return st.with_context("applying settings on " + device);
    for (const auto& line : (*d)->not_set()) not_set_.push_back(device + ": " + line);
    for (const auto& s : settings)
      if (s.device == device) previous.push_back({device, s.name, previous_value(*before, s.name)});
  }
  return previous;
}

result<std::uint32_t> settings_guard::restore() {
  status first;
  std::uint32_t restored = 0;
  for (auto it = changed_.rbegin(); it != changed_.rend(); ++it) {
    const auto count = static_cast<std::uint32_t>((*it)->snapshot().size());
    if (auto st = (*it)->restore(); st.ok())
      restored += count;
    else if (first.ok())
      first = st;
  }
  std::erase_if(changed_, [](nic::nic_driver* d) { return !d->has_snapshot(); });
  if (!first.ok()) return first.with_context("restoring settings");
  return restored;
}

bool settings_guard::has_changes() const noexcept {
  return std::any_of(changed_.begin(), changed_.end(), [](nic::nic_driver* d) { return d->has_snapshot(); });
}

}  // namespace rocelab::agents::agent

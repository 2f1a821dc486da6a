#include "rocelab/agents/nic/soft_nic_driver.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "rocelab/agents/nic/sysfs_io.hpp"
#include "rocelab/common/bounded_file.hpp"
#include "rocelab/common/unique_fd.hpp"

namespace rocelab::agents::nic {
namespace fs = std::filesystem;

namespace {

// The mlx5 sysfs knobs rocelab's DCQCN model has, by directory (fabric/dcqcn.hpp).
constexpr const char* rp_knobs[] = {"clamp_tgt_rate", "clamp_tgt_rate_after_time_inc", "dce_tcp_g", "dce_tcp_rtt",
                                    "initial_alpha_value", "rate_reduce_monitor_period", "rate_to_set_on_first_cnp",
                                    "rpg_ai_rate", "rpg_byte_reset", "rpg_hai_rate", "rpg_max_rate",
                                    "rpg_min_dec_fac", "rpg_min_rate", "rpg_threshold", "rpg_time_reset"};
constexpr const char* np_knobs[] = {"cnp_802p_prio", "cnp_dscp", "min_time_between_cnps"};
constexpr std::uint8_t default_data_priority = 3;

status write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    unique_fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd.valid()) return status::from_errno("creating " + tmp);
    std::size_t done = 0;
    while (done < content.size()) {
      const ssize_t n = ::write(fd.get(), content.data() + done, content.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        auto st = status::from_errno("writing " + tmp);
        ::unlink(tmp.c_str());
        return st;
      }
      done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd.get()) != 0) return status::from_errno("syncing " + tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    auto st = status::from_errno("renaming " + tmp + " to " + path);
    ::unlink(tmp.c_str());
    return st;
  }
  return status::success();
}

result<nlohmann::json> read_json_file(const std::string& path) {
  auto text = read_bounded_file(path, max_state_file_bytes, "soft-NIC settings");
  if (!text) return std::move(text).error();
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return status(error_code::malformed_input, path + ": not JSON");
  return j;
}

result<nic_settings> read_settings_file(const std::string& path) {
  nic_settings out = soft_nic_default_settings();
  std::error_code ec;
  if (!fs::exists(path, ec)) return out;
  auto j = read_json_file(path);
  if (!j.ok()) return j.error();
  if (!j->is_object() || !j->contains("settings") || !(*j)["settings"].is_object())
    return status(error_code::malformed_input, path + ": expects {\"version\":1,\"settings\":{...}}");
  for (const auto& [name, value] : (*j)["settings"].items()) {
    if (!out.contains(name)) return status(error_code::malformed_input, path + ": unknown setting '" + name + "'");
    if (!value.is_number_integer() || value.get<std::int64_t>() < 0)
      return status(error_code::malformed_input, path + ": " + name + " is not a non-negative integer");
    out[name] = std::to_string(value.get<std::int64_t>());
  }
  return out;
}

}  // namespace

nic_settings soft_nic_default_settings() {
  nic_settings out;
  const auto defaults = fabric::dcqcn_config::mlx5();
  for (const char* k : rp_knobs) out[std::string("roce_rp/") + k] = std::to_string(*defaults.get(k));
  for (const char* k : np_knobs) out[std::string("roce_np/") + k] = std::to_string(*defaults.get(k));
  for (int p = 0; p < 8; ++p) {
    const std::string on = p == default_data_priority ? "1" : "0";
    out["roce_rp/enable/" + std::to_string(p)] = on;
    out["roce_np/enable/" + std::to_string(p)] = on;
  }
  return out;
}

soft_nic_driver::soft_nic_driver(soft_nic_options options) : options_(std::move(options)) {
  settings_path_ = (fs::path(options_.state_dir) / (options_.ifname + ".dcqcn.json")).string();
  counters_path_ = (fs::path(options_.state_dir) / (options_.ifname + ".counters.json")).string();
}

result<std::unique_ptr<soft_nic_driver>> soft_nic_driver::open(soft_nic_options options) {
  if (options.ifname.empty() || options.ifname.find('/') != std::string::npos || options.ifname.starts_with("."))
    return status(error_code::invalid_argument, "soft NIC: interface name '" + options.ifname + "' is not a plain name");
  std::error_code ec;
  if (!fs::is_directory(options.state_dir, ec))
    return status(error_code::not_found, "soft NIC " + options.ifname + ": state directory " + options.state_dir +
                                             " does not exist");
  std::unique_ptr<soft_nic_driver> d(new soft_nic_driver(std::move(options)));
  auto current = read_settings_file(d->settings_path_);
  if (!current.ok()) return current.error().with_context("soft NIC " + d->options_.ifname);
  d->current_ = std::move(*current);
  return d;
}

std::vector<std::string> soft_nic_driver::setting_names() const {
  std::vector<std::string> out;
  for (const auto& [name, value] : current_) out.push_back(name);
  return out;
}

result<std::string> soft_nic_driver::canonical_name(std::string_view name) const {
  const std::string wanted(name);
  if (current_.contains(wanted)) return wanted;
  if (name.find('/') == std::string_view::npos)
    for (const auto& [n, v] : current_)
      if (!is_enable_setting(n) && knob_of(n) == name) return n;
  return status(error_code::not_found, "the soft NIC has no DCQCN setting '" + wanted +
                                           "' (roce_rp/<knob>, roce_np/<knob>, roce_rp|roce_np/enable/<0..7>)");
}

status soft_nic_driver::validate(const std::string& canonical, const std::string& value) const {
  return validate_dcqcn_value(canonical, value);
}

result<std::string> soft_nic_driver::read_setting(const std::string& canonical) {
  auto it = current_.find(canonical);
  if (it == current_.end()) return status(error_code::not_found, "soft NIC: no setting " + canonical);
  return it->second;
}

status soft_nic_driver::write_setting(const std::string& canonical, const std::string& value) {
  auto it = current_.find(canonical);
  if (it == current_.end()) return {error_code::not_found, "soft NIC: no setting " + canonical};
  it->second = value;
  return status::success();
}

status soft_nic_driver::commit() {
  if (current_ == soft_nic_default_settings()) {
    std::error_code ec;
    fs::remove(settings_path_, ec);
    if (ec) return {error_code::io_error, "removing " + settings_path_ + ": " + ec.message()};
    return status::success();
  }
  nlohmann::json settings = nlohmann::json::object();
  for (const auto& [name, value] : current_) settings[name] = std::stoll(value);
  const nlohmann::json file = {{"version", 1}, {"interface", options_.ifname}, {"settings", settings}};
  return write_file_atomically(settings_path_, file.dump(2) + "\n");
}

result<std::vector<nic_counter>> soft_nic_driver::read_counters() {
  const std::string context = "reading counters of soft NIC " + options_.ifname;
  std::vector<nic_counter> out;
  const std::string stats_dir = (fs::path(options_.sysfs_root) / "class/net" / options_.ifname / "statistics").string();
  auto io = posix_sysfs_io();
  auto files = io->list_files(stats_dir);
  if (!files.ok()) return files.error().with_context(context);
  for (const auto& f : *files) {
    auto text = io->read(stats_dir + "/" + f);
    if (!text.ok()) return text.error().with_context(context);
    std::uint64_t v = 0;
    if (auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v); ec != std::errc{})
      return status(error_code::malformed_input, context + ": " + stats_dir + "/" + f + " holds '" + *text + "'");
    out.push_back({"netdev_" + f, v});
  }
  std::error_code ec;
  if (fs::exists(counters_path_, ec)) {
    auto j = read_json_file(counters_path_);
    if (!j.ok()) return j.error().with_context(context);
    if (!j->is_object()) return status(error_code::malformed_input, context + ": " + counters_path_ + " is not an object");
    for (const auto& [name, value] : j->items()) {
      if (name == "ev") continue;  // the event tag when the whole "counters" event was stored
      if (!value.is_number_integer())
        return status(error_code::malformed_input, context + ": " + counters_path_ + ": " + name + " is not an integer");
      out.push_back({name, static_cast<std::uint64_t>(value.get<std::int64_t>())});
    }
  }
  return out;
}

status apply_soft_nic_settings(const std::string& path, traffic::soft_nic::nic_config& cfg) {
  auto settings = read_settings_file(path);
  if (!settings.ok()) return settings.error();
  for (const auto& [name, value] : *settings) {
    if (is_enable_setting(name)) continue;
    const std::string knob(knob_of(name));
    if (auto st = cfg.dcqcn.set(knob, std::stoll(value)); !st.ok()) return st.with_context(path + ": " + name);
  }
  // The soft NIC runs DCQCN on its one data priority: on when that priority is enabled at
  // the reaction point (the sender side, where the rate is cut).
  const auto rp = settings->find("roce_rp/enable/" + std::to_string(cfg.data_priority));
  cfg.dcqcn_enabled = rp != settings->end() && rp->second == "1";
  return status::success();
}

status write_soft_nic_counters(const std::string& path, const nlohmann::json& counters) {
  if (!counters.is_object()) return {error_code::invalid_argument, "soft NIC counters must be a JSON object"};
  return write_file_atomically(path, counters.dump() + "\n");
}

}  // namespace rocelab::agents::nic

#include "rocelab/agents/nic/mlx5_driver.hpp"

#include <cctype>
#include <charconv>
#include <filesystem>

#include "rocelab/agents/nic/ethtool_stats.hpp"

namespace rocelab::agents::nic {
namespace fs = std::filesystem;

namespace {

constexpr const char* directions[] = {"roce_rp", "roce_np"};
constexpr int priorities = 8;

bool valid_component(std::string_view s) {
  if (s.empty() || s == "." || s == "..") return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

// IF's RDMA device: the kernel links the PCI function to both its netdev and its IB device.
result<std::string> find_rdma_device(const std::string& root, const std::string& ifname) {
  std::error_code ec;
  const fs::path via_netdev = fs::path(root) / "class/net" / ifname / "device/infiniband";
  for (const auto& entry : fs::directory_iterator(via_netdev, ec)) return entry.path().filename().string();
  const fs::path ib_class = fs::path(root) / "class/infiniband";
  std::vector<std::string> seen;
  for (const auto& entry : fs::directory_iterator(ib_class, ec)) {
    seen.push_back(entry.path().filename().string());
    if (fs::exists(entry.path() / "device/net" / ifname)) return entry.path().filename().string();
  }
  std::string message = "no RDMA device found for " + ifname + " (looked in " + via_netdev.string() + " and " +
                        ib_class.string() + "/*/device/net/" + ifname;
  message += seen.empty() ? ", which has no devices)" : "; devices there: ";
  for (std::size_t i = 0; i < seen.size(); ++i) message += (i ? ", " : "") + seen[i];
  if (!seen.empty()) message += ")";
  return status(error_code::unavailable, message);
}

}  // namespace

result<std::unique_ptr<mlx5_driver>> mlx5_driver::open(mlx5_options options) {
  if (!valid_component(options.ifname))
    return status(error_code::invalid_argument, "mlx5: interface name '" + options.ifname + "' is not a plain name");
  if (!options.io) options.io = posix_sysfs_io();
  if (!options.ethtool) options.ethtool = read_ethtool_stats;
  const fs::path netdev = fs::path(options.sysfs_root) / "class/net" / options.ifname;
  std::error_code ec;
  if (!fs::exists(netdev, ec))
    return status(error_code::not_found, "mlx5: no interface " + options.ifname + " (" + netdev.string() + " is missing)");
  const fs::path ecn = netdev / "ecn";
  if (!fs::is_directory(ecn / "roce_rp", ec) || !fs::is_directory(ecn / "roce_np", ec))
    return status(error_code::unavailable, "mlx5: " + options.ifname + " has no DCQCN knobs (" + ecn.string() +
                                               "/roce_rp and roce_np are missing: not an mlx5 port, or a driver "
                                               "without the ecn sysfs)");
  if (options.rdma_device.empty()) {
    auto dev = find_rdma_device(options.sysfs_root, options.ifname);
    if (!dev.ok()) return dev.error().with_context("mlx5");
    options.rdma_device = *dev;
  } else if (!valid_component(options.rdma_device)) {
    return status(error_code::invalid_argument, "mlx5: RDMA device name '" + options.rdma_device + "' is not a plain name");
  }
  const fs::path hw = fs::path(options.sysfs_root) / "class/infiniband" / options.rdma_device / "ports" /
                      std::to_string(options.port) / "hw_counters";
  if (!fs::is_directory(hw, ec))
    return status(error_code::unavailable, "mlx5: no RDMA device found for " + options.ifname + " (" + hw.string() +
                                               " is missing)");

  std::unique_ptr<mlx5_driver> d(new mlx5_driver(std::move(options)));
  d->ecn_dir_ = ecn.string();
  d->hw_counters_dir_ = hw.string();
  for (const char* dir : directions) {
    auto knobs = d->options_.io->list_files((ecn / dir).string());
    if (!knobs.ok()) return knobs.error().with_context("mlx5 " + d->options_.ifname);
    for (const auto& k : *knobs) d->names_.push_back(std::string(dir) + "/" + k);
    for (int p = 0; p < priorities; ++p) {
      const auto name = std::string(dir) + "/enable/" + std::to_string(p);
      if (fs::exists(ecn / name, ec)) d->names_.push_back(name);
    }
  }
  return d;
}

std::string mlx5_driver::path_of(const std::string& canonical) const { return ecn_dir_ + "/" + canonical; }

result<std::string> mlx5_driver::canonical_name(std::string_view name) const {
  const std::string wanted(name);
  for (const auto& n : names_)
    if (n == wanted) return n;
  // A bare knob name: the one directory that has it.
  if (name.find('/') == std::string_view::npos) {
    for (const auto& n : names_)
      if (!is_enable_setting(n) && knob_of(n) == name) return n;
  }
  return status(error_code::not_found, "no DCQCN setting '" + wanted + "' on " + options_.ifname + " (under " +
                                           ecn_dir_ + ": roce_rp/<knob>, roce_np/<knob>, roce_rp|roce_np/enable/<0..7>)");
}

status mlx5_driver::validate(const std::string& canonical, const std::string& value) const {
  return validate_dcqcn_value(canonical, value);
}

result<std::string> mlx5_driver::read_setting(const std::string& canonical) {
  return options_.io->read(path_of(canonical));
}

status mlx5_driver::write_setting(const std::string& canonical, const std::string& value) {
  return options_.io->write(path_of(canonical), value).with_context("setting " + canonical + " = " + value);
}

result<std::vector<nic_counter>> mlx5_driver::read_counters() {
  const std::string context = "reading counters of mlx5 " + options_.ifname + " (" + options_.rdma_device + " port " +
                              std::to_string(options_.port) + ")";
  auto files = options_.io->list_files(hw_counters_dir_);
  if (!files.ok()) return files.error().with_context(context);
  std::vector<nic_counter> out;
  out.reserve(files->size() + 64);
  for (const auto& f : *files) {
    if (f == "lifespan") continue;  // the counters' cache lifetime in ms, a setting
    auto text = options_.io->read(hw_counters_dir_ + "/" + f);
    if (!text.ok()) return text.error().with_context(context);
    std::uint64_t v = 0;
    const auto* end = text->data() + text->size();
    if (auto [p, ec] = std::from_chars(text->data(), end, v); ec != std::errc{} || p != end)
      return status(error_code::malformed_input, context + ": " + hw_counters_dir_ + "/" + f + " holds '" + *text + "'");
    out.push_back({f, v});
  }
  auto ethtool = options_.ethtool(options_.ifname);
  if (!ethtool.ok()) return ethtool.error().with_context(context + ": pause counters");
  for (auto& c : *ethtool)
    if (is_congestion_counter(c.name)) out.push_back(std::move(c));
  return out;
}

}  // namespace rocelab::agents::nic

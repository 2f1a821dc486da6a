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

// Upstream kernels' debugfs names (drivers/infiniband/hw/mlx5/cong.c, mlx5_ib_dbg_cc_name)
// for the MLNX_OFED sysfs knobs, which stay rocelab's canonical names.
constexpr std::pair<const char*, const char*> debugfs_names[] = {
    {"roce_rp/clamp_tgt_rate", "rp_clamp_tgt_rate"},
    {"roce_rp/clamp_tgt_rate_after_time_inc", "rp_clamp_tgt_rate_ati"},
    {"roce_rp/rpg_time_reset", "rp_time_reset"},
    {"roce_rp/rpg_byte_reset", "rp_byte_reset"},
    {"roce_rp/rpg_threshold", "rp_threshold"},
    {"roce_rp/rpg_ai_rate", "rp_ai_rate"},
    {"roce_rp/rpg_max_rate", "rp_max_rate"},
    {"roce_rp/rpg_hai_rate", "rp_hai_rate"},
    {"roce_rp/rpg_min_dec_fac", "rp_min_dec_fac"},
    {"roce_rp/rpg_min_rate", "rp_min_rate"},
    {"roce_rp/rate_to_set_on_first_cnp", "rp_rate_to_set_on_first_cnp"},
    {"roce_rp/dce_tcp_g", "rp_dce_tcp_g"},
    {"roce_rp/dce_tcp_rtt", "rp_dce_tcp_rtt"},
    {"roce_rp/rate_reduce_monitor_period", "rp_rate_reduce_monitor_period"},
    {"roce_rp/initial_alpha_value", "rp_initial_alpha_value"},
    {"roce_rp/rpg_gd", "rp_gd"},
    {"roce_np/min_time_between_cnps", "np_min_time_between_cnps"},
    {"roce_np/cnp_dscp", "np_cnp_dscp"},
    {"roce_np/cnp_prio_mode", "np_cnp_prio_mode"},
    {"roce_np/cnp_802p_prio", "np_cnp_prio"},
};

// roce_rp|roce_np/enable/<0..7>, as MLNX_OFED's sysfs names them.
bool is_priority_enable(std::string_view canonical) {
  if (!is_enable_setting(canonical)) return false;
  const auto p = canonical.substr(canonical.rfind('/') + 1);
  return p.size() == 1 && p[0] >= '0' && p[0] < '0' + priorities;
}

}  // namespace

result<std::unique_ptr<mlx5_driver>> mlx5_driver::open(mlx5_options options) {
  if (!valid_component(options.ifname))
    return status(error_code::invalid_argument, "mlx5: interface name '" + options.ifname + "' is not a plain name");
  if (!options.io) options.io = posix_sysfs_io();
  if (!options.ethtool) options.ethtool = [](const std::string& ifname) { return read_ethtool_stats(ifname); };
  const fs::path netdev = fs::path(options.sysfs_root) / "class/net" / options.ifname;
  std::error_code ec;
  if (!fs::exists(netdev, ec))
    return status(error_code::not_found, "mlx5: no interface " + options.ifname + " (" + netdev.string() + " is missing)");
  // MLNX_OFED's sysfs where the host has it, else the upstream kernel's debugfs, found
  // through the netdev's PCI function (debugfs is mounted at <root>/kernel/debug).
  const fs::path ecn = netdev / "ecn";
  const bool has_sysfs = fs::is_directory(ecn / "roce_rp", ec) && fs::is_directory(ecn / "roce_np", ec);
  const fs::path pci = fs::canonical(netdev / "device", ec);
  const fs::path cc_params = fs::path(options.sysfs_root) / "kernel/debug/mlx5" /
                             (pci.empty() ? fs::path("<pci>") : pci.filename()) / "cc_params";
  if (!has_sysfs && (pci.empty() || !fs::is_directory(cc_params, ec)))
    return status(error_code::unavailable,
                  "mlx5: " + options.ifname + " has no DCQCN knobs (neither MLNX_OFED's " + ecn.string() +
                      "/roce_rp and roce_np nor the upstream kernel's " + cc_params.string() +
                      ": not an mlx5 port, or debugfs is not mounted or not readable: mount -t debugfs none "
                      "/sys/kernel/debug, as root)");
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
  d->hw_counters_dir_ = hw.string();
  const std::string context = "mlx5 " + d->options_.ifname;
  if (has_sysfs) {
    d->knob_source_ = "sysfs";
    d->knob_dir_ = ecn.string();
    for (const char* dir : directions) {
      auto knobs = d->options_.io->list_files((ecn / dir).string());
      if (!knobs.ok()) return knobs.error().with_context(context);
      for (const auto& k : *knobs) d->add_knob(std::string(dir) + "/" + k, (ecn / dir / k).string());
      for (int p = 0; p < priorities; ++p) {
        const auto name = std::string(dir) + "/enable/" + std::to_string(p);
        if (fs::exists(ecn / name, ec)) d->add_knob(name, (ecn / name).string());
      }
    }
  } else {
    d->knob_source_ = "debugfs";
    d->knob_dir_ = cc_params.string();
    auto files = d->options_.io->list_files(cc_params.string());
    if (!files.ok()) return files.error().with_context(context);
    for (const auto& f : *files) {
      std::string canonical = "cc_params/" + f;  // a parameter rocelab has no sysfs name for
      for (const auto& [sysfs_name, debugfs_name] : debugfs_names)
        if (f == debugfs_name) canonical = sysfs_name;
      d->add_knob(canonical, (cc_params / f).string());
    }
  }
  return d;
}

void mlx5_driver::add_knob(std::string canonical, std::string path) {
  names_.push_back(canonical);
  paths_.emplace(std::move(canonical), std::move(path));
}

std::string mlx5_driver::path_of(const std::string& canonical) const {
  const auto it = paths_.find(canonical);
  return it == paths_.end() ? knob_dir_ + "/" + canonical : it->second;
}

result<std::string> mlx5_driver::canonical_name(std::string_view name) const {
  const std::string wanted(name);
  for (const auto& n : names_)
    if (n == wanted) return n;
  // A bare knob name: the one directory that has it.
  if (name.find('/') == std::string_view::npos) {
    for (const auto& n : names_)
      if (!is_enable_setting(n) && knob_of(n) == name) return n;
  }
  if (knob_source_ == "debugfs" && is_priority_enable(wanted)) return wanted;
  if (knob_source_ == "debugfs")
    return status(error_code::not_found, "no DCQCN setting '" + wanted + "' on " + options_.ifname + " (under " +
                                             knob_dir_ + ", named roce_rp/<knob> and roce_np/<knob> as MLNX_OFED's sysfs)");
  return status(error_code::not_found, "no DCQCN setting '" + wanted + "' on " + options_.ifname + " (under " +
                                           knob_dir_ + ": roce_rp/<knob>, roce_np/<knob>, roce_rp|roce_np/enable/<0..7>)");
}

status mlx5_driver::validate(const std::string& canonical, const std::string& value) const {
  ROCELAB_RETURN_IF_ERROR(validate_dcqcn_value(canonical, value));
  // The upstream kernel cannot turn DCQCN off on a priority: MODIFY_CONG_STATUS, which
  // MLNX_OFED's enable/<p> files issue, has no debugfs file (cong.c creates cc_params only).
  if (knob_source_ == "debugfs" && is_enable_setting(canonical) &&
      value.find_first_not_of('0') == std::string::npos)
    return {error_code::unsupported,
            canonical + " = 0: the upstream kernel's " + knob_dir_ +
                " has no per-priority enable, so DCQCN cannot be turned off on a priority from " + options_.ifname +
                "'s host (the firmware's mlxconfig ROCE_CC_PRIO_MASK_P" + std::to_string(options_.port) +
                " decides; clear that priority's bit there, or use the MLNX_OFED driver's ecn/ sysfs)"};
  return status::success();
}

std::optional<std::string> mlx5_driver::not_settable_reason(const std::string& canonical,
                                                            const std::string& value) const {
  if (knob_source_ != "debugfs" || !is_enable_setting(canonical)) return std::nullopt;
  (void)value;  // 0 is refused by validate()
  return "the upstream kernel's " + knob_dir_ +
         " has no per-priority enable; DCQCN runs on the priorities the firmware enables (mlxconfig "
         "ROCE_CC_PRIO_MASK_P" +
         std::to_string(options_.port) + ")";
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

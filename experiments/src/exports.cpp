#include "rocelab/experiments/exports.hpp"

#include <algorithm>

#include "rocelab/fabric/drivers/sonic_switch_driver.hpp"
#include "rocelab/fabric/headroom.hpp"
#include "rocelab/fabric/twin/frames.hpp"

namespace rocelab::experiments {
namespace {

// The files of /sys/class/net/IF/ecn/roce_rp and roce_np on ConnectX-4 and later (the
// recorded tree in tests/data/mlx5-sysfs; NVIDIA "DCQCN Parameters" lists the same).
constexpr const char* rp_knobs[] = {"clamp_tgt_rate",    "clamp_tgt_rate_after_time_inc", "dce_tcp_g",
                                    "dce_tcp_rtt",       "initial_alpha_value",           "rate_reduce_monitor_period",
                                    "rate_to_set_on_first_cnp", "rpg_ai_rate",            "rpg_byte_reset",
                                    "rpg_hai_rate",      "rpg_max_rate",                  "rpg_min_dec_fac",
                                    "rpg_min_rate",      "rpg_threshold",                 "rpg_time_reset"};
constexpr const char* np_knobs[] = {"cnp_802p_prio", "cnp_dscp", "min_time_between_cnps"};

}  // namespace

std::vector<std::string> export_ports(const experiment_spec& spec, const export_options& options) {
  if (!options.switch_ports.empty()) return options.switch_ports;
  std::vector<std::string> ports;
  // SONiC names front-panel ports Ethernet0, Ethernet4, ... (four lanes per port).
  for (std::uint32_t i = 0; i < spec.topology.hosts; ++i) ports.push_back("Ethernet" + std::to_string(4 * i));
  return ports;
}

result<std::string> sonic_config_db_json(const experiment_spec& spec, const export_options& options) {
  fabric::drivers::switch_settings settings;
  const std::vector<std::string> ports = export_ports(spec, options);
  // The headroom the lossless PG needs on these links (what the twin sizes per link).
  fabric::headroom_inputs in;
  in.rate_bps = static_cast<std::int64_t>(spec.topology.link_gbps * 1e9);
  in.cable_m = spec.sw.pfc.cable_m;
  in.mtu_bytes = fabric::twin::roce_max_frame_bytes(spec.nic.mtu_bytes);
  const std::int64_t headroom =
      spec.sw.pfc.headroom_bytes > 0 ? spec.sw.pfc.headroom_bytes : fabric::headroom_calculator(in).total_bytes;
  for (const std::string& port : ports) {
    for (std::uint32_t q : spec.sw.ecn.queues)
      settings.ecn.push_back({port, static_cast<std::uint8_t>(q), spec.sw.ecn.enabled, spec.sw.ecn.kmin_bytes,
                              spec.sw.ecn.kmax_bytes, spec.sw.ecn.pmax});
    fabric::drivers::pfc_setting pfc{port, {}};
    if (spec.sw.pfc.enabled)
      for (std::uint32_t p : spec.sw.pfc.priorities) pfc.priorities.push_back(static_cast<std::uint8_t>(p));
    settings.pfc.push_back(pfc);
    if (spec.sw.pfc.enabled)
      for (std::uint32_t p : spec.sw.pfc.priorities) {
        fabric::drivers::pg_buffer_setting pg;
        pg.port = port;
        pg.priority_group = static_cast<std::uint8_t>(p);
        pg.xoff_bytes = headroom;
        pg.size_bytes = headroom;  // SONiC lossless profiles: size covers the headroom, shared beyond
        pg.xon_offset_bytes = spec.sw.pfc.xon_offset_bytes;
        pg.dynamic_th = spec.sw.dynamic_th;
        settings.buffers.push_back(pg);
      }
  }
  ROCELAB_RETURN_IF_ERROR(fabric::drivers::validate(settings).with_context("exporting SONiC config_db"));
  fabric::drivers::sonic_options sonic;
  auto json = fabric::drivers::to_config_db(settings, sonic);
  if (!json) return json.error().with_context("exporting SONiC config_db");
  return json->dump(2) + "\n";
}

std::vector<std::pair<std::string, std::string>> mlx5_knob_values(const experiment_spec& spec) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* k : rp_knobs)
    if (auto v = spec.nic.dcqcn.get(k)) out.emplace_back(std::string("roce_rp/") + k, std::to_string(*v));
  for (const char* k : np_knobs)
    if (auto v = spec.nic.dcqcn.get(k)) out.emplace_back(std::string("roce_np/") + k, std::to_string(*v));
  const std::string prio = std::to_string(spec.nic.data_priority);
  const char* on = spec.nic.dcqcn_enabled ? "1" : "0";
  out.emplace_back("roce_rp/enable/" + prio, on);
  out.emplace_back("roce_np/enable/" + prio, on);
  return out;
}

std::string mlx5_sysfs_settings(const experiment_spec& spec, const export_options& options) {
  const std::string base = options.sysfs_root + "/class/net/" + options.nic_interface + "/ecn/";
  std::string out;
  for (const auto& [name, value] : mlx5_knob_values(spec)) out += base + name + " " + value + "\n";
  return out;
}

std::vector<std::string> knobs_without_mlx5_file() {
  std::vector<std::string> out;
  for (const field_info& f : field_table()) {
    if (f.path.rfind("nic.dcqcn.", 0) != 0 || f.path == "nic.dcqcn.enabled") continue;
    const std::string k = f.path.substr(10);
    const bool rp = std::find(std::begin(rp_knobs), std::end(rp_knobs), k) != std::end(rp_knobs);
    const bool np = std::find(std::begin(np_knobs), std::end(np_knobs), k) != std::end(np_knobs);
    if (!rp && !np) out.push_back(k);
  }
  return out;
}

}  // namespace rocelab::experiments

#include "rocelab/experiments/tuning/exports.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "rocelab/experiments/spec/build.hpp"
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

constexpr std::int64_t uint32_max = 4294967295;

// NVIDIA, "DCQCN CC Parameters" (DOCA SDK documentation, networking-docs.nvidia.com/doca/
// archive/3-4-0/dcqcn-cc-parameters; the same table as MLNX_OFED's "DCQCN Parameters"),
// ConnectX-4 and later: the MLNX_OFED (sysfs) name, unit and values of every knob.
// Rates run from their minimum to the line rate in Mb/s.
constexpr mlx5_knob_range ranges[] = {
    {"roce_rp/clamp_tgt_rate", 0, 1, false, "0/1"},
    {"roce_rp/clamp_tgt_rate_after_time_inc", 0, 1, false, "0/1"},
    {"roce_rp/dce_tcp_g", 0, 1023, false, "x/1024"},
    {"roce_rp/dce_tcp_rtt", 1, 131071, false, "us"},
    {"roce_rp/initial_alpha_value", 0, 1023, false, "x/1024"},
    {"roce_rp/rate_reduce_monitor_period", 1, uint32_max, false, "us"},
    {"roce_rp/rate_to_set_on_first_cnp", 0, 0, true, "Mb/s"},
    {"roce_rp/rpg_ai_rate", 1, 0, true, "Mb/s"},
    {"roce_rp/rpg_byte_reset", 0, 32767, false, "bytes"},
    {"roce_rp/rpg_hai_rate", 1, 0, true, "Mb/s"},
    {"roce_rp/rpg_max_rate", 0, 0, true, "Mb/s"},
    {"roce_rp/rpg_min_dec_fac", 0, 100, false, "%"},
    {"roce_rp/rpg_min_rate", 1, 0, true, "Mb/s"},
    {"roce_rp/rpg_threshold", 1, 31, false, "events"},
    {"roce_rp/rpg_time_reset", 1, 131071, false, "us"},
    {"roce_np/cnp_802p_prio", 0, 7, false, "priority"},
    {"roce_np/cnp_dscp", 0, 63, false, "DSCP"},
    {"roce_np/min_time_between_cnps", 0, 131071, false, "us"},
};

bool real_port_speed(double gbps) {
  return std::any_of(std::begin(real_port_speeds_gbps), std::end(real_port_speeds_gbps),
                     [&](double s) { return std::abs(s - gbps) < 1e-9; });
}

std::string gbps_text(double g) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", g);
  return b;
}

}  // namespace

std::vector<std::string> export_ports(const experiment_spec& spec, const export_options& options) {
  if (!options.switch_ports.empty()) return options.switch_ports;
  std::vector<std::string> ports;
  // SONiC names front-panel ports Ethernet0, Ethernet4, ... (four lanes per port).
  for (std::uint32_t i = 0; i < spec.topology.hosts; ++i) ports.push_back("Ethernet" + std::to_string(4 * i));
  return ports;
}

result<fabric::drivers::switch_settings> export_switch_settings(const experiment_spec& spec,
                                                               const export_options& options) {
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
  // The lossless class: the data and CNP DSCPs onto their priorities (SONiC's default
  // DSCP_TO_TC_MAP sends DSCP 26 to lossy TC 1).
  auto cls = lossless_class_of(spec);
  if (!cls) return cls.error().with_context("exporting the switch settings");
  for (const std::string& port : ports) settings.dscp_maps.push_back({port, fabric::switch_class_entries(*cls)});
  ROCELAB_RETURN_IF_ERROR(fabric::drivers::validate(settings).with_context("exporting the switch settings"));
  return settings;
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

std::span<const mlx5_knob_range> mlx5_knob_ranges() { return ranges; }

std::optional<std::pair<std::int64_t, std::int64_t>> mlx5_range(std::string_view knob, double link_gbps) {
  for (const mlx5_knob_range& r : ranges)
    if (knob == r.knob)
      return std::pair<std::int64_t, std::int64_t>{
          r.min, r.max_is_line_rate ? static_cast<std::int64_t>(std::floor(link_gbps * 1000)) : r.max};
  return std::nullopt;
}

std::string export_target_text(const experiment_spec& spec) {
  const std::string g = gbps_text(spec.topology.link_gbps);
  return "for " + g + " Gb/s links: NVIDIA ConnectX-4 or later NICs (mlx5 driver, DCQCN on priority " +
         std::to_string(spec.nic.data_priority) + ") and a SONiC switch with " + g +
         " Gb/s ports (WRED_PROFILE on queue(s) of the lossless priority, PFC, lossless buffer profile)";
}

status check_hardware_export(const experiment_spec& spec) {
  std::vector<std::string> why;
  const double g = spec.topology.link_gbps;
  if (!real_port_speed(g))
    why.push_back("link_gbps " + gbps_text(g) +
                  " is not a port speed of real hardware (10, 25, 40, 50, 100, 200, 400, 800 Gb/s); the virtual lab "
                  "runs its links that slow");
  if (spec.scaling.hardware_gbps > 0)
    why.push_back("scaling.hardware_gbps " + gbps_text(spec.scaling.hardware_gbps) + ": this is a lab dilated x" +
                  gbps_text(time_scale(spec)) + " (its DCQCN runs on the lab's clock); export it for " +
                  gbps_text(spec.scaling.hardware_gbps) + " Gb/s hardware (--export-for " +
                  gbps_text(spec.scaling.hardware_gbps) + ")");
  for (const auto& [knob, value] : mlx5_knob_values(spec)) {
    const auto r = mlx5_range(knob, g);
    if (!r) continue;
    std::int64_t v = 0;
    try {
      v = std::stoll(value);
    } catch (...) {
      why.push_back(knob + " " + value + " is not an integer");
      continue;
    }
    if (v < r->first || v > r->second)
      why.push_back(knob + " " + value + " is outside the mlx5 firmware's range " + std::to_string(r->first) + ".." +
                    std::to_string(r->second) + " at " + gbps_text(g) + " Gb/s");
  }
  if (auto st = export_switch_settings(spec, {}); !st.ok()) why.push_back(st.error().message());
  if (why.empty()) return status::success();
  std::string msg = "not a hardware configuration: ";
  for (std::size_t i = 0; i < why.size(); ++i) msg += (i ? "; " : "") + why[i];
  return {error_code::invalid_argument, msg};
}

result<experiment_spec> hardware_equivalent(const experiment_spec& spec, double link_gbps) {
  if (!real_port_speed(link_gbps))
    return status(error_code::invalid_argument, "exporting for " + gbps_text(link_gbps) +
                                                    " Gb/s: not a real port speed (10, 25, 40, 50, 100, 200, 400, 800)");
  experiment_spec out = spec;
  // The speed the spec's knobs and bytes are for: the hardware a dilated lab stands for
  // (its DCQCN knobs are that hardware's already), or the spec's own links.
  const double from = spec.scaling.hardware_gbps > 0 ? spec.scaling.hardware_gbps : spec.topology.link_gbps;
  out.scaling.hardware_gbps = 0;
  // For the hardware the lab stands for the export is exact: nothing but the link speed
  // changes. For another speed the ECN thresholds keep their marking delay (bytes scale
  // with the speed).
  if (link_gbps != from) {
    const double bytes_factor = link_gbps / from;
    auto scale = [&](std::int64_t b) {
      return std::max<std::int64_t>(1, std::llround(static_cast<double>(b) * bytes_factor));
    };
    out.sw.ecn.kmin_bytes = scale(spec.sw.ecn.kmin_bytes);
    out.sw.ecn.kmax_bytes = std::max(out.sw.ecn.kmin_bytes, scale(spec.sw.ecn.kmax_bytes));
  }
  const double link_factor = link_gbps / spec.topology.link_gbps;
  out.topology.link_gbps = link_gbps;
  if (spec.topology.spine_link_gbps > 0) out.topology.spine_link_gbps = spec.topology.spine_link_gbps * link_factor;
  ROCELAB_RETURN_IF_ERROR(check_hardware_export(out).with_context("the " + gbps_text(link_gbps) + " Gb/s equivalent"));
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

// The switch driver interface's settings and counters (drivers/switch_driver.hpp): the
// fabric core's, pure, so the experiments core reads and checks settings without the
// drivers. The drivers themselves (soft, SONiC) are the adapter rocelab::fabric_drivers
// (fabric/src/drivers/).
#include "rocelab/fabric/drivers/switch_driver.hpp"

#include <algorithm>

namespace rocelab::fabric::drivers {
namespace {

status bad(const std::string& where, const std::string& why) { return {error_code::invalid_argument, where + ": " + why}; }

}  // namespace

status validate(const switch_settings& s) {
  for (const auto& e : s.ecn) {
    const std::string where = "ECN of " + e.port + " queue " + std::to_string(e.queue);
    if (e.port.empty()) return bad(where, "no port");
    if (e.queue > 7) return bad(where, "queue outside 0..7");
    if (e.kmin_bytes < 0 || e.kmax_bytes < 0) return bad(where, "negative threshold");
    if (e.kmin_bytes > e.kmax_bytes) return bad(where, "Kmin " + std::to_string(e.kmin_bytes) + " > Kmax " +
                                                          std::to_string(e.kmax_bytes));
    if (!(e.pmax >= 0.0 && e.pmax <= 1.0)) return bad(where, "Pmax outside 0..1");
  }
  for (const auto& p : s.pfc) {
    if (p.port.empty()) return bad("PFC", "no port");
    for (auto prio : p.priorities)
      if (prio > 7) return bad("PFC of " + p.port, "priority " + std::to_string(prio) + " outside 0..7");
  }
  for (const auto& b : s.buffers) {
    const std::string where = "buffer of " + b.port + " PG " + std::to_string(b.priority_group);
    if (b.port.empty()) return bad(where, "no port");
    if (b.priority_group > 7) return bad(where, "priority group outside 0..7");
    if (b.size_bytes < 0 || b.xoff_bytes < 0 || b.xon_bytes < 0 || b.xon_offset_bytes < 0)
      return bad(where, "negative size");
    if (b.dynamic_th < -7 || b.dynamic_th > 3) return bad(where, "dynamic_th outside -7..3");
  }
  for (const auto& d : s.dscp_maps) {
    if (d.port.empty()) return bad("DSCP map", "no port");
    for (const auto& [dscp, tc] : d.dscp_to_tc) {
      if (dscp > 63) return bad("DSCP map of " + d.port, "DSCP " + std::to_string(dscp) + " outside 0..63");
      if (tc > 7) return bad("DSCP map of " + d.port, "traffic class " + std::to_string(tc) + " outside 0..7");
    }
  }
  if (s.mirror) {
    const auto& m = *s.mirror;
    if (m.name.empty()) return bad("mirror session", "no name");
    if (m.dst_ip.empty() != m.src_ip.empty()) return bad("mirror session " + m.name, "ERSPAN needs src_ip and dst_ip");
    if (m.dscp > 63) return bad("mirror session " + m.name, "dscp outside 0..63");
  }
  return status::success();
}

std::vector<lossless_observation::switch_port> lossless_ports(const switch_settings& settings,
                                                             const std::vector<std::string>& ports) {
  std::vector<lossless_observation::switch_port> out;
  for (const auto& port : ports) {
    lossless_observation::switch_port p{port, {}, {}};
    for (const auto& d : settings.dscp_maps)
      if (d.port == port) p.dscp_to_tc = d.dscp_to_tc;
    for (const auto& f : settings.pfc)
      if (f.port == port) p.pfc_priorities = f.priorities;
    out.push_back(std::move(p));
  }
  return out;
}

switch_settings lossless_class_settings(const lossless_class& c, const std::vector<std::string>& ports,
                                        const std::vector<std::uint8_t>& pfc_priorities) {
  switch_settings s;
  std::vector<std::uint8_t> lossless = pfc_priorities;
  if (std::find(lossless.begin(), lossless.end(), c.data_priority) == lossless.end()) lossless.push_back(c.data_priority);
  std::sort(lossless.begin(), lossless.end());
  for (const auto& port : ports) {
    s.dscp_maps.push_back({port, switch_class_entries(c)});
    if (c.pfc) s.pfc.push_back({port, lossless});
  }
  return s;
}

std::vector<counter_sample> to_counter_samples(
    const std::vector<switch_counter>& counters, std::uint32_t device,
    const std::function<std::optional<std::uint32_t>(const std::string& port)>& port_index, std::int64_t t_ns) {
  std::vector<counter_sample> out;
  out.reserve(counters.size());
  for (const auto& c : counters) {
    if (c.missing) continue;
    if (c.scope == "switch") {
      out.push_back({device, 0, "switch." + c.name, t_ns, c.value});
      continue;
    }
    const auto port = port_index(c.port);
    if (!port) continue;
    std::string name = c.scope == "port" ? c.name : c.scope + std::to_string(c.index) + "." + c.name;
    out.push_back({device, *port, std::move(name), t_ns, c.value});
  }
  return out;
}

std::vector<std::string> missing_counter_names(const std::vector<switch_counter>& counters) {
  std::vector<std::string> out;
  for (const auto& c : counters)
    if (c.missing)
      out.push_back((c.port.empty() ? std::string() : c.port + " ") +
                    (c.scope == "port" || c.scope == "switch" ? c.name : c.scope + std::to_string(c.index) + "." + c.name));
  return out;
}

}  // namespace rocelab::fabric::drivers

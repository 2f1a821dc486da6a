#include "rocelab/fabric/lossless_class.hpp"

#include <algorithm>

namespace rocelab::fabric {

namespace {

std::string n(std::uint32_t v) { return std::to_string(v); }

}  // namespace

result<lossless_class> make_lossless_class(std::uint32_t data_priority, std::uint32_t data_dscp,
                                           const dcqcn_config& dcqcn, bool pfc_enabled) {
  auto bad = [](const std::string& what) { return status(error_code::invalid_argument, what); };
  if (data_priority > 7) return bad("nic.data_priority " + n(data_priority) + " is outside 0..7");
  if (data_dscp > 63) return bad("nic.data_dscp " + n(data_dscp) + " is outside 0..63");
  if (dcqcn.cnp_802p_prio > 7) return bad("nic.dcqcn.cnp_802p_prio " + n(dcqcn.cnp_802p_prio) + " is outside 0..7");
  if (dcqcn.cnp_dscp > 63) return bad("nic.dcqcn.cnp_dscp " + n(dcqcn.cnp_dscp) + " is outside 0..63");
  if (dcqcn.cnp_dscp == data_dscp && dcqcn.cnp_802p_prio != data_priority)
    return bad("nic.dcqcn.cnp_dscp " + n(dcqcn.cnp_dscp) + " is the data DSCP but cnp_802p_prio " +
               n(dcqcn.cnp_802p_prio) + " is not the data priority " + n(data_priority) +
               " (a switch maps one DSCP to one traffic class)");
  lossless_class c;
  c.data_priority = static_cast<std::uint8_t>(data_priority);
  c.data_dscp = static_cast<std::uint8_t>(data_dscp);
  c.cnp_priority = dcqcn.cnp_802p_prio;
  c.cnp_dscp = dcqcn.cnp_dscp;
  c.pfc = pfc_enabled;
  return c;
}

std::map<std::uint8_t, std::uint8_t> switch_class_entries(const lossless_class& c) {
  return {{c.data_dscp, c.data_priority}, {c.cnp_dscp, c.cnp_priority}};
}

std::vector<std::string> lossless_mismatches(const lossless_class& want, const lossless_observation& seen) {
  std::vector<std::string> out;
  for (const auto& nic : seen.nics) {
    const std::string who = "NIC " + nic.name + ": ";
    auto compare = [&](const std::optional<std::uint8_t>& have, std::uint8_t expected, const char* what) {
      if (have && *have != expected)
        out.push_back(who + what + " is " + n(*have) + ", the lossless class says " + n(expected));
    };
    compare(nic.data_dscp, want.data_dscp, "data DSCP");
    compare(nic.data_priority, want.data_priority, "data priority");
    compare(nic.cnp_dscp, want.cnp_dscp, "cnp_dscp");
    compare(nic.cnp_priority, want.cnp_priority, "cnp_802p_prio");
  }
  for (const auto& port : seen.switch_ports) {
    const std::string who = "switch port " + port.port + ": ";
    auto mapped = [&](std::uint8_t dscp, std::uint8_t tc, const char* role) {
      const auto it = port.dscp_to_tc.find(dscp);
      if (it == port.dscp_to_tc.end())
        out.push_back(who + "DSCP_TO_TC_MAP has no entry for the " + role + " DSCP " + n(dscp) + " (want TC " + n(tc) +
                      ")");
      else if (it->second != tc)
        out.push_back(who + "DSCP_TO_TC_MAP maps DSCP " + n(dscp) + " to TC " + n(it->second) + ", not to the " + role +
                      " priority " + n(tc));
    };
    mapped(want.data_dscp, want.data_priority, "data");
    mapped(want.cnp_dscp, want.cnp_priority, "CNP");
    const bool pfc_on = std::find(port.pfc_priorities.begin(), port.pfc_priorities.end(), want.data_priority) !=
                        port.pfc_priorities.end();
    if (want.pfc && !pfc_on)
      out.push_back(who + "PFC is not enabled on the data priority " + n(want.data_priority) + " (pfc_enable: " +
                    [&] {
                      std::string s;
                      for (auto p : port.pfc_priorities) s += (s.empty() ? "" : ",") + n(p);
                      return s.empty() ? std::string("none") : s;
                    }() +
                    ")");
  }
  return out;
}

status check_lossless_class(const lossless_class& want, const lossless_observation& seen) {
  const auto m = lossless_mismatches(want, seen);
  if (m.empty()) return status::success();
  std::string s = "the lossless class disagrees: ";
  for (std::size_t i = 0; i < m.size(); ++i) s += (i ? "; " : "") + m[i];
  return status(error_code::invalid_argument, s);
}

}  // namespace rocelab::fabric

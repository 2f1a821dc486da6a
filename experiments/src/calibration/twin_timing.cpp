#include "rocelab/experiments/calibration/twin_timing.hpp"

#include <cmath>
#include <sstream>

namespace rocelab::experiments {
namespace {

status bad(const std::string& what) { return {error_code::invalid_argument, what}; }

std::string gbps_text(double g) {
  std::ostringstream o;
  o << g;
  return o.str();
}

}  // namespace

result<fabric::twin::lab_timing> lab_timing_of(const calibration& c, const fabric::twin::topology_config& topology,
                                               const std::string& source) {
  const double spec_gbps = topology.link_gbps;
  if (!(std::fabs(c.link_gbps - spec_gbps) <= calibration_link_tolerance * spec_gbps))
    return bad(source + ": taken at link_gbps " + gbps_text(c.link_gbps) + ", but the spec's topology.link_gbps is " +
               gbps_text(spec_gbps) + " (more than 1% apart): calibrate at the speed the spec runs at");
  fabric::twin::lab_timing lab;
  lab.hosts.resize(topology.hosts);
  for (std::uint32_t h = 0; h < topology.hosts; ++h) {
    const std::string name = "h" + std::to_string(h + 1);
    const host_calibration* hc = c.host(name);
    if (hc == nullptr) {
      std::string have;
      for (const host_calibration& x : c.hosts) have += (have.empty() ? "" : ", ") + x.name;
      return bad(source + ": host " + name + " of the spec is not in the calibration (it has " +
                 (have.empty() ? "no hosts" : have) + ")");
    }
    fabric::twin::host_timing& t = lab.hosts[h];
    t.send_processing = hc->send_processing;
    t.receive_processing = hc->receive_processing;
    t.achieved_gbps = hc->achieved_gbps;
    t.pacing_lateness = hc->pacing_lateness;
  }
  lab.forwarding = c.forwarding_pooled();
  if (topology.type == fabric::twin::topology_config::kind::single_switch) {
    for (const port_calibration& p : c.ports) {
      if (p.port >= topology.hosts) continue;  // a port no host of the spec is on
      if (lab.forwarding_by_port.size() <= p.port) lab.forwarding_by_port.resize(p.port + 1);
      lab.forwarding_by_port[p.port] = p.forwarding;
    }
  }
  return lab;
}

}  // namespace rocelab::experiments

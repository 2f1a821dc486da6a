#include "rocelab/experiments/run/capture_pauses.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>

#include "rocelab/captures/congestion_analyzer.hpp"

namespace rocelab::experiments {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::vector<std::string> lower_all(const std::vector<std::string>& macs) {
  std::vector<std::string> out;
  out.reserve(macs.size());
  for (const auto& m : macs) out.push_back(lower(m));
  return out;
}

std::int64_t index_of(const std::vector<std::string>& macs, const std::string& mac) {
  const auto it = std::find(macs.begin(), macs.end(), mac);
  return it == macs.end() ? -1 : static_cast<std::int64_t>(it - macs.begin());
}

}  // namespace

std::vector<pause_interval> attribute_capture_pauses(const captures::capture_analysis& captured,
                                                     const lab_port_macs& macs, const pause_devices& devices,
                                                     std::int64_t t0_ns) {
  const std::vector<std::string> switch_ports = lower_all(macs.switch_port_mac), hosts = lower_all(macs.host_mac);
  // The hop each captured port (a source MAC) paused, worked out once per port.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> hop;  // (device, port) by captured port
  hop.reserve(captured.ports.size());
  for (const std::string& name : captured.ports) {
    const std::string mac = lower(name);
    if (const auto sw_port = index_of(switch_ports, mac); sw_port >= 0) {
      hop.emplace_back(devices.first_host + static_cast<std::uint32_t>(sw_port), 0);
    } else if (const auto host = index_of(hosts, mac); host >= 0) {
      hop.emplace_back(devices.switch_device, static_cast<std::uint32_t>(host));
    } else {
      hop.emplace_back(devices.capture_device, 0);
    }
  }
  std::vector<pause_interval> out;
  out.reserve(captured.pauses.size());
  for (const auto& c : captured.pauses) {
    pause_interval p;
    p.priority = c.priority;
    p.start_ns = c.start_ns - t0_ns;
    p.end_ns = c.end_ns - t0_ns;
    p.source = pause_source::capture;
    std::tie(p.device, p.port) = hop.at(c.port);
    out.push_back(p);
  }
  return out;
}

std::int64_t paused_ns_total(const std::vector<pause_interval>& pauses) {
  std::int64_t total = 0;
  for (const auto& p : pauses) total += std::max<std::int64_t>(0, p.end_ns - p.start_ns);
  return total;
}

}  // namespace rocelab::experiments

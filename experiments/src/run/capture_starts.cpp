#include "rocelab/experiments/run/capture_starts.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <limits>

#include "rocelab/captures/congestion_analyzer.hpp"

namespace rocelab::experiments {
namespace {

// "198.18.0.2" as the analyzer keys addresses: IPv4-mapped IPv6.
bool mapped_ipv4(const std::string& text, std::array<std::uint8_t, 16>& out) {
  in_addr a{};
  if (::inet_pton(AF_INET, text.c_str(), &a) != 1) return false;
  out.fill(0);
  out[10] = out[11] = 0xff;
  std::copy_n(reinterpret_cast<const std::uint8_t*>(&a.s_addr), 4, out.begin() + 12);
  return true;
}

constexpr std::uint32_t data_qpn_base = 0x200;  // soft_nic::receive_qpn(src) = 0x200 + src

}  // namespace

std::map<std::string, std::int64_t> capture_start_offsets(const captures::capture_analysis& captured,
                                                          const std::vector<std::string>& hosts,
                                                          const std::vector<std::string>& host_ipv4,
                                                          std::int64_t t0_realtime_ns,
                                                          const std::map<std::string, std::int64_t>& scheduled_ns) {
  std::map<std::string, std::int64_t> out;
  for (const auto& [name, scheduled] : scheduled_ns) {
    const auto host_it = std::find(hosts.begin(), hosts.end(), name);
    if (host_it == hosts.end()) continue;
    const auto host = static_cast<std::uint32_t>(host_it - hosts.begin());
    std::array<std::uint8_t, 16> address{};
    if (host >= host_ipv4.size() || !mapped_ipv4(host_ipv4[host], address)) continue;
    std::int64_t first_wire = std::numeric_limits<std::int64_t>::max();
    for (const auto& f : captured.flows)
      if (f.src == address && f.dest_qp == data_qpn_base + host && f.packets > 0)
        first_wire = std::min(first_wire, f.first_ns);
    if (first_wire == std::numeric_limits<std::int64_t>::max()) continue;
    out[name] = first_wire - t0_realtime_ns - scheduled;
  }
  return out;
}

}  // namespace rocelab::experiments

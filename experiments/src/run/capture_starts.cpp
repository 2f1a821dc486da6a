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

capture_starts capture_start_offsets(const captures::capture_analysis& captured, const std::vector<std::string>& hosts,
                                     const std::vector<std::string>& host_ipv4, std::int64_t t0_realtime_ns,
                                     const std::map<std::string, std::int64_t>& scheduled_ns) {
  capture_starts out;
  out.at_ingress = !captured.arrivals.empty();
  for (const auto& [name, scheduled] : scheduled_ns) {
    const auto host_it = std::find(hosts.begin(), hosts.end(), name);
    if (host_it == hosts.end()) continue;
    const auto host = static_cast<std::uint32_t>(host_it - hosts.begin());
    std::array<std::uint8_t, 16> address{};
    if (host >= host_ipv4.size() || !mapped_ipv4(host_ipv4[host], address)) continue;
    std::int64_t first = std::numeric_limits<std::int64_t>::max();
    const auto is_data = [&](const auto& f) { return f.src == address && f.dest_qp == data_qpn_base + host; };
    if (out.at_ingress) {
      for (const auto& a : captured.arrivals)
        if (is_data(a)) first = std::min(first, a.first_ns);
    } else {
      for (const auto& f : captured.flows)
        if (is_data(f) && f.packets > 0) first = std::min(first, f.first_ns);
    }
    if (first == std::numeric_limits<std::int64_t>::max()) continue;
    out.offsets_ns[name] = first - t0_realtime_ns - scheduled;
  }
  return out;
}

}  // namespace rocelab::experiments

#pragma once
// Live capture sources behind one interface: libpcap on an interface, DPDK on a port
// (a real NIC or --vdev=net_af_packet0,iface=X). Each lives in its own adapter target
// (rocelab::captures_pcap, rocelab::captures_dpdk) so the core needs neither library.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rocelab/captures/packet.hpp"
#include "rocelab/common/result.hpp"

namespace rocelab::captures {

enum class timestamp_source { software, hardware };

[[nodiscard]] constexpr const char* to_string(timestamp_source s) noexcept {
  return s == timestamp_source::hardware ? "hardware" : "software";
}

// Counters reported with every capture. Fields a source cannot know stay 0 and are named
// in `notes`.
struct capture_stats {
  std::uint64_t received = 0;     // packets handed to the caller
  std::uint64_t bytes = 0;
  std::uint64_t kernel_dropped = 0;  // libpcap ps_drop
  std::uint64_t if_dropped = 0;      // libpcap ps_ifdrop
  std::uint64_t imissed = 0;         // DPDK rte_eth_stats.imissed
  std::uint64_t rx_nombuf = 0;       // DPDK rte_eth_stats.rx_nombuf
  std::uint64_t ierrors = 0;         // DPDK rte_eth_stats.ierrors
  std::string notes;
};

using packet_sink = std::function<void(const packet_view&)>;

class capture_source {
 public:
  virtual ~capture_source() = default;
  // Delivers the packets that arrive within `timeout` (at least one poll) to `sink`;
  // returns how many were delivered. Views are valid only during the sink call.
  virtual result<std::size_t> poll(std::chrono::milliseconds timeout,
                                   const packet_sink& sink) = 0;
  virtual capture_stats stats() = 0;
  [[nodiscard]] virtual timestamp_source timestamps() const = 0;
  [[nodiscard]] virtual std::vector<interface_info> interfaces() const = 0;
};

}  // namespace rocelab::captures

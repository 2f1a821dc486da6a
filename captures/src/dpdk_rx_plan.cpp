#include "rocelab/captures/dpdk_rx_plan.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <vector>

namespace rocelab::captures {
namespace {

constexpr std::uint32_t ether_header_and_crc_bytes = 14 + 4;
constexpr std::uint32_t vlan_tag_bytes = 4;
// TPACKET2_HDRLEN rounded up: the header the PMD's ring frame carries before the data.
constexpr std::uint32_t tpacket2_header_bytes = 64;

}  // namespace

std::uint32_t dpdk_overhead_bytes(const dpdk_rx_caps& caps) {
  if (caps.max_mtu != 0xffff && caps.max_rx_pktlen > caps.max_mtu) return caps.max_rx_pktlen - caps.max_mtu;
  return ether_header_and_crc_bytes;
}

dpdk_rx_plan plan_dpdk_rx(const dpdk_rx_caps& caps, std::uint32_t capture_mtu, std::uint32_t mbuf_data_bytes,
                          std::uint32_t max_mbuf_data_bytes) {
  const std::uint32_t overhead = dpdk_overhead_bytes(caps);
  // The largest MTU the port takes: ethdev refuses one above max_mtu or one whose frame
  // exceeds max_rx_pktlen.
  std::uint32_t port_max = caps.max_mtu;
  if (caps.max_rx_pktlen > overhead) port_max = std::min(port_max, caps.max_rx_pktlen - overhead);
  dpdk_rx_plan plan;
  plan.mtu = static_cast<std::uint16_t>(std::max<std::uint32_t>(caps.min_mtu, std::min(capture_mtu, port_max)));
  plan.frame_bytes = plan.mtu + overhead;
  plan.mbuf_data_bytes = mbuf_data_bytes;
  if (plan.frame_bytes > mbuf_data_bytes) {
    if (caps.offers_scatter) {
      plan.scatter = true;
    } else {
      plan.mbuf_data_bytes = std::min(plan.frame_bytes, max_mbuf_data_bytes);
    }
  }
  return plan;
}

bool dpdk_sets_mtu_after_configure(std::string_view driver_name) noexcept { return driver_name != "net_af_packet"; }

status check_dpdk_set_mtu(int rc, const dpdk_mtu_request& request) {
  if (rc == 0 || rc == -ENOTSUP) return status::success();
  const int err = rc < 0 ? -rc : rc;
  std::string message = "DPDK port " + std::to_string(request.port_id) + " (" + request.port_name + ", driver " +
                        request.driver_name + ") refused MTU " + std::to_string(request.mtu) +
                        " (rte_eth_dev_set_mtu: " + std::strerror(err) + "); the driver's max_mtu is " +
                        std::to_string(request.max_mtu);
  if (request.mtu > request.max_mtu) message += ", below the MTU asked";
  return {err == EINVAL ? error_code::invalid_argument : error_code::io_error, message, err};
}

std::uint32_t af_packet_frame_size(std::uint32_t mtu) {
  const std::uint32_t need = mtu + ether_header_and_crc_bytes + vlan_tag_bytes + tpacket2_header_bytes;
  std::uint32_t frame = 2048;
  while (frame < need && frame < (1u << 20)) frame *= 2;
  return frame;
}

std::string af_packet_args_for_mtu(std::string_view eal_args, std::uint32_t mtu) {
  std::istringstream in{std::string(eal_args)};
  std::string out;
  const std::string frame = std::to_string(af_packet_frame_size(mtu));
  for (std::string token; in >> token;) {
    if (token.rfind("--vdev=net_af_packet", 0) == 0 && token.find("framesz=") == std::string::npos) {
      token += ",framesz=" + frame;
      if (token.find("blocksz=") == std::string::npos) token += ",blocksz=" + frame;
    }
    out += (out.empty() ? "" : " ") + token;
  }
  return out;
}

}  // namespace rocelab::captures

#pragma once
// How a DPDK capture port receives frames up to the capture MTU whole: pure decisions
// from what the port reports (rte_eth_dev_info), kept apart from DPDK so they are tested
// without a NIC.
//
// - The MTU: DPDK 22.11 configures 1500 when rxmode.mtu is 0, and a real NIC's PMD then
//   drops longer frames (RoCE at path MTU 2048/4096, jumbo ERSPAN copies). The capture
//   asks for its capture MTU, capped at what the port takes.
//   DPDK 22.11's rte_eth_dev_configure only records rxmode.mtu in the port's ethdev data
//   (lib/ethdev/rte_ethdev.c: dev->data->mtu = rxmode.mtu); it never calls the PMD's
//   mtu_set, so a PMD that programs its MTU there (mlx5: the kernel netdev's MTU) keeps
//   the one it had. The capture calls rte_eth_dev_set_mtu after configure, as testpmd
//   does, and reports the MTU rte_eth_dev_get_mtu then gives.
// - Scatter: a frame longer than one mbuf's data room arrives as a chain of mbufs only
//   with RTE_ETH_RX_OFFLOAD_SCATTER; a PMD without it gets mbufs large enough instead.
// - net_af_packet: frames are bounded by its PACKET_MMAP ring's frame size (the vdev's
//   framesz=, 2048 by default: the kernel cuts longer frames), fixed when the EAL probes
//   the vdev; a vdev given without framesz= is given one that holds the capture MTU.

#include <cstdint>
#include <string>
#include <string_view>

#include "rocelab/common/result.hpp"

namespace rocelab::captures {

// What rte_eth_dev_info says about receiving (DPDK's defaults where a PMD says nothing:
// max_mtu UINT16_MAX, min_mtu 68).
struct dpdk_rx_caps {
  std::uint32_t max_rx_pktlen = 1518;
  std::uint16_t min_mtu = 68;
  std::uint16_t max_mtu = 0xffff;
  bool offers_scatter = false;
};

struct dpdk_rx_plan {
  std::uint16_t mtu = 1500;          // rxmode.mtu
  std::uint32_t frame_bytes = 1518;  // the longest frame at that MTU, L2 overhead included
  bool scatter = false;              // RTE_ETH_RX_OFFLOAD_SCATTER
  std::uint32_t mbuf_data_bytes = 0; // the data room the pool's mbufs need (>= the one asked)
};

// The L2 overhead ethdev adds to an MTU (its eth_dev_get_overhead_len): the gap between
// max_rx_pktlen and max_mtu where the PMD sets both, else Ethernet header + CRC.
[[nodiscard]] std::uint32_t dpdk_overhead_bytes(const dpdk_rx_caps& caps);

// The port's receive settings for frames of `capture_mtu` (capped at the port's largest
// MTU) with mbufs of `mbuf_data_bytes`: scatter where the frame exceeds one mbuf and the
// PMD offers it, otherwise mbufs the size of the frame (at most `max_mbuf_data_bytes`).
[[nodiscard]] dpdk_rx_plan plan_dpdk_rx(const dpdk_rx_caps& caps, std::uint32_t capture_mtu,
                                        std::uint32_t mbuf_data_bytes, std::uint32_t max_mbuf_data_bytes);

// Whether the capture calls rte_eth_dev_set_mtu after rte_eth_dev_configure on a port of
// PMD `driver_name` (rte_eth_dev_info's driver_name). Every PMD but net_af_packet: its
// mtu_set sets the MTU of the kernel interface it taps (SIOCSIFMTU), which would cut the
// frames that interface receives, and what it captures is bounded by its ring frame size.
[[nodiscard]] bool dpdk_sets_mtu_after_configure(std::string_view driver_name) noexcept;

// The port whose MTU is set, for the error when the PMD refuses it.
struct dpdk_mtu_request {
  std::uint16_t port_id = 0;
  std::string port_name;    // rte_eth_dev_get_name_by_port: "0000:01:00.0", "net_af_packet0"
  std::string driver_name;  // "mlx5_pci"
  std::uint16_t mtu = 1500; // asked (dpdk_rx_plan::mtu)
  std::uint16_t max_mtu = 0xffff;  // the driver's, rte_eth_dev_info
};

// What rte_eth_dev_set_mtu's return `rc` (0 or a negative errno) means for the capture:
// success for 0, and for -ENOTSUP (a PMD without mtu_set: the MTU ethdev recorded at
// configure is all there is); otherwise an error (invalid_argument for -EINVAL, else
// io_error, errno set) naming the port, the MTU asked, the driver's max_mtu and the reason.
[[nodiscard]] status check_dpdk_set_mtu(int rc, const dpdk_mtu_request& request);

// The ring frame size a net_af_packet vdev needs for frames of `mtu`: the next power of
// two (at least 2048) above the frame (MTU + Ethernet header, a VLAN tag and the CRC)
// plus the PMD's TPACKET2 header.
[[nodiscard]] std::uint32_t af_packet_frame_size(std::uint32_t mtu);

// `eal_args` with `,framesz=F` (F = af_packet_frame_size(mtu)) added to every
// --vdev=net_af_packet... that names no framesz, and `,blocksz=F` where it names no
// blocksz either (the PMD refuses a frame larger than its block); others unchanged.
[[nodiscard]] std::string af_packet_args_for_mtu(std::string_view eal_args, std::uint32_t mtu);

}  // namespace rocelab::captures

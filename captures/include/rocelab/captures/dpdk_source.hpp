#pragma once
// Live capture on DPDK ports (adapter target rocelab::captures_dpdk): a real NIC bound to
// a DPDK driver, or a Linux interface through --vdev=net_af_packet0,iface=X. The EAL
// arguments decide which; this code is the same for both.
//
// EAL: rte_eal_init runs once per process, on the first open(). A later open() with the
// same EAL arguments reuses it; with different arguments it fails (DPDK cannot re-init).
// rte_eal_cleanup runs at process exit, so every dpdk_source must be destroyed before
// main returns.
//
// Each source owns one mbuf pool and the ports it opened (one RX queue each, promiscuous,
// stats reset at start); destruction stops and closes the ports, then frees the pool. A
// port can belong to one source at a time.
//
// Timestamps: when a port offers RTE_ETH_RX_OFFLOAD_TIMESTAMP and hardware timestamps are
// asked for, packets carry the NIC's time from the mbuf timestamp dynamic field, mapped to
// epoch nanoseconds (the device clock read at open against CLOCK_REALTIME, unless the
// device clock already is epoch nanoseconds). Otherwise each burst is stamped with
// CLOCK_REALTIME when it is received (software). timestamps() says `hardware` only when
// every port uses hardware time.
//
// poll() busy-polls rte_eth_rx_burst over the ports (it spins a core, as DPDK does): it
// returns once packets were delivered and a round over all ports came back empty, or
// when the timeout ends. packet_view.interface_id is the index into interfaces(), which
// lists the ports in the order they were opened (port ids: ports()).
//
// Threading: one thread at a time per source; library code never calls exit/rte_exit.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rocelab/captures/capture_source.hpp"
#include "rocelab/common/result.hpp"

struct rte_mempool;  // DPDK's, kept out of this header

namespace rocelab::captures {

struct dpdk_source_options {
  // Passed to rte_eal_init split on whitespace (no quoting), e.g.
  // "--no-huge --no-pci -m 256 --no-shconf --file-prefix=rl1
  //  --vdev=net_af_packet0,iface=veth0" (DPDK 22.11 refuses --in-memory with --no-huge).
  std::string eal_args;
  std::vector<std::uint16_t> ports;  // empty: every available port
  std::uint32_t snaplen = 65535;     // bytes kept per packet
  std::uint16_t rx_descriptors = 1024;
  std::uint32_t mbufs = 8191;        // pool size; a power of two minus one suits the ring
  // Data room of each mbuf (without the headroom). 0: large enough for the biggest
  // af_packet `framesz=N` in eal_args (the PMD refuses a pool whose mbufs are smaller than
  // its ring frames, "N bytes will not fit in mbuf"), at least DPDK's default 2048.
  std::uint32_t mbuf_data_bytes = 0;
  // The longest frame's MTU the capture receives whole (capped at each port's largest):
  // rxmode.mtu, scatter or mbuf size (dpdk_rx_plan.hpp), and the ring frame size of an
  // af_packet vdev given without framesz=.
  std::uint32_t capture_mtu = 9216;
  bool prefer_hardware_timestamps = true;
  // TAI - UTC in seconds, for NIC real-time stamps in TAI (a PHC that ptp4l disciplines,
  // nic_clock.hpp); -1: the host kernel's, adjtimex(2) tai (0 when nothing set it).
  std::int32_t tai_utc_offset_s = -1;
};

// What the last rte_eth_stats_get said about one port, plus what this source delivered.
struct dpdk_port_stats {
  std::uint16_t port = 0;
  capture_stats stats;
};

class dpdk_source final : public capture_source {
 public:
  // Errors carry DPDK's rte_strerror text and the port or EAL step that failed:
  // invalid_argument (EAL args, ports), not_found (no ports), unavailable (EAL init).
  static result<std::unique_ptr<dpdk_source>> open(const dpdk_source_options& options);

  dpdk_source(const dpdk_source&) = delete;
  dpdk_source& operator=(const dpdk_source&) = delete;
  ~dpdk_source() override;  // stops and closes the ports, frees the pool; logs failures

  result<std::size_t> poll(std::chrono::milliseconds timeout,
                           const packet_sink& sink) override;
  // Sum over the ports: imissed, rx_nombuf, ierrors from rte_eth_stats_get since open.
  capture_stats stats() override;
  // The same, one entry per port, in interfaces() order.
  std::vector<dpdk_port_stats> port_stats();
  [[nodiscard]] timestamp_source timestamps() const override;
  [[nodiscard]] std::vector<interface_info> interfaces() const override;
  [[nodiscard]] std::vector<std::uint16_t> ports() const;

 private:
  struct mempool_deleter {
    void operator()(rte_mempool* pool) const noexcept;
  };
  using mempool_handle = std::unique_ptr<rte_mempool, mempool_deleter>;
  struct port_state;
  struct port_closer {
    void operator()(port_state* port) const noexcept;
  };
  using port_handle = std::unique_ptr<port_state, port_closer>;

  dpdk_source(mempool_handle pool, std::vector<port_handle> ports, std::uint32_t snaplen);

  // Members in creation order: ports close before the pool their queues draw from.
  mempool_handle pool_;
  std::vector<port_handle> ports_;
  std::uint32_t snaplen_;
  std::vector<std::uint8_t> scratch_;  // linearises multi-segment mbufs
};

}  // namespace rocelab::captures

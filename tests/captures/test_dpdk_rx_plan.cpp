// The DPDK capture's receive settings for frames up to its capture MTU: the MTU it asks
// for (DPDK 22.11 would configure 1500), scatter or larger mbufs for frames beyond one
// mbuf, and af_packet ring frames that hold the MTU.
#include "rocelab/captures/dpdk_rx_plan.hpp"

#include <gtest/gtest.h>

#include <cerrno>

namespace rocelab::captures {
namespace {

// A jumbo-capable NIC: max_mtu 9978 with 18 bytes of L2 overhead, scatter offered.
constexpr dpdk_rx_caps jumbo_nic{.max_rx_pktlen = 9978 + 18, .min_mtu = 68, .max_mtu = 9978, .offers_scatter = true};

TEST(dpdk_rx_plan, asks_for_the_capture_mtu_not_dpdks_default_1500) {
  const auto plan = plan_dpdk_rx(jumbo_nic, 9216, 2048, 65535 - 128);
  EXPECT_EQ(plan.mtu, 9216);
  EXPECT_EQ(plan.frame_bytes, 9216u + 18);
  EXPECT_TRUE(plan.scatter) << "a 9 KB frame does not fit a 2 KB mbuf";
  EXPECT_EQ(plan.mbuf_data_bytes, 2048u);
}

TEST(dpdk_rx_plan, caps_the_mtu_at_the_ports_largest) {
  const dpdk_rx_caps nic{.max_rx_pktlen = 4096 + 26, .min_mtu = 68, .max_mtu = 4096, .offers_scatter = true};
  const auto plan = plan_dpdk_rx(nic, 9216, 2048, 65535 - 128);
  EXPECT_EQ(plan.mtu, 4096);
  EXPECT_EQ(plan.frame_bytes, 4096u + 26) << "the PMD's own overhead (max_rx_pktlen - max_mtu)";
  // A PMD that sets only max_rx_pktlen (max_mtu left at UINT16_MAX): Ethernet overhead.
  const auto af_packet = plan_dpdk_rx({.max_rx_pktlen = 1518}, 9216, 16384, 65535 - 128);
  EXPECT_EQ(af_packet.mtu, 1500);
  EXPECT_FALSE(af_packet.scatter);
}

TEST(dpdk_rx_plan, without_scatter_the_mbufs_hold_a_whole_frame) {
  dpdk_rx_caps nic = jumbo_nic;
  nic.offers_scatter = false;
  const auto plan = plan_dpdk_rx(nic, 9216, 2048, 65535 - 128);
  EXPECT_FALSE(plan.scatter);
  EXPECT_EQ(plan.mbuf_data_bytes, 9216u + 18);
  EXPECT_FALSE(plan_dpdk_rx(jumbo_nic, 1500, 2048, 65535 - 128).scatter) << "1518 bytes fit one 2 KB mbuf";
}

TEST(dpdk_rx_plan, af_packet_vdevs_without_a_frame_size_get_one_for_the_mtu) {
  EXPECT_EQ(af_packet_frame_size(1500), 2048u);
  EXPECT_EQ(af_packet_frame_size(4096), 8192u);
  EXPECT_EQ(af_packet_frame_size(9216), 16384u);
  EXPECT_EQ(af_packet_args_for_mtu("-l 0 --no-huge --vdev=net_af_packet0,iface=veth1 --no-pci", 9216),
            "-l 0 --no-huge --vdev=net_af_packet0,iface=veth1,framesz=16384,blocksz=16384 --no-pci");
  EXPECT_EQ(af_packet_args_for_mtu("--vdev=net_af_packet0,iface=a,framesz=4096", 9216),
            "--vdev=net_af_packet0,iface=a,framesz=4096")
      << "a frame size given is kept";
  EXPECT_EQ(af_packet_args_for_mtu("--vdev=net_af_packet0,iface=a,blocksz=65536", 4096),
            "--vdev=net_af_packet0,iface=a,blocksz=65536,framesz=8192");
  EXPECT_EQ(af_packet_args_for_mtu("--vdev=net_pcap0,iface=a", 9216), "--vdev=net_pcap0,iface=a");
}

}  // namespace
// DPDK 22.11's rte_eth_dev_configure records rxmode.mtu without calling the PMD's mtu_set
// (lib/ethdev/rte_ethdev.c v22.11), so the capture sets it after configure as testpmd does;
// net_af_packet alone is left alone, since its mtu_set would shrink the tapped interface's.
TEST(dpdk_mtu, set_after_configure_on_every_pmd_but_af_packet) {
  EXPECT_TRUE(dpdk_sets_mtu_after_configure("mlx5_pci"));
  EXPECT_TRUE(dpdk_sets_mtu_after_configure("net_ice"));
  EXPECT_TRUE(dpdk_sets_mtu_after_configure("net_null"));
  EXPECT_FALSE(dpdk_sets_mtu_after_configure("net_af_packet"));
}

TEST(dpdk_mtu, a_refused_mtu_is_an_error_naming_port_mtu_and_max_mtu) {
  const dpdk_mtu_request request{
      .port_id = 1, .port_name = "0000:01:00.0", .driver_name = "mlx5_pci", .mtu = 9216, .max_mtu = 4096};
  struct case_t {
    const char* what;
    int rc;
    error_code code;
  };
  const case_t cases[] = {
      {"set", 0, error_code::ok},
      {"a PMD without mtu_set keeps what configure recorded", -ENOTSUP, error_code::ok},
      {"above the driver's max_mtu", -EINVAL, error_code::invalid_argument},
      {"the kernel netdev said no", -EPERM, error_code::io_error},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const status st = check_dpdk_set_mtu(c.rc, request);
    EXPECT_EQ(st.code(), c.code) << st.message();
    if (c.code == error_code::ok) continue;
    for (const char* words : {"DPDK port 1 (0000:01:00.0, driver mlx5_pci)", "refused MTU 9216", "max_mtu is 4096"})
      EXPECT_NE(st.message().find(words), std::string::npos) << st.message();
  }
}

}  // namespace rocelab::captures

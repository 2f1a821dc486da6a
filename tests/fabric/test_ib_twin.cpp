// The twin with an InfiniBand fabric: credit flow control keeps every workload lossless
// without pause frames, IB headers go on the wire to the byte, IB congestion control marks
// and slows senders, and adaptive routing spreads a permutation more evenly than ECMP.
#include "rocelab/fabric/twin/twin.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "rocelab/fabric/twin/frames.hpp"
#include "twin_test_support.hpp"

namespace rocelab::fabric::twin {
namespace {

using testing::all_completed;
using testing::fixed_messages;
using testing::incast;

std::uint64_t counter(const run_records& r, std::uint32_t device, std::uint32_t port, const std::string& name) {
  std::uint64_t v = 0;
  for (const auto& c : r.counters)
    if (c.device == device && c.port == port && c.name == name) v = c.value;
  return v;
}

// An InfiniBand fabric: 400 Gb/s, 4 KiB MTU, VL buffers of vl_bytes per port.
twin_config ib_config(std::uint32_t hosts, std::int64_t vl_bytes, congestion_control_kind cc) {
  twin_config c;
  c.topology.type = topology_config::kind::single_switch;
  c.topology.hosts = hosts;
  c.topology.link_gbps = 400;
  c.topology.link_delay_ns = 500;
  c.switch_template.buffer_bytes = 64 << 20;
  c.switch_template.ports = {port_config{}};
  c.nic.mtu_bytes = 4096;
  c.nic.dcqcn_enabled = cc != congestion_control_kind::none;
  c.fabric.link = link_layer::infiniband;
  c.fabric.congestion = cc;
  c.fabric.ib_vl_buffer_bytes = vl_bytes;
  return c;
}

twin_config leaf_spine(twin_config c, std::uint32_t hosts, std::uint32_t leaves, std::uint32_t spines) {
  c.topology.type = topology_config::kind::leaf_spine;
  c.topology.hosts = hosts;
  c.topology.leaves = leaves;
  c.topology.spines = spines;
  c.topology.oversubscription = 1;
  return c;
}

TEST(IbTwin, IncastIsLosslessWithoutPauseFramesAndStallsOnCredits) {
  // 16 x 256 KiB into one host through 32 KiB VL buffers: the senders must wait for credits.
  twin_config cfg = ib_config(17, 32 * 1024, congestion_control_kind::none);
  fixed_messages load(incast(16, 256 * 1024));
  auto r = run_twin(cfg, load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(all_completed(*r));
  EXPECT_EQ(r->totals.drops, 0u) << "a VL buffer overflowed (admission beyond its size drops)";
  EXPECT_EQ(r->totals.retransmits, 0u);
  EXPECT_EQ(r->totals.pfc_pause_frames, 0u);
  EXPECT_EQ(r->totals.ce_marked, 0u);
  EXPECT_GT(r->totals.paused_ns, 0) << "credit stalls are reported as pauses";
  bool host_stalled = false;
  for (const auto& p : r->pauses) host_stalled |= p.device >= 1;  // sw0 is device 0
  EXPECT_TRUE(host_stalled);
  // The bottleneck carried every byte once: 16 x (64 x (4096 + 26) + 16) (RETH on the first).
  EXPECT_EQ(counter(*r, 0, 0, "tx_bytes"), 16u * (64u * (4096u + 26u) + 16u));
  // Work-conserving: 16 x (64 x 4124 + 16) wire bytes at 400 Gb/s = 84,480 ns (with
  // the 2-byte delimiters); ends within a few percent of that plus the path latency.
  const std::int64_t wire_ns = 16 * (64 * (4096 + 26 + 2) + 16) * 8 / 400;
  std::int64_t last = 0;
  for (const auto& f : r->flows) last = std::max(last, f.end_ns);
  EXPECT_LE(last, wire_ns * 105 / 100 + 4000);
}

TEST(IbTwin, ASingleMessageTakesExactlyItsIdealTimeWithIbHeaders) {
  twin_config cfg = ib_config(2, 256 * 1024, congestion_control_kind::none);
  message m;
  m.src = 1;
  m.dst = 0;
  m.bytes = 10 * 4096 + 100;
  fixed_messages load({m});
  auto r = run_twin(cfg, load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->flows.size(), 1u);
  const flow_record& f = r->flows[0];
  // Ideal by hand: 11 packets; frames 4122 B (the first +16 RETH: 4138), the last 126 B;
  // each +2 B of delimiters, at 400 Gb/s (0.02 ns a byte). Store and forward over two
  // equal links: both propagation delays, every frame once (the host link), plus the
  // first (largest) frame once more, since the switch forwards each frame after it has
  // arrived; then the 30-byte ACK (+2) back over both links.
  const double data_ns = 2 * 500 + (4140 + 9 * 4124 + 128) * 0.02 + 4140 * 0.02;  // 1912.16
  const double ack_ns = 2 * (500 + 32 * 0.02);                                       // 1001.28
  // The engine rounds arrivals up to whole ns and lets back-to-back frames keep the
  // exact picosecond, hence a tolerance of 2 ns. RoCEv2 headers (62 + 20 B a frame)
  // would add 11 x 54 B = 11.9 ns.
  EXPECT_NEAR(static_cast<double>(f.ideal_fct_ns), data_ns + ack_ns, 2.0);
  EXPECT_EQ(f.fct_ns, f.ideal_fct_ns) << "alone on the fabric, a message is ideal";
  EXPECT_EQ(counter(*r, 0, 0, "tx_bytes"), 4138u + 9u * 4122u + 126u);
}

TEST(IbTwin, IbCongestionControlMarksFecnAndSlowsTheSenders) {
  twin_config on = ib_config(9, 256 * 1024, congestion_control_kind::ib_cc);
  on.fabric.ib_cc.marking_threshold_bytes = 32 * 1024;
  twin_config off = ib_config(9, 256 * 1024, congestion_control_kind::none);
  fixed_messages a(incast(8, 2 << 20)), b(incast(8, 2 << 20));
  auto with_cc = run_twin(on, a);
  auto without = run_twin(off, b);
  ASSERT_TRUE(with_cc.ok()) << with_cc.error().message();
  ASSERT_TRUE(without.ok());
  EXPECT_TRUE(all_completed(*with_cc));
  EXPECT_GT(with_cc->totals.ce_marked, 0u) << "FECN above the threshold";
  EXPECT_GT(with_cc->totals.cnps, 0u) << "BECNs back to the senders";
  EXPECT_EQ(with_cc->totals.drops, 0u);
  EXPECT_EQ(without->totals.ce_marked, 0u);
  // Slowed senders keep the VL buffers from filling: fewer credit stalls.
  EXPECT_LT(with_cc->totals.paused_ns, without->totals.paused_ns);
}

// Property: random topologies, buffer sizes, routing and workloads; every run on credits
// is lossless, sends no PFC frame and completes every message. No VL buffer exceeds its
// size: an IB switch's VL buffer is a fixed shared limit with no headroom, so a packet
// beyond it would be dropped (headroom_exhausted), and drops are zero. The switch-level
// property test (test_credit_flow_control) checks the occupancy itself.
TEST(IbTwin, RandomWorkloadsOnCreditsNeverDropAndAlwaysComplete) {
  for (std::uint32_t seed = 1; seed <= 12; ++seed) {
    std::mt19937_64 rng(seed);
    const bool ls = rng() % 2 == 0;
    const std::uint32_t hosts = ls ? 8u * (1 + rng() % 2) : 4 + static_cast<std::uint32_t>(rng() % 12);
    const auto cc = rng() % 2 ? congestion_control_kind::ib_cc : congestion_control_kind::none;
    const std::int64_t vl_bytes = (9 + static_cast<std::int64_t>(rng() % 56)) * 1024;
    twin_config cfg = ib_config(hosts, vl_bytes, cc);
    cfg.nic.mtu_bytes = rng() % 2 ? 2048 : 4096;
    cfg.seed = seed;
    if (ls) cfg = leaf_spine(cfg, hosts, 2 + static_cast<std::uint32_t>(rng() % 2) * 2, 1 + static_cast<std::uint32_t>(rng() % 4));
    if (rng() % 2) cfg.fabric.routing = routing_mode::adaptive;
    std::vector<message> msgs;
    const int n = 10 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      message m;
      m.src = static_cast<std::uint32_t>(rng() % hosts);
      m.dst = static_cast<std::uint32_t>((m.src + 1 + rng() % (hosts - 1)) % hosts);
      m.bytes = 1 + rng() % (512 * 1024);
      m.start_ns = static_cast<std::int64_t>(rng() % 20'000);
      msgs.push_back(m);
    }
    fixed_messages load(msgs);
    auto r = run_twin(cfg, load);
    ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.error().message();
    EXPECT_TRUE(all_completed(*r)) << "seed " << seed;
    EXPECT_EQ(r->totals.drops, 0u) << "seed " << seed;
    EXPECT_EQ(r->totals.retransmits, 0u) << "seed " << seed;
    EXPECT_EQ(r->totals.pfc_pause_frames, 0u) << "seed " << seed;
  }
}

TEST(IbTwin, RejectsANonIbMtuAndRoceWithIbCc) {
  twin_config c = ib_config(4, 64 * 1024, congestion_control_kind::none);
  c.nic.mtu_bytes = 1500;
  fixed_messages load(incast(2, 1000));
  EXPECT_FALSE(run_twin(c, load).ok());
  twin_config roce = testing::single_switch(4, 1 << 20, true, true, true);
  roce.fabric.congestion = congestion_control_kind::ib_cc;
  EXPECT_FALSE(run_twin(roce, load).ok());
}

// Max over mean of the bytes the leaves sent up their uplinks.
double uplink_imbalance(const run_records& r, std::uint32_t leaves, std::uint32_t hosts_per_leaf, std::uint32_t spines) {
  std::vector<double> up;
  for (std::uint32_t l = 0; l < leaves; ++l)
    for (std::uint32_t s = 0; s < spines; ++s)
      up.push_back(static_cast<double>(counter(r, l, hosts_per_leaf + s, "tx_bytes")));
  const double mean = std::accumulate(up.begin(), up.end(), 0.0) / static_cast<double>(up.size());
  return *std::max_element(up.begin(), up.end()) / mean;
}

// A permutation: every host of leaf 0 sends to a host of leaf 1 and back, one large
// message each, so leaf uplinks carry all traffic.
std::vector<message> permutation(std::uint32_t hosts) {
  std::vector<message> m;
  const std::uint32_t half = hosts / 2;
  for (std::uint32_t i = 0; i < hosts; ++i) {
    message x;
    x.src = i;
    x.dst = i < half ? half + (i * 3 + 1) % half : (i - half) * 5 % half;
    x.bytes = 1 << 20;
    m.push_back(x);
  }
  return m;
}

TEST(AdaptiveRoutingTwin, SpreadsAPermutationMoreEvenlyThanEcmp) {
  for (const link_layer link : {link_layer::roce, link_layer::infiniband}) {
    double ecmp_sum = 0, ar_sum = 0, ar_worst = 0;
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      twin_config base = link == link_layer::infiniband
                             ? ib_config(16, 128 * 1024, congestion_control_kind::none)
                             : testing::single_switch(16, 16 << 20, true, false, false);
      base = leaf_spine(base, 16, 2, 4);
      base.seed = seed;
      twin_config ar = base;
      ar.fabric.routing = routing_mode::adaptive;
      fixed_messages a(permutation(16)), b(permutation(16));
      auto re = run_twin(base, a);
      auto ra = run_twin(ar, b);
      ASSERT_TRUE(re.ok() && ra.ok());
      ASSERT_TRUE(all_completed(*re) && all_completed(*ra));
      EXPECT_EQ(ra->totals.retransmits, 0u) << "reordered packets are placed, not resent";
      ecmp_sum += uplink_imbalance(*re, 2, 8, 4);
      const double ai = uplink_imbalance(*ra, 2, 8, 4);
      ar_sum += ai;
      ar_worst = std::max(ar_worst, ai);
    }
    SCOPED_TRACE(to_string(link));
    EXPECT_LT(ar_sum, ecmp_sum) << "adaptive routing spreads more evenly than ECMP on average";
    EXPECT_LT(ar_worst, 1.10) << "per-packet choice keeps every uplink within 10% of the mean";
    EXPECT_GT(ecmp_sum / 3, 1.2) << "16 flows hashed onto 8 uplinks collide";
  }
}

}  // namespace
}  // namespace rocelab::fabric::twin

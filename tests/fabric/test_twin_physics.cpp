// Physical sanity of the twin: an incast fills exactly its bottleneck, PFC makes it
// lossless, go-back-N recovers losses, ECN+DCQCN takes over from PFC, DCQCN shares a link
// fairly. Expected values are derived in the comments from the frame sizes of frames.hpp.
#include "rocelab/fabric/twin/twin.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rocelab/fabric/twin/frames.hpp"
#include "twin_test_support.hpp"

namespace rocelab::fabric::twin {
namespace {

using testing::all_completed;
using testing::fixed_messages;
using testing::incast;
using testing::last_end_ns;
using testing::single_switch;

std::uint64_t counter(const run_records& r, std::uint32_t device, std::uint32_t port, const std::string& name) {
  std::uint64_t v = 0;
  for (const auto& c : r.counters)
    if (c.device == device && c.port == port && c.name == name) v = c.value;  // the last one
  return v;
}

TEST(TwinPhysics, LosslessIncastFillsTheBottleneckAndDropsNothing) {
  // 16 x 64 KiB into h1 through a 1 MiB buffer: more than the buffer holds, so PFC must
  // stop the senders, and nothing may be dropped.
  twin_config cfg = single_switch(17, 1 << 20, /*pfc=*/true, /*ecn=*/false, /*dcqcn=*/false);
  fixed_messages load(incast(16, 64 * 1024));
  auto r = run_twin(cfg, load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(all_completed(*r));
  EXPECT_EQ(r->totals.drops, 0u);
  EXPECT_EQ(r->totals.retransmits, 0u);
  EXPECT_GT(r->totals.pfc_pause_frames, 0u);
  EXPECT_GT(r->totals.paused_ns, 0);

  // Per flow: 64 packets of 1024 B payload; frames 1024 + 62 = 1086 B, the first one
  // +16 (RETH) = 1102 B; on the wire +20 (preamble, IFG): 63 x 1106 + 1122 = 70,800 B.
  // 16 flows: 1,132,800 B = 9,062,400 bits at 100 Gb/s = 90,624 ns of bottleneck time.
  constexpr std::int64_t wire_ns = 90'624;
  // Latency around it: the first frame reaches the switch after 1122 x 8 / 100 = 89.76 ns
  // + 1 us; the last frame needs 1 us more to reach h1, and its ACK (66 + 20 B: 6.88 ns a
  // link) 2 x 1006.88 ns to come back: about 90 + 1000 + 1000 + 2014 = 4104 ns.
  constexpr std::int64_t fixed_ns = 4'104;
  const std::int64_t busy = last_end_ns(*r) - fixed_ns;
  EXPECT_GE(busy, wire_ns - 5);
  EXPECT_LE(busy, wire_ns * 103 / 100) << "the bottleneck idled under PFC";
  // The bottleneck port (sw0 port 0, toward h1) carried exactly the frames:
  // 16 x (64 x 1086 + 16) = 1,112,320 B.
  EXPECT_EQ(counter(*r, 0, 0, "tx_bytes"), 1'112'320u);
  EXPECT_EQ(counter(*r, 0, 0, "tx_packets"), 16u * 64u);
}

std::uint64_t sum_counter(const run_records& r, const std::string& name) {
  std::uint64_t v = 0;
  for (const auto& c : r.counters)
    if (c.name == name) v += c.value;
  return v;
}

// A cross-leaf incast on a leaf-spine (400G uplinks): 12 hosts of three leaves into h1 on
// leaf 0, priority 3 lossless, no ECN, so only PFC holds the data back and pauses reach
// back through the spines. Pins the leafspine-websearch regression (lossless data dropped
// with headroom_exhausted when headroom was sized for a 5 m cable instead of the links'
// 1 us): with headroom_bytes 0 the twin sizes it per link from its speed and delay and
// the lossless class drops nothing; with a 5 m cable's worth (6 KB) it does, and every
// drop is headroom_exhausted, which shows the counters name the reason.
twin_config cross_leaf_incast(std::int64_t headroom_bytes) {
  twin_config c = single_switch(16, 4 << 20, /*pfc=*/true, /*ecn=*/false, /*dcqcn=*/false);
  c.topology.type = topology_config::kind::leaf_spine;
  c.topology.leaves = 4;
  c.topology.spines = 2;
  c.topology.spine_link_gbps = 400;
  c.switch_template.ports[0].pgs[3].headroom_bytes = headroom_bytes;
  return c;
}

std::vector<message> cross_leaf_senders() {
  std::vector<message> m;
  for (std::uint32_t src = 4; src < 16; ++src) m.push_back(message{src, 0, 1 << 20, 0, workload_kind::incast, -1, src});
  return m;
}

TEST(TwinPhysics, LeafSpineLosslessClassNeverDropsWithLinkSizedHeadroom) {
  fixed_messages load(cross_leaf_senders());
  auto r = run_twin(cross_leaf_incast(0), load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(all_completed(*r));
  EXPECT_GT(r->totals.pfc_pause_frames, 0u);
  EXPECT_EQ(r->totals.drops, 0u);
  EXPECT_EQ(r->totals.retransmits, 0u);
  EXPECT_EQ(sum_counter(*r, "drops_headroom_exhausted"), 0u);
}

TEST(TwinPhysics, LeafSpineHeadroomForAShortCableDropsLosslessDataAsHeadroomExhausted) {
  fixed_messages load(cross_leaf_senders());
  auto r = run_twin(cross_leaf_incast(6'000), load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(all_completed(*r)) << "go-back-N recovers";
  EXPECT_GT(r->totals.drops, 0u);
  EXPECT_EQ(sum_counter(*r, "drops_headroom_exhausted"), r->totals.drops);
  EXPECT_EQ(sum_counter(*r, "drops_ingress_limit") + sum_counter(*r, "drops_egress_limit"), 0u);
}

TEST(TwinPhysics, WithoutPfcASmallBufferDropsAndGoBackNRecovers) {
  // 256 KiB of buffer, no PFC, no congestion control: 16 line-rate senders overflow it.
  twin_config cfg = single_switch(17, 256 * 1024, /*pfc=*/false, /*ecn=*/false, /*dcqcn=*/false);
  cfg.nic.retransmit_timeout_ns = 100'000;
  fixed_messages load(incast(16, 64 * 1024));
  auto r = run_twin(cfg, load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(all_completed(*r));
  EXPECT_GT(r->totals.drops, 0u);
  EXPECT_GT(r->totals.retransmits, 0u);
  EXPECT_EQ(r->totals.pfc_pause_frames, 0u);
  std::uint64_t per_flow = 0;
  for (const auto& f : r->flows) per_flow += f.retransmits;
  EXPECT_EQ(per_flow, r->totals.retransmits);
  // Every lost packet is sent again, so retransmits >= drops of data (ACKs may drop too,
  // but they travel toward the senders, whose ports are not congested).
  EXPECT_GE(r->totals.retransmits, r->totals.drops);
}

TEST(TwinPhysics, EcnWithDcqcnMarksSendsCnpsAndCutsPauseTime) {
  // 16 x 1 MiB through a 1 MiB lossless buffer: without ECN only PFC holds the senders
  // back; with ECN (Kmin 5 KB, Kmax 200 KB, Pmax 1%) DCQCN slows them before the PG
  // thresholds are reached, so the pause time falls.
  fixed_messages load_a(incast(16, 1 << 20));
  fixed_messages load_b(incast(16, 1 << 20));
  auto off = run_twin(single_switch(17, 1 << 20, true, /*ecn=*/false, true), load_a);
  auto on = run_twin(single_switch(17, 1 << 20, true, /*ecn=*/true, true), load_b);
  ASSERT_TRUE(off.ok() && on.ok());
  EXPECT_TRUE(all_completed(*off));
  EXPECT_TRUE(all_completed(*on));
  EXPECT_EQ(off->totals.ce_marked, 0u);
  EXPECT_EQ(off->totals.cnps, 0u);
  EXPECT_GT(on->totals.ce_marked, 0u);
  EXPECT_GT(on->totals.cnps, 0u);
  std::uint64_t flow_marks = 0, flow_cnps = 0;
  for (const auto& f : on->flows) flow_marks += f.ce_marked, flow_cnps += f.cnps;
  EXPECT_EQ(flow_marks, on->totals.ce_marked);  // one switch: every mark reaches a receiver
  EXPECT_EQ(flow_cnps, on->totals.cnps);        // lossless: every CNP reaches its sender
  EXPECT_GT(off->totals.paused_ns, 0);
  EXPECT_LT(on->totals.paused_ns, off->totals.paused_ns / 2)
      << "pause ns with ECN " << on->totals.paused_ns << ", without " << off->totals.paused_ns;
  EXPECT_EQ(on->totals.drops, 0u);
}

TEST(TwinPhysics, TwoDcqcnFlowsShareABottleneckFairly) {
  // h2 and h3 send 50 MB each to h1 over one 100G link with ECN and DCQCN: the mlx5
  // preset with rate increases by timer only (byte counter off, as the HPCC ns-3 model
  // runs it). Timer increases are additive and equal for both flows, cuts multiplicative,
  // so the shares converge (AIMD). With mlx5's 32 KB byte counter and clamp_tgt_rate off
  // the target rate stays at line rate and a flow climbs back within microseconds of
  // each cut: both flows then swing together between line rate and a deep cut and
  // average about 40 Gb/s each (the twin shows it; this test pins the converging case).
  twin_config cfg = single_switch(3, 32 << 20, true, true, true);
  cfg.nic.dcqcn.byte_counter_enabled = false;
  cfg.queue_sample_interval_ns = 10'000;
  fixed_messages load(incast(2, 50'000'000));
  auto r = run_twin(cfg, load);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(all_completed(*r));
  EXPECT_GT(r->totals.cnps, 0u);
  const std::int64_t t_end = std::min(r->flows[0].end_ns, r->flows[1].end_ns);
  // Each sender's NIC tx_bytes over the second half of the time both were sending.
  const std::int64_t t0 = t_end / 2;
  std::map<std::uint32_t, std::pair<std::int64_t, std::uint64_t>> first, last;  // device -> (t, bytes)
  for (const auto& c : r->counters) {
    if (c.name != "tx_bytes" || c.t_ns < t0 || c.t_ns > t_end) continue;
    if (!first.count(c.device)) first[c.device] = {c.t_ns, c.value};
    last[c.device] = {c.t_ns, c.value};
  }
  // Fair share in frame bytes: half of 100 Gb/s of wire time, of which 1086 of every
  // 1106 bytes are frame (the rest preamble and IFG): 50 x 1086 / 1106 = 49.1 Gb/s.
  const double fair_gbps = 50.0 * 1086.0 / 1106.0;
  const std::uint32_t nsw = 1;
  for (std::uint32_t h : {1u, 2u}) {
    const auto& a = first[nsw + h];
    const auto& b = last[nsw + h];
    ASSERT_GT(b.first, a.first);
    const double gbps = static_cast<double>(b.second - a.second) * 8.0 / static_cast<double>(b.first - a.first);
    EXPECT_NEAR(gbps, fair_gbps, 0.15 * fair_gbps) << "host " << h + 1;
  }
}

}  // namespace
}  // namespace rocelab::fabric::twin

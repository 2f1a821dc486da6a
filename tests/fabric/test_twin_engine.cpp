// The twin's engine: event order, ideal FCT, determinism, leaf-spine with ECMP, config
// validation, the HPCC ns-3 compatibility switch, the workload callback contract and a
// calibrated lab's timing (twin_config::lab).
#include "rocelab/fabric/twin/flow_ideal.hpp"
#include "rocelab/fabric/twin/twin.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "rocelab/fabric/twin/event_queue.hpp"
#include "rocelab/fabric/twin/frames.hpp"
#include "twin_test_support.hpp"

namespace rocelab::fabric::twin {
namespace {

using testing::all_completed;
using testing::fixed_messages;
using testing::incast;
using testing::single_switch;

TEST(TwinEventQueue, PopsByTimeThenInsertionOrder) {
  event_queue q;
  const std::int64_t times[] = {50, 10, 30, 10, 20, 50, 10, 0, 30};
  for (std::uint32_t i = 0; i < 9; ++i) q.push(times[i], 1, i);
  std::vector<std::uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().payload & event_index_mask);
  EXPECT_EQ(order, (std::vector<std::uint32_t>{7, 1, 3, 6, 4, 2, 8, 0, 5}));
}

// The wheel (near events) and the heap (far or past ones) together pop exactly as one heap
// keyed by (time, sequence): checked against a sorted reference over pushes that cross
// the wheel's wrap-around, land beyond the horizon, tie across the two structures, and
// are interleaved with pops.
TEST(TwinEventQueue, WheelAndHeapPopInTimeThenSequenceOrder) {
  event_queue q(2200);  // the wheel (4096 buckets) wraps every few thousand pushes
  std::vector<event_record> ref;  // pending, in reference order
  std::uint64_t rng = 42;
  auto next = [&] {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return rng >> 33;
  };
  std::int64_t now = 0;
  std::uint32_t seq = 0;
  for (int step = 0; step < 200'000; ++step) {
    if (ref.empty() || next() % 3 != 0) {
      // Mostly near (0..3 us ahead, on both sides of the horizon), some at exactly the
      // horizon, far beyond it, or now.
      const std::uint64_t kind = next() % 16;
      const std::int64_t ahead = kind < 12   ? static_cast<std::int64_t>(next() % 3000)
                                 : kind < 13 ? q.horizon_ns()
                                 : kind < 15 ? q.horizon_ns() + 1 + static_cast<std::int64_t>(next() % 100'000)
                                             : 0;
      const auto index = static_cast<std::uint32_t>(step);
      q.push(now + ahead, 1, index);
      ref.push_back(event_record{now + ahead, seq++, (1u << event_index_bits) | index});
      std::push_heap(ref.begin(), ref.end(), [](const event_record& a, const event_record& b) {
        return event_queue::before(b, a);
      });
    } else {
      std::pop_heap(ref.begin(), ref.end(), [](const event_record& a, const event_record& b) {
        return event_queue::before(b, a);
      });
      const event_record want = ref.back();
      ref.pop_back();
      ASSERT_EQ(q.top().seq, want.seq) << "step " << step;
      const event_record got = q.pop();
      ASSERT_EQ(got.at_ns, want.at_ns) << "step " << step;
      ASSERT_EQ(got.seq, want.seq) << "step " << step;
      ASSERT_EQ(got.payload, want.payload) << "step " << step;
      now = got.at_ns;
    }
    ASSERT_EQ(q.size(), ref.size());
  }
}

twin_config quiet_single_switch() { return single_switch(4, 32 << 20, true, true, true); }

TEST(TwinIdealFct, OnePacketMessageByHand) {
  // 1000 B alone from h2 to h1 through one switch, 100G, 1 us links:
  //   data frame 1000 + 62 + 16 (RETH) = 1078 B, +20 on the wire = 1098 B = 87.84 ns;
  //   h2 -> sw0: ends 87.84 -> 88 ns, arrives 1088; sw0 -> h1: 1088 + 87.84 = 1175.84 ->
  //   1176, arrives 2176; ACK 66 + 20 = 86 B = 6.88 ns: h1 -> sw0 2182.88 -> 2183,
  //   arrives 3183; sw0 -> h2 3189.88 -> 3190, arrives 4190.
  fixed_messages load({message{1, 0, 1000, 0, workload_kind::other, -1, 7}});
  auto r = run_twin(quiet_single_switch(), load);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->flows.size(), 1u);
  EXPECT_EQ(r->flows[0].ideal_fct_ns, 4190);
  EXPECT_EQ(r->flows[0].fct_ns, 4190);
  EXPECT_EQ(r->flows[0].tag, 7u);
  EXPECT_DOUBLE_EQ(r->flows[0].slowdown(), 1.0);
}

TEST(TwinIdealFct, OnePacketMessageWithoutPreambleOrGapByHand) {
  // As above with topology.frame_overhead_bytes 0 (htsim counts no preamble or gap):
  //   data 1078 B = 86.24 ns: h2 -> sw0 ends 87, arrives 1087; sw0 -> h1 1173.24 -> 1174,
  //   arrives 2174; ACK 66 B = 5.28 ns: h1 -> sw0 2179.28 -> 2180, arrives 3180; sw0 -> h2
  //   3185.28 -> 3186, arrives 4186.
  twin_config cfg = quiet_single_switch();
  cfg.topology.frame_overhead_bytes = 0;
  fixed_messages load({message{1, 0, 1000, 0, workload_kind::other, -1, 7}});
  auto r = run_twin(cfg, load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->flows.size(), 1u);
  EXPECT_EQ(r->flows[0].ideal_fct_ns, 4186);
  EXPECT_EQ(r->flows[0].fct_ns, 4186);
}

// The frame overhead is the topology's: the switch template's wire_overhead_bytes is
// replaced, so setting the default explicitly, or a different template value, changes
// no record.
TEST(TwinIdealFct, TheDefaultFrameOverheadIsTwentyBytesWhateverTheTemplateSays) {
  auto records_of = [](const twin_config& cfg) {
    fixed_messages load({message{1, 0, 300'000, 0, workload_kind::other, -1, 0},
                         message{2, 0, 300'000, 1'000, workload_kind::other, -1, 1}});
    auto r = run_twin(cfg, load);
    EXPECT_TRUE(r.ok()) << r.error().message();
    std::vector<std::int64_t> out;
    for (const auto& f : r->flows) out.insert(out.end(), {f.fct_ns, f.ideal_fct_ns});
    return out;
  };
  const auto plain = records_of(quiet_single_switch());
  twin_config explicit_20 = quiet_single_switch();
  explicit_20.topology.frame_overhead_bytes = 20;
  explicit_20.switch_template.wire_overhead_bytes = 0;
  EXPECT_EQ(records_of(explicit_20), plain);
  twin_config none = quiet_single_switch();
  none.topology.frame_overhead_bytes = 0;
  const auto without = records_of(none);
  ASSERT_EQ(without.size(), plain.size());
  for (std::size_t i = 0; i < plain.size(); ++i) EXPECT_LT(without[i], plain[i]) << i;
}

struct ideal_case {
  const char* name;
  bool leaf_spine;
  std::uint32_t src, dst;
  std::uint64_t bytes;
  std::uint32_t mtu;
};

TEST(TwinIdealFct, AloneOnAnIdlePathTheFctIsTheIdealFct) {
  const ideal_case cases[] = {
      {"single switch, 100 kB", false, 1, 0, 100'000, 1024},
      {"single switch, 4 MiB at 4096 MTU", false, 2, 3, 4 << 20, 4096},
      {"single switch, zero bytes", false, 0, 1, 0, 1024},
      {"leaf-spine same leaf", true, 0, 1, 300'000, 1024},
      {"leaf-spine across spines, faster uplinks", true, 0, 13, 1'000'000, 1024},
  };
  for (const auto& c : cases) {
    twin_config cfg = quiet_single_switch();
    cfg.nic.mtu_bytes = c.mtu;
    if (c.leaf_spine) {
      cfg.topology.type = topology_config::kind::leaf_spine;
      cfg.topology.hosts = 16;
      cfg.topology.leaves = 4;
      cfg.topology.spines = 2;
      cfg.topology.spine_link_gbps = 400;
    }
    fixed_messages load({message{c.src, c.dst, c.bytes, 5'000, workload_kind::other, -1, 0}});
    auto r = run_twin(cfg, load);
    ASSERT_TRUE(r.ok()) << c.name << ": " << r.error().message();
    const auto& f = r->flows.at(0);
    ASSERT_TRUE(f.completed()) << c.name;
    EXPECT_EQ(f.start_ns, 5'000) << c.name;
    EXPECT_NEAR(static_cast<double>(f.fct_ns), static_cast<double>(f.ideal_fct_ns), 3.0) << c.name;
    EXPECT_EQ(f.retransmits + f.ce_marked + f.cnps, 0u) << c.name;
  }
}

TEST(TwinIdealFct, LargeMessageMatchesTheClosedForm) {
  // 1 MiB at 1024 B MTU, one switch: n = 1024 packets; wire frames 1106 B (first 1122 B).
  // Data: 2 x 1000 ns propagation + (1023 x 1106 + 1122) x 8 / 100 = 90,604.16 ns of
  // bottleneck serialization + one store-and-forward of the last frame (88.48 ns);
  // ACK back: 2 x (1000 + 6.88). Total 94,706.4 ns, give or take the per-hop ns rounding.
  fixed_messages load({message{1, 0, 1 << 20, 0, workload_kind::other, -1, 0}});
  auto r = run_twin(quiet_single_switch(), load);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(static_cast<double>(r->flows[0].ideal_fct_ns), 94'706.4, 4.0);
  EXPECT_NEAR(static_cast<double>(r->flows[0].fct_ns), 94'706.4, 4.0);
}

twin_config leaf_spine_cfg() {
  twin_config cfg = single_switch(64, 16 << 20, true, true, true);
  cfg.topology.type = topology_config::kind::leaf_spine;
  cfg.topology.hosts = 64;
  cfg.topology.leaves = 4;
  cfg.topology.spines = 4;
  cfg.topology.oversubscription = 2.0;  // 16 x 100G down, 4 x 200G up
  cfg.queue_sample_interval_ns = 20'000;
  cfg.seed = 42;
  return cfg;
}

std::vector<message> permutation(std::uint32_t hosts, std::uint64_t bytes, std::uint64_t seed) {
  // A shift permutation, host i -> i + offset (mod 64) with offset in 16..47, so every
  // flow leaves its leaf and crosses a spine; starts staggered by 100 ns.
  const auto offset = static_cast<std::uint32_t>(16 + seed % 32);
  std::vector<message> out;
  for (std::uint32_t i = 0; i < hosts; ++i) {
    message m;
    m.src = i;
    m.dst = (i + offset) % hosts;
    m.bytes = bytes;
    m.start_ns = static_cast<std::int64_t>(i) * 100;
    m.kind = workload_kind::background;
    out.push_back(m);
  }
  return out;
}

TEST(TwinLeafSpine, PermutationCompletesAndEcmpUsesEverySpine) {
  const twin_config cfg = leaf_spine_cfg();
  fixed_messages load(permutation(64, 2'000'000, 1));
  auto r = run_twin(cfg, load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(all_completed(*r));
  // Devices: leaf0..3, spine0..3, then h1..h64.
  ASSERT_EQ(r->devices.size(), 8u + 64u);
  EXPECT_EQ(r->devices[0], "leaf0");
  EXPECT_EQ(r->devices[4], "spine0");
  EXPECT_EQ(r->devices[8], "h1");
  EXPECT_EQ(r->hosts.back(), "h64");
  // Every spine forwarded packets (64 flows hashed over 4 spines: each spine gets none
  // with probability (3/4)^64 ~ 1e-8 per direction).
  std::set<std::uint32_t> spines_used;
  for (const auto& c : r->counters)
    if (c.name == "tx_packets" && c.device >= 4 && c.device < 8 && c.value > 0) spines_used.insert(c.device);
  EXPECT_EQ(spines_used.size(), 4u);
  // Every data packet crosses leaf, spine, leaf; every ACK too (no CNP counted here).
  std::uint64_t data_pkts = 0;
  for (const auto& f : r->flows) data_pkts += (f.bytes + 1023) / 1024;
  EXPECT_GE(r->totals.packets_forwarded, 2 * 3 * data_pkts);
  EXPECT_FALSE(r->queues.empty());
}

TEST(TwinDeterminism, SameSeedSameRecords) {
  const twin_config cfg = leaf_spine_cfg();
  fixed_messages a(permutation(64, 500'000, 3)), b(permutation(64, 500'000, 3));
  auto r1 = run_twin(cfg, a);
  auto r2 = run_twin(cfg, b);
  ASSERT_TRUE(r1.ok() && r2.ok());
  ASSERT_EQ(r1->flows.size(), r2->flows.size());
  for (std::size_t i = 0; i < r1->flows.size(); ++i) {
    const auto &x = r1->flows[i], &y = r2->flows[i];
    EXPECT_EQ(x.end_ns, y.end_ns);
    EXPECT_EQ(x.ce_marked, y.ce_marked);
    EXPECT_EQ(x.cnps, y.cnps);
    EXPECT_EQ(x.retransmits, y.retransmits);
  }
  EXPECT_EQ(r1->simulated_ns, r2->simulated_ns);
  EXPECT_EQ(r1->totals.packets_forwarded, r2->totals.packets_forwarded);
  EXPECT_EQ(r1->totals.ce_marked, r2->totals.ce_marked);
  EXPECT_EQ(r1->totals.paused_ns, r2->totals.paused_ns);
  ASSERT_EQ(r1->queues.size(), r2->queues.size());
  for (std::size_t i = 0; i < r1->queues.size(); ++i) EXPECT_EQ(r1->queues[i].bytes, r2->queues[i].bytes);
  ASSERT_EQ(r1->pauses.size(), r2->pauses.size());

  // Another seed changes the ECMP choices and the marks, so the run differs.
  twin_config other = cfg;
  other.seed = 43;
  fixed_messages c(permutation(64, 500'000, 3));
  auto r3 = run_twin(other, c);
  ASSERT_TRUE(r3.ok());
  EXPECT_NE(r3->simulated_ns * 1'000'003 + static_cast<std::int64_t>(r3->totals.ce_marked),
            r1->simulated_ns * 1'000'003 + static_cast<std::int64_t>(r1->totals.ce_marked));
}

TEST(TwinValidate, NamesTheFaultyField) {
  struct bad_case {
    const char* field;
    void (*mutate)(twin_config&);
  };
  const bad_case cases[] = {
      {"topology.hosts", [](twin_config& c) { c.topology.hosts = 1; }},
      {"topology.link_gbps", [](twin_config& c) { c.topology.link_gbps = 0; }},
      {"topology.leaves", [](twin_config& c) { c.topology.type = topology_config::kind::leaf_spine; }},
      {"topology.hosts must be a multiple", [](twin_config& c) {
         c.topology.type = topology_config::kind::leaf_spine;
         c.topology.leaves = 3;
         c.topology.spines = 2;
       }},
      {"nic.mtu_bytes", [](twin_config& c) { c.nic.mtu_bytes = 100; }},
      {"nic.ack_every_packets", [](twin_config& c) { c.nic.ack_every_packets = 0; }},
      {"nic.dcqcn", [](twin_config& c) { c.nic.dcqcn.dce_tcp_g = 5000; }},
      {"switch_template", [](twin_config& c) { c.switch_template.cell_bytes = 0; }},
      {"topology.frame_overhead_bytes must be 0..64", [](twin_config& c) { c.topology.frame_overhead_bytes = 65; }},
      {"topology.frame_overhead_bytes must be the default 20 on InfiniBand", [](twin_config& c) {
         c.fabric.link = link_layer::infiniband;
         c.fabric.congestion = congestion_control_kind::none;
         c.topology.frame_overhead_bytes = 0;
       }},
      {"topology.frame_overhead_bytes must be 0 in the HPCC ns-3", [](twin_config& c) {
         c.hpcc_ns3_compat = true;
         c.topology.frame_overhead_bytes = 24;
       }},
  };
  for (const auto& c : cases) {
    twin_config cfg = quiet_single_switch();
    c.mutate(cfg);
    const status st = validate(cfg);
    EXPECT_FALSE(st.ok()) << c.field;
    EXPECT_NE(st.message().find(c.field), std::string::npos) << st.message();
    fixed_messages load({});
    EXPECT_FALSE(run_twin(cfg, load).ok()) << c.field;
  }
  EXPECT_TRUE(validate(quiet_single_switch()).ok());
}

// HPCC ns-3 settings as its config.txt for incast16_buf2MB gives them (100G, 1 us,
// 2 MB buffer, KMIN 400 KB / KMAX 1600 KB / PMAX 0.2 at 100G, DCQCN with RATE_AI 20Mb/s,
// RATE_HAI 200Mb/s, MIN_RATE 1000Mb/s, EWMA_GAIN 1/256), scaled to 16 x 1 MB.
TEST(TwinCompat, HpccNs3IncastUsesItsModellingChoices) {
  twin_config cfg;
  cfg.hpcc_ns3_compat = true;
  cfg.topology.hosts = 17;
  cfg.topology.link_gbps = 100;
  cfg.topology.link_delay_ns = 1000;
  cfg.switch_template.buffer_bytes = 2 * 1024 * 1024;
  cfg.ecn_by_rate = {{100, ecn_config{true, 400'000, 1'600'000, 0.2}}};
  cfg.nic.mtu_bytes = 1000;
  cfg.nic.control_pause_priority = 0;  // ACK_HIGH_PRIO 1: ACKs first at the NIC, never paused
  cfg.nic.dcqcn.rpg_ai_rate_mbps = 20;
  cfg.nic.dcqcn.rpg_hai_rate_mbps = 200;
  cfg.nic.dcqcn.rpg_min_rate_mbps = 1000;
  cfg.nic.dcqcn.dce_tcp_g = 1020;
  cfg.nic.dcqcn.initial_alpha_value = 1024;
  fixed_messages load(incast(16, 1'000'000));
  auto r = run_twin(cfg, load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(all_completed(*r));
  EXPECT_EQ(r->totals.drops, 0u);
  // 16 MB in 1048-byte frames with no preamble/IFG, each holding the link for 8384 bits
  // at 100 Gb/s truncated to whole ns (83 ns, as ns-3's Time does): 16 x 1000 x 83 =
  // 1,328,000 ns of bottleneck time at least. DCQCN leaves the link partly idle after its
  // cuts: the ns-3 reference for 16 x 8 MB (README) ends at 12.02-13.02 ms against
  // 10.62 ms of bottleneck time, 13-23% over; allow 30%.
  EXPECT_GE(testing::last_end_ns(*r), 1'328'000);
  EXPECT_LE(testing::last_end_ns(*r), 1'328'000 * 130 / 100);
  EXPECT_GT(r->totals.ce_marked, 0u);
  // A congestion flag on the ACK of every marked packet: CNPs = marks, none spaced out.
  EXPECT_EQ(r->totals.cnps, r->totals.ce_marked);
  // Pauses, if any, last until an explicit resume: every interval has a real end.
  for (const auto& p : r->pauses) EXPECT_LE(p.end_ns, r->simulated_ns);
  // Bottleneck bytes: 16 x 1000 frames of 1048 B (the HPCC fork's 14-byte PppHeader,
  // IPv4 20, UDP 8, SeqTs 6, payload).
  std::uint64_t tx = 0;
  for (const auto& c : r->counters)
    if (c.device == 0 && c.port == 0 && c.name == "tx_bytes") tx = c.value;
  EXPECT_EQ(tx, 16u * 1000u * 1048u);
}

// A workload that chains messages: each completion posts the next, as an all-reduce step
// waits for the previous chunk.
class chain final : public workload {
 public:
  void start(twin_context& ctx) override {
    EXPECT_EQ(ctx.hosts(), 4u);
    EXPECT_DOUBLE_EQ(ctx.link_gbps(), 100.0);
    (void)ctx.post(message{0, 1, 10'000, 0, workload_kind::allreduce, -1, 0});
  }
  void on_message_complete(std::uint64_t id, const message& m, const flow_record& rec, twin_context& ctx) override {
    EXPECT_EQ(ctx.now_ns(), rec.end_ns);
    EXPECT_EQ(rec.tag, m.tag);
    ends.push_back(rec.end_ns);
    if (m.tag < 3) {
      (void)ctx.post(message{m.dst, (m.dst + 1) % 4, 10'000, 0, workload_kind::allreduce, -1, m.tag + 1});
    } else {
      allreduce_result a;
      a.algorithm = "ring";
      a.ranks = 4;
      a.bytes = 10'000;
      a.time_ns = rec.end_ns;
      ctx.report_allreduce(a);
    }
    (void)id;
  }
  std::vector<std::int64_t> ends;
};

TEST(TwinWorkload, CompletionsDriveDependentMessages) {
  chain load;
  auto r = run_twin(quiet_single_switch(), load);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->flows.size(), 4u);
  ASSERT_EQ(load.ends.size(), 4u);
  for (std::size_t i = 1; i < 4; ++i) EXPECT_EQ(r->flows[i].start_ns, r->flows[i - 1].end_ns);
  ASSERT_EQ(r->allreduce.size(), 1u);
  EXPECT_EQ(r->allreduce[0].time_ns, r->flows[3].end_ns);
  EXPECT_EQ(r->simulated_ns, r->flows[3].end_ns);
  EXPECT_EQ(r->backend, "twin");
}

TEST(TwinRun, StopsAtStopNsWithIncompleteFlows) {
  twin_config cfg = quiet_single_switch();
  cfg.stop_ns = 50'000;
  fixed_messages load({message{1, 0, 100'000'000, 0, workload_kind::other, -1, 0}});
  auto r = run_twin(cfg, load);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->flows[0].completed());
  EXPECT_EQ(r->simulated_ns, 50'000);
}

// ---- a calibrated lab's timing (twin_config::lab) ----

lab_timing constant_hosts(std::uint32_t hosts, std::int64_t send_ns, std::int64_t receive_ns) {
  lab_timing lab;
  lab.hosts.resize(hosts);
  for (host_timing& h : lab.hosts) {
    h.send_processing = delay_quantiles::constant(send_ns);
    h.receive_processing = delay_quantiles::constant(receive_ns);
  }
  return lab;
}

struct lab_fct_case {
  const char* name;
  bool leaf_spine;
  std::uint32_t src, dst;
  std::int64_t switch_latency_ns;
  // by hand: send + receive (the responder's, for the ACK) + every hop's forwarding, data
  // and ACK + receive (the requester's, for that ACK)
  std::int64_t extra_ns;
};

TEST(TwinLabTiming, OnePacketFctIsTheIdealPlusTheCalibratedDelays) {
  // Send 300 ns, receive 500 ns. Single switch: port 0 (toward h1) 200 ns, port 1 (toward
  // h2) 700 ns, the rest 50 ns; the data leaves by port 0, its ACK by port 1. Leaf-spine:
  // every port 250 ns, the data crosses leaf, spine, leaf and so does its ACK. The message
  // completes when its requester's NIC has processed the ACK: 500 ns more.
  const lab_fct_case cases[] = {
      {"single switch, per port", false, 1, 0, 0, 300 + 200 + 500 + 700 + 500},
      {"single switch, on top of switch_latency_ns", false, 1, 0, 100, 300 + 200 + 500 + 700 + 500},
      {"single switch, a port the calibration does not name", false, 2, 3, 0, 300 + 50 + 500 + 50 + 500},
      {"leaf-spine, pooled", true, 0, 13, 0, 300 + 3 * 250 + 500 + 3 * 250 + 500},
  };
  for (const auto& c : cases) {
    twin_config cfg = quiet_single_switch();
    cfg.fabric.switch_latency_ns = c.switch_latency_ns;
    if (c.leaf_spine) {
      cfg.topology.type = topology_config::kind::leaf_spine;
      cfg.topology.hosts = 16;
      cfg.topology.leaves = 4;
      cfg.topology.spines = 2;
    }
    fixed_messages plain({message{c.src, c.dst, 1000, 0, workload_kind::other, -1, 0}});
    auto ideal = run_twin(cfg, plain);
    cfg.lab = constant_hosts(cfg.topology.hosts, 300, 500);
    if (c.leaf_spine) {
      cfg.lab.forwarding = delay_quantiles::constant(250);
    } else {
      cfg.lab.forwarding_by_port = {delay_quantiles::constant(200), delay_quantiles::constant(700)};
      cfg.lab.forwarding = delay_quantiles::constant(50);
    }
    fixed_messages load({message{c.src, c.dst, 1000, 0, workload_kind::other, -1, 0}});
    auto r = run_twin(cfg, load);
    ASSERT_TRUE(ideal.ok() && r.ok()) << c.name;
    const flow_record& f = r->flows.at(0);
    // The ideal stays the ideal: slowdowns are against it on every backend.
    EXPECT_EQ(f.ideal_fct_ns, ideal->flows.at(0).ideal_fct_ns) << c.name;
    EXPECT_EQ(ideal->flows.at(0).fct_ns, f.ideal_fct_ns) << c.name;
    EXPECT_EQ(f.start_ns, 0) << c.name;
    EXPECT_EQ(f.fct_ns, f.ideal_fct_ns + c.extra_ns) << c.name;
  }
}

TEST(TwinLabTiming, AchievedRateCapsALongFlow) {
  // 4 MiB at 1024 B MTU: 4096 frames of 1086 B (the first 16 B more), each with its
  // preamble and gap on the wire, as calibration measures an achieved rate. At 50 Gb/s
  // achieved they take about twice the ideal to send; the last frame's trip and its ACK
  // add a few microseconds.
  twin_config cfg = quiet_single_switch();
  cfg.lab.hosts.resize(cfg.topology.hosts);
  cfg.lab.hosts[1].achieved_gbps = 50;
  cfg.lab.hosts[2].achieved_gbps = 150;  // above the link: the link's rate
  fixed_messages load({message{1, 0, 4 << 20, 0, workload_kind::other, -1, 0},
                       message{2, 3, 4 << 20, 0, workload_kind::other, -1, 0}});
  auto r = run_twin(cfg, load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  const flow_record& slow = r->flows.at(0);
  const double paced_ns = (4096.0 * (1086 + wire_overhead_of(cfg)) + 16) * 8 / 50;
  EXPECT_GE(static_cast<double>(slow.fct_ns), paced_ns);
  EXPECT_LE(static_cast<double>(slow.fct_ns), paced_ns + 5'000);
  EXPECT_LT(slow.ideal_fct_ns, static_cast<std::int64_t>(paced_ns * 0.55));
  const flow_record& fast = r->flows.at(1);
  EXPECT_NEAR(static_cast<double>(fast.fct_ns), static_cast<double>(fast.ideal_fct_ns), 3.0);
}

// A calibrated NIC's pacing wake-ups (host_timing::pacing_lateness), paced as the soft NIC
// paces: late by less than a frame time, every frame is due a frame time after the one
// before, so only the last one's lateness shows; late by five frame times, each wake-up
// sends a frame and the one it catches up with, two frames per lateness plus a frame time.
TEST(TwinLabTiming, PacingLatenessBelowAFrameTimeIsJitterAboveItSendsPairs) {
  // 4 MiB at 1024 B MTU, 100 Gb/s: 4096 frames of 1086 B, 1106 B on the wire, 88.48 ns.
  const double frame_ns = (1086 + wire_overhead_of(quiet_single_switch())) * 8 / 100.0;
  struct row {
    const char* name;
    std::int64_t lateness_ns;
    double fct_over_ideal;  // expected
    double tolerance;
  };
  for (const row& r : {row{"a half frame late", 44, 0, 0}, row{"five frames late", 442, (442 + frame_ns) / (2 * frame_ns), 0.01}}) {
    twin_config cfg = quiet_single_switch();
    cfg.lab.hosts.resize(cfg.topology.hosts);
    cfg.lab.hosts[1].pacing_lateness = delay_quantiles::constant(r.lateness_ns);
    fixed_messages load({message{1, 0, 4 << 20, 0, workload_kind::other, -1, 0},
                         message{2, 3, 4 << 20, 0, workload_kind::other, -1, 0}});
    auto got = run_twin(cfg, load);
    ASSERT_TRUE(got.ok()) << got.error().message();
    const flow_record& late = got->flows.at(0);
    if (r.fct_over_ideal == 0) {
      EXPECT_NEAR(static_cast<double>(late.fct_ns), static_cast<double>(late.ideal_fct_ns + r.lateness_ns), 3.0) << r.name;
    } else {
      EXPECT_NEAR(static_cast<double>(late.fct_ns) / static_cast<double>(late.ideal_fct_ns), r.fct_over_ideal,
                  r.tolerance * r.fct_over_ideal)
          << r.name;
    }
    const flow_record& other = got->flows.at(1);
    EXPECT_NEAR(static_cast<double>(other.fct_ns), static_cast<double>(other.ideal_fct_ns), 3.0) << "h3 draws nothing";
  }
}

// Wide forwarding draws (0 to 5 us per frame, 88 ns apart on the wire): a frame that
// overtook an earlier one of its flow would reach the responder out of order, draw a NAK
// and a go-back-N resend.
twin_config jittery_lab(std::uint64_t seed) {
  twin_config cfg = quiet_single_switch();
  cfg.seed = seed;
  delay_quantiles wide;
  wide.ns = {0, 20, 100, 200, 500, 1000, 1500, 2500, 3500, 4500, 5000};
  wide.samples = 1000;
  cfg.lab.forwarding = wide;
  cfg.lab.hosts.resize(cfg.topology.hosts);
  for (host_timing& h : cfg.lab.hosts) {
    h.send_processing = wide;
    h.receive_processing = wide;
  }
  return cfg;
}

std::vector<message> two_to_one() {
  return {message{1, 0, 1 << 20, 0, workload_kind::other, -1, 0}, message{2, 0, 1 << 20, 0, workload_kind::other, -1, 0},
          message{3, 2, 200'000, 0, workload_kind::other, -1, 0}};
}

TEST(TwinLabTiming, RandomForwardingKeepsEveryPortFifo) {
  const twin_config cfg = jittery_lab(5);
  fixed_messages load(two_to_one());
  auto r = run_twin(cfg, load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(all_completed(*r));
  EXPECT_EQ(r->totals.retransmits, 0u);
  EXPECT_EQ(r->totals.drops, 0u);
  // In order on a port, a frame waits at most for the longest draw before it: the draws
  // do not add up along the flow. The lone flow (h4 -> h3) is at most its ideal plus the
  // longest send, two forwardings and a receive.
  const flow_record& alone = r->flows.at(2);
  EXPECT_GT(alone.fct_ns, alone.ideal_fct_ns);
  EXPECT_LE(alone.fct_ns, alone.ideal_fct_ns + 4 * 5'000 + 10);
}

TEST(TwinLabTiming, AFrameWaitsBehindTheLongestDrawBeforeIt) {
  // 1 MiB alone, back to back, forwarding drawn (0 to 5 us) and nothing else: its last
  // frame arrives behind every earlier one, so at least as late as the longest of the
  // 1024 draws of its port (P(all 1024 below the p99 of 4.5 us) = 0.99^1024 ~ 3e-5); were
  // a frame's own draw all that counted, the FCT would be the ideal plus two draws.
  for (std::uint64_t seed : {5u, 6u, 7u}) {
    twin_config cfg = jittery_lab(seed);
    cfg.lab.hosts.clear();
    fixed_messages load({message{1, 0, 1 << 20, 0, workload_kind::other, -1, 0}});
    auto r = run_twin(cfg, load);
    ASSERT_TRUE(r.ok()) << r.error().message();
    const flow_record& f = r->flows.at(0);
    EXPECT_GE(f.fct_ns, f.ideal_fct_ns + 4'500) << "seed " << seed;
    EXPECT_LE(f.fct_ns, f.ideal_fct_ns + 2 * 5'000 + 10) << "seed " << seed;
    EXPECT_EQ(f.retransmits, 0u);
  }
}

std::string records_text(const run_records& r) {
  std::ostringstream o;
  for (const auto& f : r.flows)
    o << "f " << f.src << ' ' << f.dst << ' ' << f.qp << ' ' << int{f.priority} << ' ' << f.bytes << ' ' << f.start_ns << ' '
      << f.end_ns << ' ' << f.fct_ns << ' ' << f.ideal_fct_ns << ' ' << f.retransmits << ' ' << f.ce_marked << ' ' << f.cnps
      << ' ' << f.tag << '\n';
  for (const auto& p : r.pauses)
    o << "p " << p.device << ' ' << p.port << ' ' << int{p.priority} << ' ' << p.start_ns << ' ' << p.end_ns << '\n';
  for (const auto& c : r.counters) o << "c " << c.device << ' ' << c.port << ' ' << c.name << ' ' << c.t_ns << ' ' << c.value << '\n';
  for (const auto& q : r.queues) o << "q " << q.device << ' ' << q.port << ' ' << int{q.queue} << ' ' << q.t_ns << ' ' << q.bytes << '\n';
  for (const auto& e : r.events)
    o << "e " << static_cast<int>(e.kind) << ' ' << e.device << ' ' << e.port << ' ' << e.t_ns << ' ' << e.qp << '\n';
  const run_totals& t = r.totals;
  o << "t " << t.pfc_pause_frames << ' ' << t.pfc_resume_frames << ' ' << t.paused_ns << ' ' << t.ce_marked << ' ' << t.cnps
    << ' ' << t.drops << ' ' << t.retransmits << ' ' << t.packets_forwarded << ' ' << r.simulated_ns << '\n';
  return o.str();
}

TEST(TwinLabTiming, SameSeedSameRecordsAndTheSeedMatters) {
  fixed_messages a(two_to_one()), b(two_to_one()), c(two_to_one());
  auto r1 = run_twin(jittery_lab(5), a);
  auto r2 = run_twin(jittery_lab(5), b);
  auto r3 = run_twin(jittery_lab(6), c);
  ASSERT_TRUE(r1.ok() && r2.ok() && r3.ok());
  EXPECT_EQ(records_text(*r1), records_text(*r2));
  EXPECT_NE(records_text(*r1), records_text(*r3));
}

TEST(TwinLabTiming, AnEmptyCalibrationLeavesTheRecordsBitForBit) {
  // A congested incast (PFC pauses, CE marks, CNPs, queue samples, events), with no lab
  // timing, and with a lab whose every host and port is there but measured nothing and
  // whose NICs achieve their link rate.
  twin_config cfg = single_switch(9, 1 << 20, true, true, true);
  cfg.queue_sample_interval_ns = 10'000;
  cfg.max_events = 100'000;
  twin_config empty = cfg;
  empty.lab.hosts.resize(cfg.topology.hosts);
  for (host_timing& h : empty.lab.hosts) h.achieved_gbps = cfg.topology.link_gbps;
  empty.lab.forwarding_by_port.resize(cfg.topology.hosts);
  ASSERT_FALSE(empty.lab.empty());
  fixed_messages a(incast(8, 500'000)), b(incast(8, 500'000));
  auto today = run_twin(cfg, a);
  auto with_lab = run_twin(empty, b);
  ASSERT_TRUE(today.ok() && with_lab.ok());
  ASSERT_GT(today->totals.ce_marked, 0u);
  EXPECT_EQ(records_text(*today), records_text(*with_lab));
}

TEST(TwinLabTiming, ValidateNamesTheFaultyField) {
  struct bad_case {
    const char* field;
    void (*mutate)(twin_config&);
  };
  const bad_case cases[] = {
      {"lab.hosts: 2 entries for 4 hosts", [](twin_config& c) { c.lab.hosts.resize(2); }},
      {"lab.hosts[1].receive_processing",
       [](twin_config& c) {
         c.lab.hosts.resize(4);
         c.lab.hosts[1].receive_processing = delay_quantiles::constant(100);
         c.lab.hosts[1].receive_processing.ns[0] = 200;
       }},
      {"lab.hosts[2].pacing_lateness",
       [](twin_config& c) {
         c.lab.hosts.resize(4);
         c.lab.hosts[2].pacing_lateness = delay_quantiles::constant(-1);
       }},
      {"lab.hosts[3].achieved_gbps",
       [](twin_config& c) {
         c.lab.hosts.resize(4);
         c.lab.hosts[3].achieved_gbps = -1;
       }},
      {"lab.forwarding_by_port: per port on a single switch only",
       [](twin_config& c) {
         c.topology.type = topology_config::kind::leaf_spine;
         c.topology.leaves = 2;
         c.topology.spines = 1;
         c.lab.forwarding_by_port = {delay_quantiles::constant(1)};
       }},
      {"lab.forwarding", [](twin_config& c) { c.lab.forwarding = delay_quantiles::constant(-5); }},
  };
  for (const auto& c : cases) {
    twin_config cfg = quiet_single_switch();
    c.mutate(cfg);
    const status st = validate(cfg);
    EXPECT_FALSE(st.ok()) << c.field;
    EXPECT_NE(st.message().find(c.field), std::string::npos) << st.message();
  }
}

}  // namespace
}  // namespace rocelab::fabric::twin

// Lab tests (root) of the soft RoCEv2 NIC on the virtual lab: each test brings up its own
// lab (namespaces rlab-<name>-*, 198.18.0.0/24), starts one `rocelab nic-run` per host
// through nic_fleet, runs a twin workload (traffic::make_incast / make_allreduce)
// unchanged on real frames through the soft switch, and checks the flows, the NICs'
// counters and the switch's. The fixture's TearDown stops the NICs (the fleet's
// destructor) and runs lab_down, also when an assertion fails.
//
// Rates: the lab runs at 0.5 Gb/s per port with a 4096-byte RoCE MTU, where the soft
// switch (~150-200k frames/s on this VM) keeps up with 8 senders at line rate
// (8 x 15k frames/s) and the NICs' pacing gaps (~67 us) are well above the loop's jitter.
// The switch (SCHED_FIFO 50) and the NICs (SCHED_FIFO 40) run real-time, so other load
// on the machine does not stretch their reaction times; run the lab tests one at a time.
#include "rocelab/traffic/soft_nic/nic_fleet.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <map>

#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/fabric/soft_switch/control_client.hpp"
#include "rocelab/traffic/allreduce.hpp"
#include "rocelab/traffic/incast.hpp"
#include "rocelab/traffic/soft_nic/nic_process.hpp"
#include "switch_control.hpp"

namespace rocelab::traffic::soft_nic {
namespace {

using json = nlohmann::json;
namespace lab = agents::lab;
using namespace std::chrono_literals;

constexpr double lab_gbps = 0.5;
// Shared buffers for the 8-to-1 incasts. Each of the 9 lossless PGs reserves ~138 KB of
// headroom (2 ms at 0.5 Gb/s plus two MTUs, lab_headroom_bytes); with 8 senders sharing
// the rest under the dynamic threshold (alpha 1) XOFF comes at ~330 KB per sender with
// 4 MiB, which 1 MiB flows cross, and at ~800 KB with 8 MiB, which leaves DCQCN room to
// act on 2 MiB flows (the queue peaked at ~1.7 MB with it, ~6 MB without).
constexpr std::int64_t incast_buffer_kb = 4096;
constexpr std::int64_t ecn_buffer_kb = 8192;

struct switch_totals {
  std::uint64_t pfc_tx = 0, drops = 0, ecn_marked = 0, mirror_frames = 0, tx_packets = 0;
  // Drops on ports whose switch loop read every frame within its reaction budget: the
  // headroom is sized for that budget, so only a late switch (the host took its CPU away,
  // ring_wait_over_budget > 0 on that port) may excuse a drop there.
  std::uint64_t drops_within_budget = 0;
  std::int64_t ring_wait_max_ns = 0;
};

switch_totals totals_of(const json& c) {
  switch_totals t;
  for (const auto& p : c.at("ports")) {
    t.pfc_tx += p.value("pfc_tx_frames", std::uint64_t{0});
    t.tx_packets += p.value("tx_packets", std::uint64_t{0});
    const auto port_drops = p.value("ingress_limit_drops", std::uint64_t{0}) +
                            p.value("egress_limit_drops", std::uint64_t{0}) + p.value("headroom_drops", std::uint64_t{0}) +
                            p.value("pool_drops", std::uint64_t{0}) + p.value("ring_drops", std::uint64_t{0});
    t.drops += port_drops;
    if (p.value("ring_wait_over_budget", std::uint64_t{0}) == 0) t.drops_within_budget += port_drops;
    t.ring_wait_max_ns = std::max(t.ring_wait_max_ns, p.value("ring_wait_max_ns", std::int64_t{0}));
    for (const auto& q : p.at("queues")) t.ecn_marked += q.value("ecn_marked", std::uint64_t{0});
  }
  t.mirror_frames = c.at("mirror").value("frames", std::uint64_t{0});
  return t;
}

class SoftNicLab : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth, AF_PACKET)";
    static int n = 0;
    name_ = "rlvn" + std::to_string(::getpid() % 1000) + std::to_string(n++);
    log_dir_ = std::filesystem::temp_directory_path() / ("rocelab-" + name_);
    std::filesystem::create_directories(log_dir_);
  }
  void TearDown() override {
    fleet_.reset();
    if (!name_.empty()) {
      EXPECT_TRUE(lab::lab_down(name_).ok());
    }
  }

  lab::lab_state up(int hosts, std::int64_t buffer_kb, std::vector<std::string> switch_args, bool low_ecn = false) {
    lab::lab_options o;
    o.name = name_;
    o.hosts = hosts;
    o.link_gbps = lab_gbps;
    o.buffer_kb = buffer_kb;
    o.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
    o.switch_args = std::move(switch_args);
    auto s = lab::lab_up(o);
    EXPECT_TRUE(s.ok()) << s.error().message();
    if (!s.ok()) return lab::lab_state{};
    // Headroom is the switch's own (lab_headroom_bytes for its response budget, the
    // switch at SCHED_FIFO): what this test proves is that it suffices.
    auto c = fabric::soft_switch::control_client::connect(s->control_socket);
    EXPECT_TRUE(c.ok());
    if (c.ok() && low_ecn) {
      // Mark from two frames of queue on, all at 16 frames: DCQCN must act before the
      // PG reaches its XOFF threshold, as DCQCN deployments set Kmin well below XOFF.
      json fields = json::array();
      fields.push_back({{"field", "queue.ecn.kmin_bytes"}, {"value", 8 * 1024}, {"priority", 3}});
      fields.push_back({{"field", "queue.ecn.kmax_bytes"}, {"value", 64 * 1024}, {"priority", 3}});
      fields.push_back({{"field", "queue.ecn.pmax"}, {"value", 0.2}, {"priority", 3}});
      // Marking at dequeue: the mark leaves with the packet instead of waiting behind the
      // queue it measured, so the feedback delay is not the queueing delay (milliseconds
      // here, against a ~250 us base RTT).
      fields.push_back({{"field", "ecn_mark_on_dequeue"}, {"value", true}});
      auto r = c->call({{"op", "set"}, {"fields", fields}});
      EXPECT_TRUE(r.ok() && r->value("ok", false)) << (r.ok() ? r->dump() : r.error().message());
    }
    return *s;
  }

  nic_config nic(bool dcqcn, bool pfc) {
    nic_config c;
    c.line_rate_bps = static_cast<std::int64_t>(lab_gbps * 1e9);
    c.mtu_bytes = 4096;
    c.dcqcn_enabled = dcqcn;
    // The mlx5 defaults dilated as the lab's 0.5 Gb/s stands for 100 Gb/s (scaling_spec).
    c.dcqcn = fabric::dcqcn_config::mlx5();
    c.dcqcn.time_scale = 100e9 / static_cast<double>(c.line_rate_bps);
    c.pfc_enabled = pfc;
    // IBTA 9.7.6.1.3 local ACK timeout 4.096 us x 2^16 = 268 ms (mlx5 QPs usually run 14..18):
    // it must exceed the worst queueing delay (the 8 MiB buffer drains in 134 ms at
    // 0.5 Gb/s), or paused senders time out spuriously and go back N for nothing.
    c.retransmit_timeout_ns = 268'000'000;
    return c;
  }

  result<fleet_result> run(const lab::lab_state& s, const nic_config& n, fabric::twin::workload& load,
                           std::chrono::milliseconds timeout = 60s) {
    std::vector<fleet_host> hosts;
    for (const auto& h : s.hosts) {
      auto mac = parse_mac(h.mac);
      auto ip = parse_ipv4(h.ipv4);
      if (!mac || !ip) return status(error_code::malformed_input, "lab state addresses");
      hosts.push_back({h.name, h.netns, h.ifname, {*mac, *ip}});
    }
    fleet_options o;
    o.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
    o.nic = n;
    o.log_dir = log_dir_.string();
    auto f = nic_fleet::start(hosts, o);
    if (!f) return f.error();
    fleet_ = std::move(*f);
    auto r = fleet_->run(load, timeout);
    fleet_.reset();
    return r;
  }

  // Shapes the receiver's port (port 0) to half the NICs' line rate: an oversubscription
  // that holds however far below line rate the host holds the NICs (see the 4:1 test).
  void shape_receiver_port_to_half_rate(const lab::lab_state& s) {
    const json r = test::switch_call(s.control_socket, {{"op", "set"},
                                                        {"field", "rate_bps"},
                                                        {"value", static_cast<std::int64_t>(lab_gbps * 1e9 / 2)},
                                                        {"port", 0}});
    ASSERT_TRUE(r.value("ok", false)) << r.dump();
  }

  json counters(const lab::lab_state& s) {
    auto c = fabric::soft_switch::control_client::connect(s.control_socket);
    if (!c) return json::object();
    auto r = c->call({{"op", "counters"}});
    return r.ok() ? *r : json::object();
  }

  std::string name_;
  std::filesystem::path log_dir_;
  std::unique_ptr<nic_fleet> fleet_;
};

// Host 0 receives, hosts 1..senders send, two rounds.
std::unique_ptr<fabric::twin::workload> incast_n_to_1(int senders, std::uint64_t flow_bytes) {
  incast_config c;
  c.receiver = 0;
  for (int k = 1; k <= senders; ++k) c.senders.push_back(static_cast<std::uint32_t>(k));
  c.flow_bytes = flow_bytes;
  c.rounds = 2;
  auto w = make_incast(c, static_cast<std::uint32_t>(senders) + 1, 1);
  EXPECT_TRUE(w.ok());
  return w.ok() ? std::move(*w) : nullptr;
}

std::unique_ptr<fabric::twin::workload> incast_8_to_1(std::uint64_t flow_bytes) { return incast_n_to_1(8, flow_bytes); }

// Every flow completed and every byte arrived, per sender.
void expect_all_delivered(const fleet_result& r, std::uint64_t flow_bytes, std::size_t flows) {
  EXPECT_TRUE(r.completed);
  ASSERT_EQ(r.records.flows.size(), flows);
  std::map<std::uint32_t, std::uint64_t> sent, got;
  for (const auto& f : r.records.flows) {
    EXPECT_TRUE(f.completed()) << "flow " << f.src << "->" << f.dst << " tag " << f.tag;
    EXPECT_EQ(f.bytes, flow_bytes);
    sent[f.src] += f.bytes;
  }
  for (const auto& d : r.deliveries) got[d.src] += d.bytes;
  EXPECT_EQ(sent, got) << "bytes delivered per sender";
}

std::uint64_t nic_sum(const fleet_result& r, const char* key) {
  std::uint64_t n = 0;
  for (const auto& c : r.nic_counters) n += c.value(key, std::uint64_t{0});
  return n;
}

// Per-port drop, PFC and queue figures, printed when an expectation fails.
void print_ports(const json& c) {
  for (const auto& p : c.at("ports"))
    std::cerr << p.value("name", "") << ": ingress " << p.value("ingress_limit_drops", 0) << " egress "
              << p.value("egress_limit_drops", 0) << " headroom " << p.value("headroom_drops", 0) << " pool "
              << p.value("pool_drops", 0) << " ring " << p.value("ring_drops", 0) << " pfc_tx "
              << p.value("pfc_tx_frames", 0) << " rx " << p.value("rx_packets", 0) << " q3 watermark "
              << p.at("queues")[3].value("watermark_bytes", 0) << " pg3 shared/headroom watermark "
              << p.at("pgs")[3].value("shared_watermark_bytes", 0) << "/"
              << p.at("pgs")[3].value("headroom_watermark_bytes", 0) << " ring wait max "
              << p.value("ring_wait_max_ns", 0) / 1000 << " us (" << p.value("ring_wait_over_budget", 0)
              << " frames over budget)\n";
}

// Lossless: the switch's headroom (its headroom calculator with the soft path's reaction
// budget) absorbs what arrives after XOFF, so nothing is dropped anywhere -- not by the
// MMU, not for want of frame buffers, not in a receive ring -- and nothing is resent.
// The receiver's port runs at half the NICs' line rate: eight NICs on one CPU of a host
// whose timers wake late together only just exceeded an unshaped port once (the queue
// peaked at 810 KB, every PG below its XOFF point, 0 PFC frames).
TEST_F(SoftNicLab, Incast8To1WithPfcAndWithoutEcnPausesAndDeliversEverything) {
  const auto s = up(9, incast_buffer_kb, {"--no-ecn"});
  ASSERT_EQ(s.hosts.size(), 9u);
  shape_receiver_port_to_half_rate(s);
  constexpr std::uint64_t bytes = 1024 * 1024;
  auto load = incast_8_to_1(bytes);
  auto r = run(s, nic(false, true), *load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  expect_all_delivered(*r, bytes, 16);
  const json cj = counters(s);
  const auto sw = totals_of(cj);
  EXPECT_GT(sw.pfc_tx, 0u) << "the switch sent PFC";
  EXPECT_EQ(sw.drops, 0u) << "a lossless priority dropped";
  EXPECT_EQ(nic_sum(*r, "retransmitted_packets"), 0u);
  EXPECT_EQ(nic_sum(*r, "timeouts"), 0u);
  EXPECT_EQ(nic_sum(*r, "port_kernel_drops"), 0u) << "a NIC's receive ring overflowed";
  EXPECT_EQ(sw.ecn_marked, 0u);
  EXPECT_GT(nic_sum(*r, "rx_pfc"), 0u) << "the senders received PFC";
  EXPECT_EQ(nic_sum(*r, "rx_ce_marked"), 0u);
  if (HasFailure()) print_ports(cj);
  std::cerr << "PFC frames sent by the switch: " << sw.pfc_tx << ", drops " << sw.drops << ", longest ring wait "
            << sw.ring_wait_max_ns / 1000 << " us\n";
}

// The ECN+DCQCN loop on real frames at 8:1: the switch marks CE (Kmin/Kmax far below the
// PGs' XOFF point, 8-64 KiB against ~800 KB per sender, marking at dequeue), the receiver
// returns CNPs, the senders cut their rates (the mlx5 defaults dilated to the lab's clock),
// and the priority stays lossless. Whether that loop keeps an 8:1 incast below XOFF is not
// pinned here: on this lab the receiver sees one flow's marked frames in runs, so DCQCN
// gets about half the CNPs the twin sends for the same marks and PFC still carries most of
// the incast: on the 2-core VM 234-291 PFC frames per run with ECN against 254-369
// without, and on the CI machine, three runs pooled each side, 1394 with against 1263
// without, while the egress queue peaked at ~6 MB either way. That gap is issue 39's
// 8:1 rung (bench/README.md, "The lab's relay threads under load"); the 4:1 test below
// pins ECN acting before PFC where the lab's loop holds.
TEST_F(SoftNicLab, Incast8To1WithEcnAndDcqcnMarksAndSendsCnps) {
  constexpr std::uint64_t bytes = 2 * 1024 * 1024;
  const auto s = up(9, ecn_buffer_kb, {}, true);
  auto load = incast_8_to_1(bytes);
  auto r = run(s, nic(true, true), *load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  expect_all_delivered(*r, bytes, 16);
  const json cj = counters(s);
  const auto sw = totals_of(cj);
  EXPECT_GT(sw.ecn_marked, 0u) << "the switch marked CE";
  EXPECT_GT(nic_sum(*r, "rx_ce_marked"), 0u);
  EXPECT_GT(nic_sum(*r, "tx_cnps"), 0u);
  EXPECT_GT(nic_sum(*r, "rx_cnps"), 0u);
  EXPECT_EQ(nic_sum(*r, "rx_cnps"), nic_sum(*r, "tx_cnps")) << "a CNP was lost between the NICs";
  EXPECT_GT(nic_sum(*r, "dcqcn_rate_decreases"), 0u);
  EXPECT_EQ(sw.drops, 0u);
  std::uint64_t flow_cnps = 0;
  for (const auto& f : r->records.flows) flow_cnps += f.cnps;
  EXPECT_GT(flow_cnps, 0u);
  if (HasFailure()) {
    print_ports(cj);
    for (const auto& k : r->nic_counters) std::cerr << k.dump() << "\n";
  }
  std::cerr << "CE marks " << sw.ecn_marked << ", CNPs " << nic_sum(*r, "tx_cnps") << ", PFC frames " << sw.pfc_tx
            << "\n";
}

// ECN acts before PFC: the same 4:1 incast (2 x 2 MiB per sender, a 2 MiB buffer whose
// XOFF the senders cross without ECN) pauses far less with ECN+DCQCN than with PFC alone;
// pinned at half. The receiver's port is shaped to half the NICs' line rate: the NICs
// share one CPU and a host whose timers wake late holds them well below line rate (on a
// CI machine four of them only just exceeded an unshaped port: 218 PFC frames in three
// runs without ECN, 116 with, 1.9x), so the oversubscription the comparison needs is
// the switch's, not the host's. Measured on the 2-core VM, three runs pooled each side,
// six times: 4,784-5,486 PFC frames without ECN, 1,702-2,136 with (2.5-3.2x). One run of
// each varies, so each side pools three runs, as a random lab is compared.
TEST_F(SoftNicLab, Incast4To1WithEcnAndDcqcnPausesAtMostHalfAsMuchAsWithPfcAlone) {
  constexpr int senders = 4;
  constexpr std::int64_t buffer_kb = 2048;
  constexpr std::uint64_t bytes = 2 * 1024 * 1024;
  constexpr int pooled_runs = 3;
  std::uint64_t pfc_without_ecn = 0, pfc_with_ecn = 0, marks = 0, cnps = 0;
  for (int i = 0; i < 2 * pooled_runs; ++i) {
    const bool ecn = i % 2 == 1;  // alternating, so a drift in the machine's load hits both sides
    const auto s = ecn ? up(senders + 1, buffer_kb, {}, true) : up(senders + 1, buffer_kb, {"--no-ecn"});
    shape_receiver_port_to_half_rate(s);
    auto load = incast_n_to_1(senders, bytes);
    auto r = run(s, nic(ecn, true), *load);
    ASSERT_TRUE(r.ok()) << r.error().message();
    expect_all_delivered(*r, bytes, 2 * senders);
    const json cj = counters(s);
    const auto sw = totals_of(cj);
    (ecn ? pfc_with_ecn : pfc_without_ecn) += sw.pfc_tx;
    if (ecn) {
      marks += sw.ecn_marked;
      cnps += nic_sum(*r, "rx_cnps");
    }
    // The comparison is of pause frames; a drop on a port the switch read late (a noisy
    // host, ring wait 4 ms against the 2 ms budget once) is the host's, not the MMU's.
    EXPECT_EQ(sw.drops_within_budget, 0u) << "a port read within its reaction budget dropped";
    if (HasFailure() || sw.drops != 0) print_ports(cj);
    ASSERT_TRUE(lab::lab_down(name_).ok());
  }
  EXPECT_GT(marks, 0u);
  EXPECT_GT(cnps, 0u);
  EXPECT_GT(pfc_without_ecn, 0u) << "the incast must pause without ECN, or the comparison says nothing";
  EXPECT_LE(pfc_with_ecn * 2, pfc_without_ecn)
      << "ECN+DCQCN must at least halve the pause frames (" << pooled_runs << " runs each side)";
  std::cerr << "PFC frames in " << pooled_runs << " runs: " << pfc_without_ecn << " without ECN, " << pfc_with_ecn
            << " with ECN+DCQCN (" << marks << " CE marks, " << cnps << " CNPs)\n";
}

TEST_F(SoftNicLab, Incast8To1WithoutPfcOrEcnAndASmallBufferDropsRetransmitsAndDeliversEverything) {
  const auto s = up(9, 64, {"--no-ecn", "--no-pfc"});
  constexpr std::uint64_t bytes = 256 * 1024;
  auto load = incast_8_to_1(bytes);
  auto r = run(s, nic(false, false), *load, 120s);
  ASSERT_TRUE(r.ok()) << r.error().message();
  expect_all_delivered(*r, bytes, 16);
  const auto sw = totals_of(counters(s));
  EXPECT_GT(sw.drops, 0u);
  EXPECT_EQ(sw.pfc_tx, 0u);
  std::uint64_t retrans = 0;
  for (const auto& f : r->records.flows) retrans += f.retransmits;
  EXPECT_GT(retrans, 0u);
  EXPECT_GT(nic_sum(*r, "rx_out_of_sequence"), 0u);
  std::cerr << "drops " << sw.drops << ", retransmitted packets " << retrans << ", NAKs " << nic_sum(*r, "tx_naks")
            << ", timeouts " << nic_sum(*r, "timeouts") << "\n";
}

TEST_F(SoftNicLab, RingAllReduceOnFourHostsDeliversTheExpectedBytesPerRank) {
  const auto s = up(4, 8192, {});
  allreduce_config c;
  c.algorithm = allreduce_algorithm::ring;
  c.rank_count = 4;
  c.bytes = 1024 * 1024;
  c.iterations = 1;
  auto load = make_allreduce(c, 4);
  ASSERT_TRUE(load.ok());
  auto r = run(s, nic(true, true), **load);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->completed);
  // Ring: 2(n-1) steps of S/n per rank.
  std::map<std::uint32_t, std::uint64_t> sent, got;
  for (const auto& f : r->records.flows) {
    EXPECT_TRUE(f.completed());
    sent[f.src] += f.bytes;
  }
  for (const auto& d : r->deliveries) got[d.dst] += d.bytes;
  for (std::uint32_t rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(sent[rank], 2u * 3u * (1024u * 1024u / 4u)) << "rank " << rank;
    EXPECT_EQ(got[rank], 2u * 3u * (1024u * 1024u / 4u)) << "rank " << rank;
  }
  EXPECT_EQ(nic_sum(*r, "timeouts"), 0u);
  EXPECT_EQ(nic_sum(*r, "retransmitted_packets"), 0u);
  if (nic_sum(*r, "retransmitted_packets") != 0)
    for (const auto& k : r->nic_counters) std::cerr << k.dump() << "\n";
  ASSERT_EQ(r->records.allreduce.size(), 1u);
  EXPECT_GT(r->records.allreduce[0].busbw_gbps, 0.0);
  std::cerr << "ring all-reduce 1 MiB x 4 ranks: " << r->records.allreduce[0].time_ns / 1e6 << " ms, busbw "
            << r->records.allreduce[0].busbw_gbps << " Gb/s\n";
}

}  // namespace
}  // namespace rocelab::traffic::soft_nic

// Lab test (root) of `backend: virtual` through experiments::run_experiment, as
// `rocelab run` calls it: the lab is brought up for the spec and removed afterwards
// (kept with keep_lab), the records carry the flows, the switch's counters and the
// capture's, and the capture is complete: the frames the analysis counts equal the
// switch's mirror counter (its own PFC frames included), and DPDK reports no drops.
#include "rocelab/experiments/lab/local_backends.hpp"
#include "rocelab/experiments/lab/virtual_backend.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <unistd.h>

#include <time.h>

#include <climits>
#include <cstdlib>
#include <iostream>
#include <map>
#include <utility>
#include <vector>

#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/spec/build.hpp"

namespace rocelab::experiments {
namespace {

// How late this host wakes a thread from a 200 us absolute sleep, p99 of 500 sleeps
// (0.1 s): what any start at an instant pays on it before the NIC's own work.
std::int64_t timer_wake_p99_ns() {
  std::vector<std::int64_t> late;
  for (int i = 0; i < 500; ++i) {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    const std::int64_t due = now.tv_sec * 1'000'000'000LL + now.tv_nsec + 200'000;
    const timespec at{static_cast<time_t>(due / 1'000'000'000LL), static_cast<long>(due % 1'000'000'000LL)};
    ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr);
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    late.push_back(now.tv_sec * 1'000'000'000LL + now.tv_nsec - due);
  }
  std::sort(late.begin(), late.end());
  return late[late.size() * 99 / 100];
}

std::uint64_t counter(const run_records& r, const std::string& device, const std::string& name) {
  std::uint64_t n = 0;
  for (const auto& c : r.counters)
    if (c.device < r.devices.size() && r.devices[c.device] == device && c.name == name) n += c.value;
  return n;
}

// Drops on switch ports whose loop read every frame within its reaction budget. The PFC
// headroom is sized for that budget, so a lossless run may drop only on a port the host
// kept waiting longer (ring_wait_over_budget > 0: the switch was off the CPU for up to
// 7.5 ms on a loaded CI host), and the run must then say it is degraded.
std::uint64_t drops_within_reaction_budget(const run_records& r) {
  std::map<std::uint32_t, std::uint64_t> drops, late;
  for (const auto& c : r.counters) {
    if (c.device >= r.devices.size() || r.devices[c.device] != "sw") continue;
    if (c.name == "ring_wait_over_budget") late[c.port] += c.value;
    for (const char* cause : {"ingress_limit_drops", "egress_limit_drops", "headroom_drops", "pool_drops", "ring_drops"})
      if (c.name == cause) drops[c.port] += c.value;
  }
  std::uint64_t n = 0;
  for (const auto& [port, d] : drops)
    if (late[port] == 0) n += d;
  return n;
}

void expect_lossless(const run_records& r) {
  EXPECT_EQ(drops_within_reaction_budget(r), 0u) << "PFC is on: a port read within its reaction budget dropped";
  if (r.totals.drops != 0) {
    EXPECT_FALSE(r.degraded.empty()) << r.totals.drops << " drops on a lossless lab, and the run says nothing of it";
    std::cerr << "note: " << r.totals.drops << " drops, all on ports the host's scheduling kept past the budget\n";
  }
}

class SoftNicRun : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth, AF_PACKET, DPDK af_packet)";
    name_ = "rlvr" + std::to_string(::getpid() % 10000);
  }
  void TearDown() override {
    if (!name_.empty()) {
      EXPECT_TRUE(agents::lab::lab_down(name_).ok());
    }
  }
  std::string name_;
};

TEST_F(SoftNicRun, VirtualIncastExampleRunsCapturesCompletelyAndRemovesItsLab) {
  auto spec = load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/virtual-incast-8to1.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  ASSERT_TRUE(validate(*spec).ok());
  virtual_backend_options o;
  o.lab_name = name_;
  o.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
  o.capture_dpdk = std::getenv("ROCELAB_TEST_PCAP") == nullptr;
  // Through the registry with a progress hook, as `rocelab run` watches a virtual run.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> progress;
  std::vector<std::uint64_t> pauses;  // the switch's PFC frames so far, where known
  run_hooks hooks;
  hooks.on_progress = [&](const run_progress& p) {
    progress.emplace_back(p.completed, p.posted);
    if (p.pause_frames) pauses.push_back(*p.pause_frames);
  };
  auto ran = local_backends(o).run(*spec, hooks);
  ASSERT_TRUE(ran.ok()) << ran.error().message();
  ASSERT_EQ(ran->repeats.size(), 1u);
  const run_records& r = ran->repeats[0];
  EXPECT_EQ(r.backend, "virtual");
  ASSERT_EQ(r.flows.size(), 16u);  // 8 senders x 2 rounds
  ASSERT_FALSE(progress.empty()) << "the workload's progress was never told";
  for (std::size_t i = 0; i < progress.size(); ++i) {
    EXPECT_LE(progress[i].first, progress[i].second);
    if (i > 0) {
      EXPECT_GE(progress[i].first, progress[i - 1].first) << "completed messages never go back";
    }
  }
  ASSERT_FALSE(pauses.empty()) << "the switch's pause count was never known during the run";
  for (std::size_t i = 1; i < pauses.size(); ++i) EXPECT_GE(pauses[i], pauses[i - 1]) << "pauses never go back";
  // One ideal FCT on every backend: each flow's is the twin's for the same flow.
  const auto twin_ideal = ideal_fct_of(*spec);
  for (const auto& f : r.flows) {
    EXPECT_TRUE(f.completed());
    EXPECT_EQ(f.bytes, 512u * 1024);
    EXPECT_EQ(f.dst, 0u);
    EXPECT_GT(f.ideal_fct_ns, 0);
    EXPECT_EQ(f.ideal_fct_ns, twin_ideal(f.src, f.dst, f.bytes));
  }
  EXPECT_TRUE(agents::lab::lab_inspect(name_).namespaces.empty()) << "the run's lab must be gone";

  const std::uint64_t frames = counter(r, "capture", "capture.frames");
  EXPECT_GT(frames, 0u);
  if (!o.capture_dpdk) std::cerr << "note: ROCELAB_TEST_PCAP is set; captured with libpcap\n";
  EXPECT_EQ(counter(r, "capture", "capture.dpdk"), o.capture_dpdk ? 1u : 0u) << "DPDK capture did not start";
  // Completeness: every frame the switch put on the mirror port is in the file. The mirror
  // counter counts what the mirror port's veth accepted, so an equal count also proves
  // that the capture's ring dropped nothing (the af_packet PMD does not count its ring's
  // overflows in imissed).
  const std::uint64_t mirrored = counter(r, "sw", "mirror_frames");
  EXPECT_EQ(frames, mirrored) << "capture vs the switch's mirror counter";
  std::cerr << "capture: " << frames << " frames of " << mirrored << " mirrored ("
            << (counter(r, "capture", "capture.dpdk") != 0 ? "DPDK af_packet" : "libpcap") << "), "
            << counter(r, "capture", "capture.pfc_frames") << " PFC frames\n";
  EXPECT_EQ(counter(r, "capture", "capture.kernel_dropped"), 0u);
  for (const char* k : {"capture.imissed", "capture.rx_nombuf", "capture.ierrors"})
    EXPECT_EQ(counter(r, "capture", k), 0u) << k;
  EXPECT_GT(counter(r, "capture", "capture.ce"), 0u) << "CE marks in the capture";
  EXPECT_GT(counter(r, "capture", "capture.cnp"), 0u) << "CNPs in the capture";
  // The mirror carries every frame the switch forwarded plus the PFC frames it sent
  // itself (mirror pfc_tx) and an arrival copy of each message's first packet (mirror
  // arrivals); the analysis of the capture counts those PFC frames, and the arrival
  // copies as arrivals, not packets.
  const std::uint64_t pfc_mirrored = counter(r, "sw", "mirror_pfc_frames");
  const std::uint64_t arrivals_mirrored = counter(r, "sw", "mirror_arrival_frames");
  EXPECT_GE(arrivals_mirrored, r.flows.size()) << "an arrival copy of every message (each flow is one here)";
  EXPECT_EQ(counter(r, "sw", "mirror_frames"), counter(r, "sw", "tx_packets") + pfc_mirrored + arrivals_mirrored)
      << "every frame the switch forwarded or paused with, and every message's arrival, was mirrored";
  EXPECT_EQ(counter(r, "capture", "capture.pfc_frames"), pfc_mirrored);
  EXPECT_EQ(pfc_mirrored, counter(r, "sw", "pfc_tx_frames"));
  EXPECT_GT(r.totals.ce_marked, 0u);
  expect_lossless(r);
}

// PFC without ECN: the switch pauses its senders, and the mirror capture shows every
// PFC frame it sent (mirror pfc_tx), counted by the capture's analysis. The lossless PGs
// run at alpha 1/128 (switch.dynamic_th -7): at alpha 1 a slow host that held the eight
// NICs near the port's rate queued 60-300 KB and never paused.
TEST_F(SoftNicRun, PauseFramesTheSwitchSendsAreInTheMirrorCapture) {
  auto spec = load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/virtual-incast-8to1.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  for (const char* o : {"switch.ecn.enabled=false", "nic.dcqcn.enabled=false", "switch.buffer_bytes=4MiB",
                        "switch.dynamic_th=-7", "workload.incast.flow_bytes=1MiB"})
    ASSERT_TRUE(apply_override(*spec, o).ok()) << o;
  virtual_backend_options o;
  o.lab_name = name_;
  o.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
  o.capture_dpdk = std::getenv("ROCELAB_TEST_PCAP") == nullptr;
  auto ran = run_experiment(*spec, {}, o);
  ASSERT_TRUE(ran.ok()) << ran.error().message();
  const run_records& r = ran->repeats[0];
  for (const auto& f : r.flows) EXPECT_TRUE(f.completed());
  expect_lossless(r);
  const std::uint64_t pfc_mirrored = counter(r, "sw", "mirror_pfc_frames");
  EXPECT_GT(counter(r, "sw", "pfc_tx_frames"), 0u) << "the incast must pause";
  EXPECT_EQ(pfc_mirrored, counter(r, "sw", "pfc_tx_frames"));
  EXPECT_EQ(counter(r, "capture", "capture.pfc_frames"), pfc_mirrored);
  EXPECT_EQ(counter(r, "capture", "capture.frames"), counter(r, "sw", "mirror_frames"));
  EXPECT_FALSE(r.pauses.empty()) << "pause intervals from the capture";
  // Each interval is on the hop it paused: the switch's PFC frames stop the senders' NICs
  // (devices 1..8: h2..h9), never "the capture" as a whole. The receiver (device 0, h1)
  // may be paused too: its ACKs share the lossless priority, and at alpha 1/128 with the
  // incast's queue holding most of the pool a few cells of them reach XOFF (seen once on a
  // loaded host); what must hold is that the senders were paused.
  std::int64_t paused = 0;
  std::size_t sender_pauses = 0;
  for (const auto& p : r.pauses) {
    EXPECT_EQ(p.source, pause_source::capture);
    ASSERT_LT(p.device, r.devices.size());
    EXPECT_NE(r.devices[p.device], "capture") << "a pause the lab could not place";
    if (r.devices[p.device] != "sw") {
      EXPECT_LE(p.device, 8u) << "a host's NIC";
      if (p.device >= 1) ++sender_pauses;
    }
    paused += p.end_ns - p.start_ns;
  }
  EXPECT_GT(sender_pauses, 0u) << "the switch paused the incast's senders";
  EXPECT_EQ(r.totals.paused_ns, paused);
  EXPECT_GT(r.totals.paused_ns, 0);
  std::cerr << "PFC frames: " << counter(r, "sw", "pfc_tx_frames") << " sent, " << pfc_mirrored << " mirrored, "
            << counter(r, "capture", "capture.pfc_frames") << " in the capture; " << r.pauses.size()
            << " pause intervals\n";
}

TEST_F(SoftNicRun, KeepLabLeavesTheLabUpAndAFittingLabIsReused) {
  auto spec = load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/virtual-incast-8to1.yaml");
  ASSERT_TRUE(spec.ok());
  ASSERT_TRUE(apply_override(*spec, "workload.incast.flow_bytes=64KiB").ok());
  ASSERT_TRUE(apply_override(*spec, "workload.incast.rounds=1").ok());
  virtual_backend_options o;
  o.lab_name = name_;
  o.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
  o.keep_lab = true;
  o.capture = false;
  auto first = run_experiment(*spec, {}, o);
  ASSERT_TRUE(first.ok()) << first.error().message();
  EXPECT_TRUE(agents::lab::lab_inspect(name_).switch_alive) << "kept";
  o.keep_lab = false;
  auto second = run_experiment(*spec, {}, o);  // reuses the lab that is up, leaves it up
  ASSERT_TRUE(second.ok()) << second.error().message();
  EXPECT_TRUE(agents::lab::lab_inspect(name_).switch_alive) << "a lab the run did not bring up stays";
  for (const auto& f : second->repeats[0].flows) EXPECT_TRUE(f.completed());
}

// The lab is store and forward on every hop, as the twin and the ideal FCT count it: the
// switch has a frame when its last bit would have arrived at the port's rate and sends it
// on when its last bit would have left. So a message of one frame (4 KiB: 67 us a hop at
// 0.5 Gb/s) takes at least two serializations and never beats its ideal FCT, which is
// the twin's for the same flow.
TEST_F(SoftNicRun, AOneFrameMessageNeverBeatsItsIdealWhichIsTheTwins) {
  auto spec = load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/virtual-incast-8to1.yaml");
  ASSERT_TRUE(spec.ok());
  for (const char* set : {"workload.incast.senders=1", "workload.incast.flow_bytes=4KiB", "workload.incast.rounds=10"})
    ASSERT_TRUE(apply_override(*spec, set).ok()) << set;
  virtual_backend_options o;
  o.lab_name = name_;
  o.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
  o.capture_dpdk = false;
  auto ran = run_experiment(*spec, {}, o);
  ASSERT_TRUE(ran.ok()) << ran.error().message();
  const run_records& r = ran->repeats[0];
  ASSERT_EQ(r.flows.size(), 10u);
  experiment_spec on_twin = *spec;
  on_twin.backend = "twin";
  auto twin = run_experiment(on_twin);
  ASSERT_TRUE(twin.ok()) << twin.error().message();
  ASSERT_EQ(twin->repeats[0].flows.size(), 10u);
  // 4096 + 78 + 20 bytes twice at 0.5 Gb/s, the ACK back twice, 1 us a link.
  const std::int64_t two_hops = 2 * (4096 + 78 + 20) * 16 + 2 * (66 + 20) * 16 + 4 * 1000;
  std::string fcts;
  for (std::size_t i = 0; i < r.flows.size(); ++i) {
    const flow_record& f = r.flows[i];
    ASSERT_TRUE(f.completed()) << i;
    EXPECT_EQ(f.ideal_fct_ns, twin->repeats[0].flows[i].ideal_fct_ns) << i;
    EXPECT_NEAR(static_cast<double>(f.ideal_fct_ns), static_cast<double>(two_hops), 2.0) << i;
    EXPECT_GE(f.fct_ns, f.ideal_fct_ns) << "message " << i << " beat its ideal";
    fcts += " " + std::to_string(f.fct_ns / 1000);
  }
  std::cout << "one-frame FCTs on the lab, us:" << fcts << " (ideal " << two_hops / 1000 << " us)\n";
}

// Armed start: the 8 senders get their schedule before T0 and start on their own clocks,
// so the incast is one 8-to-1 and not a sequence of smaller ones. Each run measures its
// own start skew: the spread of the senders' first data packets handed to their ports
// against the schedule (start_offsets_ns, from the NICs), stores it in its summary and is
// marked degraded exactly when it exceeds the example's timing.max_start_skew_ns (1 ms),
// never silently staggered. Runs on one kept lab start tens of us apart (unarmed, the
// senders started 10-110 ms apart): each NIC, held to its own CPU around the instant
// (the hosts spread over the CPUs in turn), warms the kernel's transmit path on that CPU
// with a frame to its namespace's loopback before T0. The capture's later witness of the
// same packets (behind the switch's egress queue) is recorded beside it for every sender.
TEST_F(SoftNicRun, IncastSendersStartWithinTheExamplesSkewLimitAndAStaggeredRunSaysSo) {
  auto spec = load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/virtual-incast-8to1.yaml");
  ASSERT_TRUE(spec.ok());
  ASSERT_TRUE(apply_override(*spec, "workload.incast.flow_bytes=64KiB").ok());
  ASSERT_TRUE(apply_override(*spec, "workload.incast.rounds=2").ok());
  const std::int64_t limit_ns = spec->timing.max_start_skew_ns;
  ASSERT_GT(limit_ns, 0) << "the example sets a limit";
  virtual_backend_options o;
  o.lab_name = name_;
  o.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
  o.capture_dpdk = false;  // libpcap: the capture's own stamps are checked against the switch's
  o.keep_lab = true;
  // How far apart armed senders start is a wall-clock figure of the host: on the 2-core
  // VM, alone, 26-69 us (bench/virtual_lab/start_skew, 60 runs); the CI machine once woke
  // one NIC 2 ms late in one run of ten, and beside other builds runs went 100-400 us
  // apart and two of ten 2 ms (each NIC's own nic.armed_late_max_ns the whole skew). So
  // this test holds what an armed start does, not how quiet the host is: every run
  // measures its skew and says it is degraded exactly when it exceeds the spec's limit,
  // and when most of the ten runs were not bound by the host, their median starts within
  // that limit (unarmed, senders started 10-110 ms apart). A run the lab itself says was bound
  // by the host (its NICs' CPU over budget, frames waiting in the switch's rings: "the
  // host's capacity", "the host's scheduling") is no evidence of the armed start: on a
  // paravirtualised CI VM every run was, its NICs 101-123% busy, and the senders of one
  // CPU went out 0.6-1.8 ms apart behind each other's first frames. The 100 us figure is
  // the bench's; the timer wake-up p99 measured here is printed beside the skews so a
  // reader can tell the host from the NICs.
  const std::int64_t wake_p99 = timer_wake_p99_ns();
  const bool quiet_host = wake_p99 <= 100'000;
  std::cout << "this host wakes timers " << wake_p99 / 1000 << " us late at p99\n";
  std::string skews, captured_skews;
  std::vector<std::int64_t> run_skews, captured_run_skews;  // of the runs not bound by the host
  int warmed = 0;        // sender-runs whose transmit path was warmed before an instant
  int warmed_clean = 0;  // of those, in runs not bound by the host
  int host_bound = 0;    // runs the lab said were bound by the host
  std::string over;  // each run over 100 us: its senders' offsets and how late their NICs were
  for (int run = 0; run < 10; ++run) {
    auto ran = run_experiment(*spec, {}, o);
    ASSERT_TRUE(ran.ok()) << ran.error().message();
    const run_records& r = ran->repeats[0];
    EXPECT_EQ(r.start_source, "nic") << "run " << run;
    ASSERT_EQ(r.start_offsets_ns.size(), 8u) << "run " << run << ": one offset per sender";
    const bool bound = std::any_of(r.degraded.begin(), r.degraded.end(),
                                   [](const std::string& d) { return d.find("the host's") != std::string::npos; });
    host_bound += bound ? 1 : 0;
    int run_warmed = 0;
    std::int64_t lo = INT64_MAX, hi = INT64_MIN, captured_lo = INT64_MAX, captured_hi = INT64_MIN;
    std::string offsets, late;  // per sender: its offset, and how late its NIC was
    for (const auto& [host, ns] : r.start_offsets_ns) {
      lo = std::min(lo, ns);
      hi = std::max(hi, ns);
      offsets += " " + host + "=" + std::to_string(ns);
      late += " " + host + "=" + std::to_string(counter(r, host, "nic.armed_late_max_ns"));
      // The capture's witness is the switch's arrival stamp: after the sender sent the
      // packet, never before.
      const std::uint64_t captured = counter(r, host, "start.capture_offset_ns");
      EXPECT_GE(static_cast<std::int64_t>(captured), ns) << "run " << run << ": " << host << " in the capture";
      captured_lo = std::min(captured_lo, static_cast<std::int64_t>(captured));
      captured_hi = std::max(captured_hi, static_cast<std::int64_t>(captured));
      // A NIC awake in the armed_boost_ns before its instant boosts; one that first woke
      // only after it (its CPU held by the others) released its post late and had no
      // window to boost in. Every boost was held on the NIC's CPU.
      EXPECT_TRUE(counter(r, host, "nic.armed_boosts") >= 1u || counter(r, host, "nic.armed_late_max_ns") > 0u)
          << "run " << run << ": " << host << " neither boosted nor was late";
      EXPECT_EQ(counter(r, host, "nic.armed_pins"), counter(r, host, "nic.armed_boosts")) << "run " << run << ": " << host;
      EXPECT_EQ(counter(r, host, "nic.armed_pins_refused"), 0u) << "run " << run << ": " << host;
      if (counter(r, host, "nic.armed_warmups") > 0) ++run_warmed;
    }
    warmed += run_warmed;
    if (!bound) warmed_clean += run_warmed;
    skews += " " + std::to_string(hi - lo) + (bound ? "*" : "");
    // The capture's witness, from the switch's arrival copies: the same starts as the
    // switch saw them, within 100 us in every run too.
    EXPECT_EQ(counter(r, "capture", "capture.start_at_ingress"), 1u) << "run " << run;
    EXPECT_EQ(static_cast<std::int64_t>(counter(r, "capture", "capture.start_skew_ns")), captured_hi - captured_lo)
        << "run " << run;
    captured_skews += " " + std::to_string(captured_hi - captured_lo);
    if (!bound) captured_run_skews.push_back(captured_hi - captured_lo);
    EXPECT_GE(lo, 0) << "run " << run << ": no sender starts before T0:" << offsets;
    if (!bound) run_skews.push_back(hi - lo);
    if (hi - lo > 100'000)
      over += "\n  run " + std::to_string(run) + ":" + offsets + " (nic.armed_late_max_ns:" + late + ")";
    EXPECT_EQ(summarize({&r}, ran->seeds).start_skew_ns, hi - lo);
    const bool said = std::any_of(r.degraded.begin(), r.degraded.end(),
                                  [](const std::string& d) { return d.find("senders started") != std::string::npos; });
    EXPECT_EQ(said, hi - lo > limit_ns) << "run " << run << ": start skew " << hi - lo << " ns against the limit "
                                        << limit_ns << " ns:" << offsets;
    EXPECT_GT(counter(r, "capture", "capture.start_skew_ns"), 0u) << "run " << run;
    // The second round, posted by the completion of the first, is armed as one burst.
    ASSERT_EQ(r.flows.size(), 16u);
    std::int64_t lo2 = INT64_MAX, hi2 = INT64_MIN;
    for (std::size_t i = 8; i < 16; ++i) {
      lo2 = std::min(lo2, r.flows[i].start_ns);
      hi2 = std::max(hi2, r.flows[i].start_ns);
    }
    EXPECT_LE(hi2 - lo2, 10'000'000) << "run " << run << ": the second round's senders started apart";
  }
  std::cout << "start skew of the ten runs, ns (* bound by the host):" << skews << "; in the capture:" << captured_skews
            << "; sender-runs warmed: " << warmed << " of 80\n";
  // Held to their CPUs with the transmit path warmed, the runs started 26-69 us apart on
  // the 2-core VM (bench/virtual_lab/start_skew, 60 runs; 30-37 us beside two CPU-bound
  // processes); without the warm-up the first frame on each CPU cost 30-100 us and a
  // third of the runs went over 100 us (bench/README.md).
  // A NIC whose wake-up 300 us before the instant came over 150 us late does not warm
  // (the warm-up would cost more than it saves), so not every sender of every run does:
  // the four senders of a CPU wake for the same instant and warm one after another, and
  // on a host whose timers come later than that 150 us margin at p99 the last of them skip
  // theirs by design (CI once: 59 of 80 with timers 535 us late at p99, every run's skew
  // still measured and said, the median run within the limit). Half of them still warm.
  // Those are shares of the runs not bound by the host, judged with the median below when
  // they are most of the ten; on any host some sender warms.
  EXPECT_GT(warmed, 0) << "no sender warmed its transmit path before an instant in ten runs";
  const int clean_runs = 10 - host_bound;
  ASSERT_EQ(run_skews.size(), static_cast<std::size_t>(clean_runs));
  if (clean_runs < 6) {
    std::cout << host_bound << " of 10 runs bound by the host: no median of the armed start here "
              << "(bench/virtual_lab/start_skew measures it)\n";
    return;
  }
  const int min_warmed = (quiet_host ? 9 : wake_p99 <= 150'000 ? 7 : 5) * 8 * clean_runs / 10;
  EXPECT_GE(warmed_clean, min_warmed) << "of " << 8 * clean_runs
                                      << " sender-runs not bound by the host, the transmit path was warmed before an "
                                         "instant in "
                                      << warmed_clean << " (timers " << wake_p99 / 1000 << " us late at p99)";
  const auto median = [](std::vector<std::int64_t> v) {
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    return *mid;
  };
  EXPECT_LE(median(run_skews), limit_ns) << "the median run's senders started beyond the spec's limit:" << skews
                                         << over;
  EXPECT_LE(median(captured_run_skews), limit_ns) << "in the capture:" << captured_skews;
}

}  // namespace
}  // namespace rocelab::experiments

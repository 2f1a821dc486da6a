// Lab tests (root) of the soft switch's rate model: below the rate a port is shaped to
// (0.5 Gb/s and 100k frames/s here, as bench/virtual_lab/run shapes it) every frame is
// delivered and every per-cause drop counter stays 0; above it, a lossy priority's excess
// is dropped by the MMU and counted as the shaper's (never as the forwarder's), and a
// lossless priority pauses PFC-honouring senders (soft NICs) and loses nothing.
//
// Network rule: only the lab's own namespaces (rlab-<name>-*), addresses from
// 198.18.0.0/15, bounded loops and counts; TearDown runs lab_down, also on failure.
// Run one lab test at a time (flock /tmp/rocelab-lab.lock).
#include "rocelab/agents/lab/virtual_lab.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

#include "rocelab/captures/frame_builder.hpp"
#include "rocelab/common/unique_fd.hpp"
#include "rocelab/fabric/soft_switch/control_client.hpp"
#include "rocelab/fabric/soft_switch/packet_pacer.hpp"
#include "rocelab/traffic/incast.hpp"
#include "rocelab/traffic/soft_nic/nic_fleet.hpp"
#include "rocelab/traffic/soft_nic/nic_process.hpp"
#include "namespace_socket.hpp"
#include "switch_control.hpp"

namespace rocelab::agents::lab {
namespace {

using test::mac_of;

using json = nlohmann::json;
using namespace std::chrono_literals;
namespace cap = captures;
namespace ss = fabric::soft_switch;
namespace nic = traffic::soft_nic;

constexpr double shaped_gbps = 0.5;
constexpr int shaped_kpps = 100;
constexpr std::uint8_t lossy_dscp = 0, lossless_dscp = 26;

// Frames/s a port is shaped to for frames of `bytes` (FCS, preamble and gap on the wire).
double shaped_pps(std::size_t bytes) {
  return std::min(shaped_kpps * 1000.0, shaped_gbps * 1e9 / (static_cast<double>(bytes + 4 + 20) * 8));
}

std::int64_t mono_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// An AF_PACKET socket on an interface of a namespace.
struct wire_socket : test::namespace_socket {
  static wire_socket open(const std::string& netns, const std::string& ifname) {
    return {test::open_namespace_socket(netns, ifname, 64 << 20)};
  }

  // Sends `count` frames at `pps`, paced by the soft switch's own packet_pacer (a late
  // wake-up catches up within 50 us, never as a larger burst). Each frame carries its
  // sequence number. Returns how many the kernel took.
  std::size_t send_paced(std::vector<std::uint8_t> frame, std::size_t seq_at, std::uint32_t count, double pps) {
    ss::packet_pacer pacer(static_cast<std::int64_t>(pps), 50'000);
    std::size_t sent = 0;
    for (std::uint32_t i = 0; i < count; ++i) {
      for (int spins = 0; !pacer.ready(mono_ns()) && spins < 1'000'000; ++spins) {
        const std::int64_t wait = pacer.next_ns() - mono_ns();
        if (wait > 60'000) std::this_thread::sleep_for(std::chrono::nanoseconds(wait - 50'000));
      }
      pacer.on_departure(mono_ns());
      for (int b = 0; b < 4; ++b) frame[seq_at + b] = static_cast<std::uint8_t>(i >> (24 - 8 * b));
      if (::send(fd.get(), frame.data(), frame.size(), 0) == static_cast<ssize_t>(frame.size())) ++sent;
    }
    return sent;
  }

  // Distinct sequence numbers of frames of `bytes` that arrive until, once `sender_done`,
  // nothing has for 300 ms (at most 30 s in all).
  std::set<std::uint32_t> receive(std::size_t bytes, std::size_t seq_at, const std::atomic<bool>& sender_done) {
    std::set<std::uint32_t> got;
    std::vector<std::uint8_t> buf(65536);
    const auto end = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < end) {
      pollfd p{fd.get(), POLLIN, 0};
      if (::poll(&p, 1, 300) <= 0) {
        if (sender_done.load()) break;
        continue;
      }
      for (int k = 0; k < 4096; ++k) {
        const ssize_t n = ::recv(fd.get(), buf.data(), buf.size(), MSG_DONTWAIT);
        if (n <= 0) break;
        if (static_cast<std::size_t>(n) != bytes) continue;
        std::uint32_t s = 0;
        for (int b = 0; b < 4; ++b) s = (s << 8) | buf[seq_at + b];
        got.insert(s);
      }
    }
    return got;
  }
};


// A RoCEv2 frame of about `bytes` (within 2: the payload is padded to whole 4-byte words,
// IBTA 9.2.2) from one host to another; its sequence number goes at the returned offset
// (the first payload bytes).
std::pair<std::vector<std::uint8_t>, std::size_t> frame_of(const lab_host& from, const lab_host& to, std::size_t bytes,
                                                           std::uint8_t dscp) {
  constexpr std::size_t headers = 14 + 20 + 8 + 12, icrc = 4;
  cap::roce_frame_spec spec;
  spec.eth.dst_mac = mac_of(to.mac);
  spec.eth.src_mac = mac_of(from.mac);
  unsigned a[4];
  std::sscanf(from.ipv4.c_str(), "%u.%u.%u.%u", &a[0], &a[1], &a[2], &a[3]);
  spec.ip.src = cap::ipv4_mapped(a[0], a[1], a[2], a[3]);
  std::sscanf(to.ipv4.c_str(), "%u.%u.%u.%u", &a[0], &a[1], &a[2], &a[3]);
  spec.ip.dst = cap::ipv4_mapped(a[0], a[1], a[2], a[3]);
  spec.ip.dscp = dscp;
  spec.dest_qp = 0x11;
  std::vector<std::uint8_t> payload((std::max<std::size_t>(bytes, headers + icrc + 4) - headers - icrc) & ~std::size_t{3}, 0);
  spec.payload = payload;
  std::vector<std::uint8_t> f;
  cap::append_roce_frame(spec, f);
  if (f.size() < 60) f.resize(60);  // the minimum frame without FCS
  return {f, headers};
}

// Sum of one cause path ("forwarder", "shaper") over the switch's ports, and the total.
std::uint64_t drops(const json& c, const char* kind, const char* cause = "total") {
  return c.at("drops").at(kind).at(cause).get<std::uint64_t>();
}

class SoftSwitchRate : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth, AF_PACKET)";
    static int n = 0;
    name_ = "rlvr" + std::to_string(::getpid() % 1000) + std::to_string(n++);
  }
  void TearDown() override {
    fleet_.reset();
    if (!name_.empty()) {
      EXPECT_TRUE(lab_down(name_).ok());
    }
  }
  lab_state up(int hosts, std::int64_t buffer_kb) {
    lab_options o;
    o.name = name_;
    o.hosts = hosts;
    o.link_gbps = shaped_gbps;
    o.buffer_kb = buffer_kb;
    o.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
    o.switch_args = {"--port-kpps", std::to_string(shaped_kpps)};
    auto s = lab_up(o);
    EXPECT_TRUE(s.ok()) << s.error().message();
    return s.ok() ? *s : lab_state{};
  }
  json call(const lab_state& s, const json& req) { return test::switch_call(s.control_socket, req); }
  struct blast_result {
    std::size_t frame_bytes = 0, sent = 0, delivered = 0;
    double pps = 0;       // asked for
    double sent_pps = 0;  // reached (printed only: a loaded machine may not reach it)
  };
  // Sends `count` frames of about `bytes` at `rate_factor` x the shaped rate for their
  // size, from h1 to h2.
  blast_result blast(const lab_state& s, std::size_t bytes, double rate_factor, std::uint32_t count,
                     std::uint8_t dscp) {
    wire_socket tx = wire_socket::open(s.hosts[0].netns, s.hosts[0].ifname);
    wire_socket rx = wire_socket::open(s.hosts[1].netns, s.hosts[1].ifname);
    EXPECT_TRUE(tx.fd.valid() && rx.fd.valid());
    auto [frame, seq_at] = frame_of(s.hosts[0], s.hosts[1], bytes, dscp);
    const double pps = shaped_pps(frame.size()) * rate_factor;
    std::set<std::uint32_t> got;
    std::atomic<bool> done{false};
    std::thread receiver([&] { got = rx.receive(frame.size(), seq_at, done); });
    // The sender runs SCHED_FIFO 40, as the soft NICs do (below the switch's 50), so
    // that other load on the machine does not slow it below the rate asked for.
    std::size_t sent = 0;
    double secs = 0;
    std::thread sender([&] {
      sched_param sp{};
      sp.sched_priority = 40;
      (void)::pthread_setschedparam(::pthread_self(), SCHED_FIFO, &sp);
      const std::int64_t t0 = mono_ns();
      sent = tx.send_paced(frame, seq_at, count, pps);
      secs = static_cast<double>(mono_ns() - t0) / 1e9;
    });
    sender.join();
    done.store(true);
    receiver.join();
    return {frame.size(), sent, got.size(), pps, secs > 0 ? static_cast<double>(sent) / secs : 0};
  }

  std::string name_;
  std::unique_ptr<nic::nic_fleet> fleet_;
};

// Half the shaped rate, every frame size of the bench: all delivered, and not one drop of
// any cause on any port (rings, veths, sends, frame buffers, MMU), no PFC sent.
TEST_F(SoftSwitchRate, BelowTheShapedRateDeliversEveryFrameAndCountsNoDropOfAnyCause) {
  const lab_state s = up(2, 1024);
  ASSERT_EQ(s.hosts.size(), 2u);
  const json st = call(s, {{"op", "status"}});
  ASSERT_EQ(st["ports"][0]["rate_pps"].get<std::int64_t>(), shaped_kpps * 1000) << st.dump();
  for (const std::size_t bytes : {64u, 1024u, 4096u}) {
    ASSERT_TRUE(call(s, {{"op", "reset_counters"}}).value("ok", false));
    const std::uint32_t count = bytes == 4096 ? 3000 : 5000;
    const auto [size, sent, delivered, pps, sent_pps] = blast(s, bytes, 0.5, count, lossy_dscp);
    const json c = call(s, {{"op", "counters"}});
    ASSERT_TRUE(c.value("ok", false)) << c.dump();
    EXPECT_EQ(sent, count) << bytes << " B: the sender's kernel refused frames";
    EXPECT_EQ(delivered, sent) << bytes << " B at " << pps << " frames/s: " << c["drops"].dump();
    for (const auto& p : c["ports"]) {
      for (const char* cause : {"ring", "link_rx", "link_tx", "tx_refused", "pool", "oversize", "total"})
        EXPECT_EQ(p["drops"]["forwarder"][cause].get<std::uint64_t>(), 0u) << bytes << " B, " << p["name"] << " " << cause;
      EXPECT_EQ(p["drops"]["total"].get<std::uint64_t>(), 0u) << bytes << " B, " << p["name"] << p["drops"].dump();
      EXPECT_EQ(p["pfc_tx_frames"].get<std::uint64_t>(), 0u) << bytes << " B, " << p["name"];
    }
    EXPECT_EQ(c["ports"][1]["wire_tx_frames"].get<std::uint64_t>(), sent) << bytes << " B";
    std::cerr << size << " B at " << pps << " frames/s (reached " << sent_pps << "): " << delivered << " of " << sent << " delivered\n";
  }
}

// Twice the shaped rate (4096-byte frames, 1 Gb/s into a 0.5 Gb/s port) on a lossy
// priority with a small buffer: the excess is the MMU's, counted as the shaper's drops;
// the forwarder loses nothing; every frame sent is either delivered or a shaper drop.
TEST_F(SoftSwitchRate, AboveTheShapedRateALossyPriorityDropsAsTheShapersOnly) {
  const lab_state s = up(2, 256);
  ASSERT_EQ(s.hosts.size(), 2u);
  ASSERT_TRUE(call(s, {{"op", "reset_counters"}}).value("ok", false));
  const auto [size, sent, delivered, pps, sent_pps] = blast(s, 4096, 2.0, 3000, lossy_dscp);
  const json c = call(s, {{"op", "counters"}});
  ASSERT_TRUE(c.value("ok", false)) << c.dump();
  EXPECT_EQ(drops(c, "forwarder"), 0u) << c["drops"].dump();
  EXPECT_GT(drops(c, "shaper"), 0u) << "twice the shaped rate into a 256 KiB buffer must overflow it";
  EXPECT_EQ(delivered + drops(c, "shaper"), sent) << c["drops"].dump();
  std::cerr << size << " B at " << pps << " frames/s (reached " << sent_pps << "): " << delivered << " of " << sent << " delivered, shaper drops "
            << drops(c, "shaper") << "\n";
}

// Two soft NICs into one port shaped to half their line rate, on the lossless priority:
// the switch pauses them with PFC, the NICs honour it, nothing is dropped for any cause
// and nothing is retransmitted. The receiver's port runs at half the NICs' rate because a
// host whose timers wake later than a frame time (66 us here) holds each NIC near half
// its line rate (rc_nic catches up one frame per wake-up): two NICs at the port's own rate
// then no longer exceed it (CI: 262 Mb/s each, 0 XOFF), while at half it they do even so.
// The PGs' headroom is sized for the senders' links, which keep their rate.
TEST_F(SoftSwitchRate, AboveTheShapedRateALosslessPriorityPausesTheSendersAndLosesNothing) {
  const lab_state s = up(3, 4096);
  ASSERT_EQ(s.hosts.size(), 3u);
  std::vector<nic::fleet_host> hosts;
  for (const auto& h : s.hosts) {
    auto mac = nic::parse_mac(h.mac);
    auto ip = nic::parse_ipv4(h.ipv4);
    ASSERT_TRUE(mac && ip);
    hosts.push_back({h.name, h.netns, h.ifname, {*mac, *ip}});
  }
  nic::fleet_options o;
  o.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
  o.nic.line_rate_bps = static_cast<std::int64_t>(shaped_gbps * 1e9);
  o.nic.mtu_bytes = 4096;
  o.nic.dcqcn_enabled = false;
  o.nic.pfc_enabled = true;
  // Longer than the deepest queue's drain (4 MiB at the receiver's 0.25 Gb/s, 134 ms): a
  // paused sender must not time out and resend for nothing.
  o.nic.retransmit_timeout_ns = 268'000'000;
  const auto log_dir = std::filesystem::temp_directory_path() / ("rocelab-" + name_);
  std::filesystem::create_directories(log_dir);
  o.log_dir = log_dir.string();
  auto f = nic::nic_fleet::start(hosts, o);
  ASSERT_TRUE(f.ok()) << f.error().message();
  fleet_ = std::move(*f);
  ASSERT_TRUE(call(s, {{"op", "set"}, {"field", "queue.ecn.enabled"}, {"value", false}, {"priority", 3}})
                  .value("ok", false));
  const auto half_rate = static_cast<std::int64_t>(shaped_gbps * 1e9 / 2);
  const json slow = call(s, {{"op", "set"}, {"field", "rate_bps"}, {"value", half_rate}, {"port", 0}});
  ASSERT_TRUE(slow.value("ok", false)) << slow.dump();
  ASSERT_TRUE(call(s, {{"op", "reset_counters"}}).value("ok", false));
  traffic::incast_config ic;
  ic.receiver = 0;
  ic.senders = {1, 2};
  ic.flow_bytes = 4 << 20;
  ic.rounds = 1;
  auto load = traffic::make_incast(ic, 3, 1);
  ASSERT_TRUE(load.ok());
  auto r = fleet_->run(**load, 60s);
  fleet_.reset();
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->completed);
  const json c = call(s, {{"op", "counters"}});
  ASSERT_TRUE(c.value("ok", false)) << c.dump();
  std::uint64_t pfc_tx = 0, xoff = 0;
  for (const auto& p : c["ports"]) {
    pfc_tx += p["pfc_tx_frames"].get<std::uint64_t>();
    xoff += p["pgs"][3]["xoff_sent"].get<std::uint64_t>();
  }
  std::uint64_t retransmitted = 0, rx_pfc = 0;
  for (const auto& n : r->nic_counters) {
    retransmitted += n.value("retransmitted_packets", std::uint64_t{0});
    rx_pfc += n.value("rx_pfc", std::uint64_t{0});
  }
  EXPECT_EQ(c["drops"]["total"].get<std::uint64_t>(), 0u) << c["drops"].dump();
  EXPECT_GT(xoff, 0u) << "two senders above the port's rate must be paused";
  EXPECT_GT(pfc_tx, 0u);
  EXPECT_GT(rx_pfc, 0u) << "the senders received the pauses";
  EXPECT_EQ(retransmitted, 0u);
  std::uint64_t delivered = 0;
  for (const auto& d : r->deliveries) delivered += d.bytes;
  EXPECT_EQ(delivered, 2u * (4u << 20));
  std::cerr << "PFC frames " << pfc_tx << " (XOFF " << xoff << "), received by the NICs " << rx_pfc << ", drops "
            << c["drops"]["total"] << "\n";
}

}  // namespace
}  // namespace rocelab::agents::lab

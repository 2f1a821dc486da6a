// Lab tests (root) of the virtual lab: `lab up`/`down` leave nothing behind, the soft
// switch forwards host to host, congestion at a port shaped to 1 Gb/s makes real PFC
// XOFF frames toward the senders and CE marks toward the receiver, a small buffer without
// PFC drops, the mirror session copies every frame, and faults do what they say.
//
// Network rule: only the lab's own namespaces (rlab-<name>-*), addresses from
// 198.18.0.0/15, bounded loops; the fixture's destructor runs lab_down, so everything is
// removed afterwards, also when an assertion fails.
#include "rocelab/agents/lab/virtual_lab.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <functional>
#include <pthread.h>
#include <sched.h>
#include <thread>

#include "rocelab/captures/dissect.hpp"
#include "rocelab/captures/frame_builder.hpp"
#include "rocelab/common/unique_fd.hpp"
#include "rocelab/fabric/soft_switch/control_client.hpp"
#include "namespace_socket.hpp"
#include "switch_control.hpp"

namespace rocelab::agents::lab {
namespace {

using test::mac_of;

using namespace std::chrono_literals;
using json = nlohmann::json;
namespace cap = captures;
namespace ss = fabric::soft_switch;

bool is_root() { return ::geteuid() == 0; }

std::string unique_name() {
  static int n = 0;
  return "rlv" + std::to_string(::getpid() % 1000) + std::to_string(n++);
}

// An AF_PACKET socket on an interface of a namespace, for sending and receiving.
struct wire_socket : test::namespace_socket {
  static wire_socket open(const std::string& netns, const std::string& ifname) {
    return {test::open_namespace_socket(netns, ifname, 32 << 20)};
  }

  bool send(const std::vector<std::uint8_t>& frame) {
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_ifindex = ifindex;
    to.sll_halen = 6;
    std::memcpy(to.sll_addr, frame.data(), 6);
    for (int attempt = 0; attempt < 1000; ++attempt) {
      if (::sendto(fd.get(), frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) ==
          static_cast<ssize_t>(frame.size()))
        return true;
      if (errno != ENOBUFS && errno != EAGAIN) return false;
      std::this_thread::sleep_for(100us);
    }
    return false;
  }

  // Everything that arrives until nothing has for `quiet` (at most `limit` in all).
  std::vector<std::vector<std::uint8_t>> drain(std::chrono::milliseconds quiet = 300ms,
                                               std::chrono::milliseconds limit = 10s) {
    std::vector<std::vector<std::uint8_t>> out;
    const auto end = std::chrono::steady_clock::now() + limit;
    std::vector<std::uint8_t> buf(65536);
    while (std::chrono::steady_clock::now() < end) {
      pollfd p{fd.get(), POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(quiet.count())) <= 0) break;
      for (;;) {
        const ssize_t n = ::recv(fd.get(), buf.data(), buf.size(), MSG_DONTWAIT);
        if (n <= 0) break;
        out.emplace_back(buf.begin(), buf.begin() + n);
      }
    }
    return out;
  }
};


constexpr std::array<std::uint8_t, 4> marker = {'V', 'L', 'A', 'B'};
constexpr std::size_t payload_offset = 14 + 20 + 8 + 12;

std::vector<std::uint8_t> roce_frame(const lab_host& from, const lab_host& to, std::uint32_t seq,
                                     std::size_t payload_bytes = 64, std::uint8_t dscp = 26,
                                     cap::wire::ecn_codepoint ecn = cap::wire::ecn_codepoint::ect0,
                                     std::uint32_t dest_qp = 0x11) {
  std::vector<std::uint8_t> payload(std::max<std::size_t>(payload_bytes, 8), 0);
  std::memcpy(payload.data(), marker.data(), 4);
  for (int i = 0; i < 4; ++i) payload[4 + i] = static_cast<std::uint8_t>(seq >> (24 - 8 * i));
  cap::roce_frame_spec spec;
  spec.eth.dst_mac = mac_of(to.mac);
  spec.eth.src_mac = mac_of(from.mac);
  unsigned a[4];
  std::sscanf(from.ipv4.c_str(), "%u.%u.%u.%u", &a[0], &a[1], &a[2], &a[3]);
  spec.ip.src = cap::ipv4_mapped(a[0], a[1], a[2], a[3]);
  std::sscanf(to.ipv4.c_str(), "%u.%u.%u.%u", &a[0], &a[1], &a[2], &a[3]);
  spec.ip.dst = cap::ipv4_mapped(a[0], a[1], a[2], a[3]);
  spec.ip.dscp = dscp;
  spec.ip.ecn = ecn;
  spec.dest_qp = dest_qp;
  spec.psn = seq & 0xFFFFFF;
  spec.payload = payload;
  std::vector<std::uint8_t> f;
  cap::append_roce_frame(spec, f);
  return f;
}

std::int64_t sequence_of(const std::vector<std::uint8_t>& f) {
  if (f.size() < payload_offset + 8 || std::memcmp(f.data() + payload_offset, marker.data(), 4) != 0) return -1;
  std::uint32_t s = 0;
  for (int i = 0; i < 4; ++i) s = (s << 8) | f[payload_offset + 4 + i];
  return s;
}

struct pfc_count {
  std::size_t xoff = 0, xon = 0;
};
pfc_count count_pfc(const std::vector<std::vector<std::uint8_t>>& frames, int priority) {
  pfc_count c;
  for (const auto& f : frames) {
    cap::dissected_frame d;
    cap::dissect(cap::link_type::ethernet, f, d);
    if (!d.is_mac_control || d.mac_control_opcode != 0x0101 || ((d.pfc_class_enable >> priority) & 1) == 0) continue;
    (d.pfc_quanta[priority] > 0 ? c.xoff : c.xon)++;
  }
  return c;
}

bool ipv4_checksum_ok(const std::vector<std::uint8_t>& f) {
  if (f.size() < 34) return false;
  std::uint32_t sum = 0;
  for (int i = 14; i < 34; i += 2) sum += (std::uint32_t{f[i]} << 8) | f[i + 1];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return sum == 0xFFFF;
}

class VirtualLab : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!is_root()) GTEST_SKIP() << "needs root (namespaces, veth)";
  }
  void TearDown() override {
    if (!name_.empty()) {
      const status st = lab_down(name_);
      EXPECT_TRUE(st.ok()) << st.message();
    }
  }
  lab_state up(int hosts, double gbps, std::int64_t buffer_kb = 1024) {
    lab_options o;
    o.name = name_ = unique_name();
    o.hosts = hosts;
    o.link_gbps = gbps;
    o.buffer_kb = buffer_kb;
    o.rocelab_binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
    auto s = lab_up(o);
    EXPECT_TRUE(s.ok()) << s.error().message();
    return s.ok() ? *s : lab_state{};
  }
  json call(const lab_state& s, const json& req) { return test::switch_call(s.control_socket, req); }
  std::string name_;
};

// Alive and not a zombie (the daemon is reparented to init, which may reap it late).
bool running(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(f, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

bool nothing_left(const std::string& name) {
  const lab_presence p = lab_inspect(name);
  return p.namespaces.empty() && !p.state_file && ::access((std::string(default_state_root) + "/" + name).c_str(), F_OK) != 0;
}

TEST_F(VirtualLab, UpThenDownLeavesNothingAndDownIsIdempotent) {
  const lab_state s = up(3, 10);
  ASSERT_EQ(s.hosts.size(), 3u);
  const lab_presence p = lab_inspect(name_);
  EXPECT_EQ(p.namespaces.size(), 5u);  // 3 hosts, switch, capture
  EXPECT_TRUE(p.switch_alive);
  EXPECT_TRUE(call(s, {{"op", "ping"}}).value("ok", false));
  lab_options twice;
  twice.name = name_;
  auto again = lab_up(twice);
  EXPECT_FALSE(again.ok()) << "a second up of the same name must refuse";
  ASSERT_TRUE(lab_down(name_).ok());
  EXPECT_TRUE(nothing_left(name_));
  EXPECT_FALSE(running(s.switch_pid)) << "the switch process survived";
  EXPECT_TRUE(lab_down(name_).ok()) << "down twice";
  EXPECT_TRUE(nothing_left(name_));
}

TEST_F(VirtualLab, DownCleansUpAfterTheSwitchWasKilled) {
  const lab_state s = up(2, 10);
  ASSERT_GT(s.switch_pid, 0);
  ASSERT_EQ(::kill(s.switch_pid, SIGKILL), 0);
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(lab_inspect(name_).switch_alive);
  ASSERT_TRUE(lab_down(name_).ok());
  EXPECT_TRUE(nothing_left(name_));
}

TEST_F(VirtualLab, ForwardsFramesHostToHostUnaltered) {
  const lab_state s = up(3, 10);
  ASSERT_EQ(s.hosts.size(), 3u);
  auto tx = wire_socket::open(s.hosts[0].netns, "eth0");
  auto rx = wire_socket::open(s.hosts[1].netns, "eth0");
  auto other = wire_socket::open(s.hosts[2].netns, "eth0");
  ASSERT_TRUE(tx.fd.valid() && rx.fd.valid() && other.fd.valid());
  constexpr std::uint32_t frames = 300;
  std::vector<std::vector<std::uint8_t>> sent;
  for (std::uint32_t i = 0; i < frames; ++i) {
    sent.push_back(roce_frame(s.hosts[0], s.hosts[1], i, 256, 0, cap::wire::ecn_codepoint::not_ect));
    ASSERT_TRUE(tx.send(sent.back()));
    if (i % 32 == 31) std::this_thread::sleep_for(1ms);
  }
  const auto got = rx.drain();
  std::vector<int> seen(frames, 0);
  for (const auto& f : got) {
    const auto seq = sequence_of(f);
    if (seq < 0 || seq >= frames) continue;
    ++seen[seq];
    EXPECT_EQ(f, sent[seq]) << "frame " << seq << " altered";
  }
  for (std::uint32_t i = 0; i < frames; ++i) EXPECT_EQ(seen[i], 1) << "frame " << i;
  std::size_t leaked = 0;
  for (const auto& f : other.drain(100ms)) leaked += sequence_of(f) >= 0;
  EXPECT_EQ(leaked, 0u) << "a known unicast destination must not be flooded";
  const json c = call(s, {{"op", "counters"}});
  ASSERT_TRUE(c.value("ok", false)) << c.dump();
  EXPECT_GE(c["ports"][1]["tx_packets"].get<std::int64_t>(), frames);
}

// Frames of two ports that waited in the switch's rings together (the switch stopped, as a
// host that takes its CPU stops it) reach the egress queue in the order they arrived on
// the wires, interleaved, as on a switch whose ports feed one buffer; not one port's
// backlog after the other's.
TEST_F(VirtualLab, FramesThatWaitedTogetherLeaveInTheOrderTheyArrived) {
  const lab_state s = up(3, 10);
  ASSERT_EQ(s.hosts.size(), 3u);
  ASSERT_GT(s.switch_pid, 0);
  auto tx0 = wire_socket::open(s.hosts[0].netns, "eth0");
  auto tx1 = wire_socket::open(s.hosts[1].netns, "eth0");
  auto rx = wire_socket::open(s.hosts[2].netns, "eth0");
  ASSERT_TRUE(tx0.fd.valid() && tx1.fd.valid() && rx.fd.valid());
  constexpr std::uint32_t per_sender = 40;  // within a port's receive ring (512 frames)
  {
    ASSERT_EQ(::kill(s.switch_pid, SIGSTOP), 0);
    struct resume {
      pid_t pid;
      ~resume() { (void)::kill(pid, SIGCONT); }
    } resume_switch{s.switch_pid};
    for (std::uint32_t i = 0; i < per_sender; ++i) {
      ASSERT_TRUE(tx0.send(roce_frame(s.hosts[0], s.hosts[2], 2 * i, 256)));
      ASSERT_TRUE(tx1.send(roce_frame(s.hosts[1], s.hosts[2], 2 * i + 1, 256)));
    }
  }
  std::vector<std::int64_t> order;
  for (const auto& f : rx.drain())
    if (const auto seq = sequence_of(f); seq >= 0) order.push_back(seq);
  ASSERT_EQ(order.size(), 2 * per_sender);
  std::size_t in_place = 0;
  for (std::size_t i = 0; i < order.size(); ++i) in_place += order[i] == static_cast<std::int64_t>(i);
  EXPECT_EQ(in_place, order.size()) << "frames left out of their arrival order (" << in_place << " of "
                                    << order.size() << " in place)";
}

// Two senders blast lossless (DSCP 26 -> priority 3), ECT(0) frames at a third host
// through ports shaped to 0.2 Gb/s: the receiver's port congests even when a loaded CI
// machine slows the sending thread down.
struct blast_result {
  std::vector<std::vector<std::uint8_t>> at_sender[2];
  std::vector<std::vector<std::uint8_t>> at_receiver;
};
// Sends in bursts of `burst` frames per sender until `congested()` holds after a burst,
// or `max_bursts` have gone: a loaded machine sends more slowly, so the test asks for the
// effect (sustained overload) rather than for a frame count.
blast_result blast(const lab_state& s, std::uint32_t burst, int max_bursts, const std::function<bool()>& congested) {
  blast_result r;
  auto rx1 = wire_socket::open(s.hosts[0].netns, "eth0");
  auto rx2 = wire_socket::open(s.hosts[1].netns, "eth0");
  auto rx3 = wire_socket::open(s.hosts[2].netns, "eth0");
  // One thread alternates between the two senders: with a thread each, a 2-core CI
  // machine may run them one after the other, and one sender alone never congests.
  std::thread sender([&] {
    // Real time like the lab's soft NICs, below the switch (50): other load on the
    // machine must not slow the senders under the bottleneck's rate.
    const sched_param fifo{.sched_priority = 30};
    (void)::pthread_setschedparam(::pthread_self(), SCHED_FIFO, &fifo);
    wire_socket tx[2] = {wire_socket::open(s.hosts[0].netns, "eth0"), wire_socket::open(s.hosts[1].netns, "eth0")};
    std::uint32_t seq = 0;
    for (int b = 0; b < max_bursts; ++b) {
      for (std::uint32_t i = 0; i < burst; ++i, ++seq)
        for (int k = 0; k < 2; ++k) (void)tx[k].send(roce_frame(s.hosts[k], s.hosts[2], seq, 1024));
      if (congested()) break;
    }
  });
  std::thread drain3([&] { r.at_receiver = rx3.drain(500ms, 30s); });
  sender.join();
  drain3.join();
  r.at_sender[0] = rx1.drain(100ms);
  r.at_sender[1] = rx2.drain(100ms);
  return r;
}

TEST_F(VirtualLab, CongestionSendsPfcXoffToTheSendersAndMarksCe) {
  const lab_state s = up(3, 0.2);
  ASSERT_EQ(s.hosts.size(), 3u);
  const blast_result r = blast(s, 2000, 10, [&] {
    const json k = call(s, {{"op", "counters"}});
    return k.value("ok", false) && k["ports"][0]["pgs"][3]["xoff_sent"].get<std::int64_t>() > 0 &&
           k["ports"][1]["pgs"][3]["xoff_sent"].get<std::int64_t>() > 0;
  });
  const pfc_count c1 = count_pfc(r.at_sender[0], 3), c2 = count_pfc(r.at_sender[1], 3);
  EXPECT_GT(c1.xoff, 0u) << "no PFC XOFF for priority 3 reached h1";
  EXPECT_GT(c2.xoff, 0u) << "no PFC XOFF for priority 3 reached h2";
  std::size_t ce = 0, ours = 0, bad_checksum = 0;
  for (const auto& f : r.at_receiver) {
    if (sequence_of(f) < 0) continue;
    ++ours;
    cap::dissected_frame d;
    cap::dissect(cap::link_type::ethernet, f, d);
    ce += d.ecn == 3;
    bad_checksum += !ipv4_checksum_ok(f);
  }
  EXPECT_GT(ours, 0u);
  EXPECT_GT(ce, 0u) << "ECN is on by default for queue 3: some frames must be CE";
  EXPECT_EQ(bad_checksum, 0u) << "the CE rewrite must keep the IPv4 header checksum valid";
  const json k = call(s, {{"op", "counters"}});
  ASSERT_TRUE(k.value("ok", false)) << k.dump();
  EXPECT_GT(k["ports"][0]["pgs"][3]["xoff_sent"].get<std::int64_t>(), 0);
  EXPECT_GT(k["ports"][1]["pgs"][3]["xoff_sent"].get<std::int64_t>(), 0);
  EXPECT_GT(k["ports"][2]["queues"][3]["ecn_marked"].get<std::int64_t>(), 0);
  EXPECT_EQ(k["ports"][2]["ce_rewrites"].get<std::int64_t>(), k["ports"][2]["queues"][3]["ecn_marked"].get<std::int64_t>());
  std::cerr << "h1 PFC xoff " << c1.xoff << " xon " << c1.xon << "; h2 xoff " << c2.xoff << " xon " << c2.xon
            << "; at h3 " << ours << " frames, " << ce << " CE\n";

  // A `set` rebuilds the model and carries its counters over; reset_counters clears those
  // carried counts too, and the ports' own (wire, ring) counters: a run that starts with a
  // reset on a kept lab counts from zero.
  ASSERT_TRUE(call(s, {{"op", "set"}, {"field", "queue.ecn.pmax"}, {"value", 0.5}, {"priority", 3}}).value("ok", false));
  ::usleep(200'000);  // what the rebuild re-queued drains
  ASSERT_TRUE(call(s, {{"op", "reset_counters"}}).value("ok", false));
  const json z = call(s, {{"op", "counters"}});
  ASSERT_TRUE(z.value("ok", false)) << z.dump();
  for (const auto& port : z["ports"]) {
    for (const char* key : {"rx_packets", "tx_packets", "pfc_tx_frames", "pfc_rx_frames", "wire_rx_frames",
                            "wire_tx_frames", "ring_wait_max_ns", "ring_wait_over_budget"})
      EXPECT_EQ(port[key].get<std::int64_t>(), 0) << port["name"] << " " << key << " after reset_counters";
    EXPECT_EQ(port["queues"][3]["ecn_marked"].get<std::int64_t>(), 0) << port["name"];
    EXPECT_EQ(port["pgs"][3]["xoff_sent"].get<std::int64_t>(), 0) << port["name"];
  }
}

TEST_F(VirtualLab, DropsWithoutPfcWhenTheBufferIsSmall) {
  const lab_state s = up(3, 0.2);
  ASSERT_EQ(s.hosts.size(), 3u);
  const json set = call(s, {{"op", "set"},
                            {"fields", {{{"field", "lossless_priorities"}, {"value", 0}},
                                        {{"field", "buffer_bytes"}, {"value", 64 * 1024}}}}});
  ASSERT_TRUE(set.value("ok", false)) << set.dump();
  const auto drops = [&] {
    const json k = call(s, {{"op", "counters"}});
    std::int64_t n = 0;
    if (k.value("ok", false))
      for (const auto& p : k["ports"])
        n += p["ingress_limit_drops"].get<std::int64_t>() + p["egress_limit_drops"].get<std::int64_t>();
    return n;
  };
  const blast_result r = blast(s, 1000, 10, [&] { return drops() > 0; });
  EXPECT_EQ(count_pfc(r.at_sender[0], 3).xoff + count_pfc(r.at_sender[1], 3).xoff, 0u);
  const json k = call(s, {{"op", "counters"}});
  ASSERT_TRUE(k.value("ok", false)) << k.dump();
  EXPECT_GT(drops(), 0);
  EXPECT_EQ(k["ports"][0]["pfc_tx_frames"].get<std::int64_t>(), 0);
}

TEST_F(VirtualLab, MirrorSessionCopiesEveryFrameAsErspan) {
  const lab_state s = up(2, 10);
  ASSERT_EQ(s.hosts.size(), 2u);
  const json m = call(s, {{"op", "mirror"}, {"enabled", true}, {"direction", "ingress"}, {"erspan", 2},
                          {"truncate_bytes", 128}, {"session_id", 9}});
  ASSERT_TRUE(m.value("ok", false)) << m.dump();
  auto capture = wire_socket::open(s.capture_netns, s.capture_ifname);
  auto tx = wire_socket::open(s.hosts[0].netns, "eth0");
  constexpr std::uint32_t frames = 500;
  for (std::uint32_t i = 0; i < frames; ++i) {
    ASSERT_TRUE(tx.send(roce_frame(s.hosts[0], s.hosts[1], i, 1000)));
    if (i % 32 == 31) std::this_thread::sleep_for(1ms);
  }
  const auto got = capture.drain();
  std::vector<int> seen(frames, 0);
  std::size_t erspan = 0;
  for (const auto& f : got) {
    cap::dissected_frame d;
    cap::dissect(cap::link_type::ethernet, f, d);
    if (d.erspan_type != 2 || d.erspan_session != 9) continue;
    ++erspan;
    EXPECT_EQ(f.size(), 50u + 128u) << "truncated to 128 bytes inside ERSPAN II";
    std::vector<std::uint8_t> inner(f.begin() + 50, f.end());
    const auto seq = sequence_of(inner);
    if (seq >= 0 && seq < frames) ++seen[seq];
  }
  for (std::uint32_t i = 0; i < frames; ++i) EXPECT_EQ(seen[i], 1) << "frame " << i;
  const json k = call(s, {{"op", "counters"}});
  EXPECT_EQ(k["mirror"]["frames"].get<std::size_t>(), erspan) << "capture vs the switch's mirror counter";
  // The hosts' kernels may add a frame or two of their own (they are mirrored too).
  EXPECT_GE(k["mirror"]["truncated"].get<std::size_t>(), frames);
}

TEST_F(VirtualLab, FaultsDropAndMarkTheKthPacketAndStormPfc) {
  const lab_state s = up(2, 10);
  ASSERT_EQ(s.hosts.size(), 2u);
  ASSERT_TRUE(call(s, {{"op", "fault"}, {"kind", "drop"}, {"dest_qp", 0x11}, {"nth", 5}}).value("ok", false));
  ASSERT_TRUE(call(s, {{"op", "fault"}, {"kind", "mark"}, {"dest_qp", 0x11}, {"nth", 7}}).value("ok", false));
  auto rx = wire_socket::open(s.hosts[1].netns, "eth0");
  auto tx = wire_socket::open(s.hosts[0].netns, "eth0");
  for (std::uint32_t i = 0; i < 10; ++i) ASSERT_TRUE(tx.send(roce_frame(s.hosts[0], s.hosts[1], i)));
  std::map<std::int64_t, int> ecn;
  for (const auto& f : rx.drain()) {
    const auto seq = sequence_of(f);
    if (seq < 0) continue;
    cap::dissected_frame d;
    cap::dissect(cap::link_type::ethernet, f, d);
    ecn[seq] = d.ecn;
    EXPECT_TRUE(ipv4_checksum_ok(f));
  }
  // Each fault counts the matching packets on its own: the 5th (seq 4) is dropped and
  // the 7th (seq 6) marked CE; its neighbours keep ECT(0).
  EXPECT_EQ(ecn.size(), 9u);
  EXPECT_FALSE(ecn.contains(4));
  EXPECT_EQ(ecn[6], 3);
  EXPECT_EQ(ecn[5], 2);

  auto at_h1 = wire_socket::open(s.hosts[0].netns, "eth0");
  ASSERT_TRUE(call(s, {{"op", "fault"}, {"kind", "pfc_storm"}, {"port", "p1"}, {"priority", 3}, {"count", 20},
                       {"interval_ns", 100000}})
                  .value("ok", false));
  const pfc_count storm = count_pfc(at_h1.drain(), 3);
  EXPECT_EQ(storm.xoff, 20u);
  const json f = call(s, {{"op", "faults"}});
  ASSERT_EQ(f["faults"].size(), 3u) << f.dump();
  EXPECT_EQ(f["faults"][2]["hits"], 20);
  EXPECT_TRUE(call(s, {{"op", "clear_faults"}}).value("ok", false));
}

}  // namespace
}  // namespace rocelab::agents::lab

// The soft NIC's RC transport alone: two NICs joined by a fake wire in virtual time that
// can drop, mark CE and inject PFC frames (the fault-injecting loopback the STYLE asks for).
#include "rocelab/traffic/soft_nic/rc_nic.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <vector>

#include <gtest/gtest.h>

#include "rocelab/captures/dissect.hpp"
#include "rocelab/captures/frame_builder.hpp"
#include "rocelab/captures/icrc.hpp"

namespace rocelab::traffic::soft_nic {
namespace {

namespace wire = captures::wire;

struct wire_frame {
  std::int64_t at_ns;
  std::vector<std::uint8_t> bytes;
};

// One direction of the wire: every frame is dissected and checked, then delivered after
// delay_ns unless the fault hook drops it; the hook may also rewrite it (CE marking).
struct fake_wire final : frame_sink {
  fabric::virtual_clock* clk = nullptr;
  std::int64_t delay_ns = 2000;
  std::function<bool(captures::dissected_frame&, std::vector<std::uint8_t>&)> drop;  // true: drop
  std::deque<wire_frame> in_flight;
  std::vector<captures::dissected_frame> seen;
  int bad_icrc = 0;

  bool send(std::span<const std::uint8_t> frame) override {
    std::vector<std::uint8_t> f(frame.begin(), frame.end());
    captures::dissected_frame d;
    captures::dissect(captures::link_type::ethernet, f, d);
    if (d.is_roce && captures::verify_icrc(f, d.ip_offset) != captures::icrc_check::valid) ++bad_icrc;
    seen.push_back(d);
    if (drop && drop(d, f)) return true;
    in_flight.push_back({clk->now_ns() + delay_ns, std::move(f)});
    return true;
  }
};

const endpoint host_a{{0x02, 0x52, 0x4c, 0, 0, 1}, {198, 18, 0, 1}};
const endpoint host_b{{0x02, 0x52, 0x4c, 0, 0, 2}, {198, 18, 0, 2}};

struct pair_fixture {
  fabric::virtual_clock clk;
  fake_wire a_to_b, b_to_a;
  std::unique_ptr<rc_nic> a, b;
  std::vector<send_completion> sent;
  std::vector<receive_completion> received;

  explicit pair_fixture(nic_config cfg = {}, std::uint32_t psn_a = 100, std::uint32_t psn_b = 5000) {
    a_to_b.clk = b_to_a.clk = &clk;
    cfg.local = host_a;
    auto ra = rc_nic::create(cfg, clk, a_to_b);
    a = std::move(*ra);
    cfg.local = host_b;
    auto rb = rc_nic::create(cfg, clk, b_to_a);
    b = std::move(*rb);
    EXPECT_TRUE(a->connect({.local_qpn = 0x11, .remote_qpn = 0x22, .remote = host_b, .send_psn = psn_a,
                            .recv_psn = psn_b, .udp_src_port = 0xC001, .peer = 1}).ok());
    EXPECT_TRUE(b->connect({.local_qpn = 0x22, .remote_qpn = 0x11, .remote = host_a, .send_psn = psn_b,
                            .recv_psn = psn_a, .udp_src_port = 0xC002, .peer = 0}).ok());
    a->on_send_complete([this](const send_completion& c) { sent.push_back(c); });
    b->on_receive_complete([this](const receive_completion& c) { received.push_back(c); });
  }

  // Runs the two NICs and the wire until nothing is left to do or limit_ns passes.
  void run(std::int64_t limit_ns) {
    std::int64_t next_a = 0, next_b = 0;
    for (int i = 0; i < 5'000'000; ++i) {
      std::int64_t t = std::min({clk.next_event_ns(), next_a, next_b});
      if (!a_to_b.in_flight.empty()) t = std::min(t, a_to_b.in_flight.front().at_ns);
      if (!b_to_a.in_flight.empty()) t = std::min(t, b_to_a.in_flight.front().at_ns);
      if (t == fabric::never_ns || t > limit_ns) return;
      t = std::max(t, clk.now_ns());
      clk.run_until(t);
      while (!a_to_b.in_flight.empty() && a_to_b.in_flight.front().at_ns <= t) {
        b->on_frame(a_to_b.in_flight.front().bytes, t);
        a_to_b.in_flight.pop_front();
      }
      while (!b_to_a.in_flight.empty() && b_to_a.in_flight.front().at_ns <= t) {
        a->on_frame(b_to_a.in_flight.front().bytes, t);
        b_to_a.in_flight.pop_front();
      }
      next_a = a->poll_transmit(t);
      next_b = b->poll_transmit(t);
      if (next_a <= t && next_a != fabric::never_ns) next_a = t;
      if (next_b <= t && next_b != fabric::never_ns) next_b = t;
      // Avoid spinning on the same instant when a NIC has nothing new: it answered with a
      // future time or never.
      if (next_a == t && next_b == t) {
        next_a = a->poll_transmit(t);
        next_b = b->poll_transmit(t);
        if (next_a <= t) next_a = t + 1;
        if (next_b <= t) next_b = t + 1;
      }
    }
    ADD_FAILURE() << "event loop did not settle";
  }

  [[nodiscard]] int data_frames_sent() const {
    return static_cast<int>(std::count_if(a_to_b.seen.begin(), a_to_b.seen.end(), [](const auto& d) {
      return d.is_roce && d.bth_opcode <= wire::roce_opcode::rc_rdma_write_only_with_immediate;
    }));
  }
};

nic_config no_dcqcn() {
  nic_config c;
  c.line_rate_bps = 10'000'000'000;
  c.dcqcn_enabled = false;
  return c;
}

TEST(SoftNicTransport, WriteCompletesWithValidFramesAndNoRetransmission) {
  pair_fixture f(no_dcqcn());
  auto id = f.a->post(0x11, verb::rdma_write, 100'000, 7, 0);
  ASSERT_TRUE(id.ok());
  f.run(100'000'000);
  ASSERT_EQ(f.sent.size(), 1u);
  EXPECT_EQ(f.sent[0].bytes, 100'000u);
  EXPECT_EQ(f.sent[0].tag, 7u);
  EXPECT_EQ(f.sent[0].retransmits, 0u);
  ASSERT_EQ(f.received.size(), 1u);
  EXPECT_EQ(f.received[0].bytes, 100'000u);
  EXPECT_EQ(f.data_frames_sent(), 98);  // ceil(100000 / 1024)
  EXPECT_EQ(f.a_to_b.bad_icrc + f.b_to_a.bad_icrc, 0);
  const auto& first = f.a_to_b.seen.front();
  EXPECT_EQ(first.bth_opcode, wire::roce_opcode::rc_rdma_write_first);
  EXPECT_TRUE(first.has_reth);
  EXPECT_EQ(first.reth_dma_length, 100'000u);
  EXPECT_EQ(first.psn, 100u);
  EXPECT_EQ(first.dest_qp, 0x22u);
  EXPECT_EQ(first.dscp, 26);
  EXPECT_EQ(first.ecn, 2);  // ECT(0)
  EXPECT_EQ(first.udp_dst_port, wire::roce_v2_udp_port);
  EXPECT_EQ(f.a->outstanding_messages(), 0u);
  // 10 Gb/s line rate: 98 frames of ~1.1 KB take about 90 us.
  EXPECT_GT(f.sent[0].end_ns - f.sent[0].start_ns, 80'000);
  EXPECT_LT(f.sent[0].end_ns - f.sent[0].start_ns, 200'000);
}

TEST(SoftNicTransport, SendVerbAndMessagesInOrderAcrossPsnWrap) {
  pair_fixture f(no_dcqcn(), 0xFFFFF0, 0xFFFFFE);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(f.a->post(0x11, verb::send, 10'000 + i, i, 0).ok());
  f.run(100'000'000);
  ASSERT_EQ(f.sent.size(), 3u);
  ASSERT_EQ(f.received.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(f.sent[i].tag, static_cast<std::uint64_t>(i));
    EXPECT_EQ(f.received[i].bytes, 10'000u + i);
    EXPECT_EQ(f.received[i].msn, static_cast<std::uint64_t>(i));
  }
  EXPECT_EQ(f.a_to_b.seen.front().bth_opcode, wire::roce_opcode::rc_send_first);
  EXPECT_EQ(f.a->counters().retransmitted_packets, 0u);
}

TEST(SoftNicTransport, LostDataPacketIsNakedAndResentGoBackN) {
  pair_fixture f(no_dcqcn());
  int data_seen = 0;
  f.a_to_b.drop = [&](captures::dissected_frame& d, std::vector<std::uint8_t>&) {
    return d.is_roce && d.bth_opcode != wire::roce_opcode::rc_acknowledge && ++data_seen == 10;
  };
  ASSERT_TRUE(f.a->post(0x11, verb::rdma_write, 64 * 1024, 0, 0).ok());
  f.run(100'000'000);
  ASSERT_EQ(f.sent.size(), 1u);
  ASSERT_EQ(f.received.size(), 1u);
  EXPECT_EQ(f.received[0].bytes, 64u * 1024);
  EXPECT_EQ(f.b->counters().tx_naks, 1u);  // one NAK per sequence error
  EXPECT_EQ(f.a->counters().rx_naks, 1u);
  EXPECT_GT(f.sent[0].retransmits, 0u);
  EXPECT_EQ(f.a->counters().timeouts, 0u);  // recovered by the NAK, not the timer
  EXPECT_EQ(f.a_to_b.bad_icrc, 0);
}

TEST(SoftNicTransport, LostTailAndAcksRecoverByTimeout) {
  nic_config cfg = no_dcqcn();
  cfg.retransmit_timeout_ns = 1'000'000;
  pair_fixture f(cfg);
  int data_seen = 0;
  // The last packet of a 4-packet write is lost: no later packet makes the responder NAK,
  // so only the transport timer recovers it.
  f.a_to_b.drop = [&](captures::dissected_frame& d, std::vector<std::uint8_t>&) {
    return d.is_roce && ++data_seen == 4;
  };
  ASSERT_TRUE(f.a->post(0x11, verb::rdma_write, 4 * 1024, 0, 0).ok());
  f.run(100'000'000);
  ASSERT_EQ(f.sent.size(), 1u);
  ASSERT_EQ(f.received.size(), 1u);
  EXPECT_EQ(f.received[0].bytes, 4096u);
  EXPECT_EQ(f.a->counters().timeouts, 1u);
  EXPECT_GE(f.sent[0].end_ns, 1'000'000);
}

TEST(SoftNicTransport, CorruptedFrameFailsIcrcAndIsRecovered) {
  pair_fixture f(no_dcqcn());
  int data_seen = 0;
  f.a_to_b.drop = [&](captures::dissected_frame& d, std::vector<std::uint8_t>& bytes) {
    if (d.is_roce && ++data_seen == 3) bytes[bytes.size() - 10] ^= 0x55;  // a payload bit flips
    return false;
  };
  ASSERT_TRUE(f.a->post(0x11, verb::rdma_write, 8 * 1024, 0, 0).ok());
  f.run(100'000'000);
  ASSERT_EQ(f.received.size(), 1u);
  EXPECT_EQ(f.b->counters().rx_icrc_errors, 1u);
  EXPECT_EQ(f.received[0].bytes, 8192u);
}

TEST(SoftNicTransport, CeMarksCauseCnpsAndTheReactionPointSlowsDown) {
  nic_config cfg;
  cfg.line_rate_bps = 10'000'000'000;
  cfg.dcqcn_enabled = true;
  pair_fixture f(cfg);
  // The "switch" marks every data packet CE (ECN 11); the ICRC masks the TOS byte
  // (A17.3.3), so the frame stays valid; the IPv4 checksum is not checked by the NIC.
  double min_rate_bps = 1e12;
  f.a_to_b.drop = [&](captures::dissected_frame& d, std::vector<std::uint8_t>& bytes) {
    min_rate_bps = std::min(min_rate_bps, f.a->rate_bps(0x11));
    if (d.is_roce) bytes[d.ip_offset + 1] |= 0x03;
    return false;
  };
  ASSERT_TRUE(f.a->post(0x11, verb::rdma_write, 512 * 1024, 0, 0).ok());
  f.run(1'000'000'000);
  ASSERT_EQ(f.sent.size(), 1u);
  ASSERT_EQ(f.received.size(), 1u);
  EXPECT_GT(f.received[0].ce_marked, 0u);
  EXPECT_GT(f.b->counters().tx_cnps, 0u);
  EXPECT_EQ(f.a->counters().rx_cnps, f.b->counters().tx_cnps);
  EXPECT_GT(f.sent[0].cnps, 0u);
  EXPECT_LT(min_rate_bps, 5e9);  // the rate at which packets left, during the run
  // CNPs on the wire as mlx5 sends them: opcode 0x81, BECN, DSCP 48, to the sender's QP.
  const auto cnp = std::find_if(f.b_to_a.seen.begin(), f.b_to_a.seen.end(),
                                [](const auto& d) { return d.is_roce && d.bth_opcode == wire::roce_opcode::cnp; });
  ASSERT_NE(cnp, f.b_to_a.seen.end());
  EXPECT_TRUE(cnp->bth_becn);
  EXPECT_EQ(cnp->dscp, 48);
  EXPECT_EQ(cnp->dest_qp, 0x11u);
  // Slower than the line rate would take (512 KiB at 10 Gb/s is ~440 us).
  EXPECT_GT(f.sent[0].end_ns - f.sent[0].start_ns, 600'000);
}

// A QP that DCQCN cut to its floor and then raised again sends at the raised rate: its
// next packet is due one packet time at the rate of now, as a hardware rate limiter
// applies a new rate at once, not one packet time at the floor (33 ms for a 4 KiB frame
// at 1 Mb/s) fixed when the previous packet left. The switch marks the first packet; its
// CNP sets the rate to the floor (rate_to_set_on_first_cnp_mbps) and the rate timer
// (300 us) raises it from there.
TEST(SoftNicTransport, AQpRaisedFromItsFloorSendsAtTheRaisedRateNotAPacketTimeAtTheFloor) {
  nic_config cfg;
  cfg.line_rate_bps = 10'000'000'000;
  cfg.mtu_bytes = 4096;
  cfg.dcqcn_enabled = true;
  cfg.dcqcn.rate_to_set_on_first_cnp_mbps = 1;
  pair_fixture f(cfg);
  std::vector<std::int64_t> sends_ns;
  f.a_to_b.drop = [&](captures::dissected_frame& d, std::vector<std::uint8_t>& bytes) {
    if (!d.is_roce || d.bth_opcode > wire::roce_opcode::rc_rdma_write_only_with_immediate) return false;
    if (sends_ns.empty()) bytes[d.ip_offset + 1] |= 0x03;
    sends_ns.push_back(f.clk.now_ns());
    return false;
  };
  ASSERT_TRUE(f.a->post(0x11, verb::rdma_write, 1024 * 1024, 0, 0).ok());
  f.run(60'000'000'000);
  ASSERT_EQ(f.sent.size(), 1u);
  ASSERT_EQ(f.a->counters().rx_cnps, 1u);
  ASSERT_EQ(f.a->dcqcn_counters().rate_decreases, 1u);
  const std::int64_t floor_packet_ns = wire_bytes(4096 + 70) * 8'000'000'000 / 1'000'000;
  std::int64_t longest_gap_ns = 0;
  for (std::size_t i = 1; i < sends_ns.size(); ++i)
    longest_gap_ns = std::max(longest_gap_ns, sends_ns[i] - sends_ns[i - 1]);
  EXPECT_LT(longest_gap_ns, floor_packet_ns / 4) << "the floor's packet time is " << floor_packet_ns << " ns";
}

TEST(SoftNicTransport, PfcPauseStopsDataForItsPriorityOnly) {
  pair_fixture f(no_dcqcn());
  ASSERT_TRUE(f.a->post(0x11, verb::rdma_write, 256 * 1024, 0, 0).ok());
  // A PFC frame for another priority (5) does not stop priority 3.
  captures::pfc_frame_spec other;
  other.class_enable = 1u << 5;
  other.quanta[5] = 0xffff;
  std::vector<std::uint8_t> other_frame;
  ASSERT_GT(captures::append_pfc_frame(other, other_frame), 0u);
  f.a->on_frame(other_frame, 0);
  f.run(20'000);  // some packets out
  const int before = f.data_frames_sent();
  ASSERT_GT(before, 5);
  // PFC XOFF for priority 3 with 0xffff quanta: 65535 x 512 bit times at 10 Gb/s = 3.36 ms.
  captures::pfc_frame_spec p;
  p.src_mac = {0x02, 0x52, 0x4c, 0xff, 0, 1};
  p.class_enable = 1u << 3;
  p.quanta[3] = 0xffff;
  std::vector<std::uint8_t> pfc;
  ASSERT_GT(captures::append_pfc_frame(p, pfc), 0u);
  f.a->on_frame(pfc, f.clk.now_ns());
  const std::int64_t paused_at = f.clk.now_ns();
  f.run(paused_at + 3'000'000);
  EXPECT_EQ(f.data_frames_sent(), before);  // nothing new while paused
  // The pause expires by itself (no XON needed).
  f.run(paused_at + 3'400'000);
  EXPECT_GT(f.data_frames_sent(), before);
  f.run(200'000'000);
  ASSERT_EQ(f.sent.size(), 1u);
  EXPECT_EQ(f.a->counters().rx_pfc, 2u);
  EXPECT_GT(f.a->counters().paused_ns, 3'000'000);
}

TEST(SoftNicTransport, PfcXonResumesAtOnce) {
  pair_fixture f(no_dcqcn());
  captures::pfc_frame_spec p;
  p.class_enable = 1u << 3;
  p.quanta[3] = 0xffff;
  std::vector<std::uint8_t> xoff, xon;
  ASSERT_GT(captures::append_pfc_frame(p, xoff), 0u);
  p.quanta[3] = 0;
  ASSERT_GT(captures::append_pfc_frame(p, xon), 0u);
  f.a->on_frame(xoff, 0);
  ASSERT_TRUE(f.a->post(0x11, verb::rdma_write, 16 * 1024, 0, 0).ok());
  f.run(500'000);
  EXPECT_EQ(f.data_frames_sent(), 0);
  f.a->on_frame(xon, f.clk.now_ns());
  f.run(f.clk.now_ns() + 1'000'000);
  ASSERT_EQ(f.sent.size(), 1u);
}

TEST(SoftNicTransport, PfcIgnoredWhenDisabled) {
  nic_config cfg = no_dcqcn();
  cfg.pfc_enabled = false;
  pair_fixture f(cfg);
  captures::pfc_frame_spec p;
  p.class_enable = 1u << 3;
  p.quanta[3] = 0xffff;
  std::vector<std::uint8_t> xoff;
  ASSERT_GT(captures::append_pfc_frame(p, xoff), 0u);
  f.a->on_frame(xoff, 0);
  ASSERT_TRUE(f.a->post(0x11, verb::rdma_write, 16 * 1024, 0, 0).ok());
  f.run(500'000);
  ASSERT_EQ(f.sent.size(), 1u);
}

TEST(SoftNicTransport, RejectsBadConfigAndUnknownQp) {
  fabric::virtual_clock clk;
  fake_wire w;
  nic_config cfg;
  cfg.mtu_bytes = 1000;
  EXPECT_FALSE(rc_nic::create(cfg, clk, w).ok());
  cfg.mtu_bytes = 1024;
  auto nic = rc_nic::create(cfg, clk, w);
  ASSERT_TRUE(nic.ok());
  EXPECT_FALSE((*nic)->post(5, verb::send, 10, 0, 0).ok());
  qp_connection c;
  c.local_qpn = 5;
  c.remote_qpn = 6;
  EXPECT_TRUE((*nic)->connect(c).ok());
  c.remote_qpn = 7;
  EXPECT_FALSE((*nic)->connect(c).ok());
  EXPECT_FALSE((*nic)->post(5, verb::send, 0, 0, 0).ok());
}

// A message's first_tx_ns is when its first data packet went to the sink: at once for a
// message posted to an idle QP, after the earlier message's packets for one queued behind
// it, although both were posted at the same instant (start_ns).
TEST(SoftNicTransport, FirstTransmitIsWhenTheFirstDataPacketLeftNotWhenPosted) {
  pair_fixture f(no_dcqcn());
  ASSERT_TRUE(f.a->post(0x11, verb::rdma_write, 10 * 1024, 1, 0).ok());
  ASSERT_TRUE(f.a->post(0x11, verb::rdma_write, 1024, 2, 0).ok());
  f.run(100'000'000);
  ASSERT_EQ(f.sent.size(), 2u);
  EXPECT_EQ(f.sent[0].start_ns, 0);
  EXPECT_EQ(f.sent[0].first_tx_ns, 0) << "an idle QP sends at once";
  EXPECT_EQ(f.sent[1].start_ns, 0);
  // 10 frames of 1024 B payload (1,110 B on the wire with headers, preamble and gap) at
  // 10 Gb/s: ~8.9 us before the second message's packet may leave.
  EXPECT_GE(f.sent[1].first_tx_ns, 8'000);
  EXPECT_LT(f.sent[1].first_tx_ns, f.sent[1].end_ns);
}

// An armed post: queued ahead of its start, nothing of it leaves before start_ns, and at
// the instant the NIC hands over the very frame (byte for byte) a post made at that
// instant would have sent; the completion reports the instant as its start and first
// transmission.
TEST(SoftNicTransport, ArmedPostHoldsItsMessageUntilTheStartAndSendsTheFrameAPostThenWould) {
  constexpr std::int64_t start_ns = 50'000;
  pair_fixture armed(no_dcqcn()), plain(no_dcqcn());
  ASSERT_TRUE(armed.a->post_armed(0x11, verb::rdma_write, 3 * 1024, 9, start_ns).ok());
  for (const std::int64_t t : {std::int64_t{0}, std::int64_t{1'000}, start_ns - 1})
    EXPECT_EQ(armed.a->poll_transmit(t), start_ns) << "at " << t;
  EXPECT_TRUE(armed.a_to_b.in_flight.empty());
  armed.clk.run_until(start_ns);
  plain.clk.run_until(start_ns);
  ASSERT_TRUE(plain.a->post(0x11, verb::rdma_write, 3 * 1024, 9, start_ns).ok());
  (void)armed.a->poll_transmit(start_ns, 1);
  (void)plain.a->poll_transmit(start_ns, 1);
  ASSERT_EQ(armed.a_to_b.in_flight.size(), 1u);
  ASSERT_EQ(plain.a_to_b.in_flight.size(), 1u);
  EXPECT_EQ(armed.a_to_b.in_flight.front().bytes, plain.a_to_b.in_flight.front().bytes);
  armed.run(10'000'000);
  ASSERT_EQ(armed.sent.size(), 1u);
  EXPECT_EQ(armed.sent[0].start_ns, start_ns);
  EXPECT_EQ(armed.sent[0].first_tx_ns, start_ns);
  EXPECT_EQ(armed.data_frames_sent(), 3);
  EXPECT_EQ(armed.a_to_b.bad_icrc, 0);
  ASSERT_EQ(armed.received.size(), 1u);
  EXPECT_EQ(armed.received[0].bytes, 3u * 1024);
}

// The frame built ahead is the one sent only while nothing else left the NIC: an ACK sent
// between arming and the instant (a new IPv4 identification) makes the NIC build the
// first frame again, as a post at the instant would.
TEST(SoftNicTransport, AFrameSentBetweenArmingAndTheInstantOutdatesTheFrameBuiltAhead) {
  constexpr std::int64_t start_ns = 200'000;
  pair_fixture armed(no_dcqcn()), plain(no_dcqcn());
  ASSERT_TRUE(armed.a->post_armed(0x11, verb::rdma_write, 2 * 1024, 1, start_ns).ok());
  for (pair_fixture* f : {&armed, &plain}) {
    ASSERT_TRUE(f->b->post(0x22, verb::send, 1024, 2, 0).ok());
    f->run(start_ns - 1);  // b's message goes to a, which acknowledges it
  }
  ASSERT_EQ(armed.b_to_a.seen.size(), plain.b_to_a.seen.size());
  ASSERT_TRUE(plain.a->post(0x11, verb::rdma_write, 2 * 1024, 1, start_ns).ok());
  armed.clk.run_until(start_ns);
  plain.clk.run_until(start_ns);
  const std::size_t before = armed.a_to_b.seen.size();
  (void)armed.a->poll_transmit(start_ns, 1);
  (void)plain.a->poll_transmit(start_ns, 1);
  ASSERT_EQ(armed.a_to_b.seen.size(), before + 1);
  ASSERT_FALSE(armed.a_to_b.in_flight.empty());
  ASSERT_FALSE(plain.a_to_b.in_flight.empty());
  EXPECT_EQ(armed.a_to_b.in_flight.back().bytes, plain.a_to_b.in_flight.back().bytes);
  EXPECT_EQ(armed.a_to_b.bad_icrc, 0);
}

// Pacing of an armed message counts from its instant: sent on time, one frame and the
// next a packet time later (the idle port's past earns no burst); sent two packet times
// late, it catches up by one packet, as any late wake-up may.
TEST(SoftNicTransport, ArmedMessageIsPacedFromItsInstant) {
  constexpr std::int64_t start_ns = 1'000'000;
  const std::int64_t gap_ns = wire_bytes(1024 + 70) * 8'000'000'000 / no_dcqcn().line_rate_bps;
  struct row {
    const char* name;
    std::int64_t sent_at_ns;
    std::size_t frames;
  };
  for (const row& r : {row{"on time", start_ns, 1}, row{"a little late", start_ns + gap_ns / 2, 1},
                       row{"two packet times late", start_ns + 2 * gap_ns, 2}}) {
    pair_fixture f(no_dcqcn());
    ASSERT_TRUE(f.a->post_armed(0x11, verb::rdma_write, 8 * 1024, 0, start_ns).ok());
    f.clk.run_until(r.sent_at_ns);
    const std::int64_t next = f.a->poll_transmit(r.sent_at_ns);
    EXPECT_EQ(f.a_to_b.in_flight.size(), r.frames) << r.name;
    EXPECT_GT(next, r.sent_at_ns) << r.name;
  }
}

// The pacing lateness the twin draws (host_timing::pacing_lateness) is measured per
// wake-up: the first data packet of a poll that was not yet due at the poll before, late
// by now - due. A message's first packet is its send processing, and the packet a late
// wake-up catches up with goes in the same poll: neither is counted.
TEST(SoftNicTransport, TxLatenessCountsEachWakeUpForADuePacketOnce) {
  const std::int64_t gap = wire_bytes(1024 + 70) * 8'000'000'000 / no_dcqcn().line_rate_bps;
  pair_fixture f(no_dcqcn());
  ASSERT_TRUE(f.a->post(0x11, verb::rdma_write, 8 * 1024, 0, 0).ok());
  auto poll = [&](std::int64_t t) {
    f.clk.run_until(t);
    return f.a->poll_transmit(t);
  };
  // Polls from t, and again when it answers a later time (the port's and the QP's pacing
  // round a packet time differently, by 1 ns), until a frame went; the next due time.
  auto send_at = [&](std::int64_t t) {
    const std::size_t before = f.a_to_b.in_flight.size();
    std::int64_t next = poll(t);
    for (int i = 0; i < 3 && f.a_to_b.in_flight.size() == before; ++i) next = poll(next);
    return next;
  };
  const std::int64_t due2 = send_at(0);  // packet 1: the message's first, not counted
  EXPECT_EQ(f.a_to_b.in_flight.size(), 1u);
  const std::int64_t due3 = send_at(due2 + gap / 4);  // packet 2: a quarter of a packet time late
  EXPECT_EQ(f.a_to_b.in_flight.size(), 2u);
  const std::int64_t due5 = send_at(due3 + 3 * gap);  // packet 3 three packet times late, packet 4 behind it
  EXPECT_EQ(f.a_to_b.in_flight.size(), 4u);
  EXPECT_GT(due5, due3 + 3 * gap);
  EXPECT_GT(send_at(due5), due5) << "packet 5 on time";
  EXPECT_EQ(f.a_to_b.in_flight.size(), 5u);
  const fabric::latency_histogram& h = f.a->tx_lateness();
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.min_ns(), 0);
  EXPECT_NEAR(static_cast<double>(h.max_ns()), static_cast<double>(3 * gap), 2.0);
  poll(due5 + 1);
  EXPECT_EQ(f.a_to_b.in_flight.size(), 5u) << "nothing due: a poll sends nothing and counts nothing";
  EXPECT_EQ(h.count(), 3u);
}

// post_armed takes only an idle QP (the caller posts at the instant otherwise) and fails
// like post on a bad QP or size.
TEST(SoftNicTransport, ArmedPostRefusesABusyQpAndBadArguments) {
  pair_fixture f(no_dcqcn());
  ASSERT_TRUE(f.a->post(0x11, verb::rdma_write, 4 * 1024, 0, 0).ok());
  const auto busy = f.a->post_armed(0x11, verb::rdma_write, 1024, 1, 100'000);
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.error().code(), error_code::unavailable);
  f.run(50'000'000);
  ASSERT_EQ(f.sent.size(), 1u);
  EXPECT_EQ(f.a->post_armed(0x99, verb::send, 10, 0, 1).error().code(), error_code::not_found);
  EXPECT_EQ(f.a->post_armed(0x11, verb::send, 0, 0, 1).error().code(), error_code::invalid_argument);
  EXPECT_TRUE(f.a->post_armed(0x11, verb::rdma_write, 1024, 1, f.clk.now_ns() + 1'000).ok())
      << "idle again once everything is acknowledged";
}

}  // namespace
}  // namespace rocelab::traffic::soft_nic

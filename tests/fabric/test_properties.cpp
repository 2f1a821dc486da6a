// Property tests: buffer conservation on random traffic, and no loss in a lossless class
// whenever the headroom is at least what headroom_calculator asks for.
#include "rocelab/fabric/switch_model.hpp"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

#include "fabric_test_support.hpp"
#include "rocelab/fabric/headroom.hpp"

namespace rocelab::fabric {
namespace {

using testing::make_packet;

constexpr std::uint8_t lossless_prio = 3;

switch_config random_config(int ports) {
  switch_config cfg;
  cfg.buffer_bytes = 200 * 1024;
  cfg.cell_bytes = 128;
  cfg.lossless_priorities = 1u << lossless_prio;
  for (int i = 0; i < ports; ++i) {
    port_config p;
    p.rate_bps = i % 2 == 0 ? 100'000'000'000 : 25'000'000'000;
    for (auto& pg : p.pgs) {
      pg.reserve_bytes = 1024;
      pg.shared = buffer_threshold::dynamic(-2);
      pg.headroom_bytes = 8 * 1024;
      pg.xon_offset_bytes = 2048;
    }
    for (std::size_t q = 0; q < p.queues.size(); ++q) {
      p.queues[q].reserve_bytes = 512;
      p.queues[q].shared = q == lossless_prio ? buffer_threshold::unlimited() : buffer_threshold::dynamic(-1);
      p.queues[q].ecn = {true, 5'000, 40'000, 0.3};
      p.queues[q].dwrr_weight = q < 4 ? 0 : static_cast<std::uint32_t>(q - 3);
    }
    cfg.ports.push_back(p);
  }
  return cfg;
}

class conservation : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(conservation, EnqueuedEqualsDequeuedPlusResidentAndOfferedEqualsAcceptedPlusDropped) {
  constexpr int ports = 4;
  virtual_clock clk;
  testing::frame_recorder rec;
  auto sw = switch_model::create(random_config(ports), clk, &rec).value();
  std::mt19937_64 rng(GetParam());
  std::unordered_map<std::uint64_t, std::int64_t> resident_cells;  // cookie -> cells
  std::uint64_t offered = 0, accepted = 0, dropped = 0, dequeued = 0, cookie = 0;
  std::int64_t now = 0;
  // Per queue, as the test sees it: bytes and cells queued, the highest depth, bytes in
  // and out. The switch derives arrivals and the reserve/shared split, and guards its
  // watermark with a bound; these pin what it reports.
  struct queue_view {
    std::uint64_t bytes = 0, watermark = 0, in_bytes = 0, out_bytes = 0;
    std::int64_t cells = 0;
  };
  std::array<queue_view, ports * num_priorities> view{};
  const std::int64_t queue_reserve_cells = sw->cells_of(512);
  auto departed = [&](std::uint16_t port, const departure& d) {
    ASSERT_EQ(resident_cells.erase(d.pkt.cookie), 1u);
    queue_view& v = view[port * num_priorities + d.pkt.priority];
    v.bytes -= d.pkt.size_bytes;
    v.cells -= sw->cells_of(d.pkt.size_bytes);
    v.out_bytes += d.pkt.size_bytes;
  };
  auto check = [&] {
    std::uint64_t enq = 0, deq = 0, depth = 0, drops = 0;
    for (std::uint16_t p = 0; p < ports; ++p) {
      for (std::uint8_t q = 0; q < num_priorities; ++q) {
        const auto qs = sw->queue(p, q);
        ASSERT_EQ(qs.enqueued_packets, qs.dequeued_packets + qs.depth_packets);
        const queue_view& v = view[p * num_priorities + q];
        ASSERT_EQ(qs.depth_bytes, v.bytes);
        ASSERT_EQ(qs.watermark_bytes, v.watermark);
        ASSERT_EQ(qs.enqueued_bytes, v.in_bytes);
        ASSERT_EQ(qs.dequeued_bytes, v.out_bytes);
        ASSERT_EQ(qs.reserve_cells, std::min(v.cells, queue_reserve_cells));
        ASSERT_EQ(qs.shared_cells, v.cells - qs.reserve_cells);
        enq += qs.enqueued_packets;
        deq += qs.dequeued_packets;
        depth += qs.depth_packets;
      }
      for (auto d : sw->port(p).dropped_packets) drops += d;
    }
    ASSERT_EQ(enq, accepted);
    ASSERT_EQ(deq, dequeued);
    ASSERT_EQ(drops, dropped);
    ASSERT_EQ(offered, accepted + dropped);
    ASSERT_EQ(depth, resident_cells.size());
    std::int64_t cells = 0;
    for (const auto& [c, n] : resident_cells) cells += n;
    const auto b = sw->buffer();
    ASSERT_EQ(b.used_cells, cells);
    ASSERT_LE(b.used_cells, b.total_cells);
    ASSERT_EQ(b.resident_packets, resident_cells.size());
  };
  for (int step = 0; step < 200'000; ++step) {
    const auto op = rng() % 100;
    if (op < 60) {
      const auto in = static_cast<std::uint16_t>(rng() % ports);
      auto out = static_cast<std::uint16_t>(rng() % (ports - 1));
      if (out >= in) ++out;
      packet p = make_packet(in, out, static_cast<std::uint8_t>(rng() % num_priorities),
                             static_cast<std::uint32_t>(64 + rng() % 1437), static_cast<ecn_codepoint>(rng() % 4));
      p.cookie = ++cookie;
      ++offered;
      if (sw->admit(p, now).accepted) {
        ++accepted;
        resident_cells[p.cookie] = sw->cells_of(p.size_bytes);
        queue_view& v = view[p.egress_port * num_priorities + p.priority];
        v.bytes += p.size_bytes;
        v.cells += sw->cells_of(p.size_bytes);
        v.in_bytes += p.size_bytes;
        v.watermark = std::max(v.watermark, v.bytes);
      } else {
        ++dropped;
      }
    } else if (op < 97) {
      const auto port = static_cast<std::uint16_t>(rng() % ports);
      if (auto d = sw->dequeue(port, now)) {
        ++dequeued;
        departed(port, *d);
      }
    } else {
      std::array<std::uint16_t, num_priorities> q{};
      for (auto& x : q) x = static_cast<std::uint16_t>(rng() % 3 == 0 ? 0 : rng() % 200);
      sw->on_pfc_frame(static_cast<std::uint16_t>(rng() % ports), static_cast<std::uint8_t>(rng()), q, now);
    }
    now += static_cast<std::int64_t>(rng() % 40);
    clk.run_until(now);
    if (step % 1000 == 0) check();
  }
  check();
  // Drain everything: resume all priorities and send until empty.
  std::array<std::uint16_t, num_priorities> zero{};
  for (std::uint16_t p = 0; p < ports; ++p) sw->on_pfc_frame(p, 0xff, zero, now);
  for (bool any = true; any;) {
    any = false;
    for (std::uint16_t p = 0; p < ports; ++p) {
      now = std::max(now, sw->next_transmit_time_ns(p));
      if (auto d = sw->dequeue(p, now)) {
        any = true;
        ++dequeued;
        departed(p, *d);
      }
    }
  }
  check();
  const auto b = sw->buffer();
  EXPECT_EQ(b.used_cells, 0);
  EXPECT_EQ(b.ingress_shared_used_cells, 0);
  EXPECT_EQ(b.egress_shared_used_cells, 0);
  for (std::uint16_t p = 0; p < ports; ++p)
    for (std::uint8_t q = 0; q < num_priorities; ++q) {
      const auto pg = sw->priority_group(p, q);
      EXPECT_EQ(pg.reserve_cells + pg.shared_cells + pg.headroom_cells, 0);
      EXPECT_FALSE(pg.xoff);
    }
  EXPECT_GT(dropped, 0u) << "the buffer is small enough to force drops";
  EXPECT_GT(rec.frames.size(), 0u) << "and PFC";
}

INSTANTIATE_TEST_SUITE_P(Seeds, conservation, ::testing::Values(1u, 2u, 3u, 42u));

// Incast into one port in virtual time: `senders` hosts send MTU frames back to back at
// line rate on the lossless priority over cables of cable_m; the switch's PFC frames
// reach them after the cable delay and take effect after their response time.
struct incast_result {
  std::uint64_t delivered = 0, headroom_drops = 0, other_drops = 0, xoff = 0;
  std::int64_t headroom_wm_cells = 0, headroom_cells = 0;
};

class incast_sim final : public timer_client, public pfc_frame_sink {
 public:
  struct params {
    int senders = 8;
    std::int64_t rate_bps = 100'000'000'000;
    double cable_m = 100.0;
    std::uint32_t mtu = 1518;
    std::int64_t response_quanta = 10;
    std::int64_t cell_bytes = 256;
    double headroom_factor = 1.0;  // x the calculator's requirement
    bool pause_until_resume = false;
    std::int64_t run_ns = 2'000'000;
  };

  explicit incast_sim(const params& p) : p_(p) {
    headroom_inputs hin;
    hin.rate_bps = p.rate_bps;
    hin.cable_m = p.cable_m;
    hin.mtu_bytes = p.mtu;
    hin.peer_response_quanta = p.response_quanta;
    hin.wire_overhead_bytes = 20;
    headroom_cells_ = static_cast<std::int64_t>(static_cast<double>(headroom_cells(hin, p.cell_bytes)) * p.headroom_factor);
    switch_config cfg;
    cfg.buffer_bytes = 4 * 1024 * 1024;
    cfg.cell_bytes = p.cell_bytes;
    cfg.lossless_priorities = 1u << lossless_prio;
    cfg.pfc.pause_until_resume = p.pause_until_resume;
    for (int i = 0; i <= p.senders; ++i) {
      port_config pc;
      pc.rate_bps = p.rate_bps;
      pc.cable_m = p.cable_m;
      for (auto& pg : pc.pgs) {
        pg.reserve_bytes = 2 * p.mtu;
        pg.shared = buffer_threshold::dynamic(-3);
        pg.headroom_bytes = headroom_cells_ * p.cell_bytes;
        pg.xon_offset_bytes = 2 * p.mtu;
      }
      for (auto& q : pc.queues) q.shared = buffer_threshold::unlimited();
      cfg.ports.push_back(pc);
    }
    sw_ = switch_model::create(cfg, clk_, this).value();
    prop_ns_ = static_cast<std::int64_t>(p.cable_m * propagation_ns_per_m);
    // Round the response down: the simulated peer is at least as fast as the budget.
    response_ns_ = p.response_quanta * 512 * 1'000'000'000 / p.rate_bps;
    frame_ps_ = sw_->serialization_ps(0, p.mtu);
    senders_.resize(static_cast<std::size_t>(p.senders));
    for (int i = 0; i < p.senders; ++i) {
      senders_[static_cast<std::size_t>(i)].pause = pfc_pause_state(p.rate_bps, p.pause_until_resume);
      clk_.schedule(i * 7, *this, encode(kind::sender_tx, i, 0));
    }
  }

  incast_result run() {
    clk_.run_until(p_.run_ns);
    incast_result r;
    r.delivered = sw_->port(static_cast<std::uint16_t>(p_.senders)).tx_packets;
    r.headroom_cells = headroom_cells_;
    for (int i = 0; i < p_.senders; ++i) {
      const auto pg = sw_->priority_group(static_cast<std::uint16_t>(i), lossless_prio);
      r.headroom_drops += pg.dropped_packets[static_cast<int>(drop_reason::headroom_exhausted)];
      r.other_drops += pg.dropped_packets[static_cast<int>(drop_reason::ingress_limit)] +
                       pg.dropped_packets[static_cast<int>(drop_reason::egress_limit)];
      r.headroom_wm_cells = std::max(r.headroom_wm_cells, pg.headroom_watermark_cells);
      r.xoff += pg.xoff_sent;
    }
    return r;
  }

 private:
  enum class kind : std::uint64_t { sender_tx = 1, arrival = 2, pfc_apply = 3, egress = 4 };
  static std::uint64_t encode(kind k, int i, std::uint16_t quanta) {
    return (static_cast<std::uint64_t>(k) << 48) | (static_cast<std::uint64_t>(quanta) << 16) |
           static_cast<std::uint64_t>(i);
  }
  struct sender {
    pfc_pause_state pause;
    std::int64_t busy_until_ps = 0;
    bool tx_scheduled = true;
  };

  void on_pfc_frame_out(const pfc_frame_out& f) override {
    // Last bit reaches the sender after the cable; it acts after its response time.
    clk_.schedule(f.tx_end_ns + prop_ns_ + response_ns_, *this, encode(kind::pfc_apply, f.port, f.quanta));
  }

  void on_timer(std::int64_t now, std::uint64_t cookie) override {
    const auto k = static_cast<kind>(cookie >> 48);
    const int i = static_cast<int>(cookie & 0xffff);
    switch (k) {
      case kind::sender_tx: {
        sender& s = senders_[static_cast<std::size_t>(i)];
        s.tx_scheduled = false;
        if (s.pause.paused(lossless_prio, now)) {
          const std::int64_t resume = s.pause.resume_ns(lossless_prio);
          if (resume != never_ns) {
            s.tx_scheduled = true;
            clk_.schedule(resume, *this, encode(kind::sender_tx, i, 0));
          }
          return;
        }
        // Back to back at line rate: continue from the exact end of the last frame.
        const std::int64_t start_ps = (now * 1000 - s.busy_until_ps < 1000) ? s.busy_until_ps : now * 1000;
        s.busy_until_ps = start_ps + frame_ps_;
        const std::int64_t end_ns = (s.busy_until_ps + 999) / 1000;
        clk_.schedule(end_ns + prop_ns_, *this, encode(kind::arrival, i, 0));
        s.tx_scheduled = true;
        clk_.schedule(end_ns, *this, encode(kind::sender_tx, i, 0));
        return;
      }
      case kind::arrival: {
        packet pkt = make_packet(static_cast<std::uint16_t>(i), static_cast<std::uint16_t>(p_.senders), lossless_prio,
                                 p_.mtu);
        (void)sw_->admit(pkt, now);
        kick_egress(now);
        return;
      }
      case kind::pfc_apply: {
        sender& s = senders_[static_cast<std::size_t>(i)];
        std::array<std::uint16_t, num_priorities> q{};
        q[lossless_prio] = static_cast<std::uint16_t>((cookie >> 16) & 0xffff);
        s.pause.on_frame(1u << lossless_prio, q, now);
        if (!s.tx_scheduled) {
          s.tx_scheduled = true;
          clk_.schedule(now, *this, encode(kind::sender_tx, i, 0));
        }
        return;
      }
      case kind::egress: {
        egress_scheduled_ = false;
        (void)sw_->dequeue(static_cast<std::uint16_t>(p_.senders), now);
        kick_egress(now);
        return;
      }
    }
  }

  void kick_egress(std::int64_t now) {
    if (egress_scheduled_) return;
    const std::int64_t t = sw_->next_dequeue_time_ns(static_cast<std::uint16_t>(p_.senders), now);
    if (t == never_ns) return;
    egress_scheduled_ = true;
    clk_.schedule(t, *this, encode(kind::egress, 0, 0));
  }

  params p_;
  virtual_clock clk_;
  std::unique_ptr<switch_model> sw_;
  std::vector<sender> senders_;
  std::int64_t headroom_cells_ = 0, prop_ns_ = 0, response_ns_ = 0, frame_ps_ = 0;
  bool egress_scheduled_ = false;
};

struct lossless_case {
  const char* name;
  incast_sim::params p;
};


TEST(LosslessProperty, NoLossWhenHeadroomMeetsTheCalculator) {
  const lossless_case cases[] = {
      {"100G_100m_8to1", {8, 100'000'000'000, 100.0, 1518, 10, 256, 1.0, false, 2'000'000}},
      {"100G_300m_16to1_hold", {16, 100'000'000'000, 300.0, 1518, 40, 256, 1.0, true, 2'000'000}},
      {"25G_10m_jumbo", {6, 25'000'000'000, 10.0, 9216, 16, 208, 1.0, false, 4'000'000}},
      {"400G_30m", {8, 400'000'000'000, 30.0, 4096, 20, 256, 1.0, false, 1'000'000}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    incast_sim sim(c.p);
    const incast_result r = sim.run();
    EXPECT_EQ(r.headroom_drops, 0u);
    EXPECT_EQ(r.other_drops, 0u);
    EXPECT_GT(r.xoff, 0u) << "the incast must actually trigger PFC";
    EXPECT_GT(r.headroom_wm_cells, 0) << "and use headroom";
    EXPECT_LE(r.headroom_wm_cells, r.headroom_cells);
    EXPECT_GT(r.delivered, 0u);
  }
}

TEST(LosslessProperty, TooLittleHeadroomDropsSoTheTestHasTeeth) {
  incast_sim::params p;
  p.cable_m = 300.0;
  p.headroom_factor = 0.3;
  incast_sim sim(p);
  EXPECT_GT(sim.run().headroom_drops, 0u);
}

}  // namespace
}  // namespace rocelab::fabric

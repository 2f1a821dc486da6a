#include "rocelab/experiments/analysis/correlation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "rocelab/experiments/analysis/attribution.hpp"
#include "rocelab/experiments/analysis/victims.hpp"

// Correlation, victims, attribution and storms on hand-built records whose answers are
// known; the twin-driven proofs are in test_correlation_twin.cpp.

namespace rocelab::experiments {
namespace {

pause_interval pause(std::uint32_t device, std::uint32_t port, std::uint8_t prio, std::int64_t start, std::int64_t end,
                     pause_source source = pause_source::model) {
  return {device, port, prio, start, end, source};
}

flow_record flow(std::uint32_t src, std::uint32_t dst, std::int64_t start, std::int64_t end, std::uint64_t bytes = 10240,
                 std::int64_t ideal = 1000) {
  flow_record f;
  f.src = src;
  f.dst = dst;
  f.qp = src * 100 + dst + 1;
  f.priority = 3;
  f.bytes = bytes;
  f.start_ns = start;
  f.end_ns = end;
  f.fct_ns = end >= 0 ? end - start : -1;
  f.ideal_fct_ns = ideal;
  return f;
}

// One switch (device 0, "sw0") with hosts h1..h4 on ports 0..3 (devices 1..4), as the
// twin names a single-switch run.
run_records single_switch_run() {
  run_records r;
  r.backend = "twin";
  r.devices = {"sw0", "h1", "h2", "h3", "h4"};
  r.hosts = {"h1", "h2", "h3", "h4"};
  return r;
}

path_fn paths_of(const run_records& r) {
  auto layout = infer_single_switch_layout(r);
  EXPECT_TRUE(layout.ok()) << layout.error().message();
  return single_switch_paths(*layout);
}

TEST(pause_index, merges_sources_and_measures_overlap) {
  const std::vector<pause_interval> p = {pause(1, 0, 3, 10, 20), pause(1, 0, 3, 15, 30, pause_source::capture),
                                         pause(1, 0, 3, 50, 60), pause(1, 0, 4, 0, 100), pause(2, 0, 3, 0, 5)};
  const pause_index index(p);
  const pause_index::key k{1, 0, 3};
  struct {
    const char* name;
    std::int64_t from, to, expected;
  } cases[] = {
      {"whole run: 10..30 and 50..60", 0, 100, 30},
      {"window cutting both merged intervals", 25, 55, 10},
      {"window in the gap", 30, 50, 0},
      {"window inside one interval", 12, 14, 2},
      {"empty window", 40, 40, 0},
      {"window before everything", 0, 10, 0},
  };
  for (const auto& c : cases) EXPECT_EQ(index.overlap_ns(k, c.from, c.to), c.expected) << c.name;
  EXPECT_EQ(index.overlap_ns({1, 0, 5}, 0, 100), 0) << "a priority never paused";
  EXPECT_EQ(index.merged().at(k).size(), 2u) << "overlapping capture and model intervals merge";
  std::vector<pause_index::span_ns> spans;
  index.clipped(k, 25, 55, spans);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].start_ns, 25);
  EXPECT_EQ(spans[1].end_ns, 55);
  EXPECT_EQ(union_length_ns({{0, 10}, {5, 15}, {20, 25}}), 20);
}

TEST(counter_pauses, duration_counters_give_intervals_ending_at_the_sample) {
  std::vector<counter_sample> c = {
      {2, 1, "rx_prio3_pause", 0, 0},
      {2, 1, "rx_prio3_pause", 1'000'000, 4},
      {2, 1, "rx_prio3_pause_duration", 0, 0},
      {2, 1, "rx_prio3_pause_duration", 1'000'000, 200},  // 200 us
      {2, 1, "rx_prio3_pause_duration", 2'000'000, 200},  // nothing in the second window
      {2, 1, "rx_prio3_pause_duration", 3'000'000, 5000},  // more than the window: clipped
      {2, 1, "rx_bytes", 3'000'000, 5000},                 // not a pause counter
  };
  const auto r = pause_intervals_from_counters(c);
  ASSERT_EQ(r.intervals.size(), 2u);
  EXPECT_EQ(r.intervals[0].device, 2u);
  EXPECT_EQ(r.intervals[0].port, 1u);
  EXPECT_EQ(r.intervals[0].priority, 3);
  EXPECT_EQ(r.intervals[0].start_ns, 800'000);
  EXPECT_EQ(r.intervals[0].end_ns, 1'000'000);
  EXPECT_EQ(r.intervals[0].source, pause_source::counter);
  EXPECT_EQ(r.intervals[1].start_ns, 2'000'000);
  EXPECT_EQ(r.intervals[1].end_ns, 3'000'000);
  EXPECT_EQ(r.resolution_ns, 1'000'000);
  EXPECT_EQ(r.frames, 4u);
}

TEST(counter_pauses, frame_counters_alone_give_the_window_and_tx_counters_pause_the_peer) {
  std::vector<counter_sample> c = {
      {0, 2, "nic.tx_prio3_pause", 0, 10}, {0, 2, "nic.tx_prio3_pause", 500, 12},  // switch port 2 paused its peer
      {0, 2, "tx_prio3_pause", 1000, 12},
  };
  EXPECT_TRUE(pause_intervals_from_counters(c).intervals.empty()) << "tx counters need a peer map";
  counter_pause_options o;
  o.peer = [](std::uint32_t device, std::uint32_t port) -> std::optional<std::pair<std::uint32_t, std::uint32_t>> {
    if (device == 0) return std::pair{port + 1, 0u};  // the host on that port
    return std::nullopt;
  };
  const auto r = pause_intervals_from_counters(c, o);
  ASSERT_EQ(r.intervals.size(), 1u);
  EXPECT_EQ(r.intervals[0].device, 3u);
  EXPECT_EQ(r.intervals[0].port, 0u);
  EXPECT_EQ(r.intervals[0].start_ns, 0);
  EXPECT_EQ(r.intervals[0].end_ns, 500);
}

TEST(queue_index, samples_are_a_step_function) {
  const std::vector<queue_sample> s = {{0, 1, 3, 100, 1000}, {0, 1, 3, 200, 3000}, {0, 1, 3, 300, 0}};
  const queue_index q(s);
  struct {
    const char* name;
    std::int64_t from, to;
    double mean;
    std::uint64_t max;
  } cases[] = {
      {"before the first sample: empty", 0, 100, 0, 0},
      {"one step", 100, 200, 1000, 1000},
      {"two steps", 100, 300, 2000, 3000},
      {"starts inside a step", 150, 250, 2000, 3000},
      {"after the drain", 300, 400, 0, 0},
  };
  for (const auto& c : cases) {
    const auto st = q.window({0, 1, 3}, c.from, c.to);
    EXPECT_DOUBLE_EQ(st.mean_bytes, c.mean) << c.name;
    EXPECT_EQ(st.max_bytes, c.max) << c.name;
  }
}

TEST(correlate_flows, per_hop_pause_marks_and_queueing) {
  run_records r = single_switch_run();
  r.flows.push_back(flow(1, 0, 0, 2000, 10240));  // h2 -> h1, through sw0 port 0
  r.flows.back().ce_marked = 5;
  r.flows.back().cnps = 2;
  r.pauses = {pause(2, 0, 3, 100, 400),    // h2's NIC paused 300 ns
              pause(0, 0, 3, 300, 600),    // sw0 port 0 paused 300 ns, 100 of them with the NIC
              pause(0, 0, 4, 0, 2000),     // another priority: not this flow's
              pause(0, 1, 3, 0, 2000)};    // another port: not on its path
  r.queues = {{0, 0, 3, 0, 12500}, {0, 0, 3, 1000, 0}};  // 12.5 KB for half the flow
  correlation_options o;
  o.mtu_bytes = 1024;
  o.default_port_gbps = 100;
  const auto c = correlate_flows(r, paths_of(r), o);
  ASSERT_EQ(c.size(), 1u);
  ASSERT_EQ(c[0].hops.size(), 2u);
  EXPECT_EQ(c[0].hops[0].hop, (path_hop{2, 0, 0, false}));
  EXPECT_EQ(c[0].hops[1].hop, (path_hop{0, 1, 0, true}));
  EXPECT_EQ(c[0].hops[0].paused_ns, 300);
  EXPECT_EQ(c[0].hops[1].paused_ns, 300);
  EXPECT_EQ(c[0].paused_ns, 500) << "the union: 100..600";
  EXPECT_EQ(c[0].packets, 10u);
  EXPECT_DOUBLE_EQ(c[0].ce_fraction, 0.5);
  EXPECT_EQ(c[0].cnps, 2u);
  ASSERT_TRUE(c[0].hops[1].queue_mean_bytes.has_value());
  EXPECT_DOUBLE_EQ(*c[0].hops[1].queue_mean_bytes, 6250);
  ASSERT_TRUE(c[0].queueing_ns.has_value());
  EXPECT_DOUBLE_EQ(*c[0].queueing_ns, 500) << "6250 B at 100 Gb/s";
  EXPECT_DOUBLE_EQ(c[0].slowdown, 2.0);
}

TEST(correlate_flows, an_incomplete_flow_lasts_to_the_end_of_the_run) {
  run_records r = single_switch_run();
  r.flows.push_back(flow(1, 0, 0, -1));
  r.flows.push_back(flow(2, 0, 0, 5000));
  r.pauses = {pause(2, 0, 3, 3000, 4000)};
  const auto c = correlate_flows(r, paths_of(r));
  EXPECT_EQ(c[0].hops[0].paused_ns, 1000);
  EXPECT_DOUBLE_EQ(c[0].slowdown, 0.0);
}

TEST(single_switch_layout, needs_exactly_one_switch) {
  run_records r;
  r.devices = {"h1", "h2"};
  EXPECT_FALSE(infer_single_switch_layout(r).ok());
  r.devices = {"sw", "sw0"};
  EXPECT_FALSE(infer_single_switch_layout(r).ok());
  // The virtual lab: host NICs are devices 0..N-1 by host index, then "sw", then "capture".
  r.hosts = {"h1", "h2", "h3"};
  r.devices = {"h1", "h2", "h3", "sw", "capture"};
  auto l = infer_single_switch_layout(r);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->switch_device, 3u);
  EXPECT_EQ(l->host_device, (std::vector<std::uint32_t>{0, 1, 2}));
}

// Victims, table-driven on one single-switch run: h2 and h3 send to h1 (an incast; port 0
// congested), h2 also sends to h4 while h2's NIC is paused (head-of-line blocking at the
// NIC), h4 sends to h3 alone while unrelated pauses happen elsewhere.
struct victim_case {
  const char* name;
  bool with_queue_samples;
};

class victims : public ::testing::TestWithParam<victim_case> {};

TEST_P(victims, only_flows_paused_away_from_a_congested_destination) {
  run_records r = single_switch_run();
  r.flows = {flow(1, 0, 0, 10000),   // 0: incast member
             flow(2, 0, 0, 10000),   // 1: incast member
             flow(1, 3, 0, 8000),    // 2: h2 -> h4, behind h2's paused NIC: victim
             flow(3, 2, 0, 3000),    // 3: h4 -> h3, alone, never paused
             flow(3, 2, 20000, 21000)};  // 4: h4 -> h3 later, paused, but its destination port congested
  r.pauses = {pause(2, 0, 3, 1000, 6000),   // h2's NIC paused by the switch (PG of port 1 full)
              pause(3, 0, 3, 1000, 6000),   // h3's NIC too
              pause(4, 0, 3, 20100, 20600),  // h4's NIC later (flow 4's destination port congested by queue)
              pause(0, 2, 3, 20000, 21000)};  // sw0 port 2 (to h3) paused by h3's NIC: flow 4's own destination
  if (GetParam().with_queue_samples) {
    r.queues = {{0, 0, 3, 500, 200'000}, {0, 0, 3, 9000, 0},  // port 0 (to h1): the incast
                {0, 2, 3, 20050, 40'000}, {0, 2, 3, 20900, 0}};  // port 2 (to h3) during flow 4
  }
  r.flows.push_back(flow(0, 2, 20000, 21000));  // 5: h1 -> h3, fan-in to h3 during flow 4
  auto c = correlate_flows(r, paths_of(r));
  const auto v = find_victims(r, c);
  EXPECT_EQ(v.from_queue_samples, GetParam().with_queue_samples);
  ASSERT_EQ(v.victims.size(), 1u) << "only h2 -> h4";
  EXPECT_EQ(v.victims[0].flow, 2u);
  EXPECT_EQ(v.victims[0].hops, (std::vector<std::size_t>{0}));
  EXPECT_EQ(v.victims[0].victim_paused_ns, 5000);
  EXPECT_TRUE(c[2].hops[0].victim);
  EXPECT_FALSE(c[2].hops[1].victim);
  for (std::size_t i : {0u, 1u, 3u, 4u})
    for (const auto& h : c[i].hops) EXPECT_FALSE(h.victim) << "flow " << i;
  ASSERT_EQ(v.ports.size(), 1u);
  EXPECT_EQ(v.ports[0].port, (pause_index::key{2, 0, 3}));
  const std::vector<pause_index::key> congested = {{0, 0, 3}, {0, 2, 3}};
  EXPECT_EQ(v.congested_ports, congested);
}

INSTANTIATE_TEST_SUITE_P(congestion_test, victims,
                         ::testing::Values(victim_case{"queue_samples", true}, victim_case{"fan_in", false}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(no_victims, a_lone_flows_queue_is_not_congestion_it_caused) {
  // h2 -> h4 alone; its packets arrive bunched after h2's NIC pause lifts and fill port 3
  // for a moment. One flow cannot congest its destination: it is still a victim of the
  // pause at its NIC.
  run_records r = single_switch_run();
  r.flows = {flow(1, 3, 0, 8000)};
  r.pauses = {pause(2, 0, 3, 1000, 3000)};
  r.queues = {{0, 3, 3, 3000, 100'000}, {0, 3, 3, 4000, 0}};
  auto c = correlate_flows(r, paths_of(r));
  const auto v = find_victims(r, c);
  ASSERT_EQ(v.victims.size(), 1u);
  EXPECT_TRUE(v.congested_ports.empty());
}

TEST(no_victims, without_pauses) {
  run_records r = single_switch_run();
  r.flows = {flow(0, 1, 0, 1000), flow(1, 2, 0, 1000), flow(2, 3, 0, 1000)};
  auto c = correlate_flows(r, paths_of(r));
  EXPECT_TRUE(find_victims(r, c).victims.empty());
}

TEST(spearman, known_values) {
  struct {
    const char* name;
    std::vector<double> x, y;
    std::optional<double> rho;
  } cases[] = {
      {"monotone increasing is 1", {1, 2, 3, 4}, {10, 20, 25, 1000}, 1.0},
      {"monotone decreasing is -1", {1, 2, 3, 4}, {4, 3, 2, 1}, -1.0},
      {"ties take their mean rank", {1, 2, 3, 4, 5}, {5, 6, 7, 8, 7}, 8.0 / std::sqrt(95.0)},
      {"constant side has none", {1, 1, 1}, {1, 2, 3}, std::nullopt},
      {"too few pairs", {1, 2}, {1, 2}, std::nullopt},
  };
  for (const auto& c : cases) {
    const auto rho = spearman(c.x, c.y);
    ASSERT_EQ(rho.has_value(), c.rho.has_value()) << c.name;
    if (rho) {
      EXPECT_NEAR(*rho, *c.rho, 1e-12) << c.name;
    }
  }
}

TEST(attribution, tail_flows_split_their_excess_exactly) {
  run_records r = single_switch_run();
  // 100 flows, slowdowns 1.01 .. 2.00; the slowest two are at p99 and above.
  for (int i = 1; i <= 100; ++i) r.flows.push_back(flow(1, 0, 0, 100'000 + i * 1000, 10240, 100'000));
  std::vector<flow_correlation> c(100);
  for (std::size_t i = 0; i < 100; ++i) {
    c[i].flow = i;
    c[i].slowdown = r.flows[i].slowdown();
  }
  c[99].paused_ns = 30'000;            // of 100'000 excess
  c[99].queueing_ns = 50'000.0;
  c[99].retransmits = 10;              // 10 x (1024 + 82) x 8 / 100 = 884.8 ns
  c[98].paused_ns = 200'000;           // more than its 99'000 excess: capped
  attribution_options o;
  const auto a = attribute_tail(r, c, o);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].flow, 99u);
  EXPECT_EQ(a[0].excess_ns, 100'000);
  EXPECT_EQ(a[0].pause_ns, 30'000);
  EXPECT_EQ(a[0].queueing_ns, 50'000);
  EXPECT_EQ(a[0].retransmission_ns, 885);
  // The other 99 flows ran wholly inside flow 99's lifetime on the same two hosts:
  // 99 x 10240 bytes at 100 Gb/s = 81'101 ns of sharing, more than the 19'115 left.
  EXPECT_EQ(a[0].sharing_ns, 100'000 - 30'000 - 50'000 - 885);
  EXPECT_EQ(a[0].unexplained_ns, 0);
  EXPECT_EQ(a[1].flow, 98u);
  EXPECT_EQ(a[1].pause_ns, 99'000);
  EXPECT_EQ(a[1].queueing_ns + a[1].retransmission_ns + a[1].sharing_ns + a[1].unexplained_ns, 0);
}

// A hardware NIC's flows: retransmits and CNPs not measured. Correlation carries them as
// unknown, attribution charges no retransmission time and says it was not measured (the
// excess still adds up), and the rank correlations leave those flows out.
TEST(attribution, counts_a_nic_did_not_measure_are_unknown_not_zero) {
  run_records r = single_switch_run();
  for (int i = 1; i <= 100; ++i) {
    r.flows.push_back(flow(1, 0, 0, 100'000 + i * 1000, 10240, 100'000));
    r.flows.back().retransmits_measured = false;
    r.flows.back().cnps_measured = false;
  }
  const auto c = correlate_flows(r, nullptr);
  ASSERT_EQ(c.size(), 100u);
  for (const auto& x : c) {
    EXPECT_FALSE(x.retransmits.has_value());
    EXPECT_FALSE(x.cnps.has_value());
  }
  const auto a = attribute_tail(r, c);
  ASSERT_FALSE(a.empty());
  for (const auto& x : a) {
    EXPECT_FALSE(x.retransmission_measured);
    EXPECT_EQ(x.retransmission_ns, 0);
    EXPECT_EQ(x.pause_ns + x.queueing_ns + x.retransmission_ns + x.sharing_ns + x.unexplained_ns, x.excess_ns);
  }
  for (const auto& rc : slowdown_correlations(c)) {
    if (rc.measure == "cnps" || rc.measure == "retransmits") {
      EXPECT_EQ(rc.n, 0u) << rc.measure;
      EXPECT_FALSE(rc.rho.has_value()) << rc.measure;
    }
  }
  // Measured flows keep their counts, 0 included.
  r.flows[0].retransmits_measured = true;
  EXPECT_EQ(correlate_flows(r, nullptr)[0].retransmits, std::optional<std::uint64_t>{0});
}

TEST(attribution, sharing_counts_other_flows_bytes_through_the_busier_end_during_the_flow) {
  run_records r = single_switch_run();
  // Flow 0 (h2 -> h1, 1 MB, 0..200 us, ideal 80 us) is the slowest; flow 1 (h3 -> h1)
  // moved 1 MB over 0..100 us, wholly inside it; flow 2 (h4 -> h1) moved 1 MB over
  // 150..350 us, a quarter of it inside flow 0; flow 3 (h2 -> h3) ran after flow 0.
  r.flows.push_back(flow(1, 0, 0, 200'000, 1'000'000, 80'000));
  r.flows.push_back(flow(2, 0, 0, 100'000, 1'000'000, 80'000));
  r.flows.push_back(flow(3, 0, 150'000, 350'000, 1'000'000, 80'000));
  r.flows.push_back(flow(1, 2, 200'000, 290'000, 1'000'000, 80'000));
  std::vector<flow_correlation> c(4);
  for (std::size_t i = 0; i < 4; ++i) {
    c[i].flow = i;
    c[i].slowdown = r.flows[i].slowdown();
  }
  attribution_options o;
  o.percentile = 70;  // flows 0 and 2 (slowdown 2.5 each)
  const auto a = attribute_tail(r, c, o);
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(a[0].flow, 0u);
  // Destination h1: 1 MB (flow 1) + 0.25 MB (flow 2) = 1.25 MB at 100 Gb/s = 100 us, of
  // 120 us excess; the sender h2 carried nothing else meanwhile (flow 3 starts at its end).
  EXPECT_EQ(a[0].sharing_ns, 100'000);
  EXPECT_EQ(a[0].unexplained_ns, 20'000);
  EXPECT_EQ(a[0].pause_ns + a[0].queueing_ns + a[0].retransmission_ns + a[0].sharing_ns + a[0].unexplained_ns,
            a[0].excess_ns);
  // Flow 2 (150..350 us) shared its destination with flow 0's last 50 us: 0.25 MB = 20 us.
  ASSERT_EQ(a[1].flow, 2u);
  EXPECT_EQ(a[1].sharing_ns, 20'000);
  EXPECT_EQ(a[1].unexplained_ns, 100'000);
}

TEST(storms, a_port_paused_longer_than_the_threshold) {
  const std::vector<pause_interval> p = {
      pause(0, 1, 3, 0, 100), pause(0, 1, 3, 100, 250, pause_source::counter),  // touching: 0..250
      pause(0, 2, 3, 0, 100), pause(0, 2, 3, 150, 250),                         // a gap: two pauses of 100
      pause(0, 3, 3, 0, 200),                                                   // exactly the threshold: not longer
  };
  storm_options o;
  o.threshold_ns = 200;
  auto s = detect_storms(p, o);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].port, (pause_index::key{0, 1, 3}));
  EXPECT_EQ(s[0].end_ns, 250);
  EXPECT_EQ(s[0].sources, (std::vector<pause_source>{pause_source::model, pause_source::counter}));
  o.merge_gap_ns = 50;
  s = detect_storms(p, o);
  EXPECT_EQ(s.size(), 2u) << "a gap within merge_gap_ns joins port 2's pauses";
}

TEST(pause_summary, per_port_by_source) {
  const std::vector<pause_interval> p = {pause(0, 1, 3, 0, 100, pause_source::capture),
                                         pause(0, 1, 3, 50, 150, pause_source::counter), pause(1, 0, 3, 0, 10)};
  const auto s = summarize_pauses(p);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].port, (pause_index::key{0, 1, 3}));
  EXPECT_EQ(s[0].intervals, 2u);
  EXPECT_EQ(s[0].paused_ns, 150);
  EXPECT_EQ(s[0].longest_ns, 150);
  EXPECT_EQ(s[0].by_source_ns[0], 100);
  EXPECT_EQ(s[0].by_source_ns[1], 100);
  EXPECT_EQ(s[0].by_source_ns[2], 0);
}

}  // namespace
}  // namespace rocelab::experiments

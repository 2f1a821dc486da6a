#include "rocelab/experiments/analysis/sim_to_real.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rocelab/experiments/calibration/calibration.hpp"
#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/traffic/message_list.hpp"

namespace rocelab::experiments {
namespace {

// An 8-to-1 incast of 256 KiB flows at 100 Gb/s on one switch with a small buffer, so
// PFC pauses the senders when they start together.
experiment_spec incast_spec() {
  experiment_spec s;
  s.name = "sim-to-real";
  s.topology.hosts = 9;
  s.topology.link_gbps = 100;
  s.sw.buffer_bytes = 1024 * 1024;
  s.sw.ecn.enabled = false;
  s.nic.dcqcn_enabled = false;
  s.workload.incast.enabled = true;
  s.workload.incast.senders = 8;
  s.workload.incast.flow_bytes = 256 * 1024;
  s.twin.stop_ns = 100'000'000;
  return s;
}

run_summary summary_of(const run_records& r) { return summarize({&r}, {1}); }

// The spec's incast with each sender starting `gap_ns` after the one before: what a lab
// whose senders are not started together measures.
run_records staggered_run(const experiment_spec& spec, std::int64_t gap_ns) {
  std::vector<fabric::twin::message> messages;
  for (std::uint32_t s = 1; s <= 8; ++s) {
    fabric::twin::message m;
    m.src = s;
    m.dst = 0;
    m.bytes = 256 * 1024;
    m.start_ns = 5'000 + static_cast<std::int64_t>(s - 1) * gap_ns;
    m.kind = workload_kind::incast;
    messages.push_back(m);
  }
  auto config = to_twin_config(spec, 1);
  EXPECT_TRUE(config.ok());
  traffic::message_list_workload load(std::move(messages));
  auto r = fabric::twin::run_twin(*config, load);
  EXPECT_TRUE(r.ok()) << r.error().message();
  return *r;
}

TEST(sim_to_real, replay_keeps_hosts_sizes_kinds_and_priorities_and_starts_the_first_flow_at_zero) {
  run_records r;
  r.flows.resize(3);
  r.flows[0] = {.src = 1, .dst = 0, .priority = 3, .kind = workload_kind::incast, .bytes = 4096, .start_ns = 7'000};
  r.flows[1] = {.src = 2, .dst = 5, .priority = 3, .kind = workload_kind::background, .bytes = 100, .start_ns = 5'000};
  r.flows[2] = {.src = 3, .dst = 0, .priority = 1, .kind = workload_kind::other, .bytes = 9, .start_ns = -4};
  const auto m = replay_messages(r);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].start_ns, 7'000);  // the earliest start is clamped to 0 (the -4)
  EXPECT_EQ(m[1].start_ns, 5'000);
  EXPECT_EQ(m[2].start_ns, 0);
  EXPECT_EQ(m[1].src, 2u);
  EXPECT_EQ(m[1].dst, 5u);
  EXPECT_EQ(m[1].bytes, 100u);
  EXPECT_EQ(m[1].kind, workload_kind::background);
  EXPECT_EQ(m[0].priority, 3);
  EXPECT_EQ(m[2].priority, 1);
  EXPECT_EQ(m[2].tag, 2u);
}

TEST(sim_to_real, the_replayed_prediction_matches_a_staggered_run_that_the_spec_alone_mispredicts) {
  const experiment_spec spec = incast_spec();
  const run_records measured = staggered_run(spec, 30'000);
  ASSERT_EQ(measured.flows.size(), 8u);

  // From the spec alone every sender starts at once: a different experiment.
  auto from_spec = run_experiment(spec);
  ASSERT_TRUE(from_spec.ok()) << from_spec.error().message();
  const auto naive = compare_sim_to_real(summary_of(from_spec->repeats[0]), summary_of(measured));
  EXPECT_FALSE(naive.within);
  ASSERT_FALSE(naive.explanation.empty());
  EXPECT_NE(naive.explanation[0].find("differs by"), std::string::npos) << naive.explanation[0];

  auto replayed = predict_measured_run(spec, measured, 1);
  ASSERT_TRUE(replayed.ok()) << replayed.error().message();
  const auto c = compare_sim_to_real(summary_of(*replayed), summary_of(measured));
  EXPECT_TRUE(c.within);
  ASSERT_EQ(c.cells.size(), 3u);
  for (const auto& cell : c.cells) EXPECT_LE(std::abs(cell.difference), 0.01) << cell.metric;
  EXPECT_TRUE(c.explanation.empty());
}

TEST(sim_to_real, a_calibrated_spec_predicts_with_the_labs_timing) {
  // One 1000-byte WRITE from h2 to h1, measured on a lab whose NICs take 400 ns to send
  // and 600 ns to answer (or to take up an ACK) and whose switch forwards in 250 ns: the
  // twin's replay of it through the spec's calibration is the uncalibrated one plus 400 +
  // 250 + 600 + 250, and 600 more for the sender's NIC to take up the ACK.
  experiment_spec spec = incast_spec();
  run_records measured;
  measured.flows.push_back({.src = 1, .dst = 0, .priority = 3, .kind = workload_kind::incast, .bytes = 1000, .start_ns = 0});
  auto plain = predict_measured_run(spec, measured, 1);
  calibration c;
  c.lab = "lab";
  c.taken_at = "2026-11-29T04:00:00Z";
  c.link_gbps = 100;
  for (std::uint32_t h = 0; h < spec.topology.hosts; ++h)
    c.hosts.push_back({"h" + std::to_string(h + 1), fabric::delay_quantiles::constant(400),
                       fabric::delay_quantiles::constant(600), 0});
  c.ports.push_back({5, fabric::delay_quantiles::constant(250)});
  spec.twin.calibration = "# lab.yaml\n" + calibration_yaml(c);
  auto calibrated = predict_measured_run(spec, measured, 1);
  ASSERT_TRUE(plain.ok() && calibrated.ok()) << (plain.ok() ? calibrated.error().message() : plain.error().message());
  EXPECT_EQ(calibrated->flows.at(0).fct_ns, plain->flows.at(0).fct_ns + 400 + 250 + 600 + 250 + 600);
  EXPECT_EQ(calibrated->flows.at(0).ideal_fct_ns, plain->flows.at(0).ideal_fct_ns);
}

TEST(sim_to_real, a_measured_flow_on_a_host_the_spec_lacks_is_an_error_naming_it) {
  run_records r;
  r.flows.push_back({.src = 12, .dst = 0, .bytes = 10});
  auto p = predict_measured_run(incast_spec(), r, 1);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message().find("host 12"), std::string::npos) << p.error().message();
}

struct comparison_case {
  const char* name;
  std::int64_t predicted_p99, measured_p99;
  std::int64_t predicted_paused, measured_paused;
  std::uint64_t predicted_retx, measured_retx;
  bool within;
  const char* explanation_has;  // "" when within
};

TEST(sim_to_real, comparison_flags_cells_beyond_the_tolerance_and_names_the_terms_that_differ) {
  const comparison_case cases[] = {
      {"equal", 1'000'000, 1'000'000, 5'000'000, 5'000'000, 0, 0, true, ""},
      {"fourteen_percent_is_within", 1'000'000, 1'140'000, 5'000'000, 5'000'000, 0, 0, true, ""},
      {"retransmissions_explain_a_slow_tail", 1'000'000, 1'400'000, 5'000'000, 5'000'000, 0, 47, false,
       "retransmissions 0 (twin) against 47 (measured)"},
      {"pause_time_differs", 1'000'000, 1'000'000, 5'000'000, 9'000'000, 0, 0, false, "paused time 5.00 ms"},
      {"tiny_pauses_are_noise", 1'000'000, 1'000'000, 2'000, 40'000, 0, 0, true, ""},
      {"no_term_differs", 1'000'000, 2'000'000, 5'000'000, 5'000'000, 3, 3, false, "does not model"},
  };
  for (const auto& k : cases) {
    run_summary p, m;
    p.all.fct_p50_ns = m.all.fct_p50_ns = 500'000;
    p.all.fct_p99_ns = k.predicted_p99;
    m.all.fct_p99_ns = k.measured_p99;
    p.paused_ns = k.predicted_paused;
    m.paused_ns = k.measured_paused;
    p.retransmits = k.predicted_retx;
    m.retransmits = k.measured_retx;
    const auto c = compare_sim_to_real(p, m);
    EXPECT_EQ(c.within, k.within) << k.name;
    if (k.within) {
      EXPECT_TRUE(c.explanation.empty()) << k.name;
    } else {
      ASSERT_FALSE(c.explanation.empty()) << k.name;
      EXPECT_NE(c.explanation[0].find(k.explanation_has), std::string::npos) << k.name << ": " << c.explanation[0];
    }
  }
}

// The lab's own run-to-run spread: a difference beyond 15% but within the lab's 95% CI
// is within, and the cell says it was judged by the CI; a class that differs is flagged
// even when the pool of all flows agrees.
TEST(sim_to_real, a_cell_is_judged_by_the_labs_ci_where_it_is_wider_and_every_class_counts) {
  const auto summary = [](std::int64_t p99, std::int64_t victim_p99) {
    run_summary s;
    s.all.fct_p50_ns = 1'000'000;
    s.all.fct_p99_ns = p99;
    s.all.completed = s.all.flows = 10;
    s.by_kind["incast"] = {8, 8, 2'000'000, p99, p99, 1, 1};
    s.by_kind["victim"] = {2, 2, 300'000, victim_p99, victim_p99, 1, 1};
    return s;
  };
  const run_summary predicted = summary(10'000'000, 400'000);
  // Three lab runs whose p99 spreads 7, 13 and 16 ms: mean 12, 95% CI +-11.3 ms (94%).
  const std::vector<run_summary> each{summary(7'000'000, 400'000), summary(13'000'000, 410'000),
                                      summary(16'000'000, 390'000)};
  const run_summary measured = summary(13'000'000, 400'000);
  const auto c = compare_sim_to_real(predicted, measured, 0.15, 100'000, each);
  ASSERT_EQ(c.cells.size(), 7u) << "all flows' p50, p99, paused time; then each class's p50 and p99";
  EXPECT_EQ(c.cells[1].metric, "FCT p99");
  EXPECT_EQ(c.cells[1].lab_runs, 3u);
  EXPECT_NEAR(c.cells[1].lab_ci, 0.94, 0.02);
  EXPECT_TRUE(c.cells[1].by_lab_ci);
  EXPECT_TRUE(c.cells[1].within) << "+30% lies inside the lab's own +-94%";
  EXPECT_EQ(c.cells[6].metric, "victim FCT p99");
  EXPECT_FALSE(c.cells[6].by_lab_ci) << "the victims' p99 barely moves between runs";
  EXPECT_TRUE(c.within);

  // The same difference with a lab that repeats itself is beyond.
  const std::vector<run_summary> steady{measured, measured, measured};
  const auto tight = compare_sim_to_real(predicted, measured, 0.15, 100'000, steady);
  EXPECT_FALSE(tight.cells[1].within);
  EXPECT_FALSE(tight.within);

  // Victims 50% slower on the lab: the pool of all flows agrees, the class does not.
  const run_summary slow_victims = summary(10'000'000, 600'000);
  const auto v = compare_sim_to_real(predicted, slow_victims);
  EXPECT_TRUE(v.cells[1].within);
  EXPECT_FALSE(v.cells[6].within);
  EXPECT_FALSE(v.within);
}

}  // namespace
}  // namespace rocelab::experiments

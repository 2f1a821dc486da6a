// Lab scaling keeps the dynamics it stands for (scaling_spec): the twin at 100 Gb/s with
// the mlx5 defaults and the twin at 0.5 Gb/s standing for 100 Gb/s (DCQCN dilated 200
// times, delays 200 times longer as the lab's are) give the same slowdowns, pause and CNP
// counts; and every backend computes one ideal FCT (fabric::twin::flow_ideal).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::experiments {
namespace {

// An 8-to-1 incast of 512 KiB per sender with ECN and DCQCN (the mlx5 defaults) and PFC,
// at `gbps` with `delay_ns` per link; `stands_for` > 0 scales the fabric.
experiment_spec incast(const std::string& gbps, const std::string& delay_ns, const std::string& stands_for) {
  const std::string text =
      "name: scaling\nbackend: twin\nseed: 1\nrepeats: 3\n"
      "topology: {type: single_switch, hosts: 9, link_gbps: " + gbps + ", link_delay_ns: " + delay_ns + "}\n"
      "switch:\n  buffer_bytes: 2MiB\n  pfc: {enabled: true, priorities: [3]}\n"
      "  ecn: {enabled: true, queues: [3], kmin_bytes: 40KiB, kmax_bytes: 160KiB, pmax: 0.2}\n"
      "nic: {mtu_bytes: 4096, data_priority: 3, dcqcn: {enabled: true}}\n"
      "workload:\n  incast: {receiver: 0, senders: 8, flow_bytes: 512KiB, start_jitter_ns: 0}\n"
      "twin: {stop_ns: 100s}\n" +
      (stands_for.empty() ? std::string() : "scaling: {hardware_gbps: " + stands_for + "}\n");
  auto spec = load_spec(text, "scaling.yaml");
  EXPECT_TRUE(spec.ok()) << spec.error().message();
  return *spec;
}

run_summary run(const experiment_spec& spec) {
  auto ran = run_experiment(spec);
  EXPECT_TRUE(ran.ok()) << ran.error().message();
  std::vector<const run_records*> runs;
  for (const auto& r : ran->repeats) runs.push_back(&r);
  return summarize(runs, ran->seeds);
}

double relative(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-12); }

TEST(lab_scaling, the_twin_at_half_a_gigabit_standing_for_100_has_the_100_gbps_slowdowns_within_5_percent) {
  const run_summary hw = run(incast("100", "1000", ""));
  const run_summary lab = run(incast("0.5", "200000", "100"));
  ASSERT_EQ(hw.all.completed, 24u);
  ASSERT_EQ(lab.all.completed, 24u);
  std::cout << "100 Gb/s: slowdown p50 " << hw.all.slowdown_p50 << " p99 " << hw.all.slowdown_p99 << ", " << hw.cnp
            << " CNPs, " << hw.pause_frames << " pause frames; 0.5 Gb/s standing for 100: " << lab.all.slowdown_p50
            << " " << lab.all.slowdown_p99 << ", " << lab.cnp << ", " << lab.pause_frames << "\n";
  // DCQCN acted on both: a run where it did nothing would match trivially.
  EXPECT_GT(hw.cnp, 0u);
  EXPECT_LT(relative(lab.all.slowdown_p50, hw.all.slowdown_p50), 0.05)
      << lab.all.slowdown_p50 << " against " << hw.all.slowdown_p50;
  EXPECT_LT(relative(lab.all.slowdown_p99, hw.all.slowdown_p99), 0.05)
      << lab.all.slowdown_p99 << " against " << hw.all.slowdown_p99;
  // The same dynamics, dilated: as many CNPs and pause frames, 200 times the paused time.
  EXPECT_LT(relative(static_cast<double>(lab.cnp), static_cast<double>(hw.cnp)), 0.05) << lab.cnp << " " << hw.cnp;
  EXPECT_LT(relative(static_cast<double>(lab.pause_frames), static_cast<double>(hw.pause_frames)), 0.05)
      << lab.pause_frames << " " << hw.pause_frames;
  EXPECT_LT(relative(static_cast<double>(lab.paused_ns), 200.0 * static_cast<double>(hw.paused_ns)), 0.05)
      << lab.paused_ns << " against 200 x " << hw.paused_ns;
  EXPECT_LT(relative(static_cast<double>(lab.all.fct_p99_ns), 200.0 * static_cast<double>(hw.all.fct_p99_ns)), 0.05);
}

// What the scaling replaced: the same 0.5 Gb/s fabric with the firmware's times undilated
// is not the 100 Gb/s fabric (its DCQCN reacts 200 times too fast for its links).
TEST(lab_scaling, without_the_dilation_the_slow_fabric_is_not_the_fast_one) {
  const run_summary hw = run(incast("100", "1000", ""));
  const run_summary undilated = run(incast("0.5", "200000", ""));
  std::cout << "undilated at 0.5 Gb/s: slowdown p99 " << undilated.all.slowdown_p99 << ", " << undilated.cnp
            << " CNPs; 100 Gb/s: " << hw.all.slowdown_p99 << ", " << hw.cnp << "\n";
  EXPECT_GT(relative(undilated.all.slowdown_p99, hw.all.slowdown_p99), 0.05)
      << undilated.all.slowdown_p99 << " against " << hw.all.slowdown_p99;
}

TEST(lab_scaling, hardware_refuses_it_and_it_never_runs_faster_than_it_stands_for) {
  experiment_spec lab = incast("0.5", "200000", "100");
  EXPECT_DOUBLE_EQ(time_scale(lab), 200);
  lab.backend = "lab";
  const status st = validate(lab);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("scaling.hardware_gbps"), std::string::npos) << st.message();
  experiment_spec faster = incast("0.5", "200000", "0.25");
  EXPECT_NE(validate(faster).message().find("below topology.link_gbps"), std::string::npos);
}

// One ideal FCT: what the twin records for each flow is ideal_fct_of(spec), the function
// the virtual and hardware labs record for theirs, on a leaf-spine where paths differ.
TEST(lab_scaling, every_backend_records_the_twins_ideal_fct_for_the_same_flow) {
  auto spec = load_spec(
      "name: ideal\nbackend: twin\nseed: 3\n"
      "topology: {type: leaf_spine, hosts: 8, leaves: 2, spines: 2, link_gbps: 25, link_delay_ns: 700}\n"
      "fabric: {switch_latency_ns: 400}\n"
      "nic: {mtu_bytes: 1024}\n"
      "workload:\n  background: {cdf: websearch, load: 0.3, duration_ns: 2ms}\n",
      "ideal.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  auto ran = run_experiment(*spec);
  ASSERT_TRUE(ran.ok()) << ran.error().message();
  const auto ideal = ideal_fct_of(*spec);
  std::size_t crossing = 0;
  ASSERT_FALSE(ran->repeats[0].flows.empty());
  for (const flow_record& f : ran->repeats[0].flows) {
    EXPECT_EQ(f.ideal_fct_ns, ideal(f.src, f.dst, f.bytes)) << f.src << " -> " << f.dst << ", " << f.bytes << " B";
    if (f.src / 4 != f.dst / 4) ++crossing;
  }
  EXPECT_GT(crossing, 0u) << "flows through the spines";
}

}  // namespace
}  // namespace rocelab::experiments

#pragma once
// Sim-to-real: the twin's prediction of a measured run, and the comparison of the two.
//
// A prediction made from the spec alone starts every sender at its scheduled instant. A
// lab does not: its senders start when their processes and connections are ready, and
// an 8-to-1 incast whose senders start tens of milliseconds apart is a different
// experiment from one whose senders start together. So the prediction of a measured run
// replays that run's own flows on the twin: the same hosts, sizes, kinds and priorities,
// each posted at its measured start (shifted so that the first starts at 0), on the
// fabric the spec describes with the spec's DCQCN knobs (the lab-scaled ones where the
// spec is the virtual lab's). What is then left between the two is the fabric, not the
// schedule.
//
// The comparison puts p50/p99 FCT and pause time side by side, each with its relative
// difference and whether it is within the tolerance (15% by default). Where a cell is not,
// the explanation names the terms that differ most between the two runs (pause time and
// frames, CE marks, CNPs, retransmissions, drops): where to look, not a proof.
//
// Pure apart from running the twin (no I/O).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/fabric/twin/twin.hpp"

namespace rocelab::experiments {

// The measured run's flows as twin messages, at their measured start times (the first at
// 0), in the order of the records. Flows with a negative start are placed at 0.
[[nodiscard]] std::vector<fabric::twin::message> replay_messages(const run_records& measured);

// Runs the spec's fabric on the twin with the measured run's flows (replay_messages) and
// `seed` for the fabric's own randomness (ECMP, ECN marking), with the flows' transmit
// timelines (flow_timeline.hpp; at the spec's twin.flow_timeline_interval_ns, else the
// virtual lab's default bin). Errors: the spec's twin config, a flow naming a host the
// spec does not have.
[[nodiscard]] result<run_records> predict_measured_run(const experiment_spec& spec, const run_records& measured,
                                                       std::uint64_t seed);

// The prediction of every repeat of a measured experiment, repeat i replayed with seeds[i].
[[nodiscard]] result<std::vector<run_records>> predict_measured_records(const experiment_spec& spec,
                                                                       const std::vector<run_records>& measured,
                                                                       const std::vector<std::uint64_t>& seeds);
// The same, pooled as summarize() pools the measured repeats.
[[nodiscard]] result<run_summary> predict_measured_runs(const experiment_spec& spec,
                                                        const std::vector<run_records>& measured,
                                                        const std::vector<std::uint64_t>& seeds);

// How the prediction was made, for tables and reports.
inline constexpr const char* replay_prediction_method = "the twin replaying the measured flows at their measured start times";

struct sim_to_real_cell {
  std::string metric;  // "FCT p50", "FCT p99", "paused time", per class "incast FCT p99", ...
  double predicted = 0, measured = 0;
  double difference = 0;  // (measured - predicted) / predicted; 0 when both are 0
  // The lab's own run-to-run 95% CI of this metric (Student's t over the measured runs
  // one by one), as half width over mean; 0 with fewer than 2 runs.
  double lab_ci = 0;
  std::size_t lab_runs = 0;
  // Judged by the lab's CI rather than the tolerance, because the lab's CI is wider: the
  // lab cannot tell apart values closer than that, so neither can a comparison with it.
  bool by_lab_ci = false;
  bool within = true;     // |difference| <= max(tolerance, lab_ci) (or both below the noise floor)
};

struct sim_to_real_comparison {
  double tolerance = 0.15;
  // FCT p50, FCT p99, paused time (ns); then FCT p50 and p99 of each traffic class both
  // sides completed flows of, when the run has more than one class.
  std::vector<sim_to_real_cell> cells;
  bool within = true;                   // every cell within
  // Empty when within; else one sentence per differing cell naming the terms that differ.
  std::vector<std::string> explanation;
};

// Pause times below `pause_floor_ns` on both sides count as equal (a few microseconds of
// pause in a run of hundreds of milliseconds is noise, not a disagreement).
// `measured_each`: the measured runs summarized one by one (pooled, they are `measured`),
// for each cell's lab CI; empty: every cell judged by the tolerance alone.
[[nodiscard]] sim_to_real_comparison compare_sim_to_real(const run_summary& predicted, const run_summary& measured,
                                                         double tolerance = 0.15,
                                                         std::int64_t pause_floor_ns = 100'000,
                                                         std::span<const run_summary> measured_each = {});

}  // namespace rocelab::experiments

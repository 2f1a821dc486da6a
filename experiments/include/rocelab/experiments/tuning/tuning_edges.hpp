#pragma once
// Ranges and their edges: a best value at the edge of its search range may cut off the
// optimum, so the sweep widens that range once, within what the hardware allows, and
// searches again; a best at a physical bound is that bound, not a reason to widen.
//
// Physical bounds (physical_range): an ECN threshold lies between one MTU (a queue below
// one frame marks every frame) and the switch buffer (a threshold the queue cannot reach
// never marks); Pmax is a probability in (0, 1]; a byte size, a duration or a count is at
// least 0. A user's range beyond a bound is kept as given; it is never widened further.
// Kmin and Kmax tuned without an at_least tie also bound each other: Kmax's range is not
// widened below Kmin's end, nor Kmin's above Kmax's start, so every proposal stays a valid
// WRED profile.
//
// Widening: the edge side moves out by half the range's width on the search scale (a
// factor sqrt(max / min) for log parameters), clamped to the physical bound. The second
// search adds extension_trials trials by the sweep's own method over the widened ranges
// (the Bayesian model sees every trial of both searches). A grid is never widened: its
// points, ends included, are the engineer's choice, and a best at an end is reported. The
// decision is a pure function of the first search's trials, so a resumed sweep widens
// exactly as the uninterrupted one.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/tuning/tuning.hpp"

namespace rocelab::experiments {

// The values `path` can physically take in this spec: {lowest, highest}, infinite where
// nothing bounds it.
[[nodiscard]] std::pair<double, double> physical_range(const experiment_spec& spec, std::string_view path);

// A best value at a physical bound: "switch.ecn.pmax at its physical bound 1 (Pmax <= 1)".
struct bound_note {
  std::string path;
  double bound = 0;
  std::string text;
};
// The applied values of `values` lying within `fraction` (search scale) of a range end that
// is at or beyond its physical bound.
[[nodiscard]] std::vector<bound_note> at_physical_bound(const experiment_spec& spec, const tuning_settings& settings,
                                                        std::span<const double> values, double fraction = 0.02);

// Trials the second search adds after a widening.
[[nodiscard]] std::uint32_t extension_trials(const tuning_settings& settings) noexcept;

// The settings of the second search when the best feasible trial among the first
// planned_trials(settings) lies at an edge that can be widened; nullopt when none can (no
// feasible trial, a grid, nothing at an edge, or every edge at its bound). The result has
// the widened ranges, `widened` notes and budget planned + extension_trials.
[[nodiscard]] std::optional<tuning_settings> widened_settings(const experiment_spec& spec,
                                                              const tuning_settings& settings,
                                                              const std::vector<trial>& trials);

// Each range widened to cover every value in `trials` (a sweep resumed with a larger
// budget after a widening proposes in the ranges its trials span).
[[nodiscard]] tuning_settings covering_settings(tuning_settings settings, const std::vector<trial>& trials);

struct edge_sweep {
  std::vector<trial> trials;
  tuning_settings settings;       // the final search's: widened ranges and notes when widened
  std::uint32_t planned = 0;      // trials the sweep means to have (both searches)
  bool interrupted = false;       // stopped before `planned` trials
};

// run_sweep, then the widening once (widened_settings) and the second search. The
// evaluator is made per settings, since a trial's values are applied in its settings'
// ranges. Errors as run_sweep's.
[[nodiscard]] result<edge_sweep> run_sweep_with_edges(
    const experiment_spec& spec, const tuning_settings& settings,
    const std::function<trial_evaluator(const tuning_settings&)>& make_evaluator, std::vector<trial> history,
    const sweep_hooks& hooks = {});

}  // namespace rocelab::experiments

#pragma once
// Tuning: searching switch and NIC settings (any spec path: switch.ecn.kmin_bytes,
// switch.pfc.xon_offset_bytes, nic.dcqcn.rpg_time_reset, ...) within bounds, for an
// objective (objective.hpp), by Bayesian optimisation, grid or random search.
//
// - Parameters live on the unit cube for the search: linear or log scaled (log for
//   thresholds that span decades), rounded when integer. `at_least` ties one parameter to
//   an earlier one (kmax_bytes at_least kmin_bytes): the applied value is raised to it, so
//   every proposal is a valid spec and the objective stays a function of the proposal.
// - bayes: a space-filling start (Latin hypercube, `initial_points`), then a Gaussian
//   process (gaussian_process.hpp) on the objective and one on each constraint margin;
//   the next point maximizes expected improvement over the best feasible trial times the
//   probability that every constraint holds (Gardner et al., "Bayesian Optimization with
//   Inequality Constraints", ICML 2014), found by multi-start search (random and
//   around the best trials, each refined by Nelder-Mead). Before any trial is feasible it
//   maximizes the probability of feasibility. Batches for parallel trials are proposed
//   with the "kriging believer" (each pick added as if observed at its predicted mean).
//   Trials at the same point (integer rounding) are averaged, the GP's noise scaled by
//   the count.
// - grid: the full factorial of evenly spaced values per axis (on the log scale where
//   asked), `grid_points` per parameter or as many as the budget allows.
// - random: uniform on the unit cube.
// Proposals depend only on the settings (seed), the trial index and the trials before it,
// never on timing, so a sweep run with any parallelism, or interrupted and resumed, makes
// the same proposals. No I/O; trials are evaluated by the caller's evaluator.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/experiments/tuning/objective.hpp"

namespace rocelab::experiments {

struct tuning_parameter {
  std::string path;  // a spec field (spec.hpp), e.g. switch.ecn.kmin_bytes
  double min = 0, max = 0;
  bool log = false;      // search log(value): for thresholds spanning decades
  bool integer = false;  // round (byte thresholds, microseconds of mlx5 knobs)
  std::string at_least;  // an earlier parameter's path: the applied value is at least its value
  std::uint32_t grid_points = 0;  // grid: values on this axis (0: from the budget)
};

enum class tuning_method : std::uint8_t { bayes, grid, random };

[[nodiscard]] const char* to_string(tuning_method m) noexcept;
[[nodiscard]] result<tuning_method> parse_tuning_method(std::string_view text);

struct tuning_settings {
  std::string name;  // the sweep's name: a sweep of the same spec and name resumes
  std::vector<tuning_parameter> parameters;
  objective_spec objective;
  tuning_method method = tuning_method::bayes;
  std::uint32_t budget = 30;       // trials
  std::uint32_t parallelism = 1;   // trials at once
  std::uint64_t seed = 1;          // proposals (not the runs: those use the spec's seed)
  std::uint32_t initial_points = 0;  // bayes: space-filling trials first (0: max(5, 2 d + 2))
  // Common random numbers: every trial and every baseline runs the same seeds (the spec's
  // seed .. seed + seeds - 1), so differences between configurations are not seed luck.
  // 0 until resolved: load_tuning sets max(default_search_seeds, the spec's repeats).
  std::uint32_t seeds = 0;
  // Ranges the sweep widened once because the first search's best lay at their edge
  // (tuning_edges.hpp), one note each: "switch.ecn.pmax widened to 0.001 .. 1".
  std::vector<std::string> widened;
};

// Seeds a trial runs when the tuning section does not say (tuning.seeds).
inline constexpr std::uint32_t default_search_seeds = 3;

[[nodiscard]] status validate(const tuning_settings& settings);

// Proposed values <-> unit cube; from_unit clamps and rounds integers.
[[nodiscard]] std::vector<double> to_unit(const tuning_settings& settings, std::span<const double> values);
[[nodiscard]] std::vector<double> from_unit(const tuning_settings& settings, std::span<const double> unit);
// The values a trial runs with: `at_least` ties resolved.
[[nodiscard]] std::vector<double> applied_values(const tuning_settings& settings, std::span<const double> values);
// The grid the grid method walks (at most `budget` points, at least 2 per axis when the
// budget allows), in lexicographic order of the parameters.
[[nodiscard]] std::vector<std::vector<double>> grid(const tuning_settings& settings, std::uint32_t budget);
// The trials a sweep runs: the grid's points for the grid method, else the budget.
[[nodiscard]] std::uint32_t planned_trials(const tuning_settings& settings);
[[nodiscard]] std::uint32_t initial_points(const tuning_settings& settings) noexcept;

struct trial {
  std::uint32_t index = 0;
  std::vector<double> values;  // proposed, in parameter order (applied_values for the run)
  bool evaluated = false;      // false: the run failed; `error` says why
  double objective = 0;
  bool feasible = false;
  std::vector<double> margins;  // constraint margins (objective.hpp), > 0 violated
  std::string violated;
  std::string error;
  std::string metrics_json;  // what the objective was scored from
  std::int64_t run_id = 0;   // in the run store, when stored
};

// What evaluating a trial produced beside its score: the runs' records and the resolved
// spec, for the caller to store.
struct trial_payload {
  std::string spec_yaml;
  std::map<std::string, std::string> applied;  // spec path -> value text as set
  std::vector<std::uint64_t> seeds;
  std::vector<run_records> repeats;
  std::map<std::string, std::string> placement;  // where it ran (trial_runs::placement)
  // The trial was stopped before it had an outcome (the sweep is being stopped): run_sweep
  // neither keeps nor reports it, nor any later trial of its batch, and ends there; a
  // resumed sweep proposes it again.
  bool abandoned = false;
};

// Runs one trial. Called from several threads at once (parallelism > 1); must be safe so.
using trial_evaluator = std::function<trial(std::uint32_t index, const std::vector<double>& values, trial_payload& payload)>;

// Proposals for trials [first, first + count), given the trials before `first`.
[[nodiscard]] result<std::vector<std::vector<double>>> propose(const tuning_settings& settings,
                                                               const std::vector<trial>& history, std::uint32_t first,
                                                               std::uint32_t count);

// The feasible trial with the lowest objective; nullptr when none is feasible.
[[nodiscard]] const trial* best_trial(const std::vector<trial>& trials) noexcept;

struct sweep_hooks {
  // After each trial, in index order, on the calling thread: store it, draw progress.
  // An error stops the sweep and is returned.
  std::function<status(trial&, trial_payload&)> on_trial;
  // Polled between batches: true stops the sweep (what ran is kept; resume later).
  const std::atomic<bool>* stop = nullptr;
};

// Runs the sweep to its budget, starting after `history` (the trials of an interrupted
// sweep, in index order), or until a trial is abandoned (trial_payload). Returns every
// trial kept, history included. Evaluator failures are
// trials with evaluated = false, not errors; errors are proposal failures and hook errors.
[[nodiscard]] result<std::vector<trial>> run_sweep(const tuning_settings& settings, const trial_evaluator& evaluate,
                                                   std::vector<trial> history, const sweep_hooks& hooks = {});

// Runs fn(i) for i in [0, n) on up to `jobs` threads (a pool for one batch); returns
// when all are done.
void parallel_for(std::uint32_t n, std::uint32_t jobs, const std::function<void(std::uint32_t)>& fn);

}  // namespace rocelab::experiments

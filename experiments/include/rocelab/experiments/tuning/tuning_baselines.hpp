#pragma once
// The runs behind a tuning's answer (tuning_answer.hpp): the baselines on the search
// seeds, the recommendation and the baselines again on fresh seeds, each run stored in
// the sweep when a store is given and reused from it when the sweep resumes.
//
// Seeds: the search runs each configuration with the same common seeds (seed .. seed +
// search_seed_count - 1, tuning_trials.hpp); the fresh seeds are seed + fresh_seed_offset + k, k < fresh_seeds, which
// no search run uses. Every (configuration, seed) is one run: stored with parameters
// "tuning.role" ("baseline pfc_only" on the search seeds, "confirm pfc_only" or "confirm
// trial 12" on the fresh ones) beside the spec paths it sets, so a resumed sweep finds
// its completed runs by role and seed and runs only what is missing.
//
// Runs go through `config_runner` (the twin in threads by default, `parallelism` at a
// time); the store is written on the calling thread.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"
#include "rocelab/experiments/run/backend.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/tuning/tuning.hpp"
#include "rocelab/experiments/tuning/tuning_answer.hpp"
#include "rocelab/experiments/tuning/tuning_decision.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::experiments {

inline constexpr std::uint64_t fresh_seed_offset = 1'000'000;

// One run of `spec` with `seed` (repeats 1). Called from several threads at once.
using config_runner = std::function<result<run_records>(const experiment_spec& spec, std::uint64_t seed)>;
// Runs on the backend of `backends` the spec names.
[[nodiscard]] config_runner local_config_runner(backend_registry backends = core_backends());

// A configuration evaluated over a set of seeds.
struct config_evaluation {
  std::string name;  // "pfc_only", "vendor_default", "trial 12"
  std::string baseline;  // the baseline's name; empty for a trial
  std::optional<std::uint32_t> trial_index;
  std::map<std::string, std::string> params;  // the spec paths the configuration sets -> value text
  std::vector<std::uint64_t> seeds;
  std::vector<run_summary> summaries;         // one per seed
  std::vector<double> objectives;             // one per seed (NaN when a seed could not be scored)
  std::vector<std::int64_t> run_ids;          // one per seed, 0 when not stored
  trial scored;  // over all seeds: objective (mean), feasibility, metrics_json (pooled summary)
};

// One distinct configuration of the trade-off: trials with the same applied values, or the
// same result on both axes, are one point (a baseline among them names it).
struct pareto_point {
  std::string label;  // "trial 12", "pfc_only"
  std::vector<std::string> same;  // the other trials or baselines this point stands for
  std::string baseline;
  std::optional<std::uint32_t> trial_index;
  std::map<std::string, std::string> params;
  double x = 0, y = 0;
  bool on_front = false;
};

struct tuning_answer {
  std::vector<config_evaluation> baselines;  // search seeds, in baseline_configs order
  // The answer by the rule (tuning_decision.hpp): the contender when it beat every
  // baseline on the fresh seeds, else a baseline.
  tuning_decision decision;
  std::string best_baseline;                 // empty: the tuned contender is the answer
  std::optional<std::uint32_t> best_trial;   // set when the contender is the answer
  std::string best_label;
  double best_objective = 0;                 // on the search seeds
  std::map<std::string, std::string> best_params;
  std::vector<double> best_values;  // the trial's proposed values; empty for a baseline
  std::string best_metrics_json;
  std::vector<std::string> best_at_edge;   // at an edge of its (final) range
  std::vector<std::string> best_at_bound;  // at a physical bound (tuning_edges.hpp), in words
  std::vector<std::string> widened;        // ranges the sweep widened once (tuning_settings::widened)
  // The best feasible trial on the search seeds, whether or not it won on fresh seeds.
  std::optional<std::uint32_t> contender_trial;
  double contender_objective = 0;  // on the search seeds
  std::map<std::string, std::string> contender_params;
  std::vector<double> contender_values;
  config_evaluation contender_fresh;
  // Fresh seeds: the answer and every baseline.
  std::vector<std::uint64_t> fresh_seeds;
  config_evaluation best_fresh;
  std::vector<config_evaluation> baselines_fresh;
  confidence_interval best_ci;
  std::map<std::string, confidence_interval> baseline_ci;      // by baseline name
  std::map<std::string, confidence_interval> vs_baseline_ci;   // answer - baseline, paired per seed
  tradeoff_axes axes;
  // Every distinct configuration evaluated (trials and baselines; baselines always);
  // on_front marks the front.
  std::vector<pareto_point> pareto;
};

struct answer_options {
  std::uint32_t fresh_seeds = 5;
  std::uint32_t parallelism = 1;
  store::run_store* db = nullptr;  // with `sweep`: store and reuse the runs
  std::int64_t sweep = 0;
  std::function<void(const std::string&)> log;
};

// Baselines on the search seeds, the contender and the baselines on fresh seeds, the
// decision, the front. `spec` is the experiment as the sweep ran it (its physical bounds
// name a best at a bound). Errors: a baseline that cannot be set or run, store failures,
// no configuration feasible on the fresh seeds.
[[nodiscard]] result<tuning_answer> answer_tuning(const experiment_spec& spec, const tuning_settings& settings,
                                                  const std::vector<trial>& trials, const answer_options& options,
                                                  const config_runner& run = local_config_runner());

// The answer as JSON: {"baselines": {...}, "best": {...}, "pareto": [...], "pareto_axes": {...}}
// (an object whose members the caller merges into its output).
[[nodiscard]] std::string answer_json_text(const tuning_settings& settings, const tuning_answer& answer);

// The outcome in one sentence, without a line break: which configuration to run and why
// ("Run the tuned configuration trial 3 (kmin_bytes=6065 ...): it beats PFC only and the
// vendor defaults on 5 fresh seeds."). The first line of answer_text; `rocelab tune` prints
// it and the Python TuningResult.answer holds it, both from here.
[[nodiscard]] std::string answer_sentence(const tuning_settings& settings, const tuning_answer& answer);

// What the exports of a tuning hold, as words that follow "are" or "The answer ...: ":
// "trial 3, the tuned configuration that beat both baselines on fresh seeds" or "the
// baseline pfc_only (no tuned configuration beat every baseline on fresh seeds)".
[[nodiscard]] std::string answer_choice_words(const tuning_answer& answer);

// The evidence behind answer_sentence, one line each (each ending in a line break): against
// each baseline the paired difference with its CI and the gain per traffic class, the
// objective's intervals, widened ranges, physical bounds and edges.
[[nodiscard]] std::string answer_evidence_text(const tuning_answer& answer);

// The verdict for people: answer_sentence on its own line, then answer_evidence_text.
[[nodiscard]] std::string answer_text(const tuning_settings& settings, const tuning_answer& answer);

}  // namespace rocelab::experiments

// The runs behind a tuning's answer, on the twin with a small incast: baselines beside
// the trials on the search seeds, the recommendation never worse than a baseline (PFC
// only wins and says so when the objective favours it), the confirmation on fresh seeds
// with its interval, the runs kept in a real store and reused when the sweep resumes.
#include "rocelab/experiments/tuning/tuning_baselines.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "rocelab/experiments/tuning/sweep.hpp"
#include "rocelab/experiments/tuning/tuning_report.hpp"
#include "rocelab/experiments/tuning/tuning_spec.hpp"
#include "rocelab/experiments/tuning/tuning_trials.hpp"

namespace rocelab::experiments {
namespace {

// A 4-to-1 incast on a shallow buffer: PFC pauses without marking, marking cuts rates.
std::string small_incast(const std::string& objective) {
  return R"(
name: small-incast
backend: twin
seed: 3
repeats: 1
topology: {type: single_switch, hosts: 5, link_gbps: 100, link_delay_ns: 1us}
switch:
  buffer_bytes: 512KiB
  cell_bytes: 256
  dynamic_th: 0
  pfc: {enabled: true, priorities: [3]}
  ecn: {enabled: true, queues: [3], kmin_bytes: 100KB, kmax_bytes: 400KB, pmax: 0.2}
nic: {mtu_bytes: 1024, data_priority: 3, dcqcn: {enabled: true}}
workload:
  incast: {receiver: 0, senders: 4, flow_bytes: 64KiB, start_jitter_ns: 2us}
twin: {stop_ns: 20ms}
tuning:
  method: random
  budget: 4
  parallelism: 2
  seed: 5
  parameters:
    - {path: switch.ecn.kmin_bytes, min: 5KB, max: 200KB, log: true}
    - {path: switch.ecn.kmax_bytes, min: 200KB, max: 2MB, log: true}
    - {path: switch.ecn.pmax, min: 0.01, max: 1, log: true}
  objective:
)" + objective + R"(
  constraints:
    - {metric: drops, max: 0}
)";
}

struct loaded {
  experiment_spec spec;
  tuning_settings settings;
};

loaded load(const std::string& text) {
  auto spec = load_spec(text, "small-incast.yaml");
  EXPECT_TRUE(spec.ok()) << spec.error().message();
  auto settings = load_tuning(text, "small-incast.yaml", *spec);
  EXPECT_TRUE(settings.ok()) << settings.error().message();
  return {*spec, *settings};
}

std::vector<trial> sweep(const loaded& l) {
  auto trials = run_sweep(l.settings, spec_evaluator(l.spec, l.settings), {});
  EXPECT_TRUE(trials.ok()) << trials.error().message();
  return *trials;
}

TEST(tuning_baselines, the_answer_has_baselines_a_best_no_worse_and_fresh_seeds) {
  const loaded l = load(small_incast("    - {metric: incast.slowdown_p99, weight: 1}\n    - {metric: paused_us, weight: 0.01}"));
  const auto trials = sweep(l);
  answer_options o;
  o.fresh_seeds = 5;
  o.parallelism = 2;
  auto a = answer_tuning(l.spec, l.settings, trials, o);
  ASSERT_TRUE(a.ok()) << a.error().message();
  ASSERT_EQ(a->baselines.size(), 2u);
  EXPECT_EQ(a->baselines[0].baseline, "pfc_only");
  EXPECT_EQ(a->baselines[1].baseline, "vendor_default");
  // The search's common seeds: tuning.seeds defaults to 3, and every trial ran them too.
  EXPECT_EQ(a->baselines[0].seeds, (std::vector<std::uint64_t>{3, 4, 5}));
  EXPECT_EQ(l.settings.seeds, 3u);
  EXPECT_EQ(a->baselines[0].summaries.at(0).all.completed, 4u);
  EXPECT_EQ(a->baselines[0].summaries.at(0).ce_marked, 0u);        // ECN off: nothing marked
  EXPECT_GT(a->baselines[0].summaries.at(0).pause_frames, 0u);     // PFC did the work
  EXPECT_GT(a->baselines[1].summaries.at(0).all.completed, 0u);
  // The contender is the best feasible trial on the common seeds; it is the answer only
  // when it beat both baselines on the fresh seeds.
  ASSERT_TRUE(a->contender_trial.has_value());
  for (const auto& t : trials) {
    if (t.evaluated && t.feasible) {
      EXPECT_GE(t.objective, trials[*a->contender_trial].objective) << "trial " << t.index;
    }
  }
  ASSERT_EQ(a->decision.versus.size(), 2u);
  if (a->decision.answer == "tuned") {
    EXPECT_EQ(a->best_trial, a->contender_trial);
    for (const auto& v : a->decision.versus) EXPECT_EQ(v.outcome, paired_outcome::better) << v.baseline;
  } else {
    EXPECT_EQ(a->best_baseline, a->decision.answer);
    EXPECT_FALSE(a->best_trial);
  }
  // Fresh seeds: none of the search's, the same for the best and every baseline.
  EXPECT_EQ(a->fresh_seeds.size(), 5u);
  for (std::uint64_t s : a->fresh_seeds) EXPECT_NE(s, 3u);
  EXPECT_EQ(a->best_fresh.seeds, a->fresh_seeds);
  EXPECT_EQ(a->contender_fresh.seeds, a->fresh_seeds);
  ASSERT_EQ(a->baselines_fresh.size(), 2u);
  for (const auto& b : a->baselines_fresh) EXPECT_EQ(b.seeds, a->fresh_seeds);
  EXPECT_EQ(a->best_ci.n, 5u);
  EXPECT_DOUBLE_EQ(a->best_ci.mean, mean_ci95(a->best_fresh.objectives).mean);
  EXPECT_LE(a->best_ci.low, a->best_ci.mean);
  // The front covers distinct configurations, baselines always; the JSON carries the
  // shape the CLI prints.
  EXPECT_GE(a->pareto.size(), 2u);
  EXPECT_LE(a->pareto.size(), trials.size() + 2);
  EXPECT_EQ(a->pareto[0].label, "pfc_only");
  EXPECT_EQ(a->pareto[1].label, "vendor_default");
  std::size_t represented = 0;
  for (const auto& p : a->pareto) represented += 1 + p.same.size();
  EXPECT_EQ(represented, trials.size() + 2);
  EXPECT_EQ(a->axes.x, "incast.slowdown_p99");
  const auto j = nlohmann::json::parse(answer_json_text(l.settings, *a));
  for (const char* b : {"pfc_only", "vendor_default"}) {
    ASSERT_TRUE(j["baselines"].contains(b)) << b;
    EXPECT_TRUE(j["baselines"][b].contains("params"));
    EXPECT_TRUE(j["baselines"][b]["summary"].is_object());
    EXPECT_TRUE(j["baselines"][b]["objective"].is_number());
  }
  for (const char* k : {"objective", "ci", "at_edge", "at_bound", "widened", "params", "summary"})
    EXPECT_TRUE(j["best"].contains(k)) << k;
  for (const char* k : {"answer", "rule", "contender", "versus", "text"}) EXPECT_TRUE(j["decision"].contains(k)) << k;
  EXPECT_EQ(j["decision"]["versus"]["pfc_only"]["objective"]["difference"]["n"], 5);
  EXPECT_EQ(j["best"]["ci"]["n"], 5);
  EXPECT_TRUE(j["pareto"].is_array());
  EXPECT_FALSE(j["pareto"].empty());
  for (const auto& p : j["pareto"]) EXPECT_TRUE(p.contains("params") && p.contains("paused_us") && p.contains("trial"));
  // The page shows the scatter and the verdict.
  const std::string html = tuning_report_html("small-incast", l.settings, *a);
  EXPECT_NE(html.find("id=\"pareto\""), std::string::npos);
  EXPECT_NE(html.find("id=verdict"), std::string::npos);
  EXPECT_NE(html.find("vendor_default"), std::string::npos);
}

TEST(tuning_baselines, pfc_only_wins_when_the_objective_favours_it_and_the_answer_says_so) {
  // CE marks: PFC only marks nothing, every ECN configuration that marks is worse.
  const loaded l = load(small_incast("    - {metric: ce_marked, weight: 1}\n    - {metric: paused_us, weight: 0.001}"));
  const auto trials = sweep(l);
  answer_options o;
  o.fresh_seeds = 3;
  o.parallelism = 2;
  auto a = answer_tuning(l.spec, l.settings, trials, o);
  ASSERT_TRUE(a.ok()) << a.error().message();
  EXPECT_EQ(a->best_baseline, "pfc_only");
  EXPECT_FALSE(a->best_trial);
  EXPECT_EQ(a->best_params.at("switch.ecn.enabled"), "false");
  EXPECT_DOUBLE_EQ(a->best_objective, a->baselines[0].scored.objective);
  // The search's best ECN configuration did not beat PFC only on the fresh seeds.
  ASSERT_TRUE(a->contender_trial.has_value());
  ASSERT_EQ(a->decision.versus.size(), 2u);
  EXPECT_EQ(a->decision.versus[0].baseline, "pfc_only");
  EXPECT_NE(a->decision.versus[0].outcome, paired_outcome::better);
  const std::string text = answer_text(l.settings, *a);
  std::cout << text;
  EXPECT_EQ(text.rfind("PFC alone suffices here: keep ECN and DCQCN off (pfc_only)", 0), 0u) << text;
  EXPECT_NE(text.find("against pfc_only: objective"), std::string::npos) << text;
  const auto j = nlohmann::json::parse(answer_json_text(l.settings, *a));
  EXPECT_EQ(j["best"]["baseline"], "pfc_only");
  EXPECT_EQ(j["best"]["params"]["switch.ecn.enabled"], false);
  EXPECT_TRUE(j["best"]["at_edge"].empty());
  // The answer is compared with the other baseline only.
  EXPECT_EQ(a->vs_baseline_ci.count("pfc_only"), 0u);
  EXPECT_EQ(a->vs_baseline_ci.count("vendor_default"), 1u);
}

TEST(tuning_baselines, runs_are_stored_flagged_and_reused_by_a_resumed_sweep) {
  const auto dir = std::filesystem::temp_directory_path() / ("rlt-baselines-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const loaded l = load(small_incast("    - {metric: incast.slowdown_p99, weight: 1}\n    - {metric: paused_us, weight: 0.01}"));
  const auto trials = sweep(l);
  auto db = store::run_store::open((dir / "rocelab.db").string());
  ASSERT_TRUE(db.ok()) << db.error().message();
  auto opened = open_sweep(*db, l.spec, l.settings, std::nullopt);
  ASSERT_TRUE(opened.ok()) << opened.error().message();
  std::atomic<int> runs{0};
  const config_runner local = local_config_runner();
  config_runner counting = [&](const experiment_spec& s, std::uint64_t seed) {
    ++runs;
    return local(s, seed);
  };
  answer_options o;
  o.fresh_seeds = 2;
  o.parallelism = 2;
  o.db = &*db;
  o.sweep = opened->id;
  auto first = answer_tuning(l.spec, l.settings, trials, o, counting);
  ASSERT_TRUE(first.ok()) << first.error().message();
  const int made = runs.load();
  // 2 baselines on the 3 common search seeds, then 2 fresh seeds for them and the contender.
  EXPECT_EQ(made, 2 * 3 + 2 * (first->contender_trial ? 3 : 2));
  auto stored = db->runs();
  ASSERT_TRUE(stored.ok());
  int flagged = 0;
  for (const auto& r : *stored)
    if (r.sweep == opened->id && r.parameters.count("tuning.role")) {
      ++flagged;
      if (r.parameters.at("tuning.role") == "baseline pfc_only") {
        EXPECT_EQ(r.parameters.at("switch.ecn.enabled"), "false");
      }
    }
  EXPECT_EQ(flagged, made);
  auto again = answer_tuning(l.spec, l.settings, trials, o, counting);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_EQ(runs.load(), made);  // everything came from the store
  EXPECT_DOUBLE_EQ(again->best_objective, first->best_objective);
  EXPECT_DOUBLE_EQ(again->best_ci.mean, first->best_ci.mean);
  EXPECT_EQ(again->baselines[0].run_ids, first->baselines[0].run_ids);
  std::filesystem::remove_all(dir);
}

TEST(tuning_baselines, a_sweep_whose_trials_mostly_failed_runs_no_baseline_and_has_no_answer) {
  const loaded l = load(small_incast("    - {metric: incast.slowdown_p99, weight: 1}"));
  std::vector<trial> trials(4);
  for (std::size_t i = 0; i < trials.size(); ++i) {
    trials[i].index = static_cast<std::uint32_t>(i);
    trials[i].evaluated = i == 0;
    if (i > 0) trials[i].error = "lost 3 times (worker w1 lost: killed)";
  }
  trials[0].feasible = true;
  trials[0].objective = 1.0;
  std::atomic<int> runs{0};
  answer_options o;
  auto a = answer_tuning(l.spec, l.settings, trials, o, [&](const experiment_spec&, std::uint64_t) -> result<run_records> {
    ++runs;
    return status(error_code::internal, "not expected to run");
  });
  ASSERT_FALSE(a.ok()) << "answered from one trial of four";
  EXPECT_NE(a.error().message().find("3 of 4 trials failed"), std::string::npos) << a.error().message();
  EXPECT_NE(a.error().message().find("3x lost 3 times"), std::string::npos) << a.error().message();
  EXPECT_EQ(runs.load(), 0);
}

}  // namespace
}  // namespace rocelab::experiments

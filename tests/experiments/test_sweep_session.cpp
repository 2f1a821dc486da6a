// The sweep session on a real SQLite run store: the front ends' overrides resolved in one
// place, a sweep found again by its identity (and not when its ranges changed), every
// trial stored with no index gap even when one fails, each trial's run holding its
// seeds as repeats.
#include "rocelab/experiments/tuning/sweep_session.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>

#include "rocelab/experiments/tuning/tuning_spec.hpp"

namespace rocelab::experiments {
namespace {

const std::string example = std::string(ROCELAB_SOURCE_DIR) + "/examples/tune-incast.yaml";

tuning_parameter pmax_search() {
  tuning_parameter p;
  p.path = "switch.ecn.pmax";
  p.min = 0.01;
  p.max = 1;
  p.log = true;
  return p;
}

struct resolve_case {
  const char* name;
  sweep_request request;
  std::string section_name;  // the loaded settings' name before resolving
  std::uint32_t budget;
  tuning_method method;
  std::uint32_t parallelism;
  std::string sweep_name;
};

class resolve_settings_cases : public ::testing::TestWithParam<resolve_case> {};

TEST_P(resolve_settings_cases, the_request_replaces_what_it_names_and_keeps_the_rest) {
  const resolve_case& c = GetParam();
  tuning_settings loaded;
  loaded.name = c.section_name;
  loaded.parameters.push_back(pmax_search());
  loaded.objective.terms.push_back({"paused_us", 1});
  loaded.budget = 10;
  loaded.parallelism = 2;
  loaded.method = tuning_method::bayes;
  auto s = resolve_settings(loaded, c.request);
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_EQ(s->budget, c.budget);
  EXPECT_EQ(s->method, c.method);
  EXPECT_EQ(s->parallelism, c.parallelism);
  EXPECT_EQ(s->name, c.sweep_name);
}

INSTANTIATE_TEST_SUITE_P(
    cases, resolve_settings_cases,
    ::testing::Values(
        resolve_case{"nothing_asked_keeps_the_section", {}, "incast", 10, tuning_method::bayes, 2, "incast"},
        resolve_case{"budget_method_and_parallelism_asked", {12, "random", 4, "", ""}, "incast", 12,
                     tuning_method::random, 4, "incast"},
        resolve_case{"a_name_asked_wins", {0, "", 0, "mine", "stem"}, "incast", 10, tuning_method::bayes, 2, "mine"},
        resolve_case{"no_name_anywhere_takes_the_files_stem", {0, "", 0, "", "stem"}, "", 10, tuning_method::bayes, 2,
                     "stem"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(resolve_settings, refuses_an_unknown_method_and_invalid_settings) {
  tuning_settings loaded;
  loaded.parameters.push_back(pmax_search());
  loaded.objective.terms.push_back({"paused_us", 1});
  EXPECT_FALSE(resolve_settings(loaded, {0, "annealing", 0, "", "x"}).ok());
  loaded.parameters.clear();  // nothing to search
  EXPECT_FALSE(resolve_settings(loaded, {0, "", 0, "", "x"}).ok());
}

// Trials scored without running anything: trial 1 fails, the others pool two seeds.
trial_evaluator fake_evaluator() {
  return [](std::uint32_t index, const std::vector<double>& values, trial_payload& payload) {
    trial t;
    t.index = index;
    t.values = values;
    payload.spec_yaml = "name: fake\n";
    if (index == 1) {
      t.error = "the backend broke";
      return t;
    }
    payload.seeds = {2, 3};
    for (int i = 0; i < 2; ++i) {
      run_records r;
      r.hosts = {"h1", "h2"};
      flow_record f;
      f.dst = 1;
      f.bytes = 1000;
      f.end_ns = 10;
      f.fct_ns = 10;
      f.ideal_fct_ns = 5;
      r.flows.push_back(f);
      payload.repeats.push_back(std::move(r));
    }
    t.evaluated = true;
    t.feasible = true;
    t.objective = 1.0 + index;
    return t;
  };
}

class sweep_session_test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rlt-sweep-session-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto spec = load_spec_file(example);
    ASSERT_TRUE(spec.ok()) << spec.error().message();
    spec_ = *spec;
    auto loaded = load_tuning_file(example, spec_);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message();
    auto s = resolve_settings(*loaded, {4, "random", 1, "", "tune-incast"});
    ASSERT_TRUE(s.ok()) << s.error().message();
    settings_ = *s;
    auto db = store::run_store::open((dir_ / "rocelab.db").string());
    ASSERT_TRUE(db.ok()) << db.error().message();
    db_.emplace(std::move(*db));
  }
  void TearDown() override {
    db_.reset();
    std::filesystem::remove_all(dir_);
  }
  // Opens (or resumes) and runs the sweep to `settings`' budget; its id and trials.
  std::pair<std::int64_t, std::vector<trial>> sweep(const tuning_settings& settings,
                                                    std::vector<std::uint32_t>* ran = nullptr) {
    auto session = sweep_session::open(*db_, spec_, settings, std::nullopt);
    EXPECT_TRUE(session.ok()) << session.error().message();
    if (!session.ok()) return {};
    sweep_hooks hooks;
    hooks.on_trial = [&](trial& t, trial_payload&) {
      EXPECT_NE(t.run_id, 0) << "stored before the front end's hook sees it";
      if (ran) ran->push_back(t.index);
      return status::success();
    };
    auto swept = session->run([](const tuning_settings&) { return fake_evaluator(); }, hooks);
    EXPECT_TRUE(swept.ok()) << swept.error().message();
    if (!swept.ok()) return {};
    return {session->id(), swept->trials};
  }
  std::vector<std::uint32_t> stored_indexes(std::int64_t sweep) const {
    auto rows = db_->trials(sweep);
    EXPECT_TRUE(rows.ok());
    std::vector<std::uint32_t> out;
    if (rows.ok())
      for (const auto& r : *rows) out.push_back(r.index);
    return out;
  }

  std::filesystem::path dir_;
  experiment_spec spec_;
  tuning_settings settings_;
  std::optional<store::run_store> db_;
};

std::vector<std::uint32_t> zero_to(std::size_t n) {
  std::vector<std::uint32_t> out(n);
  for (std::uint32_t i = 0; i < n; ++i) out[i] = i;
  return out;
}

TEST_F(sweep_session_test, a_failed_trial_is_stored_so_a_larger_budget_resumes_without_a_gap) {
  const auto [first_id, first] = sweep(settings_);
  ASSERT_GE(first.size(), 4u);
  EXPECT_EQ(stored_indexes(first_id), zero_to(first.size()));
  EXPECT_FALSE(first[1].evaluated);
  // Trial 1's run is stored failed with why.
  auto failed = db_->run(first[1].run_id);
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->status, store::run_status::failed);
  EXPECT_EQ(failed->error, "the backend broke");

  tuning_settings larger = settings_;
  larger.budget = static_cast<std::uint32_t>(first.size()) + 2;
  std::vector<std::uint32_t> ran;
  const auto [second_id, second] = sweep(larger, &ran);
  EXPECT_EQ(second_id, first_id);
  ASSERT_FALSE(ran.empty());
  EXPECT_EQ(ran.front(), first.size());  // only new trials ran
  EXPECT_EQ(stored_indexes(first_id), zero_to(second.size()));
  auto sweeps = db_->sweeps();
  ASSERT_TRUE(sweeps.ok());
  EXPECT_EQ(sweeps->size(), 1u);
}

TEST_F(sweep_session_test, changed_ranges_are_a_new_sweep) {
  const auto [first_id, first] = sweep(settings_);
  tuning_settings other = settings_;
  other.parameters.front().max *= 2;
  std::vector<std::uint32_t> ran;
  const auto [other_id, trials] = sweep(other, &ran);
  EXPECT_NE(other_id, first_id);
  ASSERT_FALSE(ran.empty());
  EXPECT_EQ(ran.front(), 0u);
  EXPECT_NE(sweep_identity(spec_, settings_), sweep_identity(spec_, other));
}

TEST_F(sweep_session_test, the_budget_and_parallelism_are_not_the_identity) {
  tuning_settings more = settings_;
  more.budget = 40;
  more.parallelism = 7;
  EXPECT_EQ(sweep_identity(spec_, settings_), sweep_identity(spec_, more));
}

TEST_F(sweep_session_test, a_trials_run_is_one_run_with_its_seeds_as_repeats) {
  const auto [id, trials] = sweep(settings_);
  ASSERT_TRUE(trials[0].evaluated);
  auto runs = db_->runs();
  ASSERT_TRUE(runs.ok());
  std::size_t of_sweep = 0;
  for (const auto& r : *runs) of_sweep += r.sweep == id;
  EXPECT_EQ(of_sweep, trials.size());  // one run per trial
  auto loaded = db_->load(trials[0].run_id);
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->flows.size(), 2u);
}

// A trial of three seeds is one run; the store keeps which repeat each record came from.
TEST_F(sweep_session_test, a_trials_run_loads_back_with_a_repeat_per_seed) {
  const auto [id, trials] = sweep(settings_);
  auto loaded = db_->load(trials[0].run_id);
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->flows.size(), 2u);
  EXPECT_EQ(loaded->flows[0].repeat + loaded->flows[1].repeat, 1u);  // repeats 0 and 1
}

TEST_F(sweep_session_test, resuming_a_sweep_of_another_identity_by_id_is_refused) {
  const auto [first_id, first] = sweep(settings_);
  tuning_settings other = settings_;
  other.parameters.front().min /= 2;
  auto session = sweep_session::open(*db_, spec_, other, first_id);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.error().code(), error_code::invalid_argument);
}

}  // namespace
}  // namespace rocelab::experiments

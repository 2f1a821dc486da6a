// A sweep kept in a real SQLite run store: every trial stored with its run, an interrupted
// sweep found again and resumed to the same proposals as an uninterrupted one.
#include "rocelab/experiments/tuning/sweep.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "rocelab/experiments/tuning/tuning_spec.hpp"
#include "rocelab/experiments/tuning/tuning_trials.hpp"

namespace rocelab::experiments {
namespace {

const std::string example = std::string(ROCELAB_SOURCE_DIR) + "/examples/tune-incast.yaml";

class tuning_sweep : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rlt-sweep-" + std::to_string(::getpid()) + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto spec = load_spec_file(example);
    ASSERT_TRUE(spec.ok());
    spec_ = *spec;
    auto s = load_tuning_file(example, spec_);
    ASSERT_TRUE(s.ok());
    settings_ = *s;
    settings_.budget = 12;
    settings_.parallelism = 2;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string db_path() const { return (dir_ / "rocelab.db").string(); }

  std::filesystem::path dir_;
  experiment_spec spec_;
  tuning_settings settings_;
};

TEST_F(tuning_sweep, stores_every_trial_and_resumes_an_interrupted_sweep) {
  // The uninterrupted reference, without a store.
  auto reference = run_sweep(settings_, spec_evaluator(spec_, settings_), {});
  ASSERT_TRUE(reference.ok()) << reference.error().message();

  std::int64_t sweep_id = 0;
  {
    auto db = store::run_store::open(db_path());
    ASSERT_TRUE(db.ok()) << db.error().message();
    auto opened = open_sweep(*db, spec_, settings_, std::nullopt);
    ASSERT_TRUE(opened.ok()) << opened.error().message();
    EXPECT_FALSE(opened->resumed);
    sweep_id = opened->id;
    std::atomic<bool> stop{false};
    sweep_hooks hooks;
    auto store_hook = store_trials(*db, opened->id, spec_, settings_);
    hooks.stop = &stop;
    hooks.on_trial = [&](trial& t, trial_payload& p) {
      if (t.index == 4) stop = true;  // "Ctrl-C" during the third batch
      return store_hook(t, p);
    };
    auto partial = run_sweep(settings_, spec_evaluator(spec_, settings_), {}, hooks);
    ASSERT_TRUE(partial.ok());
    EXPECT_EQ(partial->size(), 6u);  // the batch in flight completes
  }
  // A new process: the same spec and name find the sweep.
  auto db = store::run_store::open(db_path());
  ASSERT_TRUE(db.ok());
  auto opened = open_sweep(*db, spec_, settings_, std::nullopt);
  ASSERT_TRUE(opened.ok()) << opened.error().message();
  EXPECT_TRUE(opened->resumed);
  EXPECT_EQ(opened->id, sweep_id);
  ASSERT_EQ(opened->trials.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(opened->trials[i].values, (*reference)[i].values) << i;
    EXPECT_DOUBLE_EQ(opened->trials[i].objective, (*reference)[i].objective) << i;
    EXPECT_EQ(opened->trials[i].feasible, (*reference)[i].feasible) << i;
    EXPECT_EQ(opened->trials[i].margins, (*reference)[i].margins) << i;
  }
  sweep_hooks hooks;
  hooks.on_trial = store_trials(*db, opened->id, spec_, settings_);
  auto resumed = run_sweep(settings_, spec_evaluator(spec_, settings_), opened->trials, hooks);
  ASSERT_TRUE(resumed.ok());
  ASSERT_EQ(resumed->size(), reference->size());
  for (std::size_t i = 0; i < reference->size(); ++i) EXPECT_EQ((*resumed)[i].values, (*reference)[i].values) << i;

  // What the store holds: 12 trials, each with its run, tied to the sweep, the values set
  // as run parameters, the records of the run.
  auto rows = db->trials(sweep_id);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 12u);
  for (const auto& r : *rows) {
    ASSERT_TRUE(r.run.has_value());
    auto run = db->run(*r.run);
    ASSERT_TRUE(run.ok());
    EXPECT_EQ(run->sweep, sweep_id);
    EXPECT_EQ(run->status, store::run_status::completed);
    EXPECT_EQ(run->parameters.count("switch.ecn.kmin_bytes"), 1u);
    EXPECT_EQ(r.params.size(), 3u);
  }
  auto records = db->load(*rows->front().run);
  ASSERT_TRUE(records.ok());
  std::size_t incast = 0, victims = 0;
  for (const auto& f : records->flows) {
    incast += f.kind == workload_kind::incast;
    victims += f.kind == workload_kind::victim;
  }
  // Every repeat of the trial's run: one per common seed (tuning.seeds).
  EXPECT_EQ(settings_.seeds, 3u);
  EXPECT_EQ(incast, 16u * settings_.seeds);
  EXPECT_EQ(victims, 16u * 8 * settings_.seeds);  // the example's eight victim flows per sender

  // A finished sweep is not resumed by default: the same command starts a new one...
  auto again = open_sweep(*db, spec_, settings_, std::nullopt);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->resumed);
  EXPECT_NE(again->id, sweep_id);
  // ...and --resume with another spec is refused, naming the sweep.
  experiment_spec other = spec_;
  other.sw.buffer_bytes *= 2;
  auto refused = open_sweep(*db, other, settings_, sweep_id);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("sweep " + std::to_string(sweep_id)), std::string::npos);
}

// Two processes continuing one sweep at once proposed and stored the same trials (a
// UNIQUE constraint error in one, an orphan duplicate run): the second is refused, naming
// the first's pid, and gets the sweep once the first lets go.
TEST_F(tuning_sweep, a_sweep_being_run_is_refused_to_a_second_resume_naming_its_holder) {
  auto db = store::run_store::open(db_path());
  ASSERT_TRUE(db.ok()) << db.error().message();
  auto first = open_sweep(*db, spec_, settings_, std::nullopt);
  ASSERT_TRUE(first.ok()) << first.error().message();
  auto other_db = store::run_store::open(db_path());
  ASSERT_TRUE(other_db.ok());
  for (const std::optional<std::int64_t> resume : {std::optional<std::int64_t>(first->id), std::optional<std::int64_t>()}) {
    auto second = open_sweep(*other_db, spec_, settings_, resume);
    ASSERT_FALSE(second.ok()) << "resumed sweep " << second->id;
    EXPECT_EQ(second.error().code(), error_code::unavailable);
    EXPECT_NE(second.error().message().find("sweep " + std::to_string(first->id) + " is being run by process " +
                                            std::to_string(::getpid())),
              std::string::npos)
        << second.error().message();
  }
  const std::int64_t id = first->id;
  first = status(error_code::cancelled, "the first process ended");
  auto after = open_sweep(*other_db, spec_, settings_, id);
  ASSERT_TRUE(after.ok()) << after.error().message();
  EXPECT_EQ(after->id, id);
}

TEST_F(tuning_sweep, a_failed_trial_round_trips_through_the_store) {
  trial t;
  t.index = 3;
  t.values = {1000, 300000, 0.5};
  t.error = "sw0: switch config: headroom exceeds the buffer";
  const store::trial_record r = to_record(t, 7, settings_);
  EXPECT_FALSE(r.feasible);
  auto back = from_record(r, settings_);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_FALSE(back->evaluated);
  EXPECT_EQ(back->error, t.error);
  EXPECT_EQ(back->values, t.values);
}

TEST_F(tuning_sweep, a_runner_stopped_mid_batch_abandons_the_trial_and_those_after_it) {
  // An executor stopped in the middle of trial 5 (of the batch 4, 5): trial 4 is kept,
  // 5 is neither stored nor kept, and the sweep ends there; the placement of the kept
  // trials reaches the store hook.
  const trial_runner here = [](const experiment_spec& spec) -> result<trial_runs> {
    auto ran = core_backends().run(spec);
    if (!ran.ok()) return std::move(ran).error();
    trial_runs r;
    r.seeds = ran->seeds;
    r.repeats = std::move(ran->repeats);
    r.placement["worker.host"] = "node7";
    return r;
  };
  std::atomic<int> calls{0};
  const trial_runner stopping = [&](const experiment_spec& spec) -> result<trial_runs> {
    // The 6th trial run (index 5) is the one the stop cuts short.
    if (calls.fetch_add(1) == 5) return status(error_code::cancelled, "cancelled: the sweep was stopped");
    return here(spec);
  };
  settings_.parallelism = 1;  // index order = call order
  std::vector<std::uint32_t> seen;
  std::vector<std::string> hosts;
  sweep_hooks hooks;
  hooks.on_trial = [&](trial& t, trial_payload& p) {
    seen.push_back(t.index);
    hosts.push_back(p.placement["worker.host"]);
    return status::success();
  };
  auto trials = run_sweep(settings_, spec_evaluator(spec_, settings_, stopping), {}, hooks);
  ASSERT_TRUE(trials.ok()) << trials.error().message();
  EXPECT_EQ(trials->size(), 5u);
  EXPECT_EQ(seen, (std::vector<std::uint32_t>{0, 1, 2, 3, 4}));
  for (const auto& h : hosts) EXPECT_EQ(h, "node7");
  for (const trial& t : *trials) EXPECT_TRUE(t.error.empty()) << t.error;

  // A runner's other errors are failed trials, kept and reported.
  const trial_runner failing = [](const experiment_spec&) -> result<trial_runs> {
    return status(error_code::invalid_argument, "the worker refused it");
  };
  settings_.budget = 2;
  auto failed = run_sweep(settings_, spec_evaluator(spec_, settings_, failing), {});
  ASSERT_TRUE(failed.ok());
  ASSERT_EQ(failed->size(), 2u);
  EXPECT_FALSE((*failed)[0].evaluated);
  EXPECT_EQ((*failed)[0].error, "the worker refused it");
}

}  // namespace
}  // namespace rocelab::experiments

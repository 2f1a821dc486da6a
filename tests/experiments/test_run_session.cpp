// The run session on a real SQLite run store: every repeat's records stamped with their
// repeat before the store keeps them, each ending as the store records it, and a session
// dropped unfinished leaving its run failed with a note.
#include "rocelab/experiments/run/run_session.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <set>

namespace rocelab::experiments {
namespace {

// One repeat's records: `flows` flows of which `completed` completed, and one pause.
run_records repeat_records(std::size_t flows, std::size_t completed) {
  run_records r;
  r.hosts = {"h1", "h2"};
  for (std::size_t i = 0; i < flows; ++i) {
    flow_record f;
    f.src = 0;
    f.dst = 1;
    f.qp = static_cast<std::uint32_t>(i);
    f.bytes = 4096;
    f.start_ns = 100;
    if (i < completed) {
      f.end_ns = 2100;
      f.fct_ns = 2000;
      f.ideal_fct_ns = 1000;
    }
    r.flows.push_back(f);
  }
  r.devices = {"sw"};
  r.pauses.push_back(pause_interval{0, 1, 3, 10, 20, pause_source::model, 0});
  return r;
}

class run_session_test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rlt-session-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto db = store::run_store::open((dir_ / "rocelab.db").string());
    ASSERT_TRUE(db.ok()) << db.error().message();
    db_.emplace(std::move(*db));
  }
  void TearDown() override {
    db_.reset();
    std::filesystem::remove_all(dir_);
  }
  store::new_run a_run() const {
    store::new_run nr;
    nr.name = "session";
    nr.backend = "twin";
    nr.seed = 7;
    nr.spec_yaml = "name: session\n";
    return nr;
  }
  store::run_info info(std::int64_t id) const {
    auto r = db_->run(id);
    EXPECT_TRUE(r.ok()) << r.error().message();
    return r.ok() ? *r : store::run_info{};
  }

  std::filesystem::path dir_;
  std::optional<store::run_store> db_;
};

TEST_F(run_session_test, stamps_each_repeats_records_with_its_index_before_the_store_keeps_them) {
  auto session = run_session::begin(*db_, a_run());
  ASSERT_TRUE(session.ok()) << session.error().message();
  std::vector<run_records> repeats{repeat_records(2, 2), repeat_records(2, 2), repeat_records(2, 2)};
  for (std::uint32_t i = 0; i < repeats.size(); ++i)
    ASSERT_TRUE(session->append_repeat(i, repeats[i]).ok());
  // What the store was handed: the caller's records, stamped in place.
  for (std::uint32_t i = 0; i < repeats.size(); ++i) {
    for (const auto& f : repeats[i].flows) EXPECT_EQ(f.repeat, i);
    for (const auto& p : repeats[i].pauses) EXPECT_EQ(p.repeat, i);
  }
  auto ending = session->finish_ran(repeats);
  ASSERT_TRUE(ending.ok()) << ending.error().message();
  EXPECT_EQ(ending->status, store::run_status::completed);
  EXPECT_EQ(info(session->id()).status, store::run_status::completed);
}

// What the store loads back tells the repeats apart: each record keeps the one it was appended with.
TEST_F(run_session_test, a_load_of_a_three_repeat_run_gives_its_flows_repeats_0_1_and_2) {
  auto session = run_session::begin(*db_, a_run());
  ASSERT_TRUE(session.ok()) << session.error().message();
  std::vector<run_records> repeats{repeat_records(2, 2), repeat_records(2, 2), repeat_records(2, 2)};
  for (std::uint32_t i = 0; i < repeats.size(); ++i)
    ASSERT_TRUE(session->append_repeat(i, repeats[i]).ok());
  ASSERT_TRUE(session->finish_ran(repeats).ok());
  auto loaded = db_->load(session->id());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message();
  ASSERT_EQ(loaded->flows.size(), 6u);
  std::multiset<std::uint32_t> seen;
  for (const auto& f : loaded->flows) seen.insert(f.repeat);
  EXPECT_EQ(seen, (std::multiset<std::uint32_t>{0, 0, 1, 1, 2, 2}));
}

struct ending_case {
  const char* name;
  std::size_t completed_of_two;  // flows completed in the run's one repeat
  int how;                       // 0 finish_ran, 1 finish_interrupted, 2 finish_failed
  store::run_status expected;
  const char* note_part;
};

class run_session_endings : public run_session_test, public ::testing::WithParamInterface<ending_case> {};

TEST_P(run_session_endings, finish_records_the_ending_and_ends_the_session) {
  const ending_case& c = GetParam();
  auto session = run_session::begin(*db_, a_run());
  ASSERT_TRUE(session.ok());
  std::vector<run_records> repeats{repeat_records(2, c.completed_of_two)};
  ASSERT_TRUE(session->append_repeat(0, repeats[0]).ok());
  if (c.how == 0) {
    auto ending = session->finish_ran(repeats);
    ASSERT_TRUE(ending.ok()) << ending.error().message();
  } else if (c.how == 1) {
    ASSERT_TRUE(session->finish_interrupted("stopped by its requester").ok());
  } else {
    ASSERT_TRUE(session->finish_failed("the backend broke").ok());
  }
  EXPECT_TRUE(session->finished());
  const store::run_info r = info(session->id());
  EXPECT_EQ(r.status, c.expected);
  EXPECT_NE(r.error.find(c.note_part), std::string::npos) << r.error;
  // Ended once: a second ending and a late append are refused, the first ending stands.
  EXPECT_EQ(session->finish_failed("again").code(), error_code::invalid_argument);
  EXPECT_EQ(session->append_repeat(1, repeats[0]).code(), error_code::invalid_argument);
  EXPECT_EQ(info(session->id()).status, c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    cases, run_session_endings,
    ::testing::Values(ending_case{"every_flow_completed_is_completed", 2, 0, store::run_status::completed, ""},
                      ending_case{"a_flow_without_an_end_is_partial", 1, 0, store::run_status::partial,
                                  "1 of 2 flows completed"},
                      ending_case{"cut_short_by_its_requester_is_interrupted", 2, 1, store::run_status::interrupted,
                                  "stopped by its requester"},
                      ending_case{"not_run_to_its_end_is_failed", 2, 2, store::run_status::failed, "the backend broke"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(run_session_test, a_session_destroyed_unfinished_leaves_its_run_failed_with_a_note) {
  std::int64_t id = 0;
  {
    auto session = run_session::begin(*db_, a_run());
    ASSERT_TRUE(session.ok());
    id = session->id();
    run_records r = repeat_records(2, 2);
    ASSERT_TRUE(session->append_repeat(0, r).ok());
    EXPECT_EQ(info(id).status, store::run_status::running);
  }
  const store::run_info r = info(id);
  EXPECT_EQ(r.status, store::run_status::failed);
  EXPECT_EQ(r.error, std::string(run_session::unfinished_note));
  auto loaded = db_->load(id);  // what it appended is kept
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->flows.size(), 2u);
}

TEST_F(run_session_test, a_moved_session_finishes_its_run_once) {
  auto session = run_session::begin(*db_, a_run());
  ASSERT_TRUE(session.ok());
  run_session moved = std::move(*session);
  EXPECT_TRUE(session->finished());  // the moved-from one has nothing to end
  EXPECT_FALSE(moved.finished());
  ASSERT_TRUE(moved.finish_interrupted("why").ok());
  EXPECT_EQ(info(moved.id()).status, store::run_status::interrupted);
}

}  // namespace
}  // namespace rocelab::experiments

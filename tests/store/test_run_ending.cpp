#include "rocelab/store/run_ending.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store_test_support.hpp"

// How a run that ran to its end is finished (run_ending.hpp): a table of repeats and the
// status and note each gets, then finish_ran on a real store file.

namespace rocelab::store {
namespace {

using testing::temp_dir;

// `flows` flow records of which the first `completed` have an end.
run_records repeat(std::size_t flows, std::size_t completed, std::vector<std::string> lost = {},
                   std::vector<std::string> degraded = {}) {
  run_records r;
  r.flows.resize(flows);
  for (std::size_t i = 0; i < completed; ++i) {
    r.flows[i].end_ns = 1000;
    r.flows[i].fct_ns = 1000;
  }
  r.lost_hosts = std::move(lost);
  r.degraded = std::move(degraded);
  return r;
}

struct ending_case {
  const char* name;
  std::vector<run_records> repeats;
  run_status status;
  const char* note;
};

TEST(run_ending, completed_or_partial_from_the_records) {
  const std::vector<ending_case> cases{
      {"every_flow_completed", {repeat(16, 16)}, run_status::completed, ""},
      {"no_flow_at_all", {repeat(0, 0)}, run_status::completed, ""},
      {"no_repeat", {}, run_status::completed, ""},
      {"cut_short_before_any_flow_completed", {repeat(16, 0)}, run_status::partial, "0 of 16 flows completed"},
      {"one_repeat_of_two_short", {repeat(4, 4), repeat(4, 3)}, run_status::partial, "7 of 8 flows completed"},
      {"a_host_lost", {repeat(4, 2, {"h3: heartbeat missed"})}, run_status::partial,
       "2 of 4 flows completed; lost during the run: h3: heartbeat missed (the flows of the others and every record so "
       "far are kept)"},
      {"degraded_but_whole", {repeat(2, 2, {}, {"switch overran its reaction budget"})}, run_status::completed,
       "degraded: switch overran its reaction budget"},
      {"short_and_degraded", {repeat(2, 1, {}, {"skew 2 ms"})}, run_status::partial,
       "1 of 2 flows completed; degraded: skew 2 ms"},
  };
  for (const ending_case& c : cases) {
    SCOPED_TRACE(c.name);
    const run_ending e = ending_of(c.repeats);
    EXPECT_EQ(e.status, c.status);
    EXPECT_EQ(e.note, c.note);
  }
}

TEST(run_ending, counts_flows_over_every_repeat) {
  const run_ending e = ending_of(std::vector<run_records>{repeat(16, 5), repeat(16, 16)});
  EXPECT_EQ(e.flows, 32u);
  EXPECT_EQ(e.completed, 21u);
}

TEST(run_ending, finish_ran_stores_the_status_and_the_note) {
  temp_dir dir;
  auto store = run_store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto cut = store->begin_run({"cut", "twin", 1, "", {}, std::nullopt});
  auto whole = store->begin_run({"whole", "twin", 1, "", {}, std::nullopt});
  ASSERT_TRUE(cut.ok() && whole.ok());
  auto a = finish_ran(*store, *cut, std::vector<run_records>{repeat(16, 0)});
  ASSERT_TRUE(a.ok()) << a.error().message();
  EXPECT_EQ(a->status, run_status::partial);
  auto b = finish_ran(*store, *whole, std::vector<run_records>{repeat(16, 16)});
  ASSERT_TRUE(b.ok()) << b.error().message();

  auto stored = store->run(*cut);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->status, run_status::partial);
  EXPECT_EQ(stored->error, "0 of 16 flows completed");
  EXPECT_EQ(store->run(*whole)->status, run_status::completed);

  auto missing = finish_ran(*store, 99, std::vector<run_records>{});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("run 99"), std::string::npos) << missing.error().message();
}

}  // namespace
}  // namespace rocelab::store

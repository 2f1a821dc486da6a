// Appending in bounded batches: a large append is the same rows as one transaction, and a
// cancel leaves the rows before it committed, in order, the totals in place, and a store
// that passes integrity_check.
#include <gtest/gtest.h>

#include "rocelab/store/run_store.hpp"
#include "store_test_support.hpp"

namespace rocelab::store {
namespace {

using testing::make_flows;
using testing::temp_dir;

run_records large_records() {
  run_records r;
  r.backend = "twin";
  r.hosts = {"h0", "h1", "h2", "h3"};
  r.devices = {"sw0"};
  r.flows = make_flows(2'500);
  r.queues.resize(47'500);
  for (std::size_t i = 0; i < r.queues.size(); ++i) {
    r.queues[i].device = 0;
    r.queues[i].port = static_cast<std::uint32_t>(i % 4);
    r.queues[i].queue = 3;
    r.queues[i].t_ns = static_cast<std::int64_t>(i) * 100;
    r.queues[i].bytes = i;
  }
  r.totals.pfc_pause_frames = 7;
  r.totals.drops = 3;
  r.simulated_ns = 4'750'000;
  return r;
}

std::int64_t begin(run_store& s) {
  auto id = s.begin_run({"batches", "twin", 1, "backend: twin\n", {}, {}});
  EXPECT_TRUE(id.ok()) << id.error().message();
  return id.ok() ? *id : 0;
}

TEST(run_store_batches, batches_store_every_row_once) {
  temp_dir dir;
  auto s = run_store::open(dir.file("runs.db"));
  ASSERT_TRUE(s.ok()) << s.error().message();
  const std::int64_t run = begin(*s);
  const run_records r = large_records();
  ASSERT_TRUE(s->append(run, r, append_options{.batch_rows = 7'000, .cancel_requested = {}}).ok());
  auto back = s->load(run);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->flows.size(), r.flows.size());
  EXPECT_EQ(back->queues.size(), r.queues.size());
  EXPECT_EQ(back->queues.back().bytes, r.queues.back().bytes);
  EXPECT_EQ(back->totals.pfc_pause_frames, 7u);  // added once, not once per batch
  EXPECT_EQ(back->totals.drops, 3u);
  EXPECT_EQ(back->simulated_ns, r.simulated_ns);
}

TEST(run_store_batches, a_cancel_stops_within_a_batch_and_keeps_the_rows_before_it) {
  temp_dir dir;
  auto s = run_store::open(dir.file("runs.db"));
  ASSERT_TRUE(s.ok()) << s.error().message();
  const std::int64_t run = begin(*s);
  // Asked every 1024 rows within a batch and before each batch after the first: 9 times
  // in the first batch of 10,000, once before the second, and the 12th time 2,048 rows
  // into it, where the answer turns to stop.
  int asked = 0;
  const append_options o{.batch_rows = 10'000, .cancel_requested = [&asked] { return ++asked >= 12; }};
  const status st = s->append(run, large_records(), o);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), error_code::cancelled) << st.message();
  EXPECT_EQ(asked, 12);
  ASSERT_TRUE(s->finish(run, run_status::interrupted, "cancelled").ok());

  auto back = s->load(run);
  ASSERT_TRUE(back.ok()) << back.error().message();
  // The 2,500 flows first, then 7,500 queue samples, then 2,047 more of the second batch.
  EXPECT_EQ(back->flows.size(), 2'500u);
  EXPECT_EQ(back->queues.size(), 9'547u);
  EXPECT_EQ(back->queues.back().bytes, 9'546u);  // a prefix, in order
  EXPECT_EQ(back->totals.pfc_pause_frames, 7u);
  EXPECT_TRUE(s->check_integrity().ok());
  auto info = s->run(run);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->status, run_status::interrupted);
}

}  // namespace
}  // namespace rocelab::store

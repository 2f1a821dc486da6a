#include "rocelab/store/run_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "store_test_support.hpp"

namespace rocelab::store {
namespace {

using testing::make_flows;
using testing::temp_dir;

// A notebook reads (its own read-only connection) while the controller appends: every read
// sees whole appends only, never fewer records than before, and never blocks the writer
// into an error.
TEST(run_store_concurrency, a_reader_sees_whole_appends_while_a_writer_appends) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  constexpr std::size_t batch = 500;
  constexpr int batches = 60;
  auto writer = run_store::open(path);
  ASSERT_TRUE(writer.ok());
  auto id = writer->begin_run({"live", "virtual", 1, "", {}, std::nullopt});
  ASSERT_TRUE(id.ok());

  std::atomic<bool> writing{true};
  std::atomic<int> appended{0};
  std::string writer_error;
  std::thread writer_thread([&] {
    for (int b = 0; b < batches; ++b) {
      run_records r;
      r.hosts = {"h1", "h2", "h3", "h4"};
      r.flows = make_flows(batch, static_cast<std::uint64_t>(b) * batch);
      if (auto st = writer->append(*id, r); !st.ok()) {
        writer_error = st.message();
        break;
      }
      appended.fetch_add(1);
    }
    writing.store(false);
  });

  auto reader = run_store::open(path, open_mode::read_only);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  std::size_t last = 0;
  int reads = 0;
  int reads_mid_run = 0;
  // Bounded: the writer ends after `batches` appends; at most a few thousand reads.
  while (reads < 5000) {
    const bool was_writing = writing.load();
    auto records = reader->load(*id);
    ASSERT_TRUE(records.ok()) << records.error().message();
    const auto n = records->flows.size();
    ASSERT_EQ(n % batch, 0u) << "a read saw part of an append";
    ASSERT_GE(n, last) << "a later read saw fewer records";
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(records->flows[i].tag, i);
    if (n > 0 && n < batch * batches) ++reads_mid_run;
    last = n;
    ++reads;
    if (!was_writing) break;
  }
  writer_thread.join();
  EXPECT_TRUE(writer_error.empty()) << writer_error;
  EXPECT_EQ(appended.load(), batches);
  EXPECT_EQ(last, batch * batches) << "the final read (after the writer ended) sees everything";
  // Not a timing assertion: the reader simply ran; on a quiet machine it overlaps the writer.
  RecordProperty("reads_mid_run", reads_mid_run);
}

TEST(run_store_concurrency, two_writers_on_one_file_take_turns) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  auto a = run_store::open(path);
  auto b = run_store::open(path);
  ASSERT_TRUE(a.ok() && b.ok());
  auto ra = a->begin_run({"a", "twin", 1, "", {}, std::nullopt});
  auto rb = b->begin_run({"b", "twin", 2, "", {}, std::nullopt});
  ASSERT_TRUE(ra.ok() && rb.ok());
  std::thread ta([&] {
    for (int i = 0; i < 30; ++i) {
      run_records r;
      r.flows = make_flows(100, static_cast<std::uint64_t>(i) * 100);
      ASSERT_TRUE(a->append(*ra, r).ok());
    }
  });
  for (int i = 0; i < 30; ++i) {
    run_records r;
    r.flows = make_flows(100, static_cast<std::uint64_t>(i) * 100);
    ASSERT_TRUE(b->append(*rb, r).ok());
  }
  ta.join();
  EXPECT_EQ(a->load(*ra)->flows.size(), 3000u);
  EXPECT_EQ(a->load(*rb)->flows.size(), 3000u);
  EXPECT_TRUE(a->check_integrity().ok());
}

// Ten heavy runs storing into one file at once kept one writer off the lock for longer than
// SQLite's busy timeout (10 s): its BEGIN IMMEDIATE failed with "database is locked" and the
// run was stored failed without its records. A writer now waits for the lock (attempts of
// one busy timeout each, bounded): here another connection holds it for 12 s, past one
// attempt, and every write still lands.
TEST(run_store_concurrency, a_writer_waits_for_a_lock_held_past_one_busy_timeout) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  auto store = run_store::open(path);
  ASSERT_TRUE(store.ok());
  auto id = store->begin_run({"first", "twin", 1, "", {}, std::nullopt});
  ASSERT_TRUE(id.ok());

  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  std::atomic<bool> released{false};
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::seconds(12));
    released = true;
    EXPECT_EQ(sqlite3_exec(holder, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  });
  run_records r;
  r.hosts = {"h1", "h2", "h3", "h4"};
  r.flows = make_flows(100);
  const status appended = store->append(*id, r);  // a transaction: BEGIN IMMEDIATE
  const bool waited = released.load();
  const status finished = store->finish(*id, run_status::completed);  // one statement
  auto second = store->begin_run({"second", "twin", 2, "", {}, std::nullopt});
  release.join();
  sqlite3_close(holder);
  EXPECT_TRUE(appended.ok()) << appended.message();
  EXPECT_TRUE(waited) << "the append waited for the holder";
  EXPECT_TRUE(finished.ok()) << finished.message();
  EXPECT_TRUE(second.ok()) << second.error().message();
  auto loaded = store->load(*id);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->flows.size(), 100u);
}

}  // namespace
}  // namespace rocelab::store

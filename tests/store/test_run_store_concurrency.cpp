#include "rocelab/store/run_store.hpp"

#include <gtest/gtest.h>

#include <atomic>
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

}  // namespace
}  // namespace rocelab::store

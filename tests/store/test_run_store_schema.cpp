#include "rocelab/store/run_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "store_test_support.hpp"

namespace rocelab::store {
namespace {

using testing::temp_dir;

// Runs SQL on a raw connection, outside the store, to build files the store must judge.
void raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string message = err != nullptr ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << message;
}

// Takes the record tables back to before version 4 (records carried no repeat).
constexpr std::string_view drop_repeat_columns =
    "ALTER TABLE flows DROP COLUMN repeat; ALTER TABLE pauses DROP COLUMN repeat; "
    "ALTER TABLE events DROP COLUMN repeat; ALTER TABLE counters DROP COLUMN repeat; "
    "ALTER TABLE queue_samples DROP COLUMN repeat; ALTER TABLE allreduce DROP COLUMN repeat; ";

std::string raw_query_one(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW)
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

TEST(run_store_schema, a_new_file_is_at_the_current_version_in_wal_mode) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  {
    auto store = run_store::open(path);
    ASSERT_TRUE(store.ok()) << store.error().message();
    EXPECT_TRUE(store->check_integrity().ok());
  }
  EXPECT_EQ(raw_query_one(path, "PRAGMA user_version"), std::to_string(run_store::schema_version()));
  EXPECT_EQ(raw_query_one(path, "PRAGMA journal_mode"), "wal");
  // Opening again changes nothing and keeps the data.
  auto again = run_store::open(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(raw_query_one(path, "PRAGMA user_version"), std::to_string(run_store::schema_version()));
}

// Another application's SQLite file given as --db: refused naming the file, before any
// write: no rocelab table, no WAL, its own tables and header as they were. Both a file
// with application_id 0 and tables of its own, and one with another application's id.
TEST(run_store_schema, refuses_another_applications_sqlite_file_and_leaves_it_untouched) {
  struct foreign_case {
    const char* name;
    const char* sql;
    const char* says;
  };
  const std::vector<foreign_case> cases{
      {"tables_of_its_own", "CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('kept');",
       "application_id 0 and 1 tables of its own: notes"},
      {"another_application_id", "PRAGMA application_id = 1096045395; CREATE TABLE t (x);", "0x41545353"},
      {"only_an_application_id", "PRAGMA application_id = 7;", "0x00000007"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    temp_dir dir;
    const auto path = dir.file("foreign.db");
    raw_exec(path, c.sql);
    const std::string schema_before = raw_query_one(path, "SELECT coalesce(group_concat(name), '') FROM sqlite_schema");
    for (auto mode : {open_mode::read_write, open_mode::read_only}) {
      auto store = run_store::open(path, mode);
      ASSERT_FALSE(store.ok());
      EXPECT_EQ(store.error().code(), error_code::invalid_argument);
      EXPECT_NE(store.error().message().find(path + " is not a rocelab run store"), std::string::npos)
          << store.error().message();
      EXPECT_NE(store.error().message().find(c.says), std::string::npos) << store.error().message();
    }
    EXPECT_EQ(raw_query_one(path, "SELECT coalesce(group_concat(name), '') FROM sqlite_schema"), schema_before);
    EXPECT_EQ(raw_query_one(path, "PRAGMA journal_mode"), "delete");
    EXPECT_EQ(raw_query_one(path, "PRAGMA user_version"), "0");
    EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  }
}

// A new file is stamped with rocelab's application_id; a store made before the stamp
// (every rocelab table, application_id 0) opens, keeps its runs, and is stamped.
TEST(run_store_schema, a_new_store_is_stamped_and_an_unstamped_rocelab_store_is_accepted_and_stamped) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  std::int64_t run = 0;
  {
    auto store = run_store::open(path);
    ASSERT_TRUE(store.ok()) << store.error().message();
    auto id = store->begin_run({"a", "twin", 1, "", {}, std::nullopt});
    ASSERT_TRUE(id.ok());
    run = *id;
  }
  EXPECT_EQ(raw_query_one(path, "PRAGMA application_id"), "1380729154");
  raw_exec(path, "PRAGMA application_id = 0");
  {
    auto store = run_store::open(path, open_mode::read_only);
    ASSERT_TRUE(store.ok()) << store.error().message();
    EXPECT_TRUE(store->run(run).ok());
  }
  EXPECT_EQ(raw_query_one(path, "PRAGMA application_id"), "0") << "read-only writes nothing";
  auto store = run_store::open(path);
  ASSERT_TRUE(store.ok()) << store.error().message();
  EXPECT_TRUE(store->run(run).ok());
  EXPECT_EQ(raw_query_one(path, "PRAGMA application_id"), "1380729154");
}

// A version 1 file (before the measured flags) opens, migrates, and reads its flows as
// measured, which every backend then was.
TEST(run_store_schema, migrates_a_version_1_file_whose_counts_were_all_measured) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  std::int64_t run = 0;
  {
    auto store = run_store::open(path);
    ASSERT_TRUE(store.ok());
    auto id = store->begin_run({"a", "twin", 1, "", {}, std::nullopt});
    ASSERT_TRUE(id.ok());
    run = *id;
    run_records r;
    r.hosts = {"h1", "h2"};
    r.flows.resize(1);
    r.flows[0].dst = 1;
    r.flows[0].retransmits = 3;
    ASSERT_TRUE(store->append(run, r).ok());
  }
  // Back to what version 1 had.
  raw_exec(path,
           "ALTER TABLE flows DROP COLUMN retransmits_measured; ALTER TABLE flows DROP COLUMN cnps_measured; "
           "ALTER TABLE totals DROP COLUMN retransmits_measured; ALTER TABLE totals DROP COLUMN cnps_measured; "
           "DROP TABLE calibrations; ALTER TABLE runs DROP COLUMN calibration; " +
               std::string(drop_repeat_columns) + "PRAGMA user_version = 1;");
  auto store = run_store::open(path);
  ASSERT_TRUE(store.ok()) << store.error().message();
  EXPECT_EQ(raw_query_one(path, "PRAGMA user_version"), std::to_string(run_store::schema_version()));
  auto out = store->load(run);
  ASSERT_TRUE(out.ok()) << out.error().message();
  ASSERT_EQ(out->flows.size(), 1u);
  EXPECT_EQ(out->flows[0].retransmits, 3u);
  EXPECT_TRUE(out->flows[0].retransmits_measured);
  EXPECT_TRUE(out->flows[0].cnps_measured);
  EXPECT_TRUE(out->totals.retransmits_measured);
}

// A version 2 file (before calibrations) opens and migrates; its runs modelled none.
TEST(run_store_schema, migrates_a_version_2_file_whose_runs_have_no_calibration) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  std::int64_t run = 0;
  {
    auto store = run_store::open(path);
    ASSERT_TRUE(store.ok());
    auto id = store->begin_run({"a", "twin", 1, "", {}, std::nullopt});
    ASSERT_TRUE(id.ok());
    run = *id;
  }
  raw_exec(path, "DROP TABLE calibrations; ALTER TABLE runs DROP COLUMN calibration; " + std::string(drop_repeat_columns) +
                     "PRAGMA user_version = 2;");
  auto store = run_store::open(path);
  ASSERT_TRUE(store.ok()) << store.error().message();
  EXPECT_EQ(raw_query_one(path, "PRAGMA user_version"), std::to_string(run_store::schema_version()));
  auto r = store->run(run);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_FALSE(r->calibration.has_value());
  auto cal = store->add_calibration("virtual", "2026-11-29T04:00:00Z", "rocelab_calibration: 1\n");
  ASSERT_TRUE(cal.ok()) << cal.error().message();
}

// A version 3 file (before records carried their repeat) opens and migrates; every record
// it held was its run's first repeat, and records appended after keep their own.
TEST(run_store_schema, migrates_a_version_3_file_whose_records_are_all_repeat_0) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  std::int64_t run = 0;
  {
    auto store = run_store::open(path);
    ASSERT_TRUE(store.ok());
    auto id = store->begin_run({"a", "twin", 1, "", {}, std::nullopt});
    ASSERT_TRUE(id.ok());
    run = *id;
    run_records r;
    r.hosts = {"h1", "h2"};
    r.devices = {"sw0"};
    r.flows.resize(1);
    r.flows[0].dst = 1;
    r.pauses.resize(1);
    r.events.resize(1);
    r.counters.push_back({0, 1, "rx_pause", 5, 6, 0});
    r.queues.resize(1);
    r.allreduce.push_back({"ring", 4, 1024, 10, 1.5, 2.5, 0});
    ASSERT_TRUE(store->append(run, r).ok());
  }
  raw_exec(path, std::string(drop_repeat_columns) + "PRAGMA user_version = 3;");
  ASSERT_EQ(raw_query_one(path, "SELECT count(*) FROM pragma_table_info('flows') WHERE name = 'repeat'"), "0");
  auto store = run_store::open(path);
  ASSERT_TRUE(store.ok()) << store.error().message();
  EXPECT_EQ(raw_query_one(path, "PRAGMA user_version"), std::to_string(run_store::schema_version()));
  run_records more;
  more.flows.resize(1);
  more.flows[0].repeat = 2;
  ASSERT_TRUE(store->append(run, more).ok());
  auto out = store->load(run);
  ASSERT_TRUE(out.ok()) << out.error().message();
  ASSERT_EQ(out->flows.size(), 2u);
  EXPECT_EQ(out->flows[0].repeat, 0u);
  EXPECT_EQ(out->flows[0].dst, 1u);
  EXPECT_EQ(out->flows[1].repeat, 2u);
  ASSERT_EQ(out->pauses.size(), 1u);
  ASSERT_EQ(out->events.size(), 1u);
  ASSERT_EQ(out->counters.size(), 1u);
  ASSERT_EQ(out->queues.size(), 1u);
  ASSERT_EQ(out->allreduce.size(), 1u);
  EXPECT_EQ(out->pauses[0].repeat, 0u);
  EXPECT_EQ(out->counters[0].name, "rx_pause");
  EXPECT_EQ(out->allreduce[0].busbw_gbps, 2.5);
}

// A record table without a column for one of its record's fields is refused when the
// store migrates, naming the table and the column: the field would otherwise be dropped.
TEST(run_store_schema, a_record_field_without_its_column_fails_the_migration) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  { ASSERT_TRUE(run_store::open(path).ok()); }
  // Version 3 and a queue_samples table that lost a column version 4 does not add.
  raw_exec(path, std::string(drop_repeat_columns) + "ALTER TABLE queue_samples DROP COLUMN bytes; PRAGMA user_version = 3;");
  auto store = run_store::open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message().find("queue_samples"), std::string::npos) << store.error().message();
  EXPECT_NE(store.error().message().find("no column bytes INTEGER"), std::string::npos) << store.error().message();
  EXPECT_EQ(raw_query_one(path, "PRAGMA user_version"), "3") << "the failed migration is rolled back";
}

TEST(run_store_schema, refuses_a_newer_schema_read_write_and_read_only) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  {
    auto store = run_store::open(path);
    ASSERT_TRUE(store.ok());
  }
  raw_exec(path, "PRAGMA user_version = 99");
  for (auto mode : {open_mode::read_write, open_mode::read_only}) {
    auto store = run_store::open(path, mode);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.error().code(), error_code::unsupported);
    EXPECT_NE(store.error().message().find("schema version 99 is newer"), std::string::npos) << store.error().message();
    EXPECT_NE(store.error().message().find(path), std::string::npos);
  }
  EXPECT_EQ(raw_query_one(path, "PRAGMA user_version"), "99") << "a refused file is left as it was";
}

TEST(run_store_schema, read_only_does_not_migrate_an_old_file) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  { ASSERT_TRUE(run_store::open(path).ok()); }
  raw_exec(path, "PRAGMA user_version = 1");
  auto store = run_store::open(path, open_mode::read_only);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message().find("needs migrating"), std::string::npos) << store.error().message();
  EXPECT_EQ(raw_query_one(path, "PRAGMA user_version"), "1");
}

TEST(run_store_schema, a_file_that_is_not_a_database_is_malformed) {
  temp_dir dir;
  const auto path = dir.file("runs.db");
  {
    std::ofstream out(path);
    for (int i = 0; i < 512; ++i) out << "this is not an SQLite file\n";
  }
  auto store = run_store::open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code(), error_code::malformed_input) << store.error().message();
  EXPECT_NE(store.error().message().find(path), std::string::npos) << store.error().message();
}

}  // namespace
}  // namespace rocelab::store

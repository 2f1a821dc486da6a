// The store's record rows come from the field tables (store/src/record_sql.hpp): a record
// type that exists only here goes through a test table of its own, every real record with
// each field set through append and load, and a run keeps the repeat of each record.
#include "../../store/src/record_sql.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>

#include "../support/record_fields_support.hpp"
#include "rocelab/store/run_store.hpp"
#include "store_test_support.hpp"

namespace rocelab::store {
namespace {

using rocelab::testing::differing_fields;
using rocelab::testing::filled;
using rocelab::testing::probe_record;
using testing::temp_dir;

// The probe's table as a migration would write it; column_mismatch checks it against the
// record's table before any row goes in.
constexpr std::string_view probe_table =
    "CREATE TABLE probes (run INTEGER NOT NULL, device INTEGER NOT NULL, t_ns INTEGER NOT NULL, "
    "big INTEGER NOT NULL, small INTEGER NOT NULL, colour INTEGER NOT NULL, ratio REAL NOT NULL, "
    "label TEXT NOT NULL, counted INTEGER NOT NULL, count INTEGER NOT NULL, added INTEGER NOT NULL)";

TEST(record_sql, a_test_record_round_trips_through_a_table_of_its_own) {
  temp_dir dir;
  auto db = sql::open(dir.file("probe.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  ASSERT_TRUE(db.ok()) << db.error().message();
  ASSERT_TRUE(sql::exec(db->get(), probe_table).ok());
  auto mismatch = record_sql::column_mismatch<probe_record>(db->get(), "probes");
  ASSERT_TRUE(mismatch.ok()) << mismatch.error().message();
  EXPECT_EQ(*mismatch, "");

  auto in = filled<probe_record>();
  in.device = 4;
  auto insert = sql::statement::prepare(db->get(), record_sql::insert<probe_record>("probes"));
  ASSERT_TRUE(insert.ok()) << insert.error().message();
  // The one index field is stored as resolve maps it: the device's run index.
  const auto resolve = [](const auto&, const auto& value) -> result<std::int64_t> {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(value)>, std::uint32_t>) return std::int64_t{value} + 10;
    else return status(error_code::internal, "only the device is resolved");
  };
  ASSERT_TRUE(record_sql::bind(*insert, 7, in, resolve).ok());
  ASSERT_TRUE(insert->run().ok());

  auto select = sql::statement::prepare(db->get(), record_sql::select<probe_record>("probes"));
  ASSERT_TRUE(select.ok()) << select.error().message();
  select->bind(1, std::int64_t{7});
  auto row = select->step();
  ASSERT_TRUE(row.ok() && *row);
  probe_record out;
  record_sql::read(*select, out);
  EXPECT_EQ(out.device, 14u);
  out.device = in.device;
  EXPECT_EQ(differing_fields(in, out), "");
  EXPECT_EQ(out.added, in.added);
}

TEST(record_sql, a_table_without_a_fields_column_is_named_as_missing_it) {
  temp_dir dir;
  auto db = sql::open(dir.file("probe.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  ASSERT_TRUE(db.ok()) << db.error().message();
  ASSERT_TRUE(sql::exec(db->get(), std::string(probe_table) + "; ALTER TABLE probes DROP COLUMN added; "
                                                                "ALTER TABLE probes ADD COLUMN extra TEXT").ok());
  auto mismatch = record_sql::column_mismatch<probe_record>(db->get(), "probes");
  ASSERT_TRUE(mismatch.ok()) << mismatch.error().message();
  EXPECT_EQ(*mismatch, "no column added INTEGER, column extra TEXT is no field");
}

TEST(record_sql, every_real_record_round_trips_through_append_and_load) {
  temp_dir dir;
  auto store = run_store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto run = store->begin_run({"a", "twin", 1, "", {}, std::nullopt});
  ASSERT_TRUE(run.ok());
  auto in = rocelab::testing::filled_records(5);
  rocelab::testing::for_each_record_vector(in, [](auto& rows, const char* name) {
    EXPECT_EQ(rocelab::testing::default_fields(rows.at(0)), "") << name;
  });
  ASSERT_TRUE(store->append(*run, in).ok());
  auto out = store->load(*run);
  ASSERT_TRUE(out.ok()) << out.error().message();
  EXPECT_EQ(differing_fields(in.flows.at(0), out->flows.at(0)), "");
  EXPECT_EQ(differing_fields(in.pauses.at(0), out->pauses.at(0)), "");
  EXPECT_EQ(differing_fields(in.counters.at(0), out->counters.at(0)), "");
  EXPECT_EQ(differing_fields(in.queues.at(0), out->queues.at(0)), "");
  EXPECT_EQ(differing_fields(in.events.at(0), out->events.at(0)), "");
  EXPECT_EQ(differing_fields(in.allreduce.at(0), out->allreduce.at(0)), "");
}

// One run of three repeats, each appended on its own (as the run layer stores a repeat
// once it ends): load gives every record back with its repeat.
TEST(record_sql, a_run_keeps_the_repeat_of_every_record) {
  temp_dir dir;
  auto store = run_store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto run = store->begin_run({"a", "twin", 1, "", {}, std::nullopt});
  ASSERT_TRUE(run.ok());
  for (std::uint32_t repeat = 0; repeat < 3; ++repeat) {
    auto records = rocelab::testing::filled_records(repeat);
    set_repeat(records, repeat);
    ASSERT_TRUE(store->append(*run, records).ok());
  }
  auto out = store->load(*run);
  ASSERT_TRUE(out.ok()) << out.error().message();
  rocelab::testing::for_each_record_vector(*out, [](auto& rows, const char* name) {
    ASSERT_EQ(rows.size(), 3u) << name;
    for (std::uint32_t repeat = 0; repeat < 3; ++repeat) EXPECT_EQ(rows[repeat].repeat, repeat) << name;
  });
  EXPECT_EQ(out->flows[2].tag, filled<flow_record>(2).tag) << "each repeat's own records, in append order";
}

}  // namespace
}  // namespace rocelab::store

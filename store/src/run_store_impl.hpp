// The run store's connection state (run_store::impl) and the helpers its parts share:
// the prepared insert statements, row iteration and the wall clock of run start and end.
// Private to the store. A run_store and its impl are used by one thread at a time.
//
// The implementation, one concern a file:
//   run_store.cpp      opening a store, run lifecycle (begin, agents, parameters, finish)
//   record_append.cpp  appending records: name tables, batching, cancellation
//   run_reads.cpp      listing runs and loading their records
//   sweeps.cpp         tuning sweeps and their trials
//   calibrations.cpp   lab calibrations, each text once

#pragma once

#include "rocelab/store/run_store.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sqlite.hpp"

namespace rocelab::store {
namespace detail {

inline std::int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Statements that append() runs for every record, one per record table in
// record_sql::tables order; prepared once per connection.
using insert_statements = std::vector<sql::statement>;

// Runs `sql` bound to the run id and calls `each(statement&)` per row.
template <typename F>
status for_each_row(sqlite3* db, std::string_view sql, std::int64_t run, F&& each) {
  auto s = sql::statement::prepare(db, sql);
  if (!s.ok()) return s.error();
  s->bind(1, run);
  for (;;) {
    auto row = s->step();
    if (!row.ok()) return row.error();
    if (!*row) return status::success();
    each(*s);
  }
}

}  // namespace detail

using namespace detail;

struct run_store::impl {
  std::string path;
  open_mode mode = open_mode::read_write;
  sql::db_ptr db;
  std::optional<insert_statements> inserts;                 // prepared on first append
  std::unordered_map<std::string, std::int64_t> counter_ids;  // counter_names cache

  [[nodiscard]] status mark_orphans();
  [[nodiscard]] result<std::int64_t> counter_id(const std::string& name);
  [[nodiscard]] status require_run(std::int64_t run) const;
  // Inserts the records; with `cancel`, asks it every cancel_poll_rows rows and stops
  // inserting once it says so (setting `cancelled`), keeping the rows so far and the totals.
  [[nodiscard]] status append_in_transaction(std::int64_t run, const run_records& records,
                                             const std::function<bool()>& cancel = {}, bool* cancelled = nullptr);
};

}  // namespace rocelab::store

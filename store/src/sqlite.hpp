#pragma once
// Thin RAII layer over the SQLite C API, private to the store: one owner per sqlite3* and
// sqlite3_stmt*, and errors that carry the SQL they came from plus sqlite3_errmsg.

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "rocelab/common/result.hpp"

namespace rocelab::store::sql {

struct db_closer {
  void operator()(sqlite3* db) const noexcept;
};
using db_ptr = std::unique_ptr<sqlite3, db_closer>;

struct stmt_finalizer {
  void operator()(sqlite3_stmt* stmt) const noexcept { sqlite3_finalize(stmt); }
};
using stmt_ptr = std::unique_ptr<sqlite3_stmt, stmt_finalizer>;

// "<context>: <sqlite3_errmsg> (sqlite <code name>)"; SQLITE_BUSY/LOCKED map to
// unavailable, CORRUPT/NOTADB to malformed_input, CANTOPEN to not_found.
[[nodiscard]] status error_from(sqlite3* db, int rc, std::string_view context);

// How long one attempt of a statement waits for another writer's lock (the busy timeout
// set by wait_for_locks). exec(), statement::step() outside a transaction and
// transaction::begin() try up to 30 attempts, so a writer waits up to 5 minutes for the
// lock before SQLITE_BUSY ("database is locked") is an error.
inline constexpr std::chrono::milliseconds lock_wait_per_attempt{10'000};
void wait_for_locks(sqlite3* db) noexcept;

// Opens `path` with SQLITE_OPEN_* `flags`; the handle is closed again on failure.
[[nodiscard]] result<db_ptr> open(const std::string& path, int flags);

// Runs one or more statements that return no rows of interest.
[[nodiscard]] status exec(sqlite3* db, std::string_view sql);

// A prepared statement. Binding is by 1-based index; the first bind error is kept and
// reported by the next step(), so call sites stay a flat list of binds.
class statement {
 public:
  [[nodiscard]] static result<statement> prepare(sqlite3* db, std::string_view sql);

  statement& bind(int index, std::int64_t value);
  statement& bind(int index, std::uint64_t value) { return bind(index, static_cast<std::int64_t>(value)); }
  statement& bind(int index, std::uint32_t value) { return bind(index, static_cast<std::int64_t>(value)); }
  statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  statement& bind(int index, double value);
  statement& bind(int index, std::string_view text);  // copied (SQLITE_TRANSIENT)
  statement& bind_null(int index);

  // true: a row is available; false: done. The statement is reset after done or error.
  [[nodiscard]] result<bool> step();
  // Steps to completion (INSERT/UPDATE/DELETE) and resets for the next use.
  [[nodiscard]] status run();
  void reset() noexcept;

  [[nodiscard]] std::int64_t column_int64(int column) const noexcept;
  [[nodiscard]] std::uint64_t column_uint64(int column) const noexcept {
    return static_cast<std::uint64_t>(column_int64(column));
  }
  [[nodiscard]] double column_double(int column) const noexcept;
  [[nodiscard]] std::string column_text(int column) const;
  [[nodiscard]] bool column_is_null(int column) const noexcept;

  [[nodiscard]] const std::string& sql() const noexcept { return sql_; }

 private:
  statement(sqlite3* db, stmt_ptr stmt, std::string sql) noexcept
      : db_(db), stmt_(std::move(stmt)), sql_(std::move(sql)) {}
  void note_bind(int rc, int index);

  sqlite3* db_ = nullptr;  // not owned
  stmt_ptr stmt_;
  std::string sql_;
  int bind_rc_ = SQLITE_OK;
  int bind_index_ = 0;
};

// BEGIN IMMEDIATE ... COMMIT; rolls back in the destructor unless committed. IMMEDIATE
// takes the write lock up front, so a concurrent writer waits on busy_timeout instead of
// failing at commit with SQLITE_BUSY_SNAPSHOT.
class transaction {
 public:
  [[nodiscard]] static result<transaction> begin(sqlite3* db, std::string_view context);
  transaction(transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)), context_(std::move(other.context_)) {}
  transaction& operator=(transaction&&) = delete;
  ~transaction();
  [[nodiscard]] status commit();

 private:
  transaction(sqlite3* db, std::string context) noexcept : db_(db), context_(std::move(context)) {}
  sqlite3* db_ = nullptr;
  std::string context_;
};

}  // namespace rocelab::store::sql

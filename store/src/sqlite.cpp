#include "sqlite.hpp"

#include <cstdio>

namespace rocelab::store::sql {
namespace {

// Each attempt waits up to the connection's busy timeout (lock_wait_per_attempt) for
// another writer's lock; a writer among many can miss the lock for that long (SQLite's
// busy handler polls, and the others keep taking it), so the statement is tried again,
// up to lock_attempts times in all, before "database is locked" is an error.
constexpr int lock_attempts = 30;

bool busy(int rc) noexcept { return (rc & 0xff) == SQLITE_BUSY; }

}  // namespace

void wait_for_locks(sqlite3* db) noexcept {
  sqlite3_busy_timeout(db, static_cast<int>(lock_wait_per_attempt.count()));
}

void db_closer::operator()(sqlite3* db) const noexcept {
  // close_v2 defers the close until every statement is finalized, so a statement that
  // outlives its connection by mistake cannot use freed memory. Destructors log, never throw.
  if (const int rc = sqlite3_close_v2(db); rc != SQLITE_OK)
    std::fprintf(stderr, "rocelab store: closing database: %s\n", sqlite3_errstr(rc));
}

status error_from(sqlite3* db, int rc, std::string_view context) {
  error_code code = error_code::io_error;
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: code = error_code::unavailable; break;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: code = error_code::malformed_input; break;
    case SQLITE_CANTOPEN: code = error_code::not_found; break;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE: code = error_code::invalid_argument; break;
    case SQLITE_NOMEM:
    case SQLITE_FULL: code = error_code::resource_exhausted; break;
    case SQLITE_READONLY: code = error_code::unsupported; break;
    default: break;
  }
  std::string message(context);
  message += ": ";
  // errmsg describes the connection's last error, which is this one only if rc came from it.
  message += db != nullptr && sqlite3_extended_errcode(db) == rc ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  message += " (sqlite ";
  message += std::to_string(rc);
  message += ")";
  return {code, std::move(message)};
}

result<db_ptr> open(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  db_ptr db(raw);  // owned even on failure: sqlite3_open_v2 may return a handle with the error
  if (rc != SQLITE_OK) return error_from(db.get(), rc, "opening " + path);
  sqlite3_extended_result_codes(db.get(), 1);
  return db;
}

status exec(sqlite3* db, std::string_view sql) {
  const std::string text(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, &err);
  // Outside a transaction (BEGIN IMMEDIATE itself, a PRAGMA) nothing was done when the
  // lock was not had: try again.
  for (int attempt = 1; busy(rc) && attempt < lock_attempts && sqlite3_get_autocommit(db) != 0; ++attempt) {
    sqlite3_free(err);
    err = nullptr;
    rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, &err);
  }
  if (rc == SQLITE_OK) return status::success();
  std::string message = err != nullptr ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  auto st = error_from(nullptr, rc, text);
  return {st.code(), text + ": " + message};
}

result<statement> statement::prepare(sqlite3* db, std::string_view sql) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  stmt_ptr stmt(raw);
  if (rc != SQLITE_OK) return error_from(db, rc, "preparing " + std::string(sql));
  return statement(db, std::move(stmt), std::string(sql));
}

void statement::note_bind(int rc, int index) {
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) {
    bind_rc_ = rc;
    bind_index_ = index;
  }
}

statement& statement::bind(int index, std::int64_t value) {
  note_bind(sqlite3_bind_int64(stmt_.get(), index, value), index);
  return *this;
}
statement& statement::bind(int index, double value) {
  note_bind(sqlite3_bind_double(stmt_.get(), index, value), index);
  return *this;
}
statement& statement::bind(int index, std::string_view text) {
  // An empty view may have a null data(), which SQLite would bind as NULL, not ''.
  const char* data = text.data() != nullptr ? text.data() : "";
  note_bind(sqlite3_bind_text64(stmt_.get(), index, data, text.size(), SQLITE_TRANSIENT, SQLITE_UTF8), index);
  return *this;
}
statement& statement::bind_null(int index) {
  note_bind(sqlite3_bind_null(stmt_.get(), index), index);
  return *this;
}

result<bool> statement::step() {
  if (bind_rc_ != SQLITE_OK) {
    const int rc = bind_rc_;
    const int index = bind_index_;
    reset();
    return error_from(db_, rc, "binding parameter " + std::to_string(index) + " of " + sql_);
  }
  int rc = sqlite3_step(stmt_.get());
  // A statement outside a transaction that found the lock taken did nothing: try again.
  for (int attempt = 1; busy(rc) && attempt < lock_attempts && sqlite3_get_autocommit(db_) != 0; ++attempt) {
    sqlite3_reset(stmt_.get());
    rc = sqlite3_step(stmt_.get());
  }
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) {
    reset();
    return false;
  }
  auto st = error_from(db_, rc, sql_);
  reset();
  return st;
}

status statement::run() {
  for (;;) {
    auto row = step();
    if (!row.ok()) return row.error();
    if (!*row) return status::success();
  }
}

void statement::reset() noexcept {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
  bind_rc_ = SQLITE_OK;
  bind_index_ = 0;
}

std::int64_t statement::column_int64(int column) const noexcept { return sqlite3_column_int64(stmt_.get(), column); }
double statement::column_double(int column) const noexcept { return sqlite3_column_double(stmt_.get(), column); }
std::string statement::column_text(int column) const {
  const auto* text = sqlite3_column_text(stmt_.get(), column);
  if (text == nullptr) return {};
  return {reinterpret_cast<const char*>(text), static_cast<std::size_t>(sqlite3_column_bytes(stmt_.get(), column))};
}
bool statement::column_is_null(int column) const noexcept {
  return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
}

result<transaction> transaction::begin(sqlite3* db, std::string_view context) {
  if (auto st = exec(db, "BEGIN IMMEDIATE"); !st.ok()) return st.with_context(context);
  return transaction(db, std::string(context));
}

transaction::~transaction() {
  // SQLite rolls a transaction back by itself on some errors (SQLITE_FULL, IOERR): then
  // there is nothing left to roll back.
  if (db_ == nullptr || sqlite3_get_autocommit(db_) != 0) return;
  char* err = nullptr;
  if (sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, &err) != SQLITE_OK) {
    std::fprintf(stderr, "rocelab store: rolling back %s: %s\n", context_.c_str(), err != nullptr ? err : "?");
    sqlite3_free(err);
  }
}

status transaction::commit() {
  sqlite3* db = std::exchange(db_, nullptr);
  if (db == nullptr) return {error_code::internal, context_ + ": commit of a finished transaction"};
  if (auto st = exec(db, "COMMIT"); !st.ok()) {
    // A failed COMMIT leaves the transaction open (e.g. SQLITE_BUSY); roll it back so the
    // connection is usable again.
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    return st.with_context(context_);
  }
  return status::success();
}

}  // namespace rocelab::store::sql

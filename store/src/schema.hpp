#pragma once
// The store's schema and its migrations. The version lives in PRAGMA user_version (0 for
// a fresh file); migration i takes a database from version i to i + 1, all steps from the
// file's version to schema_version() run in one transaction, and a file written by a newer
// rocelab is refused rather than guessed at.

#include <sqlite3.h>

#include <cstdint>
#include <string>

#include "rocelab/common/result.hpp"

namespace rocelab::store::schema {

// PRAGMA application_id of a rocelab store ("RLAB"), set when the schema is created or
// migrated: it tells a rocelab store from another application's SQLite file.
inline constexpr std::int32_t application_id = 0x524c4142;

[[nodiscard]] int current_version() noexcept;

// Run before any write: ok for a rocelab store (our application_id), a new or empty file,
// and a store made before the stamp (application_id 0 with every rocelab table, schema
// version 1 or later; migrate() stamps it). Anything else is invalid_argument naming the
// file and what it holds, and the file is left untouched.
[[nodiscard]] status check_ours(sqlite3* db, const std::string& path);

[[nodiscard]] result<int> read_version(sqlite3* db);

// Brings the database to current_version(); an error names the file's version and ours.
[[nodiscard]] status migrate(sqlite3* db, const std::string& path);

// Ok when every record table has a column per field of its record (record_sql.hpp) and
// no other; else internal, naming the table and what differs. migrate() checks it after
// migrating, so a field added without the migration that adds its column fails the first
// store opened (every fresh file migrates).
[[nodiscard]] status check_record_columns(sqlite3* db);

// For a read-only connection: ok only when the file is exactly at current_version().
[[nodiscard]] status check_readable(sqlite3* db, const std::string& path);

}  // namespace rocelab::store::schema

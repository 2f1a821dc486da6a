#pragma once
// The store's schema and its migrations. The version lives in PRAGMA user_version (0 for
// a fresh file); migration i takes a database from version i to i + 1, all steps from the
// file's version to schema_version() run in one transaction, and a file written by a newer
// rocelab is refused rather than guessed at.

#include <sqlite3.h>

#include "rocelab/common/result.hpp"

namespace rocelab::store::schema {

[[nodiscard]] int current_version() noexcept;

[[nodiscard]] result<int> read_version(sqlite3* db);

// Brings the database to current_version(); an error names the file's version and ours.
[[nodiscard]] status migrate(sqlite3* db, const std::string& path);

// For a read-only connection: ok only when the file is exactly at current_version().
[[nodiscard]] status check_readable(sqlite3* db, const std::string& path);

}  // namespace rocelab::store::schema

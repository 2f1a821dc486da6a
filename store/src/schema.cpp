#include "schema.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "record_sql.hpp"
#include "rocelab/store/run_store.hpp"
#include "sqlite.hpp"

namespace rocelab::store::schema {
namespace {

// Version 1. Records of a run reference their host and device names through per-run name
// tables (hosts, devices: idx -> name) so millions of rows carry no strings; counter
// names are interned once per database. uint64 values are stored as their int64 bit
// pattern (SQLite integers are signed 64-bit).
constexpr std::string_view v1 = R"sql(
CREATE TABLE sweeps (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  method TEXT NOT NULL,
  spec_yaml TEXT NOT NULL,
  budget INTEGER NOT NULL,
  started_unix_ns INTEGER NOT NULL
);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  backend TEXT NOT NULL,
  seed INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'partial', 'interrupted', 'failed')),
  error TEXT NOT NULL DEFAULT '',
  started_unix_ns INTEGER NOT NULL,
  ended_unix_ns INTEGER NOT NULL DEFAULT 0,
  sweep INTEGER REFERENCES sweeps(id),
  spec_yaml TEXT NOT NULL,
  owner_host TEXT NOT NULL,
  owner_pid INTEGER NOT NULL,
  owner_start_ticks INTEGER NOT NULL,
  simulated_ns INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_status ON runs(status);
CREATE TABLE parameters (
  run INTEGER NOT NULL REFERENCES runs(id),
  path TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (run, path)
) WITHOUT ROWID;
CREATE TABLE agents (
  run INTEGER NOT NULL REFERENCES runs(id),
  name TEXT NOT NULL,
  address TEXT NOT NULL,
  clock_offset_ns REAL NOT NULL,
  clock_uncertainty_ns REAL NOT NULL,
  state TEXT NOT NULL,
  PRIMARY KEY (run, name)
) WITHOUT ROWID;
CREATE TABLE hosts (
  run INTEGER NOT NULL REFERENCES runs(id),
  idx INTEGER NOT NULL,
  name TEXT NOT NULL,
  PRIMARY KEY (run, idx),
  UNIQUE (run, name)
) WITHOUT ROWID;
CREATE TABLE devices (
  run INTEGER NOT NULL REFERENCES runs(id),
  idx INTEGER NOT NULL,
  name TEXT NOT NULL,
  PRIMARY KEY (run, idx),
  UNIQUE (run, name)
) WITHOUT ROWID;
CREATE TABLE counter_names (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);
CREATE TABLE flows (
  run INTEGER NOT NULL REFERENCES runs(id),
  src INTEGER NOT NULL, dst INTEGER NOT NULL, qp INTEGER NOT NULL,
  priority INTEGER NOT NULL, kind INTEGER NOT NULL, bytes INTEGER NOT NULL,
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, fct_ns INTEGER NOT NULL,
  ideal_fct_ns INTEGER NOT NULL, retransmits INTEGER NOT NULL, ce_marked INTEGER NOT NULL,
  cnps INTEGER NOT NULL, tag INTEGER NOT NULL
);
CREATE INDEX flows_run ON flows(run);
CREATE TABLE pauses (
  run INTEGER NOT NULL REFERENCES runs(id),
  device INTEGER NOT NULL, port INTEGER NOT NULL, priority INTEGER NOT NULL,
  start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, source INTEGER NOT NULL
);
CREATE INDEX pauses_run ON pauses(run);
CREATE TABLE events (
  run INTEGER NOT NULL REFERENCES runs(id),
  kind INTEGER NOT NULL, device INTEGER NOT NULL, port INTEGER NOT NULL,
  priority INTEGER NOT NULL, t_ns INTEGER NOT NULL, src INTEGER NOT NULL,
  dst INTEGER NOT NULL, qp INTEGER NOT NULL, source INTEGER NOT NULL
);
CREATE INDEX events_run ON events(run);
CREATE TABLE counters (
  run INTEGER NOT NULL REFERENCES runs(id),
  device INTEGER NOT NULL, port INTEGER NOT NULL,
  name INTEGER NOT NULL REFERENCES counter_names(id),
  t_ns INTEGER NOT NULL, value INTEGER NOT NULL
);
CREATE INDEX counters_run ON counters(run);
CREATE TABLE queue_samples (
  run INTEGER NOT NULL REFERENCES runs(id),
  device INTEGER NOT NULL, port INTEGER NOT NULL, queue INTEGER NOT NULL,
  t_ns INTEGER NOT NULL, bytes INTEGER NOT NULL
);
CREATE INDEX queue_samples_run ON queue_samples(run);
CREATE TABLE allreduce (
  run INTEGER NOT NULL REFERENCES runs(id),
  algorithm TEXT NOT NULL, ranks INTEGER NOT NULL, bytes INTEGER NOT NULL,
  time_ns INTEGER NOT NULL, algbw_gbps REAL NOT NULL, busbw_gbps REAL NOT NULL
);
CREATE INDEX allreduce_run ON allreduce(run);
CREATE TABLE totals (
  run INTEGER PRIMARY KEY REFERENCES runs(id),
  pfc_pause_frames INTEGER NOT NULL DEFAULT 0,
  pfc_resume_frames INTEGER NOT NULL DEFAULT 0,
  paused_ns INTEGER NOT NULL DEFAULT 0,
  ce_marked INTEGER NOT NULL DEFAULT 0,
  cnps INTEGER NOT NULL DEFAULT 0,
  drops INTEGER NOT NULL DEFAULT 0,
  retransmits INTEGER NOT NULL DEFAULT 0,
  packets_forwarded INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE trials (
  sweep INTEGER NOT NULL REFERENCES sweeps(id),
  idx INTEGER NOT NULL,
  objective REAL NOT NULL,
  feasible INTEGER NOT NULL,
  run INTEGER REFERENCES runs(id),
  metrics_json TEXT NOT NULL,
  PRIMARY KEY (sweep, idx)
) WITHOUT ROWID;
CREATE TABLE trial_params (
  sweep INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  path TEXT NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (sweep, idx, path),
  FOREIGN KEY (sweep, idx) REFERENCES trials(sweep, idx)
) WITHOUT ROWID;
)sql";

// Version 2. Whether a flow's (and a run's) retransmits and CNPs were measured: a hardware
// NIC counts neither per QP, and its 0 means "not measured" (records.hpp). Rows written
// before were all measured.
constexpr std::string_view v2 = R"sql(
ALTER TABLE flows ADD COLUMN retransmits_measured INTEGER NOT NULL DEFAULT 1;
ALTER TABLE flows ADD COLUMN cnps_measured INTEGER NOT NULL DEFAULT 1;
ALTER TABLE totals ADD COLUMN retransmits_measured INTEGER NOT NULL DEFAULT 1;
ALTER TABLE totals ADD COLUMN cnps_measured INTEGER NOT NULL DEFAULT 1;
)sql";

// Version 3. Lab calibrations (rocelab calibrate's YAML), each text once (by its SHA-256),
// and the one a twin run modelled (runs.calibration: a calibrations id). Not declared a
// foreign key: SQLite cannot drop such a column, and the migration tests take a file back
// to older versions by dropping what later ones added.
constexpr std::string_view v3 = R"sql(
CREATE TABLE calibrations (
  id INTEGER PRIMARY KEY,
  lab TEXT NOT NULL,
  taken_at TEXT NOT NULL,
  sha256 TEXT NOT NULL UNIQUE,
  yaml TEXT NOT NULL
);
ALTER TABLE runs ADD COLUMN calibration INTEGER;
)sql";

// Version 4. Every record keeps the run's repeat it belongs to (records.hpp); rows written
// before were all the first. The record tables stay indexed by run alone: loads read a
// whole run in append order and no query selects one repeat.
constexpr std::string_view v4 = R"sql(
ALTER TABLE flows ADD COLUMN repeat INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pauses ADD COLUMN repeat INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN repeat INTEGER NOT NULL DEFAULT 0;
ALTER TABLE counters ADD COLUMN repeat INTEGER NOT NULL DEFAULT 0;
ALTER TABLE queue_samples ADD COLUMN repeat INTEGER NOT NULL DEFAULT 0;
ALTER TABLE allreduce ADD COLUMN repeat INTEGER NOT NULL DEFAULT 0;
)sql";

constexpr std::array<std::string_view, 4> migrations{v1, v2, v3, v4};
static_assert(migrations.size() == static_cast<std::size_t>(run_store::schema_version()),
              "one migration per schema version");

}  // namespace

int current_version() noexcept { return static_cast<int>(migrations.size()); }

namespace {

// The tables every rocelab store has had since version 1: a file with application_id 0
// that holds them all was made by a rocelab from before the stamp.
constexpr std::array<std::string_view, 16> rocelab_tables{
    "sweeps", "runs",   "parameters",    "agents",    "hosts",  "devices", "counter_names", "flows",
    "pauses", "events", "counters",      "queue_samples", "allreduce", "totals", "trials", "trial_params"};

result<std::int64_t> read_int_pragma(sqlite3* db, std::string_view pragma) {
  auto stmt = sql::statement::prepare(db, "PRAGMA " + std::string(pragma));
  if (!stmt.ok()) return stmt.error();
  auto row = stmt->step();
  if (!row.ok()) return row.error();
  if (!*row) return status(error_code::internal, "PRAGMA " + std::string(pragma) + " returned no row");
  const std::int64_t value = stmt->column_int64(0);
  stmt->reset();
  return value;
}

}  // namespace

status check_record_columns(sqlite3* db) {
  status failed = status::success();
  record_sql::for_each_table([&](const auto& table, std::size_t) {
    if (!failed.ok()) return;
    using record = typename std::remove_cvref_t<decltype(table)>::record_type;
    auto mismatch = record_sql::column_mismatch<record>(db, table.name);
    if (!mismatch.ok()) failed = mismatch.error().with_context("reading the columns of " + std::string(table.name));
    else if (!mismatch->empty())
      failed = {error_code::internal, "table " + std::string(table.name) + " does not match its record's fields (" +
                                          *mismatch + "): a field needs a schema migration that adds its column"};
  });
  return failed;
}

status check_ours(sqlite3* db, const std::string& path) {
  const auto refuse = [&](const std::string& why) {
    return status(error_code::invalid_argument,
                  path + " is not a rocelab run store (" + why +
                      "); rocelab leaves it as it is: give --db a rocelab store or a new file name");
  };
  auto id = read_int_pragma(db, "application_id");
  if (!id.ok()) return id.error().with_context("opening run store " + path);
  if (*id == application_id) return status::success();
  if (*id != 0) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08x", static_cast<unsigned>(*id));
    return refuse(std::string("SQLite application_id ") + hex + ", another application's");
  }
  auto tables = sql::statement::prepare(
      db, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name");
  if (!tables.ok()) return tables.error().with_context("opening run store " + path);
  std::vector<std::string> names;
  for (;;) {
    auto row = tables->step();
    if (!row.ok()) return row.error().with_context("opening run store " + path);
    if (!*row) break;
    names.push_back(tables->column_text(0));
  }
  if (names.empty()) return status::success();  // a new (or empty) file becomes a store
  std::vector<std::string> missing;
  for (const auto table : rocelab_tables)
    if (std::find(names.begin(), names.end(), table) == names.end()) missing.emplace_back(table);
  auto version = read_version(db);
  if (!version.ok()) return version.error().with_context("opening run store " + path);
  if (missing.empty() && *version >= 1) return status::success();  // made before the stamp; stamped on migrating
  std::string listed;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) listed += (i ? ", " : "") + names[i];
  if (names.size() > 3) listed += ", ...";
  return refuse("application_id 0 and " + std::to_string(names.size()) + " tables of its own: " + listed);
}

result<int> read_version(sqlite3* db) {
  auto stmt = sql::statement::prepare(db, "PRAGMA user_version");
  if (!stmt.ok()) return stmt.error();
  auto row = stmt->step();
  if (!row.ok()) return row.error();
  if (!*row) return status(error_code::internal, "PRAGMA user_version returned no row");
  const int version = static_cast<int>(stmt->column_int64(0));
  stmt->reset();
  return version;
}

status migrate(sqlite3* db, const std::string& path) {
  // The version is read inside the write transaction, so two processes opening a fresh
  // file at once cannot both create the tables.
  auto tx = sql::transaction::begin(db, "migrating " + path);
  if (!tx.ok()) return tx.error();
  auto version = read_version(db);
  if (!version.ok()) return version.error().with_context("reading the schema version of " + path);
  if (*version > current_version())
    return {error_code::unsupported,
            path + ": schema version " + std::to_string(*version) + " is newer than this rocelab's (" +
                std::to_string(current_version()) + "); open it with a newer rocelab"};
  if (*version < 0) return {error_code::malformed_input, path + ": negative schema version " + std::to_string(*version)};
  for (int v = *version; v < current_version(); ++v) {
    if (auto st = sql::exec(db, migrations[static_cast<std::size_t>(v)]); !st.ok())
      return st.with_context(path + ": migrating schema version " + std::to_string(v) + " to " + std::to_string(v + 1));
  }
  if (*version != current_version()) {
    if (auto st = sql::exec(db, "PRAGMA user_version = " + std::to_string(current_version())); !st.ok())
      return st.with_context(path);
  }
  if (*version != current_version()) ROCELAB_RETURN_IF_ERROR(check_record_columns(db).with_context(path));
  auto id = read_int_pragma(db, "application_id");
  if (!id.ok()) return id.error().with_context("reading the application_id of " + path);
  if (*id != application_id) {
    if (auto st = sql::exec(db, "PRAGMA application_id = " + std::to_string(application_id)); !st.ok())
      return st.with_context(path);
  }
  return tx->commit();
}

status check_readable(sqlite3* db, const std::string& path) {
  auto version = read_version(db);
  if (!version.ok()) return version.error().with_context("reading the schema version of " + path);
  if (*version > current_version())
    return {error_code::unsupported,
            path + ": schema version " + std::to_string(*version) + " is newer than this rocelab's (" +
                std::to_string(current_version()) + "); open it with a newer rocelab"};
  if (*version < current_version())
    return {error_code::unsupported, path + ": schema version " + std::to_string(*version) +
                                         " needs migrating to " + std::to_string(current_version()) +
                                         "; open it read-write once"};
  return status::success();
}

}  // namespace rocelab::store::schema

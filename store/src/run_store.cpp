// The run store's runs: opening a store (schema, WAL, orphaned runs marked interrupted),
// a run's lifecycle (begin, agents, parameters, finish) and the integrity check.

#include "run_store_impl.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>

#include "owner_process.hpp"
#include "schema.hpp"

namespace rocelab::store {

const char* to_string(run_status s) noexcept {
  switch (s) {
    case run_status::running: return "running";
    case run_status::completed: return "completed";
    case run_status::partial: return "partial";
    case run_status::interrupted: return "interrupted";
    case run_status::failed: return "failed";
  }
  return "failed";
}

result<run_status> parse_run_status(std::string_view text) {
  for (auto s : {run_status::running, run_status::completed, run_status::partial, run_status::interrupted,
                 run_status::failed})
    if (text == to_string(s)) return s;
  return status(error_code::malformed_input,
                "unknown run status '" + std::string(text) + "' (running, completed, partial, interrupted, failed)");
}

status run_store::impl::require_run(std::int64_t run) const {
  auto s = sql::statement::prepare(db.get(), "SELECT 1 FROM runs WHERE id = ?1");
  if (!s.ok()) return s.error();
  s->bind(1, run);
  auto row = s->step();
  if (!row.ok()) return row.error();
  if (!*row) return {error_code::not_found, "no run " + std::to_string(run) + " in " + path};
  s->reset();
  return status::success();
}

status run_store::impl::mark_orphans() {
  auto tx = sql::transaction::begin(db.get(), "marking interrupted runs in " + path);
  if (!tx.ok()) return tx.error();
  auto select = sql::statement::prepare(
      db.get(), "SELECT id, owner_host, owner_pid, owner_start_ticks FROM runs WHERE status = 'running'");
  if (!select.ok()) return select.error();
  std::vector<std::pair<std::int64_t, owner_process>> orphans;
  for (;;) {
    auto row = select->step();
    if (!row.ok()) return row.error();
    if (!*row) break;
    owner_process owner{select->column_text(1), select->column_int64(2), select->column_int64(3)};
    if (!owner.alive_on_this_host()) orphans.emplace_back(select->column_int64(0), std::move(owner));
  }
  if (orphans.empty()) return status::success();
  auto update = sql::statement::prepare(
      db.get(), "UPDATE runs SET status = 'interrupted', error = ?2 WHERE id = ?1 AND status = 'running'");
  if (!update.ok()) return update.error();
  for (const auto& [id, owner] : orphans) {
    update->bind(1, id).bind(2, "owner process " + std::to_string(owner.pid) + " on " + owner.host +
                                    " ended without finishing the run");
    if (auto st = update->run(); !st.ok()) return st.with_context("marking run " + std::to_string(id) + " interrupted");
  }
  return tx->commit();
}

namespace {

// Test hook, the one way to reach a full disk without root: ROCELAB_TEST_STORE_ROOM set to
// "<path>=<pages>" lets the store opened read-write at exactly <path> grow by <pages> pages
// (PRAGMA max_page_count) past its size when opened; beyond that each write fails as on a
// full disk (SQLITE_FULL, "database or disk is full"). Unset: no limit but the disk's.
status apply_room_limit(sqlite3* db, const std::string& path) {
  const char* hook = std::getenv("ROCELAB_TEST_STORE_ROOM");
  if (hook == nullptr) return status::success();
  const std::string text(hook);
  const auto eq = text.rfind('=');
  if (eq == std::string::npos || text.substr(0, eq) != path) return status::success();
  auto count = sql::statement::prepare(db, "PRAGMA page_count");
  if (!count.ok()) return count.error();
  auto row = count->step();
  if (!row.ok()) return row.error();
  const std::int64_t pages = count->column_int64(0) + std::atoll(text.c_str() + eq + 1);
  count->reset();
  return sql::exec(db, "PRAGMA max_page_count = " + std::to_string(pages));
}

}  // namespace

run_store::run_store(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}
run_store::run_store(run_store&&) noexcept = default;
run_store& run_store::operator=(run_store&&) noexcept = default;
run_store::~run_store() = default;

const std::string& run_store::path() const noexcept { return impl_->path; }

result<run_store> run_store::open(const std::string& path, open_mode mode) {
  // SQLite takes "" for a private temporary database: nothing would be kept.
  if (path.empty()) return status(error_code::invalid_argument, "the run store needs a file name; the one given is empty");
  auto p = std::make_unique<impl>();
  p->path = path;
  p->mode = mode;
  if (mode == open_mode::read_only) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
      return status::from_errno("opening run store " + path + " read-only");
    auto db = sql::open(path, SQLITE_OPEN_READONLY);
    if (!db.ok()) return db.error();
    p->db = std::move(*db);
    // A writer holds the lock only for the instant of a commit (WAL); wait for it.
    sql::wait_for_locks(p->db.get());
    ROCELAB_RETURN_IF_ERROR(schema::check_ours(p->db.get(), path));
    ROCELAB_RETURN_IF_ERROR(schema::check_readable(p->db.get(), path));
    return run_store(std::move(p));
  }

  auto db = sql::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!db.ok()) return db.error();
  p->db = std::move(*db);
  sqlite3* h = p->db.get();
  sql::wait_for_locks(h);
  // Another application's SQLite file is refused before anything is written to it (the
  // journal mode below is a write).
  ROCELAB_RETURN_IF_ERROR(schema::check_ours(h, path));
  // WAL: readers never block the writer nor see a half-written transaction. synchronous
  // FULL syncs the WAL at every commit, so a committed append survives a power cut too
  // (NORMAL would survive kill -9 only); appends are batched, so the cost is per batch.
  // A 64 MiB page cache holds a million-flow append without spilling pages mid-transaction
  // (bench/store: 20% faster).
  if (auto st = sql::exec(h, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; "
                                "PRAGMA cache_size = -65536");
      !st.ok())
    return st.with_context("configuring run store " + path);
  auto journal = sql::statement::prepare(h, "PRAGMA journal_mode");
  if (!journal.ok()) return journal.error();
  if (auto row = journal->step(); !row.ok() || !*row || journal->column_text(0) != "wal")
    return status(error_code::unsupported, "run store " + path + ": the file system does not support WAL mode");
  journal->reset();
  ROCELAB_RETURN_IF_ERROR(schema::migrate(h, path));
  ROCELAB_RETURN_IF_ERROR(p->mark_orphans());
  ROCELAB_RETURN_IF_ERROR(apply_room_limit(h, path));
  return run_store(std::move(p));
}

result<std::int64_t> run_store::begin_run(const new_run& run) {
  sqlite3* h = impl_->db.get();
  auto tx = sql::transaction::begin(h, "beginning run " + run.name);
  if (!tx.ok()) return tx.error();
  const auto owner = owner_process::self();
  auto insert = sql::statement::prepare(
      h, "INSERT INTO runs (name, backend, seed, status, started_unix_ns, sweep, spec_yaml, owner_host, owner_pid, "
         "owner_start_ticks) VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?7, ?8, ?9)");
  if (!insert.ok()) return insert.error();
  insert->bind(1, run.name).bind(2, run.backend).bind(3, run.seed).bind(4, unix_now_ns());
  if (run.sweep) insert->bind(5, *run.sweep);
  else insert->bind_null(5);
  insert->bind(6, run.spec_yaml).bind(7, owner.host).bind(8, owner.pid).bind(9, owner.start_ticks);
  if (auto st = insert->run(); !st.ok()) return st.with_context("beginning run " + run.name);
  const std::int64_t id = sqlite3_last_insert_rowid(h);
  auto param = sql::statement::prepare(h, "INSERT INTO parameters (run, path, value) VALUES (?1, ?2, ?3)");
  if (!param.ok()) return param.error();
  for (const auto& [key, value] : run.parameters) {
    param->bind(1, id).bind(2, key).bind(3, value);
    if (auto st = param->run(); !st.ok()) return st.with_context("storing parameter " + key);
  }
  auto totals = sql::statement::prepare(h, "INSERT INTO totals (run) VALUES (?1)");
  if (!totals.ok()) return totals.error();
  totals->bind(1, id);
  ROCELAB_RETURN_IF_ERROR(totals->run());
  ROCELAB_RETURN_IF_ERROR(tx->commit());
  return id;
}

status run_store::add_agent(std::int64_t run, const agent_record& agent) {
  auto s = sql::statement::prepare(
      impl_->db.get(),
      "INSERT INTO agents (run, name, address, clock_offset_ns, clock_uncertainty_ns, state) VALUES (?1, ?2, ?3, ?4, "
      "?5, ?6) ON CONFLICT (run, name) DO UPDATE SET address = excluded.address, clock_offset_ns = "
      "excluded.clock_offset_ns, clock_uncertainty_ns = excluded.clock_uncertainty_ns, state = excluded.state");
  if (!s.ok()) return s.error();
  s->bind(1, run).bind(2, agent.name).bind(3, agent.address).bind(4, agent.clock_offset_ns)
      .bind(5, agent.clock_uncertainty_ns).bind(6, agent.state);
  return s->run().with_context("adding agent " + agent.name + " to run " + std::to_string(run));
}

status run_store::finish(std::int64_t run, run_status final_status, std::string_view error) {
  if (final_status == run_status::running)
    return {error_code::invalid_argument, "finishing run " + std::to_string(run) + " as running"};
  auto s = sql::statement::prepare(impl_->db.get(),
                                   "UPDATE runs SET status = ?2, error = ?3, ended_unix_ns = ?4 WHERE id = ?1");
  if (!s.ok()) return s.error();
  s->bind(1, run).bind(2, std::string_view(to_string(final_status))).bind(3, error).bind(4, unix_now_ns());
  ROCELAB_RETURN_IF_ERROR(s->run().with_context("finishing run " + std::to_string(run)));
  if (sqlite3_changes(impl_->db.get()) == 0)
    return {error_code::not_found, "finishing run " + std::to_string(run) + ": no such run in " + impl_->path};
  return status::success();
}

status run_store::set_parameter(std::int64_t run, std::string_view path, std::string_view value) {
  const std::string context = "setting parameter " + std::string(path) + " of run " + std::to_string(run);
  auto exists = sql::statement::prepare(impl_->db.get(), "SELECT 1 FROM runs WHERE id = ?1");
  if (!exists.ok()) return exists.error();
  exists->bind(1, run);
  auto row = exists->step();
  if (!row.ok()) return row.error().with_context(context);
  if (!*row) return {error_code::not_found, context + ": no such run in " + impl_->path};
  auto s = sql::statement::prepare(impl_->db.get(),
                                   "INSERT OR REPLACE INTO parameters (run, path, value) VALUES (?1, ?2, ?3)");
  if (!s.ok()) return s.error();
  s->bind(1, run).bind(2, path).bind(3, value);
  return s->run().with_context(context);
}

status run_store::check_integrity() const {
  auto s = sql::statement::prepare(impl_->db.get(), "PRAGMA integrity_check");
  if (!s.ok()) return s.error();
  std::string problems;
  for (;;) {
    auto row = s->step();
    if (!row.ok()) return row.error().with_context("checking integrity of " + impl_->path);
    if (!*row) break;
    const std::string line = s->column_text(0);
    if (line == "ok") continue;
    if (!problems.empty()) problems += "; ";
    problems += line;
  }
  if (problems.empty()) return status::success();
  return {error_code::malformed_input, impl_->path + " fails integrity_check: " + problems};
}

}  // namespace rocelab::store

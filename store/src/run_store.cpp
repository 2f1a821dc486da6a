#include "rocelab/store/run_store.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <unordered_map>

#include "owner_process.hpp"
#include "schema.hpp"
#include "sqlite.hpp"

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

namespace {

std::int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Statements that append() runs for every record; prepared once per connection.
struct insert_statements {
  sql::statement flow;
  sql::statement pause;
  sql::statement event;
  sql::statement counter;
  sql::statement queue;
  sql::statement allreduce;
};

result<insert_statements> prepare_inserts(sqlite3* db) {
  auto flow = sql::statement::prepare(
      db, "INSERT INTO flows (run, src, dst, qp, priority, kind, bytes, start_ns, end_ns, fct_ns, ideal_fct_ns, "
          "retransmits, ce_marked, cnps, tag) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
  if (!flow.ok()) return flow.error();
  auto pause = sql::statement::prepare(
      db, "INSERT INTO pauses (run, device, port, priority, start_ns, end_ns, source) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  if (!pause.ok()) return pause.error();
  auto event = sql::statement::prepare(
      db, "INSERT INTO events (run, kind, device, port, priority, t_ns, src, dst, qp, source) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  if (!event.ok()) return event.error();
  auto counter = sql::statement::prepare(
      db, "INSERT INTO counters (run, device, port, name, t_ns, value) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!counter.ok()) return counter.error();
  auto queue = sql::statement::prepare(
      db, "INSERT INTO queue_samples (run, device, port, queue, t_ns, bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!queue.ok()) return queue.error();
  auto allreduce = sql::statement::prepare(
      db, "INSERT INTO allreduce (run, algorithm, ranks, bytes, time_ns, algbw_gbps, busbw_gbps) "
          "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  if (!allreduce.ok()) return allreduce.error();
  return insert_statements{std::move(*flow), std::move(*pause), std::move(*event),
                           std::move(*counter), std::move(*queue), std::move(*allreduce)};
}

// Maps the names of one append() onto the run's name table (hosts or devices), adding
// the new ones after the existing indexes. Returns local index -> run index.
result<std::vector<std::uint32_t>> map_names(sqlite3* db, const char* table, std::int64_t run,
                                             const std::vector<std::string>& names) {
  std::vector<std::uint32_t> mapping(names.size());
  if (names.empty()) return mapping;
  std::unordered_map<std::string, std::uint32_t> existing;
  std::uint32_t next = 0;
  {
    auto select = sql::statement::prepare(db, std::string("SELECT idx, name FROM ") + table + " WHERE run = ?1");
    if (!select.ok()) return select.error();
    select->bind(1, run);
    for (;;) {
      auto row = select->step();
      if (!row.ok()) return row.error();
      if (!*row) break;
      const auto idx = static_cast<std::uint32_t>(select->column_int64(0));
      existing.emplace(select->column_text(1), idx);
      next = std::max(next, idx + 1);
    }
  }
  auto insert = sql::statement::prepare(db, std::string("INSERT INTO ") + table + " (run, idx, name) VALUES (?1, ?2, ?3)");
  if (!insert.ok()) return insert.error();
  for (std::size_t i = 0; i < names.size(); ++i) {
    auto [it, added] = existing.emplace(names[i], next);
    if (added) {
      insert->bind(1, run).bind(2, next).bind(3, names[i]);
      if (auto st = insert->run(); !st.ok()) return st.with_context(std::string("adding ") + table + " name " + names[i]);
      ++next;
    }
    mapping[i] = it->second;
  }
  return mapping;
}

// Translates a record's local index through `mapping`; an empty mapping means the caller
// already uses the run's indexes.
result<std::uint32_t> translate(const std::vector<std::uint32_t>& mapping, std::uint32_t local, const char* what,
                                std::size_t record) {
  if (mapping.empty()) return local;
  if (local >= mapping.size())
    return status(error_code::invalid_argument, std::string(what) + " index " + std::to_string(local) + " of record " +
                                                    std::to_string(record) + " is beyond the " +
                                                    std::to_string(mapping.size()) + " names given");
  return mapping[local];
}

run_info read_run_row(const sql::statement& s) {
  run_info r;
  r.id = s.column_int64(0);
  r.name = s.column_text(1);
  r.backend = s.column_text(2);
  r.seed = s.column_uint64(3);
  auto st = parse_run_status(s.column_text(4));
  r.status = st.ok() ? *st : run_status::failed;  // the CHECK constraint keeps this unreachable
  r.error = s.column_text(5);
  r.started_unix_ns = s.column_int64(6);
  r.ended_unix_ns = s.column_int64(7);
  if (!s.column_is_null(8)) r.sweep = s.column_int64(8);
  r.spec_yaml = s.column_text(9);
  return r;
}

constexpr const char* run_columns =
    "SELECT id, name, backend, seed, status, error, started_unix_ns, ended_unix_ns, sweep, spec_yaml FROM runs";

}  // namespace

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

result<std::int64_t> run_store::impl::counter_id(const std::string& name) {
  if (auto it = counter_ids.find(name); it != counter_ids.end()) return it->second;
  auto insert = sql::statement::prepare(db.get(), "INSERT INTO counter_names (name) VALUES (?1) ON CONFLICT (name) DO NOTHING");
  if (!insert.ok()) return insert.error();
  insert->bind(1, name);
  if (auto st = insert->run(); !st.ok()) return st;
  auto select = sql::statement::prepare(db.get(), "SELECT id FROM counter_names WHERE name = ?1");
  if (!select.ok()) return select.error();
  select->bind(1, name);
  auto row = select->step();
  if (!row.ok()) return row.error();
  if (!*row) return status(error_code::internal, "counter name " + name + " vanished after insert");
  const std::int64_t id = select->column_int64(0);
  select->reset();
  counter_ids.emplace(name, id);
  return id;
}

// Rows between two questions to a cancel hook: about a millisecond of inserts.
constexpr std::size_t cancel_poll_rows = 1024;

status run_store::impl::append_in_transaction(std::int64_t run, const run_records& records,
                                              const std::function<bool()>& cancel, bool* cancelled) {
  std::size_t polled = 0;
  bool stop = false;
  // True once the hook asked to stop; the row in hand and those after it are not inserted.
  const auto stopping = [&] {
    if (!stop && cancel && ++polled % cancel_poll_rows == 0 && cancel()) stop = true;
    return stop;
  };
  ROCELAB_RETURN_IF_ERROR(require_run(run));
  auto hosts = map_names(db.get(), "hosts", run, records.hosts);
  if (!hosts.ok()) return hosts.error();
  auto devices = map_names(db.get(), "devices", run, records.devices);
  if (!devices.ok()) return devices.error();
  if (!inserts) {
    auto prepared = prepare_inserts(db.get());
    if (!prepared.ok()) return prepared.error();
    inserts.emplace(std::move(*prepared));
  }
  auto& ins = *inserts;

  for (std::size_t i = 0; i < records.flows.size(); ++i) {
    if (stopping()) break;
    const auto& f = records.flows[i];
    auto src = translate(*hosts, f.src, "flow src host", i);
    if (!src.ok()) return src.error();
    auto dst = translate(*hosts, f.dst, "flow dst host", i);
    if (!dst.ok()) return dst.error();
    ins.flow.bind(1, run).bind(2, *src).bind(3, *dst).bind(4, f.qp).bind(5, int{f.priority})
        .bind(6, static_cast<int>(f.kind)).bind(7, f.bytes).bind(8, f.start_ns).bind(9, f.end_ns)
        .bind(10, f.fct_ns).bind(11, f.ideal_fct_ns).bind(12, f.retransmits).bind(13, f.ce_marked)
        .bind(14, f.cnps).bind(15, f.tag);
    ROCELAB_RETURN_IF_ERROR(ins.flow.run());
  }
  for (std::size_t i = 0; i < records.pauses.size(); ++i) {
    if (stopping()) break;
    const auto& p = records.pauses[i];
    auto device = translate(*devices, p.device, "pause device", i);
    if (!device.ok()) return device.error();
    ins.pause.bind(1, run).bind(2, *device).bind(3, p.port).bind(4, int{p.priority}).bind(5, p.start_ns)
        .bind(6, p.end_ns).bind(7, static_cast<int>(p.source));
    ROCELAB_RETURN_IF_ERROR(ins.pause.run());
  }
  for (std::size_t i = 0; i < records.events.size(); ++i) {
    if (stopping()) break;
    const auto& e = records.events[i];
    auto device = translate(*devices, e.device, "event device", i);
    if (!device.ok()) return device.error();
    auto src = translate(*hosts, e.src, "event src host", i);
    if (!src.ok()) return src.error();
    auto dst = translate(*hosts, e.dst, "event dst host", i);
    if (!dst.ok()) return dst.error();
    ins.event.bind(1, run).bind(2, static_cast<int>(e.kind)).bind(3, *device).bind(4, e.port)
        .bind(5, int{e.priority}).bind(6, e.t_ns).bind(7, *src).bind(8, *dst).bind(9, e.qp)
        .bind(10, static_cast<int>(e.source));
    ROCELAB_RETURN_IF_ERROR(ins.event.run());
  }
  for (std::size_t i = 0; i < records.counters.size(); ++i) {
    if (stopping()) break;
    const auto& c = records.counters[i];
    auto device = translate(*devices, c.device, "counter device", i);
    if (!device.ok()) return device.error();
    auto name = counter_id(c.name);
    if (!name.ok()) return name.error();
    ins.counter.bind(1, run).bind(2, *device).bind(3, c.port).bind(4, *name).bind(5, c.t_ns).bind(6, c.value);
    ROCELAB_RETURN_IF_ERROR(ins.counter.run());
  }
  for (std::size_t i = 0; i < records.queues.size(); ++i) {
    if (stopping()) break;
    const auto& q = records.queues[i];
    auto device = translate(*devices, q.device, "queue sample device", i);
    if (!device.ok()) return device.error();
    ins.queue.bind(1, run).bind(2, *device).bind(3, q.port).bind(4, int{q.queue}).bind(5, q.t_ns).bind(6, q.bytes);
    ROCELAB_RETURN_IF_ERROR(ins.queue.run());
  }
  for (const auto& a : records.allreduce) {
    if (stopping()) break;
    ins.allreduce.bind(1, run).bind(2, a.algorithm).bind(3, a.ranks).bind(4, a.bytes).bind(5, a.time_ns)
        .bind(6, a.algbw_gbps).bind(7, a.busbw_gbps);
    ROCELAB_RETURN_IF_ERROR(ins.allreduce.run());
  }

  if (cancelled != nullptr) *cancelled = stop;
  // Totals add up over appends (each agent reports its own share); simulated time is the
  // furthest any append reached.
  const auto& t = records.totals;
  auto totals = sql::statement::prepare(
      db.get(),
      "UPDATE totals SET pfc_pause_frames = pfc_pause_frames + ?2, pfc_resume_frames = pfc_resume_frames + ?3, "
      "paused_ns = paused_ns + ?4, ce_marked = ce_marked + ?5, cnps = cnps + ?6, drops = drops + ?7, "
      "retransmits = retransmits + ?8, packets_forwarded = packets_forwarded + ?9 WHERE run = ?1");
  if (!totals.ok()) return totals.error();
  totals->bind(1, run).bind(2, t.pfc_pause_frames).bind(3, t.pfc_resume_frames).bind(4, t.paused_ns)
      .bind(5, t.ce_marked).bind(6, t.cnps).bind(7, t.drops).bind(8, t.retransmits).bind(9, t.packets_forwarded);
  ROCELAB_RETURN_IF_ERROR(totals->run());
  auto simulated = sql::statement::prepare(db.get(), "UPDATE runs SET simulated_ns = max(simulated_ns, ?2) WHERE id = ?1");
  if (!simulated.ok()) return simulated.error();
  simulated->bind(1, run).bind(2, records.simulated_ns);
  return simulated->run();
}

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
    sqlite3_busy_timeout(p->db.get(), 10000);
    ROCELAB_RETURN_IF_ERROR(schema::check_readable(p->db.get(), path));
    return run_store(std::move(p));
  }

  auto db = sql::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!db.ok()) return db.error();
  p->db = std::move(*db);
  sqlite3* h = p->db.get();
  sqlite3_busy_timeout(h, 10000);
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

status run_store::append(std::int64_t run, const run_records& records) {
  bool cancelled = false;
  return append_batch(run, records, {}, cancelled);
}

status run_store::append_batch(std::int64_t run, const run_records& records, const std::function<bool()>& cancel,
                               bool& cancelled) {
  const std::string context = "appending records to run " + std::to_string(run) + " in " + impl_->path;
  auto tx = sql::transaction::begin(impl_->db.get(), context);
  if (!tx.ok()) return tx.error();
  if (auto st = impl_->append_in_transaction(run, records, cancel, &cancelled); !st.ok()) {
    // Rolled back: counter names added in this transaction are gone again.
    impl_->counter_ids.clear();
    return st.with_context(context);
  }
  if (auto st = tx->commit(); !st.ok()) {
    impl_->counter_ids.clear();
    return st;
  }
  return status::success();
}

namespace {

// Moves up to `room` rows of `from`, starting at `pos`, into `to`.
template <class T>
void take_rows(const std::vector<T>& from, std::vector<T>& to, std::size_t& pos, std::size_t& room) {
  const std::size_t n = std::min(room, from.size() - pos);
  to.assign(from.begin() + static_cast<std::ptrdiff_t>(pos), from.begin() + static_cast<std::ptrdiff_t>(pos + n));
  pos += n;
  room -= n;
}

}  // namespace

status run_store::append(std::int64_t run, const run_records& records, const append_options& options) {
  const std::size_t batch = std::max<std::size_t>(1, options.batch_rows);
  const std::size_t rows = records.flows.size() + records.pauses.size() + records.events.size() +
                           records.counters.size() + records.queues.size() + records.allreduce.size();
  if (rows <= batch) {
    bool cancelled = false;
    ROCELAB_RETURN_IF_ERROR(append_batch(run, records, options.cancel_requested, cancelled));
    if (cancelled) return {error_code::cancelled, "storing run " + std::to_string(run) + ": cancelled"};
    return status::success();
  }
  std::size_t flows = 0, pauses = 0, events = 0, counters = 0, queues = 0, allreduce = 0;
  std::size_t stored = 0;
  run_records part;
  part.backend = records.backend;
  part.hosts = records.hosts;
  part.devices = records.devices;
  part.simulated_ns = records.simulated_ns;
  part.totals = records.totals;
  while (stored < rows) {
    if (stored > 0 && options.cancel_requested && options.cancel_requested())
      return {error_code::cancelled, "storing run " + std::to_string(run) + ": cancelled after " +
                                         std::to_string(stored) + " of " + std::to_string(rows) + " records"};
    std::size_t room = batch;
    take_rows(records.flows, part.flows, flows, room);
    take_rows(records.pauses, part.pauses, pauses, room);
    take_rows(records.events, part.events, events, room);
    take_rows(records.counters, part.counters, counters, room);
    take_rows(records.queues, part.queues, queues, room);
    take_rows(records.allreduce, part.allreduce, allreduce, room);
    bool cancelled = false;
    ROCELAB_RETURN_IF_ERROR(append_batch(run, part, options.cancel_requested, cancelled));
    if (cancelled)
      return {error_code::cancelled, "storing run " + std::to_string(run) + ": cancelled within a batch after " +
                                         std::to_string(stored) + " of " + std::to_string(rows) + " records"};
    stored += batch - room;
    part.totals = {};  // added once
  }
  return status::success();
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

namespace {

status load_parameters(sqlite3* db, std::unordered_map<std::int64_t, run_info*>& by_id, std::optional<std::int64_t> only) {
  auto s = sql::statement::prepare(db, only ? "SELECT run, path, value FROM parameters WHERE run = ?1"
                                            : "SELECT run, path, value FROM parameters");
  if (!s.ok()) return s.error();
  if (only) s->bind(1, *only);
  for (;;) {
    auto row = s->step();
    if (!row.ok()) return row.error();
    if (!*row) return status::success();
    if (auto it = by_id.find(s->column_int64(0)); it != by_id.end())
      it->second->parameters.emplace(s->column_text(1), s->column_text(2));
  }
}

}  // namespace

result<std::vector<run_info>> run_store::runs() const {
  auto s = sql::statement::prepare(impl_->db.get(), std::string(run_columns) + " ORDER BY id");
  if (!s.ok()) return s.error();
  std::vector<run_info> out;
  for (;;) {
    auto row = s->step();
    if (!row.ok()) return row.error().with_context("listing runs in " + impl_->path);
    if (!*row) break;
    out.push_back(read_run_row(*s));
  }
  std::unordered_map<std::int64_t, run_info*> by_id;
  for (auto& r : out) by_id.emplace(r.id, &r);
  ROCELAB_RETURN_IF_ERROR(load_parameters(impl_->db.get(), by_id, std::nullopt));
  return out;
}

result<run_info> run_store::run(std::int64_t id) const {
  auto s = sql::statement::prepare(impl_->db.get(), std::string(run_columns) + " WHERE id = ?1");
  if (!s.ok()) return s.error();
  s->bind(1, id);
  auto row = s->step();
  if (!row.ok()) return row.error();
  if (!*row) return status(error_code::not_found, "no run " + std::to_string(id) + " in " + impl_->path);
  run_info r = read_run_row(*s);
  s->reset();
  std::unordered_map<std::int64_t, run_info*> by_id{{id, &r}};
  ROCELAB_RETURN_IF_ERROR(load_parameters(impl_->db.get(), by_id, id));
  return r;
}

namespace {

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

template <typename T>
T narrow(std::int64_t v) {
  return static_cast<T>(v);
}

}  // namespace

result<run_records> run_store::load(std::int64_t run) const {
  sqlite3* h = impl_->db.get();
  const std::string context = "loading run " + std::to_string(run) + " from " + impl_->path;
  // One read transaction: the records are one consistent snapshot even while a writer appends.
  ROCELAB_RETURN_IF_ERROR(sql::exec(h, "BEGIN").with_context(context));
  struct end_read {
    sqlite3* db;
    ~end_read() { sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr); }
  } end{h};

  run_records out;
  bool found = false;
  auto st = for_each_row(h, "SELECT backend, simulated_ns FROM runs WHERE id = ?1", run, [&](sql::statement& s) {
    found = true;
    out.backend = s.column_text(0);
    out.simulated_ns = s.column_int64(1);
  });
  if (!st.ok()) return st.with_context(context);
  if (!found) return status(error_code::not_found, context + ": no such run");

  st = for_each_row(h, "SELECT name FROM hosts WHERE run = ?1 ORDER BY idx", run,
                    [&](sql::statement& s) { out.hosts.push_back(s.column_text(0)); });
  if (!st.ok()) return st.with_context(context);
  st = for_each_row(h, "SELECT name FROM devices WHERE run = ?1 ORDER BY idx", run,
                    [&](sql::statement& s) { out.devices.push_back(s.column_text(0)); });
  if (!st.ok()) return st.with_context(context);
  st = for_each_row(h,
                    "SELECT src, dst, qp, priority, kind, bytes, start_ns, end_ns, fct_ns, ideal_fct_ns, retransmits, "
                    "ce_marked, cnps, tag FROM flows WHERE run = ?1 ORDER BY rowid",
                    run, [&](sql::statement& s) {
                      flow_record f;
                      f.src = narrow<std::uint32_t>(s.column_int64(0));
                      f.dst = narrow<std::uint32_t>(s.column_int64(1));
                      f.qp = narrow<std::uint32_t>(s.column_int64(2));
                      f.priority = narrow<std::uint8_t>(s.column_int64(3));
                      f.kind = static_cast<workload_kind>(s.column_int64(4));
                      f.bytes = s.column_uint64(5);
                      f.start_ns = s.column_int64(6);
                      f.end_ns = s.column_int64(7);
                      f.fct_ns = s.column_int64(8);
                      f.ideal_fct_ns = s.column_int64(9);
                      f.retransmits = s.column_uint64(10);
                      f.ce_marked = s.column_uint64(11);
                      f.cnps = s.column_uint64(12);
                      f.tag = s.column_uint64(13);
                      out.flows.push_back(f);
                    });
  if (!st.ok()) return st.with_context(context);
  st = for_each_row(h,
                    "SELECT device, port, priority, start_ns, end_ns, source FROM pauses WHERE run = ?1 ORDER BY rowid",
                    run, [&](sql::statement& s) {
                      pause_interval p;
                      p.device = narrow<std::uint32_t>(s.column_int64(0));
                      p.port = narrow<std::uint32_t>(s.column_int64(1));
                      p.priority = narrow<std::uint8_t>(s.column_int64(2));
                      p.start_ns = s.column_int64(3);
                      p.end_ns = s.column_int64(4);
                      p.source = static_cast<pause_source>(s.column_int64(5));
                      out.pauses.push_back(p);
                    });
  if (!st.ok()) return st.with_context(context);
  st = for_each_row(h,
                    "SELECT kind, device, port, priority, t_ns, src, dst, qp, source FROM events WHERE run = ?1 "
                    "ORDER BY rowid",
                    run, [&](sql::statement& s) {
                      congestion_event e;
                      e.kind = static_cast<event_kind>(s.column_int64(0));
                      e.device = narrow<std::uint32_t>(s.column_int64(1));
                      e.port = narrow<std::uint32_t>(s.column_int64(2));
                      e.priority = narrow<std::uint8_t>(s.column_int64(3));
                      e.t_ns = s.column_int64(4);
                      e.src = narrow<std::uint32_t>(s.column_int64(5));
                      e.dst = narrow<std::uint32_t>(s.column_int64(6));
                      e.qp = narrow<std::uint32_t>(s.column_int64(7));
                      e.source = static_cast<pause_source>(s.column_int64(8));
                      out.events.push_back(e);
                    });
  if (!st.ok()) return st.with_context(context);
  st = for_each_row(h,
                    "SELECT c.device, c.port, n.name, c.t_ns, c.value FROM counters c JOIN counter_names n ON n.id = "
                    "c.name WHERE c.run = ?1 ORDER BY c.rowid",
                    run, [&](sql::statement& s) {
                      counter_sample c;
                      c.device = narrow<std::uint32_t>(s.column_int64(0));
                      c.port = narrow<std::uint32_t>(s.column_int64(1));
                      c.name = s.column_text(2);
                      c.t_ns = s.column_int64(3);
                      c.value = s.column_uint64(4);
                      out.counters.push_back(std::move(c));
                    });
  if (!st.ok()) return st.with_context(context);
  st = for_each_row(h,
                    "SELECT device, port, queue, t_ns, bytes FROM queue_samples WHERE run = ?1 ORDER BY rowid", run,
                    [&](sql::statement& s) {
                      queue_sample q;
                      q.device = narrow<std::uint32_t>(s.column_int64(0));
                      q.port = narrow<std::uint32_t>(s.column_int64(1));
                      q.queue = narrow<std::uint8_t>(s.column_int64(2));
                      q.t_ns = s.column_int64(3);
                      q.bytes = s.column_uint64(4);
                      out.queues.push_back(q);
                    });
  if (!st.ok()) return st.with_context(context);
  st = for_each_row(h,
                    "SELECT algorithm, ranks, bytes, time_ns, algbw_gbps, busbw_gbps FROM allreduce WHERE run = ?1 "
                    "ORDER BY rowid",
                    run, [&](sql::statement& s) {
                      allreduce_result a;
                      a.algorithm = s.column_text(0);
                      a.ranks = narrow<std::uint32_t>(s.column_int64(1));
                      a.bytes = s.column_uint64(2);
                      a.time_ns = s.column_int64(3);
                      a.algbw_gbps = s.column_double(4);
                      a.busbw_gbps = s.column_double(5);
                      out.allreduce.push_back(std::move(a));
                    });
  if (!st.ok()) return st.with_context(context);
  st = for_each_row(h,
                    "SELECT pfc_pause_frames, pfc_resume_frames, paused_ns, ce_marked, cnps, drops, retransmits, "
                    "packets_forwarded FROM totals WHERE run = ?1",
                    run, [&](sql::statement& s) {
                      auto& t = out.totals;
                      t.pfc_pause_frames = s.column_uint64(0);
                      t.pfc_resume_frames = s.column_uint64(1);
                      t.paused_ns = s.column_int64(2);
                      t.ce_marked = s.column_uint64(3);
                      t.cnps = s.column_uint64(4);
                      t.drops = s.column_uint64(5);
                      t.retransmits = s.column_uint64(6);
                      t.packets_forwarded = s.column_uint64(7);
                    });
  if (!st.ok()) return st.with_context(context);
  return out;
}

result<std::vector<agent_record>> run_store::agents(std::int64_t run) const {
  std::vector<agent_record> out;
  auto st = for_each_row(impl_->db.get(),
                         "SELECT name, address, clock_offset_ns, clock_uncertainty_ns, state FROM agents WHERE run = ?1 "
                         "ORDER BY name",
                         run, [&](sql::statement& s) {
                           out.push_back({s.column_text(0), s.column_text(1), s.column_double(2), s.column_double(3),
                                          s.column_text(4)});
                         });
  if (!st.ok()) return st.with_context("listing agents of run " + std::to_string(run));
  return out;
}

result<std::int64_t> run_store::begin_sweep(const sweep_info& sweep) {
  auto s = sql::statement::prepare(
      impl_->db.get(),
      "INSERT INTO sweeps (name, method, spec_yaml, budget, started_unix_ns) VALUES (?1, ?2, ?3, ?4, ?5)");
  if (!s.ok()) return s.error();
  s->bind(1, sweep.name).bind(2, sweep.method).bind(3, sweep.spec_yaml).bind(4, sweep.budget)
      .bind(5, sweep.started_unix_ns != 0 ? sweep.started_unix_ns : unix_now_ns());
  ROCELAB_RETURN_IF_ERROR(s->run().with_context("beginning sweep " + sweep.name));
  return sqlite3_last_insert_rowid(impl_->db.get());
}

result<std::vector<sweep_info>> run_store::sweeps() const {
  auto s = sql::statement::prepare(impl_->db.get(),
                                   "SELECT id, name, method, spec_yaml, budget, started_unix_ns FROM sweeps ORDER BY id");
  if (!s.ok()) return s.error();
  std::vector<sweep_info> out;
  for (;;) {
    auto row = s->step();
    if (!row.ok()) return row.error();
    if (!*row) return out;
    out.push_back({s->column_int64(0), s->column_text(1), s->column_text(2), s->column_text(3),
                   static_cast<std::uint32_t>(s->column_int64(4)), s->column_int64(5)});
  }
}

status run_store::add_trial(const trial_record& trial) {
  sqlite3* h = impl_->db.get();
  const std::string context = "adding trial " + std::to_string(trial.index) + " of sweep " + std::to_string(trial.sweep);
  auto tx = sql::transaction::begin(h, context);
  if (!tx.ok()) return tx.error();
  auto s = sql::statement::prepare(
      h, "INSERT INTO trials (sweep, idx, objective, feasible, run, metrics_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!s.ok()) return s.error();
  s->bind(1, trial.sweep).bind(2, trial.index).bind(3, trial.objective).bind(4, trial.feasible ? 1 : 0);
  if (trial.run) s->bind(5, *trial.run);
  else s->bind_null(5);
  s->bind(6, trial.metrics_json);
  ROCELAB_RETURN_IF_ERROR(s->run().with_context(context));
  auto p = sql::statement::prepare(h, "INSERT INTO trial_params (sweep, idx, path, value) VALUES (?1, ?2, ?3, ?4)");
  if (!p.ok()) return p.error();
  for (const auto& [path, value] : trial.params) {
    p->bind(1, trial.sweep).bind(2, trial.index).bind(3, path).bind(4, value);
    ROCELAB_RETURN_IF_ERROR(p->run().with_context(context));
  }
  return tx->commit();
}

result<std::vector<trial_record>> run_store::trials(std::int64_t sweep) const {
  sqlite3* h = impl_->db.get();
  std::vector<trial_record> out;
  auto st = for_each_row(h,
                         "SELECT idx, objective, feasible, run, metrics_json FROM trials WHERE sweep = ?1 ORDER BY idx",
                         sweep, [&](sql::statement& s) {
                           trial_record t;
                           t.sweep = sweep;
                           t.index = static_cast<std::uint32_t>(s.column_int64(0));
                           t.objective = s.column_double(1);
                           t.feasible = s.column_int64(2) != 0;
                           if (!s.column_is_null(3)) t.run = s.column_int64(3);
                           t.metrics_json = s.column_text(4);
                           out.push_back(std::move(t));
                         });
  if (!st.ok()) return st.with_context("listing trials of sweep " + std::to_string(sweep));
  std::unordered_map<std::uint32_t, trial_record*> by_index;
  for (auto& t : out) by_index.emplace(t.index, &t);
  st = for_each_row(h, "SELECT idx, path, value FROM trial_params WHERE sweep = ?1", sweep, [&](sql::statement& s) {
    if (auto it = by_index.find(static_cast<std::uint32_t>(s.column_int64(0))); it != by_index.end())
      it->second->params.emplace(s.column_text(1), s.column_double(2));
  });
  if (!st.ok()) return st.with_context("listing trial parameters of sweep " + std::to_string(sweep));
  return out;
}

}  // namespace rocelab::store

namespace rocelab::store {

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

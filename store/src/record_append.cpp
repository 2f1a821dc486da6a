// Appending records to a run: hosts and devices mapped onto the run's name tables, one
// transaction per append with prepared inserts, batches of append_options::batch_rows
// rows, and a cancel hook asked every cancel_poll_rows rows.

#include "run_store_impl.hpp"

#include <algorithm>
#include <string_view>
#include <type_traits>

#include "record_sql.hpp"

namespace rocelab::store {

namespace {

result<insert_statements> prepare_inserts(sqlite3* db) {
  insert_statements out;
  status failed = status::success();
  record_sql::for_each_table([&](const auto& table, std::size_t) {
    if (!failed.ok()) return;
    using record = typename std::remove_cvref_t<decltype(table)>::record_type;
    auto insert = sql::statement::prepare(db, record_sql::insert<record>(table.name));
    if (!insert.ok()) failed = insert.error();
    else out.push_back(std::move(*insert));
  });
  if (!failed.ok()) return failed;
  return out;
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

// Translates a record's local host or device index through `mapping`; an empty mapping
// means the caller already uses the run's indexes.
result<std::int64_t> translate(const std::vector<std::uint32_t>& mapping, std::uint32_t local, std::string_view table,
                               std::string_view field, std::size_t record) {
  if (mapping.empty()) return std::int64_t{local};
  if (local >= mapping.size())
    return status(error_code::invalid_argument, std::string(table) + " " + std::string(field) + " index " +
                                                    std::to_string(local) + " of record " + std::to_string(record) +
                                                    " is beyond the " + std::to_string(mapping.size()) +
                                                    " names given");
  return std::int64_t{mapping[local]};
}

}  // namespace

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
  status failed = status::success();
  record_sql::for_each_table([&](const auto& table, std::size_t position) {
    const auto& rows = records.*table.rows;
    sql::statement& insert = (*inserts)[position];
    for (std::size_t i = 0; i < rows.size() && failed.ok(); ++i) {
      if (stopping()) return;
      // The stored number of a host or device index (the run's) or of a counter name.
      const auto resolve = [&]([[maybe_unused]] const auto& f, const auto& value) -> result<std::int64_t> {
        using member = std::remove_cvref_t<decltype(value)>;
        if constexpr (std::is_same_v<member, std::string>) {
          return counter_id(value);
        } else if constexpr (std::is_same_v<member, std::uint32_t>) {
          return translate(f.role == field_role::host_index ? *hosts : *devices, value, table.name, f.name, i);
        } else {
          return status(error_code::internal, std::string(table.name) + " " + std::string(f.name) +
                                                  ": a name or index field is a std::string or std::uint32_t");
        }
      };
      failed = record_sql::bind(insert, run, rows[i], resolve);
      if (failed.ok()) failed = insert.run();
    }
  });
  ROCELAB_RETURN_IF_ERROR(failed);

  if (cancelled != nullptr) *cancelled = stop;
  // Totals add up over appends (each agent reports its own share); simulated time is the
  // furthest any append reached.
  const auto& t = records.totals;
  auto totals = sql::statement::prepare(
      db.get(),
      "UPDATE totals SET pfc_pause_frames = pfc_pause_frames + ?2, pfc_resume_frames = pfc_resume_frames + ?3, "
      "paused_ns = paused_ns + ?4, ce_marked = ce_marked + ?5, cnps = cnps + ?6, drops = drops + ?7, "
      "retransmits = retransmits + ?8, packets_forwarded = packets_forwarded + ?9, "
      "retransmits_measured = min(retransmits_measured, ?10), cnps_measured = min(cnps_measured, ?11) WHERE run = ?1");
  if (!totals.ok()) return totals.error();
  totals->bind(1, run).bind(2, t.pfc_pause_frames).bind(3, t.pfc_resume_frames).bind(4, t.paused_ns)
      .bind(5, t.ce_marked).bind(6, t.cnps).bind(7, t.drops).bind(8, t.retransmits).bind(9, t.packets_forwarded)
      .bind(10, int{t.retransmits_measured}).bind(11, int{t.cnps_measured});
  ROCELAB_RETURN_IF_ERROR(totals->run());
  auto simulated = sql::statement::prepare(db.get(), "UPDATE runs SET simulated_ns = max(simulated_ns, ?2) WHERE id = ?1");
  if (!simulated.ok()) return simulated.error();
  simulated->bind(1, run).bind(2, records.simulated_ns);
  return simulated->run();
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

}  // namespace rocelab::store

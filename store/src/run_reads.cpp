// Reading runs back: the run list and one run with its parameters, its records in the
// order they were appended, and its agents.

#include "run_store_impl.hpp"

#include <type_traits>

#include "record_sql.hpp"

namespace rocelab::store {

namespace {

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
  if (!s.column_is_null(10)) r.calibration = s.column_int64(10);
  return r;
}

constexpr const char* run_columns =
    "SELECT id, name, backend, seed, status, error, started_unix_ns, ended_unix_ns, sweep, spec_yaml, calibration "
    "FROM runs";
// The same columns with an empty spec: a listing of thousands of runs reads no YAML.
constexpr const char* run_columns_without_spec =
    "SELECT id, name, backend, seed, status, error, started_unix_ns, ended_unix_ns, sweep, '', calibration "
    "FROM runs";

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

result<std::vector<run_info>> run_store::runs(with_spec_yaml spec) const {
  auto s = sql::statement::prepare(impl_->db.get(),
                                   std::string(spec == with_spec_yaml::yes ? run_columns : run_columns_without_spec) +
                                       " ORDER BY id");
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

result<run_records> run_store::load(std::int64_t run) const { return load(run, load_parts{}); }

result<run_records> run_store::load(std::int64_t run, const load_parts& parts) const {
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
  record_sql::for_each_table([&](const auto& table, std::size_t) {
    if (!st.ok() || !(parts.*table.part)) return;
    using record = typename std::remove_cvref_t<decltype(table)>::record_type;
    auto& rows = out.*table.rows;
    st = for_each_row(h, record_sql::select<record>(table.name), run, [&](sql::statement& s) {
      record_sql::read(s, rows.emplace_back());
    });
  });
  if (!st.ok()) return st.with_context(context);
  st = for_each_row(h,
                    "SELECT pfc_pause_frames, pfc_resume_frames, paused_ns, ce_marked, cnps, drops, retransmits, "
                    "packets_forwarded, retransmits_measured, cnps_measured FROM totals WHERE run = ?1",
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
                      t.retransmits_measured = s.column_int64(8) != 0;
                      t.cnps_measured = s.column_int64(9) != 0;
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

}  // namespace rocelab::store

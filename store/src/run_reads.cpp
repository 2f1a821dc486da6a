// Reading runs back: the run list and one run with its parameters, its records in the
// order they were appended, and its agents.

#include "run_store_impl.hpp"

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
  if (parts.flows) {
    st = for_each_row(h,
                      "SELECT src, dst, qp, priority, kind, bytes, start_ns, end_ns, fct_ns, ideal_fct_ns, retransmits, "
                      "ce_marked, cnps, tag, retransmits_measured, cnps_measured FROM flows WHERE run = ?1 ORDER BY rowid",
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
                        f.retransmits_measured = s.column_int64(14) != 0;
                        f.cnps_measured = s.column_int64(15) != 0;
                        out.flows.push_back(f);
                      });
    if (!st.ok()) return st.with_context(context);
  }
  if (parts.pauses) {
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
  }
  if (parts.events) {
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
  }
  if (parts.counters) {
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
  }
  if (parts.queues) {
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
  }
  if (parts.allreduce) {
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
  }
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

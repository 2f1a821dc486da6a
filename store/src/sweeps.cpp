// Tuning sweeps in the run store: a sweep, its trials and each trial's parameters.

#include "run_store_impl.hpp"

namespace rocelab::store {

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

// Lab calibrations: each YAML text kept once, found again by its SHA-256.

#include "run_store_impl.hpp"
#include "sha256.hpp"

namespace rocelab::store {

namespace {

constexpr const char* calibration_columns = "SELECT id, lab, taken_at, sha256, yaml FROM calibrations";

calibration_info read_calibration_row(const sql::statement& s) {
  calibration_info c;
  c.id = s.column_int64(0);
  c.lab = s.column_text(1);
  c.taken_at = s.column_text(2);
  c.sha256 = s.column_text(3);
  c.yaml = s.column_text(4);
  return c;
}

}  // namespace

result<std::int64_t> run_store::add_calibration(std::string_view lab, std::string_view taken_at, std::string_view yaml) {
  sqlite3* h = impl_->db.get();
  const std::string context = "storing the calibration of " + std::string(lab) + " taken at " + std::string(taken_at);
  const std::string digest = sha256_hex(yaml);
  auto tx = sql::transaction::begin(h, context);
  if (!tx.ok()) return tx.error();
  auto insert = sql::statement::prepare(
      h, "INSERT INTO calibrations (lab, taken_at, sha256, yaml) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (sha256) DO NOTHING");
  if (!insert.ok()) return insert.error().with_context(context);
  insert->bind(1, lab).bind(2, taken_at).bind(3, digest).bind(4, yaml);
  if (auto st = insert->run(); !st.ok()) return st.with_context(context);
  auto find = sql::statement::prepare(h, "SELECT id FROM calibrations WHERE sha256 = ?1");
  if (!find.ok()) return find.error().with_context(context);
  find->bind(1, digest);
  auto row = find->step();
  if (!row.ok()) return row.error().with_context(context);
  if (!*row) return status(error_code::internal, context + ": the calibration is not there after storing it");
  const std::int64_t id = find->column_int64(0);
  find->reset();
  ROCELAB_RETURN_IF_ERROR(tx->commit());
  return id;
}

status run_store::set_calibration(std::int64_t run, std::int64_t calibration) {
  sqlite3* h = impl_->db.get();
  const std::string context = "recording calibration " + std::to_string(calibration) + " for run " + std::to_string(run);
  auto tx = sql::transaction::begin(h, context);
  if (!tx.ok()) return tx.error();
  auto known = sql::statement::prepare(h, "SELECT 1 FROM calibrations WHERE id = ?1");
  if (!known.ok()) return known.error().with_context(context);
  known->bind(1, calibration);
  auto row = known->step();
  if (!row.ok()) return row.error().with_context(context);
  if (!*row) return {error_code::not_found, context + ": no such calibration in " + impl_->path};
  known->reset();
  auto s = sql::statement::prepare(h, "UPDATE runs SET calibration = ?1 WHERE id = ?2");
  if (!s.ok()) return s.error().with_context(context);
  s->bind(1, calibration).bind(2, run);
  ROCELAB_RETURN_IF_ERROR(s->run().with_context(context));
  if (sqlite3_changes(h) == 0) return {error_code::not_found, context + ": no such run in " + impl_->path};
  return tx->commit();
}

result<calibration_info> run_store::calibration(std::int64_t id) const {
  auto s = sql::statement::prepare(impl_->db.get(), std::string(calibration_columns) + " WHERE id = ?1");
  if (!s.ok()) return s.error();
  s->bind(1, id);
  auto row = s->step();
  if (!row.ok()) return row.error().with_context("reading calibration " + std::to_string(id) + " from " + impl_->path);
  if (!*row) return status(error_code::not_found, "no calibration " + std::to_string(id) + " in " + impl_->path);
  calibration_info c = read_calibration_row(*s);
  s->reset();
  return c;
}

result<std::vector<calibration_info>> run_store::calibrations() const {
  auto s = sql::statement::prepare(impl_->db.get(), std::string(calibration_columns) + " ORDER BY id");
  if (!s.ok()) return s.error();
  std::vector<calibration_info> out;
  for (;;) {
    auto row = s->step();
    if (!row.ok()) return row.error().with_context("listing calibrations in " + impl_->path);
    if (!*row) return out;
    out.push_back(read_calibration_row(*s));
  }
}

}  // namespace rocelab::store

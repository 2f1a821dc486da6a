#pragma once
// records.db in a run directory: the run as the store keeps it, in a store file of its own
// (store/whole_run.hpp), so `rocelab runs import DIR` stores it again exactly, e.g. after
// the main store could not (locked past every attempt, a full disk).
#include <string>

#include "rocelab/common/output_file.hpp"
#include "rocelab/store/run_store.hpp"
#include "rocelab/store/whole_run.hpp"

namespace rocelab::cli {

inline constexpr const char* run_records_file = "records.db";

// Writes `dir`/records.db holding `run` alone. Through common/output_file.hpp: the store
// file is made under a temporary name and renamed into place, never through a symlink.
inline status write_run_records_file(const std::string& dir, const store::whole_run& run, existing_output existing) {
  const std::string path = dir + "/" + run_records_file;
  auto out = output_file::create(path, existing);
  if (!out) return out.error();
  {
    auto db = store::run_store::open(out->temporary_path());
    if (!db) return db.error().with_context("writing " + path);
    // The file is ours alone: each repeat in one transaction.
    store::append_options whole;
    whole.batch_rows = static_cast<std::size_t>(-1);
    if (auto id = store::store_whole_run(*db, run, whole); !id) return id.error().with_context("writing " + path);
  }  // closed: the log is checkpointed into the file and removed
  return out->commit();
}

}  // namespace rocelab::cli

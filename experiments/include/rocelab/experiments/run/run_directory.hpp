#pragma once
// The files a run leaves beside the run store: one directory per run with
//   flows.csv, pauses.csv, queues.csv, counters.csv, allreduce.csv (records of every
//   repeat, with `repeat` and `seed` columns), summary.json and spec.yaml (the resolved
//   spec: every field, loadable again). Each CSV starts with a header line.
// Reports, the CLI and Python read these; the column names are the record field names
// (records.hpp).

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "rocelab/common/output_file.hpp"
#include "rocelab/common/records.hpp"
#include "rocelab/common/result.hpp"

namespace rocelab::experiments {

// A time-sortable run id: UTC "20250131T235959.123Z-" then 4 hex digits of `entropy`
// (so two runs in the same millisecond differ). Lexical order is time order.
[[nodiscard]] std::string make_run_id(std::chrono::system_clock::time_point now, std::uint32_t entropy);

struct run_files {
  std::string spec_yaml;
  std::string summary_json;
  std::vector<std::uint64_t> seeds;         // seed of each repeat
  std::vector<const run_records*> repeats;  // records of each repeat
};

// The names of a run directory: write_run_directory's files and records.db, the run as its
// store keeps it (store/whole_run.hpp; written by `rocelab run`, read by `runs import`).
[[nodiscard]] const std::vector<std::string>& run_directory_files();

// Creates `dir` (and parents) and writes the files; errors name the file. Each file goes
// through common/output_file.hpp: never written through a symlink; with
// existing_output::refuse a directory that holds any of run_directory_files() already is
// refused, naming it, before anything is written (the commands' --force replaces).
[[nodiscard]] status write_run_directory(const std::string& dir, const run_files& files,
                                         existing_output existing = existing_output::refuse);

}  // namespace rocelab::experiments

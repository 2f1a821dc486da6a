#include "rocelab/experiments/run/run_directory.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <span>

#include "rocelab/common/output_file.hpp"
#include "record_csv.hpp"

namespace rocelab::experiments {
namespace {

// Writes one file through `body(FILE*)` (common/output_file.hpp: a temporary file renamed
// into place, never through a symlink), checking every write and the close.
template <class Body>
status write_file(const std::filesystem::path& path, existing_output existing, Body body) {
  auto out = output_file::create(path.string(), existing);
  if (!out) return out.error();
  body(out->stream());
  return out->commit();
}

// Columns a file computes from each record (record_csv.hpp), where it has always put them.
constexpr std::array<record_csv::derived_column<flow_record>, 1> flow_derived{{
    {"slowdown", "ideal_fct_ns", [](std::FILE* f, const flow_record& r, std::size_t) { std::fprintf(f, "%.6g", r.slowdown()); }},
}};
constexpr std::array<record_csv::derived_column<pause_interval>, 1> pause_derived{{
    {"duration_ns", "end_ns",
     [](std::FILE* f, const pause_interval& p, std::size_t) {
       std::fprintf(f, "%lld", static_cast<long long>(p.end_ns - p.start_ns));
     }},
}};
// The result's position among its repeat's all-reduce results.
constexpr std::array<record_csv::derived_column<allreduce_result>, 1> allreduce_derived{{
    {"iteration", "", [](std::FILE* f, const allreduce_result&, std::size_t position) { std::fprintf(f, "%zu", position); }},
}};

// One CSV of `rows` of every repeat: each row leads with the repeat (its position in
// files.repeats) and the repeat's seed, then the record's columns (record_csv.hpp).
template <class Record>
status write_records(const std::filesystem::path& path, existing_output existing, const run_files& files,
                     std::vector<Record> run_records::*rows,
                     std::span<const record_csv::derived_column<Record>> derived = {}) {
  return write_file(path, existing, [&](std::FILE* f) {
    std::fprintf(f, "repeat,seed,%s\n", record_csv::header<Record>(derived).c_str());
    for (std::size_t i = 0; i < files.repeats.size(); ++i) {
      const run_records& records = *files.repeats[i];
      const unsigned long long seed = i < files.seeds.size() ? files.seeds[i] : 0;
      const auto& list = records.*rows;
      for (std::size_t k = 0; k < list.size(); ++k) {
        std::fprintf(f, "%zu,%llu,", i, seed);
        record_csv::put_row(f, list[k], k, records.devices, derived);
        std::fputc('\n', f);
      }
    }
  });
}

}  // namespace

std::string make_run_id(std::chrono::system_clock::time_point now, std::uint32_t entropy) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d%02d%02dT%02d%02d%02d.%03dZ-%04x", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000), entropy & 0xffffU);
  return buf;
}

const std::vector<std::string>& run_directory_files() {
  static const std::vector<std::string> names{"spec.yaml",  "summary.json", "flows.csv",     "pauses.csv",
                                              "queues.csv", "counters.csv", "allreduce.csv", "records.db"};
  return names;
}

status write_run_directory(const std::string& dir, const run_files& files, existing_output existing) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return {error_code::io_error, "creating run directory " + dir + ": " + ec.message(), ec.value()};
  const fs::path base(dir);
  // Every name is checked before any is written: a directory holding one output already
  // is refused whole, not left half replaced.
  if (existing == existing_output::refuse) ROCELAB_RETURN_IF_ERROR(check_outputs_absent(dir, run_directory_files()));

  ROCELAB_RETURN_IF_ERROR(write_file(base / "spec.yaml", existing, [&](std::FILE* f) { std::fputs(files.spec_yaml.c_str(), f); }));
  ROCELAB_RETURN_IF_ERROR(write_file(base / "summary.json", existing, [&](std::FILE* f) {
    std::fputs(files.summary_json.c_str(), f);
    std::fputc('\n', f);
  }));

  ROCELAB_RETURN_IF_ERROR(write_records<flow_record>(base / "flows.csv", existing, files, &run_records::flows, flow_derived));
  ROCELAB_RETURN_IF_ERROR(
      write_records<pause_interval>(base / "pauses.csv", existing, files, &run_records::pauses, pause_derived));
  ROCELAB_RETURN_IF_ERROR(write_records<queue_sample>(base / "queues.csv", existing, files, &run_records::queues));
  ROCELAB_RETURN_IF_ERROR(write_records<counter_sample>(base / "counters.csv", existing, files, &run_records::counters));
  ROCELAB_RETURN_IF_ERROR(
      write_records<allreduce_result>(base / "allreduce.csv", existing, files, &run_records::allreduce, allreduce_derived));
  return status::success();
}

}  // namespace rocelab::experiments

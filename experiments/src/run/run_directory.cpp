#include "rocelab/experiments/run/run_directory.hpp"

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>

#include "rocelab/common/output_file.hpp"

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

// Device names and strings in the CSVs come from our own topology ("sw0", "leaf1");
// quote them anyway so a name with a comma cannot shift columns.
void put_name(std::FILE* f, const std::vector<std::string>& names, std::uint32_t index) {
  if (index < names.size()) {
    std::fputc('"', f);
    for (char c : names[index]) {
      if (c == '"') std::fputc('"', f);
      std::fputc(c, f);
    }
    std::fputc('"', f);
  } else {
    std::fprintf(f, "%u", index);
  }
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

  auto seed_of = [&](std::size_t i) -> unsigned long long { return i < files.seeds.size() ? files.seeds[i] : 0; };
  ROCELAB_RETURN_IF_ERROR(write_file(base / "flows.csv", existing, [&](std::FILE* f) {
    std::fputs("repeat,seed,src,dst,qp,priority,kind,bytes,start_ns,end_ns,fct_ns,ideal_fct_ns,slowdown,"
               "retransmits,ce_marked,cnps,tag\n", f);
    // A count the NIC did not measure is an empty cell, never 0.
    const auto count = [](std::uint64_t v, bool measured) { return measured ? std::to_string(v) : std::string(); };
    for (std::size_t i = 0; i < files.repeats.size(); ++i)
      for (const flow_record& r : files.repeats[i]->flows)
        std::fprintf(f, "%zu,%llu,%u,%u,%u,%u,%s,%llu,%lld,%lld,%lld,%lld,%.6g,%s,%llu,%s,%llu\n", i, seed_of(i), r.src,
                     r.dst, r.qp, unsigned{r.priority}, to_string(r.kind), static_cast<unsigned long long>(r.bytes),
                     static_cast<long long>(r.start_ns), static_cast<long long>(r.end_ns),
                     static_cast<long long>(r.fct_ns), static_cast<long long>(r.ideal_fct_ns), r.slowdown(),
                     count(r.retransmits, r.retransmits_measured).c_str(), static_cast<unsigned long long>(r.ce_marked),
                     count(r.cnps, r.cnps_measured).c_str(), static_cast<unsigned long long>(r.tag));
  }));
  ROCELAB_RETURN_IF_ERROR(write_file(base / "pauses.csv", existing, [&](std::FILE* f) {
    std::fputs("repeat,seed,device,port,priority,start_ns,end_ns,duration_ns,source\n", f);
    for (std::size_t i = 0; i < files.repeats.size(); ++i)
      for (const pause_interval& p : files.repeats[i]->pauses) {
        std::fprintf(f, "%zu,%llu,", i, seed_of(i));
        put_name(f, files.repeats[i]->devices, p.device);
        std::fprintf(f, ",%u,%u,%lld,%lld,%lld,%s\n", p.port, unsigned{p.priority}, static_cast<long long>(p.start_ns),
                     static_cast<long long>(p.end_ns), static_cast<long long>(p.end_ns - p.start_ns),
                     to_string(p.source));
      }
  }));
  ROCELAB_RETURN_IF_ERROR(write_file(base / "queues.csv", existing, [&](std::FILE* f) {
    std::fputs("repeat,seed,device,port,queue,t_ns,bytes\n", f);
    for (std::size_t i = 0; i < files.repeats.size(); ++i)
      for (const queue_sample& q : files.repeats[i]->queues) {
        std::fprintf(f, "%zu,%llu,", i, seed_of(i));
        put_name(f, files.repeats[i]->devices, q.device);
        std::fprintf(f, ",%u,%u,%lld,%llu\n", q.port, unsigned{q.queue}, static_cast<long long>(q.t_ns),
                     static_cast<unsigned long long>(q.bytes));
      }
  }));
  ROCELAB_RETURN_IF_ERROR(write_file(base / "counters.csv", existing, [&](std::FILE* f) {
    std::fputs("repeat,seed,device,port,name,t_ns,value\n", f);
    for (std::size_t i = 0; i < files.repeats.size(); ++i)
      for (const counter_sample& c : files.repeats[i]->counters) {
        std::fprintf(f, "%zu,%llu,", i, seed_of(i));
        put_name(f, files.repeats[i]->devices, c.device);
        std::fprintf(f, ",%u,%s,%lld,%llu\n", c.port, c.name.c_str(), static_cast<long long>(c.t_ns),
                     static_cast<unsigned long long>(c.value));
      }
  }));
  ROCELAB_RETURN_IF_ERROR(write_file(base / "allreduce.csv", existing, [&](std::FILE* f) {
    std::fputs("repeat,seed,iteration,algorithm,ranks,bytes,time_ns,algbw_gbps,busbw_gbps\n", f);
    for (std::size_t i = 0; i < files.repeats.size(); ++i) {
      std::size_t iteration = 0;
      for (const allreduce_result& a : files.repeats[i]->allreduce)
        std::fprintf(f, "%zu,%llu,%zu,%s,%u,%llu,%lld,%.6f,%.6f\n", i, seed_of(i), iteration++, a.algorithm.c_str(),
                     a.ranks, static_cast<unsigned long long>(a.bytes), static_cast<long long>(a.time_ns),
                     a.algbw_gbps, a.busbw_gbps);
    }
  }));
  return status::success();
}

}  // namespace rocelab::experiments

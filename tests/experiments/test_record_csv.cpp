// The run directory's CSVs come from the field tables (experiments/src/run/record_csv.hpp):
// a record type that exists only here gets its header and rows from its table, and each
// file of a run directory has a column for every field its table does not leave out, with
// the headers a single-repeat run has always had.
#include "../../experiments/src/run/record_csv.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "../support/record_fields_support.hpp"
#include "../support/temp_dir.hpp"
#include "rocelab/experiments/run/run_directory.hpp"

namespace rocelab::experiments {
namespace {

using rocelab::testing::probe_record;

std::string row_of(const probe_record& p, std::size_t position, const std::vector<std::string>& devices,
                   std::span<const record_csv::derived_column<probe_record>> derived = {}) {
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* f = open_memstream(&text, &size);
  record_csv::put_row(f, p, position, devices, derived);
  std::fclose(f);
  std::string out(text, size);
  std::free(text);
  return out;
}

constexpr std::array<record_csv::derived_column<probe_record>, 2> probe_derived{{
    {"position", "", [](std::FILE* f, const probe_record&, std::size_t position) { std::fprintf(f, "%zu", position); }},
    {"twice", "small", [](std::FILE* f, const probe_record& p, std::size_t) { std::fprintf(f, "%u", 2U * p.small); }},
}};

TEST(record_csv, a_test_record_gets_its_header_and_cells_from_its_table) {
  EXPECT_EQ(record_csv::header<probe_record>(), "device,t_ns,big,small,colour,ratio,label,counted,count,added");
  probe_record p{1, -5, 18446744073709551615ULL, 200, rocelab::testing::probe_colour::blue, 0.5, "x y", true, 9, 42};
  EXPECT_EQ(row_of(p, 0, {"sw0", "sw,1"}), "\"sw,1\",-5,18446744073709551615,200,blue,0.500000,x y,true,9,42");
  p.counted = false;
  p.device = 7;
  EXPECT_EQ(row_of(p, 0, {"sw0"}), "7,-5,18446744073709551615,200,blue,0.500000,x y,false,,42")
      << "a device beyond the names is its number; an unmeasured count is empty";
}

TEST(record_csv, derived_columns_go_where_they_are_placed) {
  const std::span<const record_csv::derived_column<probe_record>> derived(probe_derived);
  EXPECT_EQ(record_csv::header<probe_record>(derived),
            "position,device,t_ns,big,small,twice,colour,ratio,label,counted,count,added");
  probe_record p;
  p.small = 3;
  EXPECT_EQ(row_of(p, 4, {}, derived), "4,0,-1,0,3,6,red,0.000000,,true,0,0");
}

std::string first_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// The headers are what readers of run directories (reports, scripts, notebooks) rely on;
// each CSV field of a table must be among them.
TEST(record_csv, run_directory_files_have_a_column_per_csv_field) {
  rocelab::testing::temp_dir dir("rocelab-experiments");
  const auto records = rocelab::testing::filled_records(1);
  run_files files;
  files.summary_json = "{}";
  files.seeds = {11};
  files.repeats = {&records};
  ASSERT_TRUE(write_run_directory(dir.path().string(), files).ok());
  const auto has_every_field = [&]<class Record>(const std::string& file, Record*) {
    // The record's own columns, after the leading repeat and seed every file has.
    const std::string line = first_line(dir.path() / file);
    ASSERT_EQ(line.rfind("repeat,seed,", 0), 0u) << file;
    const std::string header = "," + line.substr(std::string("repeat,seed,").size()) + ",";
    for_each_field<Record>([&](const auto& f) {
      const bool listed = header.find("," + std::string(f.name) + ",") != std::string::npos;
      EXPECT_EQ(listed, !f.has(no_csv)) << file << " " << f.name;
    });
  };
  has_every_field("flows.csv", static_cast<flow_record*>(nullptr));
  has_every_field("pauses.csv", static_cast<pause_interval*>(nullptr));
  has_every_field("queues.csv", static_cast<queue_sample*>(nullptr));
  has_every_field("counters.csv", static_cast<counter_sample*>(nullptr));
  has_every_field("allreduce.csv", static_cast<allreduce_result*>(nullptr));
  EXPECT_EQ(first_line(dir.path() / "flows.csv"),
            "repeat,seed,src,dst,qp,priority,kind,bytes,start_ns,end_ns,fct_ns,ideal_fct_ns,slowdown,retransmits,"
            "ce_marked,cnps,tag");
  EXPECT_EQ(first_line(dir.path() / "pauses.csv"), "repeat,seed,device,port,priority,start_ns,end_ns,duration_ns,source");
  EXPECT_EQ(first_line(dir.path() / "queues.csv"), "repeat,seed,device,port,queue,t_ns,bytes");
  EXPECT_EQ(first_line(dir.path() / "counters.csv"), "repeat,seed,device,port,name,t_ns,value");
  EXPECT_EQ(first_line(dir.path() / "allreduce.csv"),
            "repeat,seed,iteration,algorithm,ranks,bytes,time_ns,algbw_gbps,busbw_gbps");
}

}  // namespace
}  // namespace rocelab::experiments

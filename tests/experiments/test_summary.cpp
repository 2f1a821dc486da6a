#include "rocelab/experiments/run/summary.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <vector>

#include "rocelab/experiments/tuning/objective.hpp"
#include "rocelab/experiments/run/run_directory.hpp"
#include "rocelab/experiments/run/summary_metrics.hpp"

namespace rocelab::experiments {
namespace {

TEST(summary, nearest_rank_percentiles) {
  struct {
    const char* name;
    std::vector<std::int64_t> sorted;
    double p;
    std::int64_t expected;
  } cases[] = {
      {"empty is zero", {}, 50, 0},
      {"one value", {7}, 99, 7},
      {"median of four is the second", {1, 2, 3, 4}, 50, 2},
      {"median of five is the third", {1, 2, 3, 4, 5}, 50, 3},
      {"p99 of 16 flows is the largest", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, 99, 16},
      {"p0 is the minimum", {3, 9}, 0, 3},
      {"p100 is the maximum", {3, 9}, 100, 9},
  };
  for (const auto& c : cases) EXPECT_EQ(percentile(std::span<const std::int64_t>(c.sorted), c.p), c.expected) << c.name;
  // p99 of 1..100 is 99 exactly (rank 99), not rounded up to 100.
  std::vector<std::int64_t> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_EQ(percentile(std::span<const std::int64_t>(hundred), 99), 99);
  EXPECT_EQ(percentile(std::span<const std::int64_t>(hundred), 50), 50);
}

flow_record flow(workload_kind kind, std::int64_t fct, std::int64_t ideal, bool done = true) {
  flow_record f;
  f.kind = kind;
  f.bytes = 1000;
  f.start_ns = 0;
  f.end_ns = done ? fct : -1;
  f.fct_ns = done ? fct : -1;
  f.ideal_fct_ns = ideal;
  return f;
}

run_records sample_run() {
  run_records r;
  r.backend = "twin";
  for (int i = 1; i <= 10; ++i) r.flows.push_back(flow(workload_kind::incast, i * 1000, 500));
  r.flows.push_back(flow(workload_kind::background, 0, 100, false));
  r.totals.pfc_pause_frames = 3;
  r.totals.paused_ns = 4000;
  r.totals.ce_marked = 12;
  r.totals.cnps = 5;
  r.totals.drops = 0;
  r.totals.retransmits = 1;
  r.allreduce.push_back({"ring", 8, 1'000'000, 100'000, 80, 140});
  r.allreduce.push_back({"ring", 8, 1'000'000, 300'000, 26.7, 46.7});
  r.simulated_ns = 123456;
  return r;
}

TEST(summary, pools_flows_and_totals) {
  const run_records a = sample_run(), b = sample_run();
  const run_summary s = summarize({&a, &b}, {1, 2});
  EXPECT_EQ(s.all.flows, 22u);
  EXPECT_EQ(s.all.completed, 20u);
  EXPECT_EQ(s.all.fct_p50_ns, 5000);  // rank 10 of 20: 1,1,2,2,...,5,5
  EXPECT_EQ(s.all.fct_max_ns, 10000);
  EXPECT_DOUBLE_EQ(s.all.slowdown_p50, 10.0);
  EXPECT_EQ(s.pause_frames, 6u);
  EXPECT_EQ(s.paused_ns, 8000);
  EXPECT_EQ(s.ce_marked, 24u);
  EXPECT_EQ(s.cnp, 10u);
  EXPECT_EQ(s.retransmits, 2u);
  ASSERT_TRUE(s.allreduce.has_value());
  EXPECT_EQ(s.allreduce->iterations, 4u);
  // Mean time 200 us: 1 MB x 8 / 200000 ns = 40 Gb/s; busbw x 14/8 = 70.
  EXPECT_DOUBLE_EQ(s.allreduce->algbw_gbps, 40.0);
  EXPECT_DOUBLE_EQ(s.allreduce->busbw_gbps, 70.0);
  EXPECT_EQ(s.by_kind.at("incast").completed, 20u);
  EXPECT_EQ(s.by_kind.at("background").completed, 0u);
}

// Per traffic class: incast, victim and background each get their own FCT and slowdown
// percentiles, by name in the JSON, and the objective reads them as <kind>.<metric>.
run_records three_classes() {
  run_records r;
  r.backend = "twin";
  for (int i = 1; i <= 4; ++i) r.flows.push_back(flow(workload_kind::incast, i * 10'000, 1000));
  for (int i = 1; i <= 5; ++i) r.flows.push_back(flow(workload_kind::victim, i * 3000, 1000));
  r.flows.push_back(flow(workload_kind::victim, 0, 1000, false));
  r.flows.push_back(flow(workload_kind::background, 1500, 1000));
  r.flows.push_back(flow(workload_kind::background, 2500, 500));
  r.totals.paused_ns = 7000;
  return r;
}

TEST(summary, by_kind_reports_each_traffic_class) {
  const run_records r = three_classes();
  const run_summary s = summarize({&r}, {3});
  ASSERT_EQ(s.by_kind.size(), 3u);
  const flow_stats& v = s.by_kind.at("victim");
  EXPECT_EQ(v.flows, 6u);
  EXPECT_EQ(v.completed, 5u);
  EXPECT_EQ(v.fct_p50_ns, 9000);
  EXPECT_EQ(v.fct_p99_ns, 15000);
  EXPECT_EQ(v.fct_max_ns, 15000);
  EXPECT_DOUBLE_EQ(v.slowdown_p50, 9.0);
  EXPECT_DOUBLE_EQ(v.slowdown_p99, 15.0);
  EXPECT_DOUBLE_EQ(s.by_kind.at("incast").slowdown_p99, 40.0);
  EXPECT_DOUBLE_EQ(s.by_kind.at("background").slowdown_p99, 5.0);

  auto m = metric_value(s, "victim.slowdown_p99");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_DOUBLE_EQ(*m, 15.0);
  EXPECT_DOUBLE_EQ(*metric_value(s, "victim.fct_p99_ns"), 15000.0);
  EXPECT_DOUBLE_EQ(*metric_value(s, "victim.incomplete"), 1.0);
  EXPECT_DOUBLE_EQ(*metric_value(s, "background.slowdown_p50"), 1.5);
  // The list of valid names the error gives names every kind a metric can take.
  const auto unknown = check_metric("victims.slowdown_p99");
  ASSERT_FALSE(unknown.ok());
  for (const char* kind : {"incast", "victim", "allreduce", "background"})
    EXPECT_NE(unknown.message().find(kind), std::string::npos) << unknown.message();
  // A run without victim flows says so instead of scoring 0.
  run_records no_victims = sample_run();
  const run_summary without = summarize({&no_victims}, {1});
  EXPECT_FALSE(metric_value(without, "victim.slowdown_p99").ok());

  const auto j = nlohmann::json::parse(summary_json({"r", "twin", "x"}, s, {s}));
  ASSERT_TRUE(j["by_kind"].contains("victim"));
  EXPECT_EQ(j["by_kind"]["victim"]["fct_ns"]["p99"], 15000);
  EXPECT_EQ(j["by_kind"]["victim"]["slowdown"]["p99"], 15.0);
  EXPECT_EQ(j["runs"][0]["by_kind"]["victim"]["completed"], 5);

  auto back = parse_summary_json(j.dump());
  ASSERT_TRUE(back.ok()) << back.error().message();
  ASSERT_EQ(back->each.size(), 1u);
  for (const run_summary* b : {&back->aggregate, &back->each[0]}) {
    ASSERT_EQ(b->by_kind.size(), s.by_kind.size());
    for (const auto& [kind, want] : s.by_kind) {
      const flow_stats& got = b->by_kind.at(kind);
      EXPECT_EQ(got.flows, want.flows) << kind;
      EXPECT_EQ(got.completed, want.completed) << kind;
      EXPECT_EQ(got.fct_p50_ns, want.fct_p50_ns) << kind;
      EXPECT_EQ(got.fct_p99_ns, want.fct_p99_ns) << kind;
      EXPECT_EQ(got.fct_max_ns, want.fct_max_ns) << kind;
      EXPECT_DOUBLE_EQ(got.slowdown_p50, want.slowdown_p50) << kind;
      EXPECT_DOUBLE_EQ(got.slowdown_p99, want.slowdown_p99) << kind;
    }
    EXPECT_DOUBLE_EQ(*metric_value(*b, "victim.slowdown_p99"), 15.0);
  }
}

TEST(summary, json_has_the_documented_keys) {
  const run_records a = sample_run();
  const run_summary one = summarize({&a}, {1});
  const auto j = nlohmann::json::parse(summary_json({"20250101T000000.000Z-0001", "twin", "x"}, one, {one}));
  for (const char* key : {"run_id", "backend", "flows", "completed", "fct_ns", "slowdown", "pfc", "ecn", "cnp", "drops",
                          "retransmits", "allreduce", "runs"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["fct_ns"]["p99"], 10000);
  EXPECT_TRUE(j["fct_ns"].contains("p50"));
  EXPECT_TRUE(j["fct_ns"].contains("max"));
  EXPECT_TRUE(j["slowdown"].contains("p99"));
  EXPECT_EQ(j["pfc"]["pause_frames"], 3);
  EXPECT_EQ(j["pfc"]["paused_ns"], 4000);
  EXPECT_EQ(j["ecn"]["ce_marked"], 12);
  EXPECT_TRUE(j["allreduce"].contains("algbw_gbps"));
  EXPECT_TRUE(j["allreduce"].contains("busbw_gbps"));
  EXPECT_EQ(j["runs"].size(), 1u);
  EXPECT_EQ(j["runs"][0]["seed"], 1);
}

TEST(summary, start_skew_is_the_spread_of_the_senders_offsets_and_0_on_the_twin) {
  const run_records twin = sample_run();
  const run_summary on_twin = summarize({&twin}, {1});
  EXPECT_EQ(on_twin.start_skew_ns, 0);
  auto j = nlohmann::json::parse(summary_json({"r", "twin", "x"}, on_twin, {on_twin}));
  EXPECT_EQ(j["start_skew_ns"], 0) << "present on the twin too";
  EXPECT_FALSE(j.contains("start_offsets_ns"));

  run_records lab = sample_run();
  lab.start_offsets_ns = {{"h2", 40'000}, {"h3", 700'000}, {"h4", 120'000}};
  lab.start_source = "nic";
  run_records later = lab;
  later.start_offsets_ns["h4"] = 2'100'000;
  const run_summary pooled = summarize({&lab, &later}, {1, 2});
  EXPECT_EQ(pooled.start_skew_ns, 2'060'000) << "the largest of the runs";
  j = nlohmann::json::parse(summary_json({"r", "virtual", "x"}, pooled, {summarize({&lab}, {1})}));
  EXPECT_EQ(j["start_skew_ns"], 2'060'000);
  EXPECT_EQ(j["start_offsets_ns"]["h3"], 700'000);
  EXPECT_EQ(j["start_source"], "nic");
  EXPECT_EQ(j["runs"][0]["start_skew_ns"], 660'000);
  auto back = parse_summary_json(j.dump());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->aggregate.start_skew_ns, 2'060'000);
  EXPECT_EQ(back->aggregate.start_offsets_ns.at("h2"), 40'000);
  EXPECT_EQ(back->aggregate.start_source, "nic");
}

TEST(run_directory, run_ids_sort_by_time) {
  using namespace std::chrono;
  const auto t0 = system_clock::time_point(milliseconds(1'700'000'000'123));
  const std::string a = make_run_id(t0, 0xffff);
  const std::string b = make_run_id(t0 + milliseconds(1), 0x0000);
  const std::string c = make_run_id(t0 + hours(24 * 400), 0x1234);
  EXPECT_EQ(a, "20231114T221320.123Z-ffff");
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
}

TEST(run_directory, writes_every_file_with_a_header) {
  const std::string dir = ::testing::TempDir() + "/rocelab-run-test/run1";
  std::filesystem::remove_all(dir);
  run_records r = sample_run();
  r.devices = {"sw0", "h0"};
  r.pauses.push_back({0, 1, 3, 100, 300, pause_source::model});
  r.queues.push_back({0, 1, 3, 50, 4096});
  run_files files{"seed: 1\n", "{}", {1}, {&r}};
  ASSERT_TRUE(write_run_directory(dir, files).ok());
  const std::pair<const char*, const char*> expected[] = {
      {"flows.csv", "repeat,seed,src,dst,qp,priority,kind,bytes,start_ns,end_ns,fct_ns,ideal_fct_ns,slowdown,"},
      {"pauses.csv", "repeat,seed,device,port,priority,start_ns,end_ns,duration_ns,source"},
      {"queues.csv", "repeat,seed,device,port,queue,t_ns,bytes"},
      {"allreduce.csv", "repeat,seed,iteration,algorithm,ranks,bytes,time_ns,algbw_gbps,busbw_gbps"},
      {"counters.csv", "repeat,seed,device,port,name,t_ns,value"},
      {"summary.json", "{}"},
      {"spec.yaml", "seed: 1"},
  };
  for (const auto& [name, header] : expected) {
    std::ifstream in(dir + "/" + name);
    ASSERT_TRUE(in) << name;
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line.rfind(header, 0), 0u) << name << ": " << line;
  }
  std::ifstream pauses(dir + "/pauses.csv");
  std::string line;
  std::getline(pauses, line);
  std::getline(pauses, line);
  EXPECT_EQ(line, "0,1,\"sw0\",1,3,100,300,200,model");
  std::ifstream flows(dir + "/flows.csv");
  int lines = 0;
  while (std::getline(flows, line)) ++lines;
  EXPECT_EQ(lines, 1 + 11);
}

}  // namespace
}  // namespace rocelab::experiments

namespace rocelab::experiments {
namespace {

// What a controller returns for a run is its summary JSON; tuning through it scores that.
TEST(summary, json_reads_back_to_the_same_summary) {
  const run_records a = sample_run();
  const run_summary one = summarize({&a}, {7});
  auto back = parse_summary_json(summary_json({"r", "twin", "x"}, one, {one, one}));
  ASSERT_TRUE(back.ok()) << back.error().message();
  ASSERT_EQ(back->each.size(), 2u);
  for (const run_summary* s : {&back->aggregate, &back->each[1]}) {
    EXPECT_EQ(s->seeds, std::vector<std::uint64_t>{7});
    EXPECT_EQ(s->all.flows, one.all.flows);
    EXPECT_EQ(s->all.fct_p99_ns, one.all.fct_p99_ns);
    EXPECT_DOUBLE_EQ(s->all.slowdown_p99, one.all.slowdown_p99);
    EXPECT_EQ(s->paused_ns, one.paused_ns);
    EXPECT_EQ(s->drops, one.drops);
    EXPECT_EQ(s->cnp, one.cnp);
    ASSERT_TRUE(s->allreduce.has_value());
    EXPECT_DOUBLE_EQ(s->allreduce->busbw_gbps, one.allreduce->busbw_gbps);
    EXPECT_EQ(s->by_kind.at("incast").completed, one.by_kind.at("incast").completed);
  }
  EXPECT_FALSE(parse_summary_json("[1, 2]").ok());
  EXPECT_FALSE(parse_summary_json("{not json").ok());
}

// A real lab whose NICs count neither retransmits nor CNPs: the summary says null, reads
// back as not measured, and an objective on them fails instead of scoring a perfect 0.
TEST(summary, counts_not_measured_stay_unknown_through_json_metrics_and_objectives) {
  run_records lab = sample_run();
  lab.backend = "lab";
  lab.totals.retransmits = 0;
  lab.totals.retransmits_measured = false;
  lab.totals.cnps = 0;
  lab.totals.cnps_measured = false;
  const run_records twin = sample_run();
  const run_summary s = summarize({&twin, &lab}, {1, 2});
  EXPECT_FALSE(s.retransmits_measured) << "one run without them leaves the pooled count unknown";
  EXPECT_FALSE(s.cnp_measured);
  const auto j = nlohmann::json::parse(summary_json({"r", "lab", "x"}, s, {s}));
  EXPECT_TRUE(j.at("retransmits").is_null()) << j.dump();
  EXPECT_TRUE(j.at("cnp").is_null()) << j.dump();
  auto back = parse_summary_json(j.dump());
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_FALSE(back->aggregate.retransmits_measured);
  EXPECT_FALSE(back->aggregate.cnp_measured);

  for (const char* metric : {"retransmits", "cnp"}) {
    auto v = metric_value(back->aggregate, metric);
    ASSERT_FALSE(v.ok()) << metric << " read as " << *v;
    EXPECT_EQ(v.error().code(), error_code::unavailable);
    EXPECT_NE(v.error().message().find("not measured"), std::string::npos) << v.error().message();
  }
  EXPECT_TRUE(metric_value(back->aggregate, "drops").ok());

  const auto metrics = key_metrics(back->aggregate);
  const summary_metric* r = find_metric(metrics, "retransmits");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(metric_text(*r), "not measured");
  EXPECT_EQ(metric_text(*find_metric(metrics, "drops")), "0");

  // A twin or soft-NIC run keeps its numbers (0 is a measured 0 there).
  const run_summary t = summarize({&twin}, {1});
  EXPECT_TRUE(t.retransmits_measured);
  EXPECT_EQ(nlohmann::json::parse(summary_json({"r", "twin", "x"}, t, {t})).at("retransmits"), 1);
}

}  // namespace
}  // namespace rocelab::experiments

#include "rocelab/experiments/run/virtual_accounting.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "rocelab/experiments/run/summary.hpp"

namespace rocelab::experiments {
namespace {

using json = nlohmann::json;

// A counters response as the soft switch gives it: per port, per queue, the mirror.
json counters(std::vector<std::vector<std::uint64_t>> ports, std::uint64_t mirror_frames,
              std::uint64_t mirror_errors = 0) {
  // Each port: rx, tx, pfc_tx, headroom_drops, ring_drops, ecn on queue 3, over budget, wait max.
  json a = json::array();
  for (const auto& p : ports) {
    json queues = json::array();
    for (int q = 0; q < 8; ++q) queues.push_back({{"queue", q}, {"ecn_marked", q == 3 ? p[5] : 0}});
    a.push_back({{"rx_packets", p[0]},
                 {"tx_packets", p[1]},
                 {"pfc_tx_frames", p[2]},
                 {"pfc_rx_frames", 0},
                 {"headroom_drops", p[3]},
                 {"ring_drops", p[4]},
                 {"ring_wait_over_budget", p[6]},
                 {"ring_wait_max_ns", p[7]},
                 {"ring_wait_log2_us", json::array({1, 2, 3})},
                 {"queues", queues}});
  }
  return {{"ok", true}, {"ports", a}, {"mirror", {{"frames", mirror_frames}, {"pfc_frames", 0}, {"errors", mirror_errors}}}};
}

TEST(virtual_accounting, a_kept_lab_reports_each_run_its_own_counters) {
  // Three runs on one switch whose counters were never cleared: PFC only (865 pauses),
  // then ECN twice (1300 and 1298 marks, no pauses). Each run is the end minus its start.
  const json before_first = counters({{0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0}}, 0);
  const json after_first = counters({{9000, 100, 865, 0, 0, 0, 0, 400'000}, {100, 9000, 0, 0, 0, 0, 0, 0}}, 9100);
  const json after_second = counters({{18000, 200, 865, 0, 0, 0, 0, 500'000}, {200, 18000, 0, 0, 0, 1300, 0, 0}}, 18200);
  const json after_third = counters({{27000, 300, 865, 0, 0, 0, 0, 300'000}, {300, 27000, 0, 0, 0, 2598, 0, 0}}, 27300);
  struct {
    const char* name;
    json start, end;
    std::uint64_t pauses, marks, mirrored;
  } cases[] = {
      {"PFC only", before_first, after_first, 865, 0, 9100},
      {"first ECN run has no pauses", after_first, after_second, 0, 1300, 9100},
      {"second ECN run counts its own marks", after_second, after_third, 0, 1298, 9100},
  };
  for (const auto& c : cases) {
    auto start = parse_switch_counts(c.start);
    auto end = parse_switch_counts(c.end);
    ASSERT_TRUE(start.ok() && end.ok()) << c.name;
    auto run = counts_since(*start, *end);
    ASSERT_TRUE(run.ok()) << c.name << ": " << run.error().message();
    std::uint64_t pauses = 0, marks = 0;
    for (const auto& p : run->ports) {
      pauses += p.pfc_tx_frames;
      marks += p.ecn_marked;
    }
    EXPECT_EQ(pauses, c.pauses) << c.name;
    EXPECT_EQ(marks, c.marks) << c.name;
    EXPECT_EQ(run->mirror_frames, c.mirrored) << c.name;
    EXPECT_EQ(run->ports[0].ring_wait_max_ns, end->ports[0].ring_wait_max_ns) << c.name << ": a maximum is not a count";
  }
}

TEST(virtual_accounting, a_counter_that_went_backwards_is_an_error_naming_it) {
  auto start = parse_switch_counts(counters({{10, 10, 5, 0, 0, 7, 0, 0}}, 20));
  auto end = parse_switch_counts(counters({{12, 12, 2, 0, 0, 7, 0, 0}}, 24));
  ASSERT_TRUE(start.ok() && end.ok());
  auto run = counts_since(*start, *end);
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.error().message().find("port 0 pfc_tx_frames went from 5 to 2"), std::string::npos)
      << run.error().message();
  auto fewer = parse_switch_counts(counters({}, 0));
  ASSERT_TRUE(fewer.ok());
  EXPECT_FALSE(counts_since(*start, *fewer).ok()) << "a different port count";
  EXPECT_FALSE(parse_switch_counts(json{{"ok", false}}).ok()) << "not a counters response";
}

TEST(virtual_accounting, drops_sum_every_drop_counter_of_a_port) {
  auto c = parse_switch_counts(counters({{100, 90, 0, 3, 4, 0, 0, 0}}, 0));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->ports[0].drops(), 7u);
}

TEST(virtual_accounting, a_switch_that_overran_its_reaction_budget_degrades_the_run) {
  struct {
    const char* name;
    std::vector<std::uint64_t> port;  // as counters(): over budget at 6, wait max at 7
    std::int64_t budget_ns;
    std::size_t reasons;
  } cases[] = {
      {"waits within the budget: not degraded", {100, 100, 5, 0, 0, 0, 0, 1'900'000}, 2'000'000, 0},
      {"one late frame without drops: degraded, pauses maybe late", {100, 100, 5, 0, 0, 0, 1, 2'113'000}, 2'000'000, 1},
      {"47 drops after waits beyond the budget: degraded", {100, 100, 5, 47, 0, 0, 12, 9'500'000}, 2'000'000, 1},
      {"no budget known: nothing to judge", {100, 100, 5, 47, 0, 0, 12, 9'500'000}, 0, 0},
  };
  for (const auto& c : cases) {
    auto counts = parse_switch_counts(counters({c.port, {0, 0, 0, 0, 0, 0, 0, 0}}, 0));
    ASSERT_TRUE(counts.ok());
    const auto reasons = degraded_reasons(*counts, c.budget_ns);
    ASSERT_EQ(reasons.size(), c.reasons) << c.name;
    if (reasons.empty()) continue;
    const std::string& r = reasons.front();
    const bool dropped = c.port[3] > 0;
    const std::vector<std::string> parts =
        dropped ? std::vector<std::string>{"switch port 0", "12 frames", "2.000 ms", "9.500 ms", "47 drops",
                                           "not the fabric"}
                : std::vector<std::string>{"switch port 0", "1 frames", "2.000 ms", "2.113 ms", "no drops",
                                           "pauses may have come late"};
    for (const auto& part : parts)
      EXPECT_NE(r.find(part), std::string::npos) << c.name << ": '" << part << "' missing from: " << r;
  }
}

TEST(virtual_accounting, capture_loss_is_never_zero_when_frames_are_missing) {
  struct {
    const char* name;
    std::uint64_t mirrored, mirror_errors, captured, reported;
    std::uint64_t loss, extra;
  } cases[] = {
      {"everything captured", 20000, 0, 20000, 0, 0, 0},
      {"144 missing, nothing reported dropped", 20000, 0, 19856, 0, 144, 0},
      {"the capture reported more drops than are missing", 20000, 0, 19990, 50, 50, 0},
      {"copies the switch failed to send are lost too", 20000, 6, 20000, 0, 6, 0},
      {"frames not from the mirror are extra, not loss", 100, 0, 103, 0, 0, 3},
  };
  for (const auto& c : cases) {
    const auto a = account_capture(c.mirrored, c.mirror_errors, c.captured, c.reported);
    EXPECT_EQ(a.loss, c.loss) << c.name;
    EXPECT_EQ(a.extra, c.extra) << c.name;
    EXPECT_EQ(a.expected, c.mirrored + c.mirror_errors) << c.name;
    EXPECT_EQ(a.captured, c.captured) << c.name;
  }
}

TEST(virtual_accounting, the_summary_carries_degraded_runs_and_the_capture) {
  run_records first, second;
  first.degraded = {"switch port 3: 12 frames waited"};
  first.capture = run_records::capture_info{"runs/x/capture.pcapng", 1000, 990, 10};
  second.capture = run_records::capture_info{"runs/x/capture-r1.pcapng", 500, 500, 0};
  const run_summary each0 = summarize({&first}, {1});
  const run_summary pooled = summarize({&first, &second}, {1, 2});
  const auto text = summary_json({"r1", "virtual", "incast"}, pooled, {each0, summarize({&second}, {2})});
  const json j = json::parse(text);
  EXPECT_EQ(j.value("degraded", false), true);
  EXPECT_EQ(j["degraded_reasons"].size(), 1u);
  EXPECT_EQ(j.value("capture_file", std::string()), "capture.pcapng") << "the name in the run directory";
  EXPECT_EQ(j["capture"].value("mirrored", 0u), 1500u);
  EXPECT_EQ(j["capture"].value("frames", 0u), 1490u);
  EXPECT_EQ(j["capture"].value("loss", 0u), 10u);
  EXPECT_EQ(j["runs"][1].value("capture_file", std::string()), "capture-r1.pcapng");
  EXPECT_FALSE(j["runs"][1].contains("degraded")) << "the second repeat was not degraded";
  auto back = parse_summary_json(text);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->aggregate.degraded, pooled.degraded);
  ASSERT_TRUE(back->aggregate.capture.has_value());
  EXPECT_EQ(back->aggregate.capture->loss, 10u);
  EXPECT_EQ(back->aggregate.capture->file, "capture.pcapng");
}

}  // namespace
// The NICs' CPU: their CPU time over the run's span and their CPUs; a NIC that did not
// report makes it unknown, not low; at 80% busy or more the run says why it is degraded.
TEST(VirtualAccounting, TheNicsCpuIsTheirCpuTimeOverTheSpanAndTheirCpusAndDegradesTheRunFrom80Percent) {
  const std::vector<std::int64_t> cpu = {600'000'000, 150'000'000, 150'000'000};
  EXPECT_DOUBLE_EQ(*nic_cpu_busy(cpu, 1'000'000'000, 1), 0.9);
  EXPECT_DOUBLE_EQ(*nic_cpu_busy(cpu, 1'000'000'000, 2), 0.45);
  EXPECT_FALSE(nic_cpu_busy(std::vector<std::int64_t>{600'000'000, -1}, 1'000'000'000, 1))
      << "a NIC that did not report";
  EXPECT_FALSE(nic_cpu_busy(cpu, 0, 1));
  EXPECT_FALSE(nic_cpu_busy(cpu, 1'000'000'000, 0));
  EXPECT_FALSE(nic_cpu_busy({}, 1'000'000'000, 1));

  EXPECT_EQ(nic_cpu_degraded_reason(0.79, 1, 13), "");
  const std::string why = nic_cpu_degraded_reason(0.93, 1, 13);
  EXPECT_NE(why.find("the 13 soft NICs kept their CPU 93% busy"), std::string::npos) << why;
  EXPECT_NE(nic_cpu_degraded_reason(0.8, 3, 13).find("their 3 CPUs 80% busy"), std::string::npos);
}

}  // namespace rocelab::experiments

// Traffic from files, frame overhead and fixed queue limits through specs on the twin:
// workload.flow_list (each format, beside a generated incast), topology.frame_overhead_bytes
// and switch.queue_limit_bytes, and what the labs refuse of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/run/summary.hpp"
#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/spec/spec_files.hpp"
#include "rocelab/traffic/flow_list.hpp"
#include "spec_on_twin.hpp"

namespace rocelab::experiments {
namespace {

const std::string examples = std::string(ROCELAB_SOURCE_DIR) + "/examples";

// 8 hosts at 100 Gb/s on one switch; the workload is added per test.
constexpr const char* fabric_yaml = R"(
topology: {hosts: 8, link_gbps: 100, link_delay_ns: 1us}
switch: {buffer_bytes: 4MiB}
twin: {stop_ns: 50ms}
)";

using testing::run_on_twin;

experiment_spec spec_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return testing::spec_of(yaml, "flows.yaml", overrides);
}

// The YAML of `text` as a literal block under workload.flow_list.
std::string inline_flow_list(const std::string& text) {
  std::string out = "workload:\n  flow_list: |\n";
  std::size_t at = 0;
  while (at < text.size()) {
    const auto nl = text.find('\n', at);
    out += "    " + text.substr(at, nl - at) + "\n";
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

struct format_case {
  const char* name;
  std::string text;
  std::vector<std::int64_t> starts_ns;
  std::vector<std::uint64_t> bytes;
};

class flow_list_on_the_twin : public ::testing::TestWithParam<format_case> {};

// Every format's flows complete on the twin with the file's sizes and staggered starts,
// as the flow_list class, tagged with their position in the file.
TEST_P(flow_list_on_the_twin, each_flow_completes_with_its_size_start_and_class) {
  const format_case& c = GetParam();
  const run_records r = run_on_twin(spec_of(std::string(fabric_yaml) + inline_flow_list(c.text)));
  ASSERT_EQ(r.flows.size(), c.bytes.size());
  std::vector<const flow_record*> by_tag(r.flows.size(), nullptr);
  for (const auto& f : r.flows) {
    ASSERT_LT(f.tag, by_tag.size());
    by_tag[f.tag] = &f;
  }
  for (std::size_t i = 0; i < by_tag.size(); ++i) {
    ASSERT_NE(by_tag[i], nullptr) << i;
    const flow_record& f = *by_tag[i];
    EXPECT_TRUE(f.completed()) << i;
    EXPECT_EQ(f.kind, workload_kind::flow_list) << i;
    EXPECT_EQ(f.bytes, c.bytes[i]) << i;
    EXPECT_EQ(f.start_ns, c.starts_ns[i]) << i;
    EXPECT_GE(f.fct_ns, f.ideal_fct_ns) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    formats, flow_list_on_the_twin,
    ::testing::Values(
        format_case{"csv", "src,dst,bytes,start_ns\n1,0,100000,0\n2,0,50000,7000\n3,4,20000,15000\n",
                    {0, 7'000, 15'000}, {100'000, 50'000, 20'000}},
        format_case{"htsim", "Nodes 8\nConnections 3\n1->0 start 0 size 100000\n2->0 start 7 size 50000\n"
                             "3->4 start 15.5 size 20000\n",
                    {0, 7'000, 15'000}, {100'000, 50'000, 20'000}},
        format_case{"hpcc_ns3", "3\n1 0 3 100 100000 0.000000000\n2 0 3 100 50000 0.000007\n"
                                "3 4 3 100 20000 0.000015001\n",
                    {0, 7'000, 15'001}, {100'000, 50'000, 20'000}}),
    [](const auto& info) { return std::string(info.param.name); });

// The example: the file's flows (by their tag column) and a generated incast in one run,
// each file flow with the CSV's size, start and class.
TEST(flow_list_twin, the_example_runs_file_flows_beside_a_generated_incast) {
  auto spec = load_spec_file(examples + "/twin-flow-list.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  auto file = traffic::load_flow_list(examples + "/twin-flow-list.csv", spec->topology.hosts);
  ASSERT_TRUE(file.ok()) << file.error().message();
  const run_records r = run_on_twin(*spec);
  std::size_t incast = 0, from_file = 0;
  for (const auto& f : r.flows) {
    EXPECT_TRUE(f.completed());
    if (f.kind == workload_kind::incast) {
      ++incast;
      continue;
    }
    ++from_file;
    ASSERT_LT(f.tag, file->messages.size());
    const auto& m = file->messages[f.tag];
    EXPECT_EQ(f.kind, m.kind) << f.tag;
    EXPECT_EQ(f.src, m.src) << f.tag;
    EXPECT_EQ(f.dst, m.dst) << f.tag;
    EXPECT_EQ(f.bytes, m.bytes) << f.tag;
    EXPECT_EQ(f.start_ns, m.start_ns) << f.tag;
  }
  EXPECT_EQ(incast, 8u);
  EXPECT_EQ(from_file, file->messages.size());
  const run_summary s = summarize({&r}, {spec->seed});
  for (const char* kind : {"incast", "background", "flow_list"}) EXPECT_TRUE(s.by_kind.contains(kind)) << kind;
  EXPECT_EQ(s.by_kind.at("background").flows, 7u);
  EXPECT_EQ(s.by_kind.at("flow_list").flows, 3u);
}

// What `rocelab run` does before validating: the file is inlined after a comment naming
// it, and errors still give the file's name and its own line numbers.
TEST(flow_list_twin, an_inlined_file_s_errors_name_the_file_and_its_line) {
  const auto dir = std::filesystem::temp_directory_path() / ("rocelab-flows-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "flows.csv") << "src,dst,bytes,start_ns\n1,0,1000,0\n9,0,1000,0\n";
  auto spec = load_spec(std::string(fabric_yaml) + "workload:\n  flow_list: flows.csv\n", (dir / "s.yaml").string());
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  spec->base_dir = dir.string();
  const std::string want = "workload.flow_list: flows.csv:3: src 9 is not a host (the fabric has hosts 0..7)";
  const status from_file = validate(*spec);
  ASSERT_FALSE(from_file.ok());
  EXPECT_NE(from_file.message().find(want.substr(want.find("flows.csv"))), std::string::npos) << from_file.message();
  EXPECT_FALSE(refuse_file_references(*spec).ok()) << "a path must not reach a controller";
  ASSERT_TRUE(inline_file_references(*spec).ok());
  EXPECT_TRUE(is_inline_flow_list(spec->workload.flow_list));
  EXPECT_TRUE(refuse_file_references(*spec).ok());
  const status inlined = validate(*spec);
  ASSERT_FALSE(inlined.ok());
  EXPECT_NE(inlined.message().find(want), std::string::npos) << inlined.message();
  std::filesystem::remove_all(dir);
}

struct refusal_case {
  const char* name;
  std::string flows;                   // the flow list's text
  std::vector<std::string> overrides;  // --set path=value
  std::string expected;                // a part of the message
};

class flow_list_refusals : public ::testing::TestWithParam<refusal_case> {};

TEST_P(flow_list_refusals, name_the_field_and_why) {
  const experiment_spec spec =
      spec_of(std::string(fabric_yaml) + inline_flow_list(GetParam().flows), GetParam().overrides);
  const status st = validate(spec);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(GetParam().expected), std::string::npos) << st.message();
}

const std::string one_flow = "src,dst,bytes,start_ns\n1,0,1000,0\n";

INSTANTIATE_TEST_SUITE_P(
    cases, flow_list_refusals,
    ::testing::Values(
        refusal_case{"after_the_twin_stops", "src,dst,bytes,start_ns\n1,0,1000,0\n2,0,1000,60000000\n", {},
                     "workload.flow_list: inline flow list:3: the flow starts at"},
        // An inline value is one with a line break (a single line is a path).
        refusal_case{"unknown_format", "hello world\nmore\n", {}, "not a flow list this reads: 'hello world'"},
        refusal_case{"no_flows", "src,dst,bytes,start_ns\n# none yet\n", {},
                     "workload.flow_list: inline flow list: lists no flows"},
        refusal_case{"virtual_lab_per_flow_priority", "src,dst,bytes,start_ns,priority\n1,0,1000,0,5\n",
                     {"backend=virtual"}, "priority 5: a lab's NICs send every flow on nic.data_priority (3)"},
        refusal_case{"virtual_lab_frame_overhead", one_flow, {"backend=virtual", "topology.frame_overhead_bytes=0"},
                     "topology.frame_overhead_bytes: is for the twin"},
        refusal_case{"virtual_lab_queue_limit", one_flow, {"backend=virtual", "switch.queue_limit_bytes=100KB"},
                     "switch.queue_limit_bytes: is for the twin"},
        refusal_case{"queue_limit_below_a_packet", one_flow, {"switch.queue_limit_bytes=500"},
                     "switch.queue_limit_bytes: 500B holds no full packet"},
        refusal_case{"frame_overhead_on_infiniband", one_flow,
                     {"fabric.link=infiniband", "topology.frame_overhead_bytes=0"},
                     "topology.frame_overhead_bytes: must be the default 20 on InfiniBand"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(frame_overhead_twin, a_value_beyond_64_bytes_is_refused_where_it_is_set) {
  experiment_spec spec = spec_of(std::string(fabric_yaml) + inline_flow_list(one_flow));
  const status st = apply_override(spec, "topology.frame_overhead_bytes=65");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("topology.frame_overhead_bytes: 65B is outside 0B..64B"), std::string::npos)
      << st.message();
}

// Without preamble and gap a lone flow is as fast as its ideal, and both are faster than
// with Ethernet's 20 bytes a frame.
TEST(frame_overhead_twin, a_lone_flow_runs_at_its_ideal_with_and_without_the_preamble_and_gap) {
  const std::string yaml = std::string(fabric_yaml) + inline_flow_list("src,dst,bytes,start_ns\n1,0,1000000,0\n");
  const experiment_spec with = spec_of(yaml);
  const experiment_spec without = spec_of(yaml, {"topology.frame_overhead_bytes=0"});
  EXPECT_EQ(to_twin_config(without, 1)->topology.frame_overhead_bytes, 0u);
  EXPECT_EQ(to_twin_config(with, 1)->topology.frame_overhead_bytes, 20u);
  const flow_record a = run_on_twin(with).flows.at(0);
  const flow_record b = run_on_twin(without).flows.at(0);
  EXPECT_NEAR(static_cast<double>(a.fct_ns), static_cast<double>(a.ideal_fct_ns), 3.0);
  EXPECT_NEAR(static_cast<double>(b.fct_ns), static_cast<double>(b.ideal_fct_ns), 3.0);
  // 977 frames of 1024 + 62 bytes: 20 more bytes each is 1.8% more time on the wire, and
  // the wire time is nearly all of a 1 MB flow's ideal.
  EXPECT_NEAR(static_cast<double>(a.ideal_fct_ns) / static_cast<double>(b.ideal_fct_ns), 1106.0 / 1086.0, 0.003);
  EXPECT_EQ(ideal_fct_of(without)(1, 0, 1'000'000), b.ideal_fct_ns);
}

// A lossy 6-to-1 incast of 256 KiB each: with switch.queue_limit_bytes the receiver's
// queue never holds more than the limit and drops beyond it (go-back-N recovers); without
// it the dynamic threshold lets the queue grow far past that.
TEST(queue_limit_twin, the_egress_queue_stays_within_its_limit_and_drops_beyond) {
  const std::string yaml = R"(
topology: {hosts: 8, link_gbps: 100, link_delay_ns: 1us}
switch:
  buffer_bytes: 16MiB
  cell_bytes: 1
  pfc: {enabled: false}
  ecn: {enabled: false}
nic:
  dcqcn: {enabled: false}
  retransmit_timeout_ns: 100us
workload:
  incast: {receiver: 0, sender_hosts: 1-6, flow_bytes: 256KiB}
twin:
  stop_ns: 50ms
  queue_sample_interval_ns: 500ns
)";
  constexpr std::uint64_t limit = 100'000;
  auto peak_at_receiver = [](const run_records& r) {
    std::uint64_t peak = 0;
    for (const auto& q : r.queues)
      if (q.port == 0) peak = std::max(peak, q.bytes);
    return peak;
  };
  const experiment_spec limited = spec_of(yaml, {"switch.queue_limit_bytes=100KB"});
  const auto cfg = to_twin_config(limited, 1);
  ASSERT_TRUE(cfg.ok()) << cfg.error().message();
  for (const auto& q : cfg->switch_template.ports.at(0).queues) {
    EXPECT_EQ(q.shared.mode, fabric::buffer_threshold::kind::fixed);
    EXPECT_EQ(q.shared.fixed_bytes, static_cast<std::int64_t>(limit));
  }
  const run_records a = run_on_twin(limited);
  const run_records b = run_on_twin(spec_of(yaml));
  for (const auto* r : {&a, &b})
    for (const auto& f : r->flows) EXPECT_TRUE(f.completed());
  EXPECT_GT(a.totals.drops, 0u);
  EXPECT_GT(peak_at_receiver(a), limit / 2) << "the queue reaches the limit";
  EXPECT_LE(peak_at_receiver(a), limit);
  EXPECT_GT(peak_at_receiver(b), 2 * limit);
}

}  // namespace
}  // namespace rocelab::experiments

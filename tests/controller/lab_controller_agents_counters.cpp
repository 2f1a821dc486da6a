// backend virtual through controller and agents (root), three runs on the one lab the
// agents serve (PFC only, then ECN twice): each run's stored totals (pause frames, CE
// marks, CNPs) are that run's own and equal what its capture shows, counted by the
// captures library's analyzer, within the capture's loss; a degraded run says so in the
// store's note. About 13 s (lab up with 9 agents, three short runs).
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "controller_test_support.hpp"
#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/captures/analyze_capture.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/lab/virtual_backend.hpp"
#include "rocelab/store/run_store.hpp"

namespace rocelab::controller {
namespace {

using namespace std::chrono_literals;
namespace lab = agents::lab;

std::uint64_t distance(std::uint64_t a, std::uint64_t b) { return a > b ? a - b : b - a; }

TEST(lab_controller_agents_counters, each_run_on_the_agents_lab_stores_its_own_counters) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (namespaces, veth, AF_PACKET)";
  const std::string name = "rlk" + std::to_string(::getpid() % 100000);
  const std::string binary = std::string(ROCELAB_BINARY_DIR) + "/rocelab";
  test::temp_dir dir("agentcounters");
  const std::string capture = (dir.path / "capture.pcapng").string();
  auto o = test::lab_controller_options(dir);
  o.virtual_options.lab_name = name;
  o.virtual_options.rocelab_binary = binary;
  o.virtual_options.capture_dpdk = std::getenv("ROCELAB_TEST_PCAP") == nullptr;
  o.virtual_options.capture_file = capture;  // each run's, read before the next
  auto c = controller::start(o);
  ASSERT_TRUE(c.ok()) << c.error().message();
  auto base = experiments::load_spec_file(std::string(ROCELAB_SOURCE_DIR) + "/examples/virtual-incast-8to1.yaml");
  ASSERT_TRUE(base.ok()) << base.error().message();
  // A short incast into a small buffer (the lab's, set when it comes up), so PFC pauses
  // the senders: 8 x 512 KiB into 2 MiB.
  const std::vector<std::string> short_incast = {"switch.buffer_bytes=2MiB", "workload.incast.flow_bytes=512KiB",
                                                 "workload.incast.rounds=1"};
  for (const auto& set : short_incast) ASSERT_TRUE(experiments::apply_override(*base, set).ok()) << set;
  auto lo = experiments::lab_options_for(*base, name, lab::default_state_root, binary);
  lo.controller = (*c)->address();
  lo.token_file = test::write_token_file(dir);
  auto up = lab::lab_up(lo);
  ASSERT_TRUE(up.ok()) << up.error().message();
  struct lab_guard {
    std::string name;
    ~lab_guard() { EXPECT_TRUE(lab::lab_down(name).ok()); }
  } guard{name};
  std::vector<std::string> hosts;
  for (const auto& h : up->hosts) hosts.push_back(h.name);
  ASSERT_TRUE((*c)->wait_for_agents(hosts, 20s)) << "the lab's agents did not register";

  struct step {
    const char* name;
    std::vector<std::string> sets;
  } steps[] = {
      {"PFC only", {"switch.ecn.enabled=false", "nic.dcqcn.enabled=false"}},
      {"ECN", {}},
      {"ECN again", {}},
  };
  std::vector<run_totals> stored;
  for (const auto& s : steps) {
    auto spec = *base;
    std::vector<std::string> sets = short_incast;
    sets.insert(sets.end(), s.sets.begin(), s.sets.end());
    for (const auto& set : sets) ASSERT_TRUE(experiments::apply_override(spec, set).ok()) << set;
    auto out = (*c)->run_spec(spec, {"virtual-incast-8to1.yaml", sets, {}, {}, {}, {}});
    ASSERT_TRUE(out.ok()) << s.name << ": " << out.error().message();
    ASSERT_EQ(out->status, "completed") << s.name << ": " << out->error;
    auto store = store::run_store::open((*c)->db_path(), store::open_mode::read_only);
    ASSERT_TRUE(store.ok()) << store.error().message();
    auto records = store->load(out->run);
    ASSERT_TRUE(records.ok()) << records.error().message();
    auto info = store->run(out->run);
    ASSERT_TRUE(info.ok());
    const auto& ran = out->result.repeats.at(0);
    ASSERT_TRUE(ran.capture.has_value());
    if (!ran.degraded.empty())
      EXPECT_NE(info->error.find("degraded: "), std::string::npos) << "the store's note names a degraded run";
    else
      EXPECT_TRUE(info->error.empty()) << info->error;
    auto a = captures::analyze_capture_file(capture, {.link_gbps = spec.topology.link_gbps});
    ASSERT_TRUE(a.ok()) << a.error().message();
    const auto& cap = a->analysis;
    const std::uint64_t loss = ran.capture->loss;
    const run_totals& t = records->totals;
    EXPECT_LE(distance(t.pfc_pause_frames, cap.pfc.frames), loss)
        << s.name << ": stored pause frames " << t.pfc_pause_frames << ", capture " << cap.pfc.frames;
    EXPECT_LE(distance(t.ce_marked, cap.roce.ecn.ce), loss)
        << s.name << ": stored CE marks " << t.ce_marked << ", capture " << cap.roce.ecn.ce;
    EXPECT_LE(distance(t.cnps, cap.roce.cnp), loss)
        << s.name << ": stored CNPs " << t.cnps << ", capture " << cap.roce.cnp;
    std::cerr << s.name << ": stored pause frames " << t.pfc_pause_frames << " (capture " << cap.pfc.frames
              << "), CE " << t.ce_marked << " (" << cap.roce.ecn.ce << "), CNP " << t.cnps << " (" << cap.roce.cnp
              << "); capture loss " << loss << (ran.degraded.empty() ? "" : "; degraded") << "\n";
    stored.push_back(t);
  }
  // The ECN runs mark, so a cumulative count would show in the second one (its capture
  // holds only its own marks). The PFC-only run through the agents did not always pause in
  // 2 MiB (its pauses are checked against its capture above, 0 included).
  EXPECT_GT(stored[1].ce_marked, 0u);
  EXPECT_GT(stored[2].ce_marked, 0u);
}

}  // namespace
}  // namespace rocelab::controller

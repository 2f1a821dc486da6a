#include "rocelab/experiments/spec/spec.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/experiments/calibration/calibration.hpp"
#include "rocelab/experiments/calibration/calibration_store.hpp"
#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/spec/spec_files.hpp"
#include "rocelab/experiments/run/runner.hpp"

namespace rocelab::experiments {
namespace {

const std::string examples = std::string(ROCELAB_SOURCE_DIR) + "/examples";

TEST(spec, every_example_loads_and_validates) {
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(examples)) {
    if (entry.path().extension() != ".yaml") continue;
    ++seen;
    auto spec = load_spec_file(entry.path().string());
    ASSERT_TRUE(spec.ok()) << spec.error().message();
    EXPECT_TRUE(validate(*spec).ok()) << entry.path() << ": " << validate(*spec).message();
    // Every example runs on a backend that exists (virtual-*.yaml need root).
    EXPECT_TRUE(spec->backend == "twin" || spec->backend == "virtual") << entry.path() << ": " << spec->backend;
  }
  EXPECT_GE(seen, 3);
}

TEST(spec, examples_say_what_the_issue_asks) {
  auto incast = load_spec_file(examples + "/incast-16to1.yaml");
  ASSERT_TRUE(incast.ok());
  EXPECT_TRUE(incast->workload.incast.enabled);
  EXPECT_EQ(incast->workload.incast.senders, 16u);
  EXPECT_EQ(incast->workload.incast.flow_bytes, 64 * 1024);
  EXPECT_EQ(incast->topology.link_gbps, 100);
  EXPECT_FALSE(incast->workload.allreduce.enabled);

  auto ring = load_spec_file(examples + "/allreduce-ring8.yaml");
  ASSERT_TRUE(ring.ok());
  EXPECT_EQ(ring->workload.allreduce.ranks, 8u);
  EXPECT_EQ(ring->workload.allreduce.algorithm, "ring");

  auto ls = load_spec_file(examples + "/leafspine-websearch.yaml");
  ASSERT_TRUE(ls.ok());
  EXPECT_EQ(ls->topology.hosts, 128u);
  EXPECT_EQ(ls->topology.type, "leaf_spine");
  EXPECT_TRUE(ls->workload.background.enabled);
  EXPECT_EQ(ls->workload.background.load, 0.5);
  EXPECT_TRUE(ls->workload.incast.enabled);

  auto ft = load_spec_file(examples + "/twin-fat-tree-k8.yaml");
  ASSERT_TRUE(ft.ok());
  EXPECT_EQ(ft->topology.type, "fat_tree");
  EXPECT_EQ(ft->topology.k, 8u);
  EXPECT_EQ(ft->topology.hosts, 128u);
  EXPECT_TRUE(ft->workload.background.enabled);
  EXPECT_TRUE(ft->workload.incast.enabled);
  auto twin = to_twin_config(*ft, ft->seed);
  ASSERT_TRUE(twin.ok()) << twin.error().message();
  EXPECT_EQ(twin->topology.type, fabric::twin::topology_config::kind::fat_tree);
  EXPECT_EQ(twin->topology.k, 8u);
}

TEST(spec, the_keys_sweeps_rely_on_exist) {
  for (const char* path :
       {"backend", "seed", "topology.hosts", "topology.link_gbps", "switch.buffer_bytes", "switch.pfc.enabled",
        "switch.ecn.enabled", "switch.ecn.kmin_bytes", "switch.ecn.kmax_bytes", "switch.ecn.pmax",
        "nic.dcqcn.enabled", "nic.dcqcn.rpg_time_reset", "nic.dcqcn.rpg_ai_rate", "nic.dcqcn.dce_tcp_g",
        "nic.dcqcn.min_time_between_cnps", "nic.dcqcn.cnp_802p_prio", "nic.dcqcn.rate_reduce_monitor_period"})
    EXPECT_NE(find_field(path), nullptr) << path;
  // Every mlx5 knob dcqcn_config knows is a field.
  const fabric::dcqcn_config d;
  for (const auto& f : field_table())
    if (f.path.rfind("nic.dcqcn.", 0) == 0 && f.path != "nic.dcqcn.enabled") {
      EXPECT_TRUE(d.get(f.path.substr(10)).has_value()) << f.path;
    }
}

TEST(spec, defaults_are_the_sonic_lossless_profile) {
  const experiment_spec s;
  EXPECT_EQ(s.sw.pfc.priorities, std::vector<std::uint32_t>{3});
  EXPECT_EQ(s.sw.ecn.kmin_bytes, 1048576);  // AZURE_LOSSLESS green_min_threshold
  EXPECT_EQ(s.sw.ecn.kmax_bytes, 2097152);
  EXPECT_DOUBLE_EQ(s.sw.ecn.pmax, 0.05);
  EXPECT_EQ(s.nic.dcqcn.cnp_802p_prio, 6);
  EXPECT_EQ(s.sw.dynamic_th, 0);
}

struct error_case {
  const char* name;
  const char* yaml;
  std::vector<const char*> needles;
};

TEST(spec, errors_name_file_line_and_field) {
  const error_case cases[] = {
      {"unknown key suggests the nearest",
       "switch:\n  ecn:\n    kmim_bytes: 20KiB\n",
       {"t.yaml:3:", "unknown key switch.ecn.kmim_bytes", "did you mean switch.ecn.kmin_bytes"}},
      {"key in the wrong section",
       "switch:\n  kmin_bytes: 20KiB\n",
       {"t.yaml:2:", "switch.kmin_bytes", "switch.ecn.kmin_bytes"}},
      {"unknown top-level key",
       "backend: twin\nseeed: 3\n",
       {"t.yaml:2:", "seeed", "did you mean seed"}},
      {"bad size unit",
       "switch:\n  buffer_bytes: 32MB\n  ecn:\n    kmin_bytes: 20kb\n",
       {"t.yaml:4:", "switch.ecn.kmin_bytes", "'20kb' is not a size"}},
      {"bad duration",
       "topology:\n  link_delay_ns: 1 minute\n",
       {"t.yaml:2:", "topology.link_delay_ns", "not a duration"}},
      {"pmax out of range",
       "switch:\n  ecn:\n    pmax: 1.5\n",
       {"t.yaml:3:", "switch.ecn.pmax", "outside 0..1"}},
      {"wrong type",
       "switch:\n  pfc:\n    enabled: maybe\n",
       {"t.yaml:3:", "switch.pfc.enabled", "not a boolean"}},
      {"bad choice",
       "backend: qemu\n",
       {"t.yaml:1:", "backend", "not one of twin, virtual, lab"}},
      {"mapping where a value belongs",
       "seed:\n  a: 1\n",
       {"t.yaml:1:", "seed", "expects a value"}},
      {"value where a section belongs",
       "switch: 3\n",
       {"t.yaml:1:", "switch is a section"}},
      {"dcqcn knob out of range",
       "nic:\n  dcqcn:\n    rpg_time_reset: 0\n",
       {"t.yaml:3:", "nic.dcqcn.rpg_time_reset"}},
      {"unknown dcqcn knob",
       "nic:\n  dcqcn:\n    rpg_time_rest: 300\n",
       {"t.yaml:3:", "did you mean nic.dcqcn.rpg_time_reset"}},
      {"invalid yaml",
       "switch:\n  ecn: [\n",
       {"t.yaml:", "not valid YAML"}},
  };
  for (const auto& c : cases) {
    auto spec = load_spec(c.yaml, "t.yaml");
    ASSERT_FALSE(spec.ok()) << c.name;
    for (const char* needle : c.needles)
      EXPECT_NE(spec.error().message().find(needle), std::string::npos) << c.name << ": " << spec.error().message();
  }
}

TEST(spec, cross_field_errors_name_the_line_of_the_field) {
  const error_case cases[] = {
      {"kmin above kmax",
       "switch:\n  ecn:\n    kmin_bytes: 3MiB\n    kmax_bytes: 1MiB\nworkload:\n  incast:\n    senders: 4\n",
       {"t.yaml:3:", "switch.ecn.kmin_bytes", "3MiB > switch.ecn.kmax_bytes 1MiB"}},
      {"too many senders for the hosts",
       "topology:\n  hosts: 4\nworkload:\n  incast:\n    senders: 16\n",
       {"t.yaml:4:", "workload.incast", "senders 16"}},
      {"no workload", "seed: 2\n", {"workload", "no workload"}},
      {"halving-doubling on 6 ranks",
       "topology:\n  hosts: 8\nworkload:\n  allreduce:\n    algorithm: halving_doubling\n    ranks: 6\n",
       {"t.yaml:4:", "power-of-two"}},
      {"leaf-spine hosts do not divide",
       "topology:\n  type: leaf_spine\n  hosts: 10\n  leaves: 4\n  spines: 2\nworkload:\n  incast:\n    senders: 4\n",
       {"t.yaml:3:", "topology.hosts"}},
      {"missing CDF file",
       "workload:\n  background:\n    cdf: no-such.cdf\n",
       {"t.yaml:3:", "workload.background.cdf", "no-such.cdf"}},
      {"fat-tree of odd k",
       "topology:\n  type: fat_tree\n  k: 5\n  hosts: 31\nworkload:\n  incast:\n    senders: 4\n",
       {"t.yaml:3:", "topology.k", "even"}},
      {"fat-tree hosts are not k^3/4",
       "topology:\n  type: fat_tree\n  k: 4\n  hosts: 20\nworkload:\n  incast:\n    senders: 4\n",
       {"t.yaml:4:", "topology.hosts", "k^3/4 = 16 hosts"}},
      {"k on a leaf-spine",
       "topology:\n  type: leaf_spine\n  hosts: 8\n  leaves: 2\n  spines: 2\n  k: 4\nworkload:\n  incast:\n    senders: 4\n",
       {"t.yaml:6:", "topology.k", "fat_tree only"}},
      {"fat-tree uplinks below a link",
       "topology:\n  type: fat_tree\n  k: 4\n  hosts: 16\n  link_gbps: 0.001\n  oversubscription: 10\n"
       "workload:\n  incast:\n    senders: 4\n",
       {"topology.oversubscription", "link_gbps / oversubscription"}},
  };
  for (const auto& c : cases) {
    auto spec = load_spec(c.yaml, "t.yaml");
    ASSERT_TRUE(spec.ok()) << c.name << ": " << spec.error().message();
    const status st = validate(*spec);
    ASSERT_FALSE(st.ok()) << c.name;
    for (const char* needle : c.needles)
      EXPECT_NE(st.message().find(needle), std::string::npos) << c.name << ": " << st.message();
  }
}

// The lossless class is one setting: nic.data_dscp beside nic.data_priority and the CNP's
// knobs; a CNP DSCP equal to the data DSCP on another priority is refused by name.
TEST(spec, the_lossless_class_comes_from_the_nic_section) {
  auto spec = load_spec("nic:\n  data_priority: 4\n  data_dscp: 4\nworkload:\n  incast:\n    senders: 4\n", "t.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  ASSERT_TRUE(validate(*spec).ok()) << validate(*spec).message();
  auto c = lossless_class_of(*spec);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->data_priority, 4);
  EXPECT_EQ(c->data_dscp, 4);
  EXPECT_EQ(c->cnp_dscp, 48);
  EXPECT_EQ(c->cnp_priority, 6);
  EXPECT_EQ(load_spec("workload:\n  incast:\n    senders: 4\n", "t.yaml")->nic.data_dscp, 26u) << "the default";
  EXPECT_FALSE(apply_override(*spec, "nic.data_dscp=64").ok());
  ASSERT_TRUE(apply_override(*spec, "nic.dcqcn.cnp_dscp=4").ok());
  const status st = validate(*spec);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("nic.dcqcn.cnp_dscp"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("one DSCP to one traffic class"), std::string::npos) << st.message();
}

TEST(spec, set_overrides_any_field) {
  auto spec = load_spec_file(examples + "/incast-16to1.yaml");
  ASSERT_TRUE(spec.ok());
  ASSERT_TRUE(apply_override(*spec, "switch.ecn.kmin_bytes=20KiB").ok());
  ASSERT_TRUE(apply_override(*spec, "switch.ecn.pmax=0.01").ok());
  ASSERT_TRUE(apply_override(*spec, "nic.dcqcn.rpg_time_reset=55us").ok());
  ASSERT_TRUE(apply_override(*spec, "nic.dcqcn.rpg_ai_rate=40Mbps").ok());
  ASSERT_TRUE(apply_override(*spec, "topology.link_gbps=25Gbps").ok());
  ASSERT_TRUE(apply_override(*spec, "seed=7").ok());
  ASSERT_TRUE(apply_override(*spec, "workload.incast.sender_hosts=1-4,9").ok());
  EXPECT_EQ(spec->sw.ecn.kmin_bytes, 20480);
  EXPECT_DOUBLE_EQ(spec->sw.ecn.pmax, 0.01);
  EXPECT_EQ(spec->nic.dcqcn.rpg_time_reset_us, 55);
  EXPECT_EQ(spec->nic.dcqcn.rpg_ai_rate_mbps, 40);
  EXPECT_DOUBLE_EQ(spec->topology.link_gbps, 25);
  EXPECT_EQ(spec->seed, 7u);
  EXPECT_EQ(spec->workload.incast.sender_hosts, (std::vector<std::uint32_t>{1, 2, 3, 4, 9}));
  EXPECT_EQ(*get_field(*spec, "switch.ecn.kmin_bytes"), "20KiB");
  EXPECT_EQ(*get_field(*spec, "nic.dcqcn.rpg_time_reset"), "55");

  const status bad = apply_override(*spec, "switch.ecn.pmax=2");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("--set switch.ecn.pmax=2: switch.ecn.pmax: 2 is outside 0..1"), std::string::npos)
      << bad.message();
  EXPECT_FALSE(apply_override(*spec, "switch.ecn.kmin=1").ok());
  EXPECT_FALSE(apply_override(*spec, "no_equals_sign").ok());

  // A cross-field error caused by an override names the override.
  ASSERT_TRUE(apply_override(*spec, "switch.ecn.kmax_bytes=10KiB").ok());
  const status st = validate(*spec);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--set switch.ecn.kmin_bytes=20KiB"), std::string::npos) << st.message();
}

TEST(spec, set_on_a_workload_field_turns_it_on_unless_disabled) {
  auto spec = load_spec("workload:\n  incast:\n    senders: 4\n  background:\n    enabled: false\n", "t.yaml");
  ASSERT_TRUE(spec.ok());
  EXPECT_TRUE(spec->workload.incast.enabled);
  EXPECT_FALSE(spec->workload.background.enabled);
  ASSERT_TRUE(apply_override(*spec, "workload.background.load=0.3").ok());
  EXPECT_FALSE(spec->workload.background.enabled) << "enabled: false in the file wins";
  ASSERT_TRUE(apply_override(*spec, "workload.allreduce.ranks=4").ok());
  EXPECT_TRUE(spec->workload.allreduce.enabled);
  auto empty = load_spec("workload:\n  incast: {}\n", "t.yaml");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->workload.incast.enabled);
}

TEST(spec, resolved_yaml_round_trips_every_field) {
  for (const char* file : {"/incast-16to1.yaml", "/allreduce-ring8.yaml", "/leafspine-websearch.yaml"}) {
    auto spec = load_spec_file(examples + file);
    ASSERT_TRUE(spec.ok());
    ASSERT_TRUE(apply_override(*spec, "nic.dcqcn.dce_tcp_g=1000").ok());
    const std::string yaml = to_yaml(*spec);
    auto again = load_spec(yaml, "resolved.yaml");
    ASSERT_TRUE(again.ok()) << again.error().message() << "\n" << yaml;
    for (const auto& f : field_table()) EXPECT_EQ(f.get(*again), f.get(*spec)) << file << " " << f.path;
  }
}

TEST(spec, twin_config_follows_the_spec) {
  auto spec = load_spec_file(examples + "/incast-16to1.yaml");
  ASSERT_TRUE(spec.ok());
  ASSERT_TRUE(apply_override(*spec, "switch.pfc.priorities=3,4").ok());
  ASSERT_TRUE(apply_override(*spec, "nic.dcqcn.rpg_hai_rate=100").ok());
  auto c = to_twin_config(*spec, 42);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->seed, 42u);
  EXPECT_EQ(c->topology.hosts, 17u);
  EXPECT_EQ(c->switch_template.lossless_priorities, 0b0001'1000);
  ASSERT_EQ(c->switch_template.ports.size(), 1u);
  const auto& port = c->switch_template.ports[0];
  EXPECT_TRUE(port.queues[3].ecn.enabled);
  EXPECT_FALSE(port.queues[4].ecn.enabled);
  EXPECT_EQ(port.queues[3].ecn.kmin_bytes, 100'000);
  EXPECT_EQ(port.queues[3].ecn.kmax_bytes, 400'000);
  EXPECT_DOUBLE_EQ(port.queues[3].ecn.pmax, 0.2);
  // headroom_bytes 0 (the default): the twin sizes it for each link (speed and delay).
  EXPECT_EQ(port.pgs[3].headroom_bytes, 0);
  EXPECT_EQ(port.pgs[0].headroom_bytes, 0);
  EXPECT_EQ(c->nic.dcqcn.rpg_hai_rate_mbps, 100);
  EXPECT_TRUE(c->nic.dcqcn_enabled);
  EXPECT_TRUE(c->nic.pfc_enabled);

  ASSERT_TRUE(apply_override(*spec, "switch.pfc.enabled=false").ok());
  ASSERT_TRUE(apply_override(*spec, "switch.ecn.enabled=false").ok());
  auto off = to_twin_config(*spec, 1);
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->switch_template.lossless_priorities, 0);
  EXPECT_FALSE(off->switch_template.ports[0].queues[3].ecn.enabled);
  EXPECT_FALSE(off->nic.pfc_enabled);
}

}  // namespace
}  // namespace rocelab::experiments

namespace rocelab::experiments {
namespace {

// Records what a workload posts (the workload is the caller under test here).
class recording_context final : public fabric::twin::twin_context {
 public:
  explicit recording_context(std::uint32_t hosts) : hosts_(hosts) {}
  [[nodiscard]] std::int64_t now_ns() const override { return 0; }
  [[nodiscard]] std::uint32_t hosts() const override { return hosts_; }
  [[nodiscard]] double link_gbps() const override { return 100; }
  std::uint64_t post(const fabric::twin::message& m) override {
    posts.push_back(m);
    return posts.size();
  }
  void report_allreduce(const allreduce_result&) override {}
  std::vector<fabric::twin::message> posts;

 private:
  std::uint32_t hosts_;
};

std::vector<fabric::twin::message> posts_of(const experiment_spec& spec, std::uint64_t seed) {
  auto w = make_workload(spec, seed);
  EXPECT_TRUE(w.ok()) << w.error().message();
  recording_context ctx(spec.topology.hosts);
  (*w)->start(ctx);
  return ctx.posts;
}

TEST(spec, workloads_are_deterministic_for_a_seed) {
  auto spec = load_spec_file(examples + "/leafspine-websearch.yaml");
  ASSERT_TRUE(spec.ok());
  const auto a = posts_of(*spec, 1), b = posts_of(*spec, 1), c = posts_of(*spec, 2);
  ASSERT_EQ(a.size(), b.size());
  std::size_t incast = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].src, b[i].src);
    EXPECT_EQ(a[i].dst, b[i].dst);
    EXPECT_EQ(a[i].bytes, b[i].bytes);
    EXPECT_EQ(a[i].start_ns, b[i].start_ns);
    incast += a[i].kind == workload_kind::incast;
  }
  EXPECT_EQ(incast, 16u);
  EXPECT_GT(a.size(), 1000u);  // 128 hosts x ~18 WebSearch flows in 5 ms at 50% load
  EXPECT_NE(a.size(), c.size());
}

// workload.victim: its fields load, print and load again; the workload it builds is the
// victims' schedule against the spec's incast; errors name the victim field at fault.
TEST(spec, victim_section_round_trips_and_builds_the_victims) {
  const char* yaml =
      "topology:\n  hosts: 12\nworkload:\n  incast:\n    receiver: 0\n    sender_hosts: 1-4\n"
      "  victim:\n    receivers: [9, 10]\n    flow_bytes: 16KiB\n    flows_per_sender: 3\n"
      "    start_ns: 20us\n    gap_ns: 5us\n    priority: 3\n";
  auto spec = load_spec(yaml, "t.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  const victim_spec& v = spec->workload.victim;
  EXPECT_TRUE(v.enabled) << "on when the section is present";
  EXPECT_TRUE(v.hosts.empty());
  EXPECT_EQ(v.receivers, (std::vector<std::uint32_t>{9, 10}));
  EXPECT_EQ(v.flow_bytes, 16 * 1024);
  EXPECT_EQ(v.flows_per_sender, 3u);
  EXPECT_EQ(v.start_ns, 20'000);
  EXPECT_EQ(v.gap_ns, 5'000);
  EXPECT_EQ(v.priority, 3);
  ASSERT_TRUE(validate(*spec).ok()) << validate(*spec).message();
  ASSERT_TRUE(apply_override(*spec, "workload.victim.hosts=2,3").ok());

  auto again = load_spec(to_yaml(*spec), "resolved.yaml");
  ASSERT_TRUE(again.ok()) << again.error().message();
  for (const auto& f : field_table()) {
    if (f.path.rfind("workload.victim.", 0) == 0) {
      EXPECT_EQ(f.get(*again), f.get(*spec)) << f.path;
    }
  }
  EXPECT_EQ(again->workload.victim.hosts, (std::vector<std::uint32_t>{2, 3}));

  std::size_t victims = 0, incast = 0;
  for (const auto& m : posts_of(*again, 1)) {
    if (m.kind == workload_kind::incast) ++incast;
    if (m.kind != workload_kind::victim) continue;
    ++victims;
    EXPECT_TRUE(m.src == 2 || m.src == 3) << m.src;
    EXPECT_TRUE(m.dst == 9 || m.dst == 10) << m.dst;
    EXPECT_EQ(m.bytes, 16u * 1024);
    EXPECT_EQ(m.priority, 3);
    EXPECT_GE(m.start_ns, 20'000);
  }
  EXPECT_EQ(incast, 4u);
  EXPECT_EQ(victims, 6u);

  // Defaults: a set on one field turns the section on; receivers are the hosts outside
  // the incast (5-11 here).
  auto plain = load_spec("topology:\n  hosts: 12\nworkload:\n  incast:\n    sender_hosts: 1-4\n", "t.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->workload.victim.enabled);
  ASSERT_TRUE(apply_override(*plain, "workload.victim.flow_bytes=8KiB").ok());
  EXPECT_TRUE(plain->workload.victim.enabled);
  std::size_t defaults = 0;
  for (const auto& m : posts_of(*plain, 1)) {
    if (m.kind != workload_kind::victim) continue;
    ++defaults;
    EXPECT_GE(m.src, 1u);
    EXPECT_LE(m.src, 4u);
    EXPECT_GE(m.dst, 5u);
  }
  EXPECT_EQ(defaults, 4u);
}

TEST(spec, victim_errors_name_the_field) {
  const error_case cases[] = {
      {"no host outside the incast",
       "topology:\n  hosts: 5\nworkload:\n  incast:\n    senders: 4\n  victim:\n    flow_bytes: 8KiB\n",
       {"t.yaml:6:", "workload.victim.receivers", "every host is the incast's receiver or one of its senders"}},
      {"the incast's receiver as a victim receiver",
       "topology:\n  hosts: 8\nworkload:\n  incast:\n    senders: 4\n  victim:\n    receivers: [0, 6]\n",
       {"t.yaml:7:", "workload.victim.receivers", "0 is the incast's receiver"}},
      {"victims without an incast",
       "topology:\n  hosts: 8\nworkload:\n  victim:\n    receivers: [6]\n",
       {"workload.victim.hosts", "no incast"}},
      {"a sender that is not a host",
       "topology:\n  hosts: 8\nworkload:\n  incast:\n    senders: 4\n  victim:\n    hosts: [1, 9]\n",
       {"t.yaml:7:", "workload.victim.hosts", "9 is not a host"}},
  };
  for (const auto& c : cases) {
    auto spec = load_spec(c.yaml, "t.yaml");
    ASSERT_TRUE(spec.ok()) << c.name << ": " << spec.error().message();
    const status st = validate(*spec);
    ASSERT_FALSE(st.ok()) << c.name;
    for (const char* needle : c.needles)
      EXPECT_NE(st.message().find(needle), std::string::npos) << c.name << ": " << st.message();
  }
}

TEST(spec, user_cdf_files_are_relative_to_the_spec) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "rocelab-spec-cdf";
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "tiny.cdf") << "1000 0\n2000 1\n";
    std::ofstream(dir / "s.yaml") << "topology:\n  hosts: 4\nworkload:\n  background:\n    cdf: tiny.cdf\n"
                                     "    duration_ns: 1ms\n";
  }
  auto spec = load_spec_file((dir / "s.yaml").string());
  ASSERT_TRUE(spec.ok());
  ASSERT_TRUE(validate(*spec).ok()) << validate(*spec).message();
  for (const auto& m : posts_of(*spec, 3)) {
    EXPECT_GE(m.bytes, 1000u);
    EXPECT_LE(m.bytes, 2000u);
  }
}

}  // namespace
}  // namespace rocelab::experiments

namespace rocelab::experiments {
namespace {

TEST(spec, given_headroom_reaches_the_switch_unchanged) {
  auto spec = load_spec_file(examples + "/incast-16to1.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  ASSERT_TRUE(apply_override(*spec, "switch.pfc.headroom_bytes=96KiB").ok());
  auto c = to_twin_config(*spec, 1);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->switch_template.ports[0].pgs[3].headroom_bytes, 96 * 1024);
}

// Regression: headroom was sized from switch.pfc.cable_m (5 m) while the example's links
// have 1 us of propagation (~200 m): 25 KB in flight each way at 100G overflowed it and
// the lossless class dropped with headroom_exhausted. PFC on, ECN off, a buffer small
// enough to pause: pauses, and not one drop.
TEST(spec, lossless_incast_pauses_and_never_drops) {
  auto spec = load_spec_file(examples + "/incast-16to1.yaml");
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  for (const char* set : {"switch.ecn.enabled=false", "nic.dcqcn.enabled=false", "switch.buffer_bytes=2MiB"})
    ASSERT_TRUE(apply_override(*spec, set).ok()) << set;
  ASSERT_TRUE(validate(*spec).ok());
  auto ran = run_experiment(*spec);
  ASSERT_TRUE(ran.ok()) << ran.error().message();
  const run_records& r = ran->repeats.at(0);
  EXPECT_GT(r.totals.pfc_pause_frames, 0u);
  EXPECT_EQ(r.totals.drops, 0u);
  EXPECT_EQ(r.totals.retransmits, 0u);
  for (const auto& f : r.flows) EXPECT_TRUE(f.completed());
}

}  // namespace
}  // namespace rocelab::experiments

namespace rocelab {
namespace {

// The fabric section reaches the twin: InfiniBand with IB congestion control
// where the NIC's congestion control is on, and nothing where it is off.
TEST(spec, the_fabric_section_selects_the_twins_fabric) {
  experiments::experiment_spec spec;
  spec.workload.incast.enabled = true;
  ASSERT_TRUE(experiments::apply_override(spec, "fabric.link=infiniband").ok());
  ASSERT_TRUE(experiments::apply_override(spec, "fabric.routing=adaptive").ok());
  ASSERT_TRUE(experiments::apply_override(spec, "fabric.switch_latency_ns=130ns").ok());
  auto c = experiments::to_twin_config(spec, 1);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->fabric.link, fabric::link_layer::infiniband);
  EXPECT_EQ(c->fabric.routing, fabric::routing_mode::adaptive);
  EXPECT_EQ(c->fabric.congestion, fabric::congestion_control_kind::ib_cc);
  EXPECT_EQ(c->fabric.switch_latency_ns, 130);
  ASSERT_TRUE(experiments::apply_override(spec, "nic.dcqcn.enabled=false").ok());
  EXPECT_EQ(experiments::to_twin_config(spec, 1)->fabric.congestion, fabric::congestion_control_kind::none);

  experiments::experiment_spec roce;
  roce.workload.incast.enabled = true;
  EXPECT_EQ(experiments::to_twin_config(roce, 1)->fabric.congestion, fabric::congestion_control_kind::dcqcn);
  const status bad = experiments::apply_override(roce, "fabric.link=ethernet");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("fabric.link"), std::string::npos) << bad.message();
}

// to_twin_config refuses `spec` with a message naming each of `names`.
void expect_refused_naming(const experiments::experiment_spec& spec, std::initializer_list<const char*> names) {
  auto c = experiments::to_twin_config(spec, 1);
  ASSERT_FALSE(c.ok());
  for (const char* name : names) EXPECT_NE(c.error().message().find(name), std::string::npos) << c.error().message();
}

// fabric.link uec takes its transport options from fabric.uec; a UEC option on a RoCE
// fabric, or a RoCE option (DCQCN, PFC) on a UEC fabric, is an error naming the field.
TEST(spec, a_uec_fabric_takes_its_options_and_rejects_the_other_fabrics) {
  experiments::experiment_spec spec;
  spec.workload.incast.enabled = true;
  ASSERT_TRUE(experiments::apply_override(spec, "fabric.link=uec").ok());
  ASSERT_TRUE(experiments::apply_override(spec, "fabric.uec.load_balancing=oblivious").ok());
  ASSERT_TRUE(experiments::apply_override(spec, "fabric.uec.rccc=true").ok());
  ASSERT_TRUE(experiments::apply_override(spec, "fabric.uec.trim_threshold_bytes=200KB").ok());
  auto c = experiments::to_twin_config(spec, 1);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->fabric.link, fabric::link_layer::uec);
  EXPECT_EQ(c->fabric.congestion, fabric::congestion_control_kind::none);
  EXPECT_EQ(c->fabric.uec.balancing, fabric::load_balancing::oblivious);
  EXPECT_TRUE(c->fabric.uec.nscc);
  EXPECT_TRUE(c->fabric.uec.rccc);
  EXPECT_EQ(c->fabric.uec.trim_threshold_bytes, 200'000);

  experiments::experiment_spec roce_on_uec = spec;
  ASSERT_TRUE(experiments::apply_override(roce_on_uec, "nic.dcqcn.enabled=false").ok());
  expect_refused_naming(roce_on_uec, {"nic.dcqcn.enabled"});

  experiments::experiment_spec uec_on_roce;
  uec_on_roce.workload.incast.enabled = true;
  ASSERT_TRUE(experiments::apply_override(uec_on_roce, "fabric.uec.trimming=false").ok());
  expect_refused_naming(uec_on_roce, {"fabric.uec.trimming", "roce"});

  experiments::experiment_spec uec_on_ib = uec_on_roce;
  ASSERT_TRUE(experiments::apply_override(uec_on_ib, "fabric.link=infiniband").ok());
  EXPECT_FALSE(experiments::to_twin_config(uec_on_ib, 1).ok());
}

// fabric.uec.profile htsim: the twin's config carries the queues, ECN, trimming and RTO
// htsim derives for the spec's fabric (64 hosts at 400 Gb/s: 101 packets, 21..81, 65.4 us),
// and a spec that also sets one of them is refused naming it.
TEST(spec, the_htsim_uec_profile_derives_what_htsim_derives_and_refuses_them_set_beside_it) {
  experiments::experiment_spec spec;
  spec.workload.incast.enabled = true;
  for (const char* a : {"topology.type=leaf_spine", "topology.hosts=64", "topology.leaves=8", "topology.spines=8",
                        "topology.link_gbps=400", "topology.spine_link_gbps=400", "nic.mtu_bytes=4096",
                        "fabric.link=uec", "fabric.uec.profile=htsim"})
    ASSERT_TRUE(experiments::apply_override(spec, a).ok()) << a;
  auto c = experiments::to_twin_config(spec, 1);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->fabric.uec.profile, fabric::uec_profile::htsim);
  EXPECT_EQ(c->switch_template.ports.at(0).queues[0].shared.fixed_bytes, 101 * 4160);
  EXPECT_EQ(c->switch_template.ports.at(0).queues[0].ecn.kmin_bytes, 21 * 4160);
  EXPECT_EQ(c->switch_template.ports.at(0).queues[0].ecn.kmax_bytes, 81 * 4160);
  EXPECT_EQ(c->fabric.uec.trim_threshold_bytes, 101 * 4160);
  EXPECT_EQ(c->fabric.uec.retransmit_timeout_ns, 65'419);
  EXPECT_EQ(c->switch_template.wire_overhead_bytes, 0);

  for (const char* derived : {"fabric.uec.retransmit_timeout_ns=100us", "switch.ecn.kmin_bytes=10KB"}) {
    experiments::experiment_spec both = spec;
    ASSERT_TRUE(experiments::apply_override(both, derived).ok()) << derived;
    const std::string field(derived, std::string_view(derived).find('='));
    expect_refused_naming(both, {field.c_str(), "profile htsim"});
  }
  EXPECT_FALSE(experiments::apply_override(spec, "fabric.uec.profile=ns3").ok());
}

// Link frame loss and link-level retry are UEC link options: they reach the twin on a UEC
// fabric, and on a RoCE fabric the spec is an error naming the field.
TEST(spec, link_level_retry_is_a_uec_link_option) {
  experiments::experiment_spec spec;
  spec.workload.incast.enabled = true;
  ASSERT_TRUE(experiments::apply_override(spec, "fabric.link=uec").ok());
  ASSERT_TRUE(experiments::apply_override(spec, "fabric.uec.link_frame_loss_rate=0.001").ok());
  ASSERT_TRUE(experiments::apply_override(spec, "fabric.uec.link_level_retry=true").ok());
  auto c = experiments::to_twin_config(spec, 1);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_DOUBLE_EQ(c->fabric.uec.link_frame_loss_rate, 0.001);
  EXPECT_TRUE(c->fabric.uec.link_level_retry);

  experiments::experiment_spec cbfc_without_retry = spec;
  ASSERT_TRUE(experiments::apply_override(cbfc_without_retry, "fabric.uec.link_level_retry=false").ok());
  ASSERT_TRUE(experiments::apply_override(cbfc_without_retry, "fabric.uec.credit_flow_control=true").ok());
  expect_refused_naming(cbfc_without_retry, {"link_level_retry"});

  experiments::experiment_spec retry_on_roce;
  retry_on_roce.workload.incast.enabled = true;
  ASSERT_TRUE(experiments::apply_override(retry_on_roce, "fabric.uec.link_level_retry=true").ok());
  expect_refused_naming(retry_on_roce, {"fabric.uec.link_level_retry", "roce"});

  EXPECT_FALSE(experiments::apply_override(retry_on_roce, "fabric.uec.link_frame_loss_rate=0.9").ok());
}

}  // namespace
}  // namespace rocelab

namespace rocelab::experiments {
namespace {

// A calibration of `hosts` hosts named h1.. at `gbps`: host i sends in 100 (i + 1) ns,
// receives in 50 ns and achieves 90 Gb/s; switch port p forwards in 300 + p ns.
calibration lab_calibration(std::uint32_t hosts, double gbps) {
  calibration c;
  c.lab = "virtual";
  c.taken_at = "2026-11-29T04:00:00Z";
  c.spec = "calibrate";
  c.link_gbps = gbps;
  c.mtu_bytes = 1024;
  for (std::uint32_t h = 0; h < hosts; ++h) {
    host_calibration hc;
    hc.name = "h" + std::to_string(h + 1);
    hc.send_processing = fabric::delay_quantiles::constant(100 * (h + 1));
    hc.receive_processing = fabric::delay_quantiles::constant(50);
    hc.achieved_gbps = 90;
    c.hosts.push_back(hc);
    c.ports.push_back({h, fabric::delay_quantiles::constant(300 + h)});
  }
  return c;
}

std::filesystem::path calibration_dir(const std::string& name) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "rocelab-spec-calibration" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void write_text(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }

const char* const calibrated_spec =
    "topology:\n  hosts: 4\ntwin:\n  calibration: lab.yaml\nworkload:\n  incast:\n    senders: 2\n";

TEST(spec, a_calibration_file_becomes_the_twins_lab_timing) {
  const auto dir = calibration_dir("good");
  write_text(dir / "lab.yaml", calibration_yaml(lab_calibration(5, 100.5)));  // within 1%; h5 unused
  write_text(dir / "s.yaml", calibrated_spec);
  auto spec = load_spec_file((dir / "s.yaml").string());
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  ASSERT_TRUE(validate(*spec).ok()) << validate(*spec).message();
  for (const char* backend : {"twin", "virtual", "lab"}) {
    // Every backend's spec gives the twin the lab's timing: a twin prediction of a lab run
    // models that lab (sim-to-real); the labs themselves never run a twin config.
    experiment_spec s = *spec;
    s.backend = backend;
    auto c = to_twin_config(s, 1);
    ASSERT_TRUE(c.ok()) << c.error().message();
    ASSERT_EQ(c->lab.hosts.size(), 4u) << backend;
    EXPECT_EQ(c->lab.hosts[2].send_processing, fabric::delay_quantiles::constant(300));
    EXPECT_EQ(c->lab.hosts[2].receive_processing, fabric::delay_quantiles::constant(50));
    EXPECT_DOUBLE_EQ(c->lab.hosts[3].achieved_gbps, 90);
    ASSERT_EQ(c->lab.forwarding_by_port.size(), 4u);  // the fifth port has no host of the spec
    EXPECT_EQ(c->lab.forwarding_by_port[1], fabric::delay_quantiles::constant(301));
    EXPECT_EQ(c->lab.forwarding.median(), 302);  // five ports pooled
  }
  // The ideal FCT stays the ideal.
  experiment_spec plain = *spec;
  plain.twin.calibration.clear();
  EXPECT_EQ(ideal_fct_of(*spec)(1, 0, 100'000), ideal_fct_of(plain)(1, 0, 100'000));
  EXPECT_TRUE(to_twin_config(plain, 1)->lab.empty());

  // A client inlines the file (the controller refuses paths); the inlined YAML gives the
  // same timing.
  EXPECT_FALSE(refuse_file_references(*spec).ok());
  experiment_spec inlined = *spec;
  ASSERT_TRUE(inline_file_references(inlined).ok());
  EXPECT_TRUE(is_inline_calibration(inlined.twin.calibration));
  EXPECT_TRUE(refuse_file_references(inlined).ok());
  auto again = load_spec(to_yaml(inlined), "resolved.yaml");
  ASSERT_TRUE(again.ok()) << again.error().message();
  auto c = to_twin_config(*again, 1);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->lab.hosts[1].send_processing, fabric::delay_quantiles::constant(200));
  EXPECT_EQ(c->lab.forwarding_by_port[3], fabric::delay_quantiles::constant(303));
}

TEST(spec, calibration_errors_name_the_file_and_what_does_not_fit) {
  struct calibration_case {
    const char* name;
    std::string file_text;  // empty: no file
    std::vector<std::string> needles;
  };
  const calibration_case cases[] = {
      {"a spec host the calibration lacks", calibration_yaml(lab_calibration(3, 100)),
       {"s.yaml:4:", "twin.calibration", "lab.yaml", "host h4"}},
      {"taken at another link speed", calibration_yaml(lab_calibration(4, 25)),
       {"s.yaml:4:", "twin.calibration", "lab.yaml", "link_gbps 25", "topology.link_gbps is 100"}},
      {"not a calibration", "rocelab_calibration: 1\nlab: [\n", {"s.yaml:4:", "twin.calibration", "lab.yaml"}},
      {"no such file", "", {"s.yaml:4:", "twin.calibration", "lab.yaml"}},
  };
  int n = 0;
  for (const auto& c : cases) {
    const auto dir = calibration_dir("bad" + std::to_string(n++));
    if (!c.file_text.empty()) write_text(dir / "lab.yaml", c.file_text);
    write_text(dir / "s.yaml", calibrated_spec);
    auto spec = load_spec_file((dir / "s.yaml").string());
    ASSERT_TRUE(spec.ok()) << c.name << ": " << spec.error().message();
    const status st = validate(*spec);
    ASSERT_FALSE(st.ok()) << c.name;
    for (const auto& needle : c.needles)
      EXPECT_NE(st.message().find(needle), std::string::npos) << c.name << ": " << st.message();
    EXPECT_FALSE(to_twin_config(*spec, 1).ok()) << c.name;
  }
}

TEST(spec, a_twin_run_records_its_calibration_in_the_store_once) {
  const auto dir = calibration_dir("store");
  write_text(dir / "lab.yaml", calibration_yaml(lab_calibration(4, 100)));
  write_text(dir / "s.yaml", calibrated_spec);
  auto spec = load_spec_file((dir / "s.yaml").string());
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  auto db = store::run_store::open((dir / "runs.db").string());
  ASSERT_TRUE(db.ok()) << db.error().message();
  auto first = db->begin_run({"a", "twin", 1, "", {}, std::nullopt});
  auto second = db->begin_run({"b", "twin", 2, "", {}, std::nullopt});
  auto on_lab = db->begin_run({"c", "virtual", 1, "", {}, std::nullopt});
  ASSERT_TRUE(first.ok() && second.ok() && on_lab.ok());
  ASSERT_TRUE(record_calibration(*db, *first, *spec).ok());
  // The same calibration inlined by a client is the same stored calibration.
  experiment_spec inlined = *spec;
  ASSERT_TRUE(inline_file_references(inlined).ok());
  ASSERT_TRUE(record_calibration(*db, *second, inlined).ok());
  experiment_spec virtual_spec = *spec;
  virtual_spec.backend = "virtual";
  ASSERT_TRUE(record_calibration(*db, *on_lab, virtual_spec).ok());

  auto kept = db->calibrations();
  ASSERT_TRUE(kept.ok());
  ASSERT_EQ(kept->size(), 1u);
  EXPECT_EQ(kept->front().lab, "virtual");
  EXPECT_EQ(kept->front().taken_at, "2026-11-29T04:00:00Z");
  auto back = parse_calibration(kept->front().yaml, "stored");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->hosts.at(3).send_processing, fabric::delay_quantiles::constant(400));
  EXPECT_EQ(db->run(*first)->calibration, kept->front().id);
  EXPECT_EQ(db->run(*second)->calibration, kept->front().id);
  EXPECT_FALSE(db->run(*on_lab)->calibration.has_value());

  // A file that is gone is an error naming it, and nothing is recorded.
  std::filesystem::remove(dir / "lab.yaml");
  const status st = record_calibration(*db, *on_lab, *spec);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("lab.yaml"), std::string::npos) << st.message();
  EXPECT_FALSE(db->run(*on_lab)->calibration.has_value());
}

}  // namespace
}  // namespace rocelab::experiments

#include "rocelab/fabric/uec_htsim_profile.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "rocelab/fabric/fabric_profile.hpp"
#include "rocelab/fabric/twin/uec_profile.hpp"

namespace rocelab::fabric {
namespace {

const std::string htsim_dir = std::string(ROCELAB_SOURCE_DIR) + "/tests/data/uec-htsim/htsim/";

// What htsim_uec printed about the constants it derived (bench/twin/uec_htsim/run keeps
// those lines in params_<scenario>.txt).
struct printed {
  std::int64_t queue_bytes = -1;       // "Tier 0 QueueSize Down N bytes"
  double min_rto_us = -1;              // "Setting min RTO to X" (6 significant digits)
  std::int64_t ecn_low_bytes = -1;     // "Setting ECN to parameters low L high H"
  std::int64_t ecn_high_bytes = -1;
  std::int64_t network_rtt_ps = -1;    // "_network_rtt=R" of the NSCC line
  std::int64_t target_qdelay_ps = -1;  // "_target_Qdelay=T"
};

printed read_params(const std::string& file) {
  std::ifstream in(htsim_dir + file);
  EXPECT_TRUE(in) << htsim_dir + file;
  printed p;
  std::string line;
  while (std::getline(in, line)) {
    long long a = 0, b = 0;
    double x = 0;
    if (std::sscanf(line.c_str(), "Tier 0 QueueSize Down %lld bytes", &a) == 1) p.queue_bytes = a;
    if (std::sscanf(line.c_str(), "Setting min RTO to %lf", &x) == 1) p.min_rto_us = x;
    if (std::sscanf(line.c_str(), "Setting ECN to parameters low %lld high %lld", &a, &b) == 2)
      p.ecn_low_bytes = a, p.ecn_high_bytes = b;
    if (const auto at = line.find(" _network_rtt="); at != std::string::npos) p.network_rtt_ps = std::stoll(line.substr(at + 14));
    if (const auto at = line.find(" _target_Qdelay="); at != std::string::npos)
      p.target_qdelay_ps = std::stoll(line.substr(at + 16));
  }
  return p;
}

// The twin's leaf-spine as a plain UEC config would describe it.
twin::twin_config leaf_spine(std::uint32_t hosts, std::uint32_t leaves, double gbps, bool trimming) {
  twin::twin_config c;
  c.topology.type = twin::topology_config::kind::leaf_spine;
  c.topology.hosts = hosts;
  c.topology.leaves = leaves;
  c.topology.spines = 8;
  c.topology.link_gbps = gbps;
  c.topology.spine_link_gbps = gbps;
  c.topology.link_delay_ns = 1000;
  c.nic.mtu_bytes = 4096;
  c.fabric.link = link_layer::uec;
  c.fabric.congestion = congestion_control_kind::none;
  c.fabric.uec.trimming = trimming;
  c.fabric.uec.profile = uec_profile::htsim;
  return c;
}

struct recorded_case {
  const char* name;
  const char* params_file;
  uec_htsim_fabric fabric;
  std::uint32_t want_queue_packets;
};

// The fabrics htsim ran and printed its constants for: the 64-host 400 Gb/s leaf-spine
// of the fidelity scenarios (with and without trimming) and the 96-host 100 Gb/s one, as
// the twin reads them off its own configs (htsim_fabric_of), and a 3-tier k = 8 fat tree
// at 200 Gb/s with 0.5 us links and 0.2 us switches (6 links, 5 switches), which the
// twin's topologies do not build, as htsim describes it.
std::vector<recorded_case> recorded_cases() {
  uec_htsim_fabric fat_tree;
  fat_tree.host_link_bps = 200'000'000'000;
  fat_tree.diameter_links = 6;
  fat_tree.diameter_latency_ps = 6 * 500'000 + 5 * 200'000;
  fat_tree.packet_bytes = 4160;
  fat_tree.trimming = true;
  return {
      {"leaf_spine_64_400g_trimming", "params_perm.txt", twin::htsim_fabric_of(leaf_spine(64, 8, 400, true)), 101},
      {"leaf_spine_64_400g_reps", "params_incast_trim.txt", twin::htsim_fabric_of(leaf_spine(64, 8, 400, true)), 101},
      {"leaf_spine_64_400g_dropping", "params_incast_drop.txt", twin::htsim_fabric_of(leaf_spine(64, 8, 400, false)),
       505},
      {"leaf_spine_96_100g_trimming", "params_incast_bg.txt", twin::htsim_fabric_of(leaf_spine(96, 12, 100, true)), 0},
      {"fat_tree_128_200g_trimming", "params_fat_tree_128_200g.txt", fat_tree, 0},
  };
}

TEST(UecHtsimProfile, DerivesWhatHtsimPrintedForEachRecordedFabric) {
  for (const recorded_case& c : recorded_cases()) {
    SCOPED_TRACE(c.name);
    const printed want = read_params(c.params_file);
    ASSERT_GT(want.queue_bytes, 0) << c.params_file << " has no queue size";
    const uec_htsim_params got = derive_uec_htsim_params(c.fabric);
    EXPECT_EQ(got.network_rtt_ps, want.network_rtt_ps);
    EXPECT_EQ(got.queue_bytes, want.queue_bytes);
    if (c.want_queue_packets > 0) {
      EXPECT_EQ(got.queue_packets, c.want_queue_packets);
    }
    EXPECT_EQ(got.ecn_low_bytes, want.ecn_low_bytes);
    EXPECT_EQ(got.ecn_high_bytes, want.ecn_high_bytes);
    EXPECT_EQ(got.target_qdelay_ps, want.target_qdelay_ps);
    // Printed to six significant digits.
    const double rto_us = static_cast<double>(got.min_rto_ps) / 1e6;
    EXPECT_NEAR(rto_us, want.min_rto_us, 0.5 * std::pow(10.0, std::floor(std::log10(want.min_rto_us)) - 5));
    EXPECT_EQ(got.trim_threshold_bytes, c.fabric.trimming ? got.queue_bytes : 0);
  }
}

// The issue's figures for the 400 Gb/s fabric, in packets and ns, as the twin reads them.
TEST(UecHtsimProfile, SixtyFourHostsAt400GigabitsAreHtsimsHundredAndOnePacketQueues) {
  const uec_htsim_fabric f = twin::htsim_fabric_of(leaf_spine(64, 8, 400, true));
  EXPECT_EQ(f.diameter_links, 4u);
  EXPECT_EQ(f.diameter_latency_ps, 4'000'000);
  EXPECT_EQ(f.packet_bytes, 4160u);
  const uec_htsim_params p = derive_uec_htsim_params(f);
  EXPECT_EQ(p.bdp_packets, 101u);
  EXPECT_EQ(p.ecn_low_bytes, 21 * 4160);
  EXPECT_EQ(p.ecn_high_bytes, 81 * 4160);
  EXPECT_EQ(p.min_rto_ps / 1000, 65'419);
  const uec_htsim_params drop = derive_uec_htsim_params(twin::htsim_fabric_of(leaf_spine(64, 8, 400, false)));
  EXPECT_EQ(drop.queue_packets, 505u);
  EXPECT_EQ(drop.min_rto_ps / 1000, 267'096);
  // A single switch: two links.
  twin::twin_config one = leaf_spine(16, 1, 400, true);
  one.topology.type = twin::topology_config::kind::single_switch;
  EXPECT_EQ(twin::htsim_fabric_of(one).diameter_links, 2u);
}

TEST(UecHtsimProfile, TheTwinConfigTakesTheDerivedQueuesEcnTrimmingAndRto) {
  const twin::twin_config c = twin::with_uec_profile(leaf_spine(64, 8, 400, true));
  ASSERT_EQ(c.switch_template.ports.size(), 1u);
  for (const queue_config& q : c.switch_template.ports[0].queues) {
    EXPECT_EQ(q.shared.mode, buffer_threshold::kind::fixed);
    EXPECT_EQ(q.shared.fixed_bytes, 101 * 4160);
    EXPECT_TRUE(q.ecn.enabled);
    EXPECT_EQ(q.ecn.kmin_bytes, 21 * 4160);
    EXPECT_EQ(q.ecn.kmax_bytes, 81 * 4160);
  }
  EXPECT_EQ(c.switch_template.wire_overhead_bytes, 0);
  EXPECT_TRUE(c.switch_template.ecn_mark_on_dequeue);
  EXPECT_EQ(c.fabric.uec.trim_threshold_bytes, 101 * 4160);
  EXPECT_EQ(c.fabric.uec.retransmit_timeout_ns, 65'419);
  // Applying it again changes nothing.
  const twin::twin_config again = twin::with_uec_profile(c);
  EXPECT_EQ(again.fabric.uec.retransmit_timeout_ns, c.fabric.uec.retransmit_timeout_ns);
  EXPECT_EQ(again.switch_template.ports[0].queues[0].shared.fixed_bytes, 101 * 4160);
}

TEST(UecHtsimProfile, TheRocelabProfileLeavesTheConfigAsGiven) {
  twin::twin_config c = leaf_spine(64, 8, 400, true);
  c.fabric.uec.profile = uec_profile::rocelab;
  const twin::twin_config same = twin::with_uec_profile(c);
  EXPECT_EQ(same.switch_template.wire_overhead_bytes, c.switch_template.wire_overhead_bytes);
  EXPECT_EQ(same.switch_template.buffer_bytes, c.switch_template.buffer_bytes);
  EXPECT_EQ(same.fabric.uec.retransmit_timeout_ns, 0);
  EXPECT_EQ(same.fabric.uec.trim_threshold_bytes, 0);
}

TEST(UecHtsimProfile, ParsesItsNames) {
  EXPECT_EQ(*parse_uec_profile("htsim"), uec_profile::htsim);
  EXPECT_EQ(*parse_uec_profile("rocelab"), uec_profile::rocelab);
  EXPECT_FALSE(parse_uec_profile("ns3").ok());
  EXPECT_STREQ(to_string(uec_profile::htsim), "htsim");
}

}  // namespace
}  // namespace rocelab::fabric

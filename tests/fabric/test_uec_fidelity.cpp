// The twin's Ultra Ethernet fabric against UEC's own simulator, htsim_uec
// (ultraethernet/uet-htsim, commit in tests/data/uec-htsim/COMMIT), on the same inputs:
// a permutation with spraying, a 32-to-1 incast with NSCC, and that incast with trimming
// (tests/data/uec-htsim/README.md; bench/twin/uec_htsim/run regenerates htsim's side).
// Pooled over seeds 1..5 on both sides, the twin's mean FCT of each scenario and the
// incasts' last FCT are within 15% of htsim's.
#include "rocelab/fabric/twin/twin.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "twin_test_support.hpp"

namespace rocelab::fabric::twin {
namespace {

using testing::fixed_messages;

const std::string data_dir = std::string(ROCELAB_SOURCE_DIR) + "/tests/data/uec-htsim/";
constexpr int seeds = 5;
constexpr std::uint64_t mss_bytes = 4096;

// A connection matrix (htsim's .cm): "src->dst start T size BYTES" per line. htsim sends
// whole packets (its "total bytes" is packets x MSS), so the twin's message is rounded up
// to whole MSS.
std::vector<message> load_matrix(const std::string& file) {
  std::ifstream in(data_dir + file);
  std::vector<message> out;
  std::string line;
  while (std::getline(in, line)) {
    unsigned src = 0, dst = 0;
    unsigned long long start = 0, size = 0;
    if (std::sscanf(line.c_str(), "%u->%u start %llu size %llu", &src, &dst, &start, &size) != 4) continue;
    message m;
    m.src = src;
    m.dst = dst;
    m.start_ns = static_cast<std::int64_t>(start);
    m.bytes = (size + mss_bytes - 1) / mss_bytes * mss_bytes;
    out.push_back(m);
  }
  return out;
}

// FCTs (us) of htsim's "Flow ... finished at T" lines; every flow starts at 0.
std::vector<double> load_htsim_fcts(const std::string& file) {
  std::ifstream in(data_dir + "htsim/" + file);
  std::vector<double> out;
  std::string line;
  while (std::getline(in, line)) {
    const auto at = line.find("finished at ");
    if (at != std::string::npos) out.push_back(std::stod(line.substr(at + 12)));
  }
  return out;
}

// The twin configured as htsim_uec configured itself on these inputs (its printed
// parameters are in tests/data/uec-htsim/htsim/params_*.txt): 64 hosts on 8 leaves of 8,
// 8 spines, 400 Gb/s, 1 us per link, no switch latency, 4160-byte frames with no
// preamble or gap (htsim counts none), one queue size per port (1 BDP = 101 packets with
// trimming, 5 BDP without), ECN from 21 to 81 packets, the minimum RTO htsim set.
twin_config htsim_like(load_balancing lb, bool trimming, std::uint64_t seed) {
  const std::int64_t frame = 4160;
  const std::int64_t queue_bytes = (trimming ? 101 : 505) * frame;
  twin_config c;
  c.topology.type = topology_config::kind::leaf_spine;
  c.topology.hosts = 64;
  c.topology.leaves = 8;
  c.topology.spines = 8;
  c.topology.link_gbps = 400;
  c.topology.spine_link_gbps = 400;
  c.topology.link_delay_ns = 1000;
  c.switch_template.buffer_bytes = std::int64_t{1} << 30;
  c.switch_template.cell_bytes = 64;
  c.topology.frame_overhead_bytes = 0;
  port_config p;
  for (auto& pg : p.pgs) pg.shared = buffer_threshold::unlimited();
  for (auto& q : p.queues) {
    q.shared = buffer_threshold::fixed(queue_bytes);
    q.ecn = ecn_config{true, 21 * frame, 81 * frame, 1.0};
  }
  c.switch_template.ports = {p};
  c.nic.mtu_bytes = 4096;
  c.fabric.link = link_layer::uec;
  c.fabric.congestion = congestion_control_kind::none;
  c.fabric.uec.balancing = lb;
  c.fabric.uec.trimming = trimming;
  c.fabric.uec.trim_threshold_bytes = trimming ? queue_bytes : 0;
  c.fabric.uec.retransmit_timeout_ns = trimming ? 65'419 : 267'096;
  c.seed = seed;
  return c;
}

struct pooled {
  double mean_us = 0;
  double last_us = 0;  // mean over seeds of the last FCT
  std::size_t flows = 0;
};

pooled twin_side(const std::string& matrix, load_balancing lb, bool trimming) {
  pooled p;
  double sum = 0;
  for (int s = 1; s <= seeds; ++s) {
    fixed_messages load(load_matrix(matrix));
    auto r = run_twin(htsim_like(lb, trimming, static_cast<std::uint64_t>(s)), load);
    EXPECT_TRUE(r.ok()) << r.error().message();
    if (!r.ok()) return p;
    double last = 0;
    for (const auto& f : r->flows) {
      EXPECT_TRUE(f.completed());
      const double us = static_cast<double>(f.fct_ns) / 1e3;
      sum += us;
      last = std::max(last, us);
      ++p.flows;
    }
    p.last_us += last / seeds;
  }
  p.mean_us = sum / static_cast<double>(p.flows);
  return p;
}

pooled htsim_side(const std::string& scenario) {
  pooled p;
  double sum = 0;
  for (int s = 1; s <= seeds; ++s) {
    const auto fcts = load_htsim_fcts(scenario + "_s" + std::to_string(s) + ".fct");
    EXPECT_FALSE(fcts.empty()) << scenario << " seed " << s;
    double last = 0;
    for (const double us : fcts) {
      sum += us;
      last = std::max(last, us);
      ++p.flows;
    }
    p.last_us += last / seeds;
  }
  p.mean_us = p.flows > 0 ? sum / static_cast<double>(p.flows) : 0;
  return p;
}

void expect_within(const char* what, double twin, double htsim, double tolerance = 0.15) {
  std::printf("%-28s twin %9.1f us   htsim %9.1f us   %+6.1f%%\n", what, twin, htsim, 100 * (twin - htsim) / htsim);
  EXPECT_LE(std::fabs(twin - htsim), tolerance * htsim) << what << ": twin " << twin << " us, htsim " << htsim << " us";
}

TEST(UecFidelity, PermutationWithSprayingMatchesHtsim) {
  const pooled h = htsim_side("perm");
  const pooled t = twin_side("perm_64_2MB.cm", load_balancing::oblivious, true);
  ASSERT_EQ(h.flows, t.flows);
  expect_within("perm: mean FCT", t.mean_us, h.mean_us);
  expect_within("perm: last FCT", t.last_us, h.last_us);
}

TEST(UecFidelity, IncastWithNsccMatchesHtsim) {
  const pooled h = htsim_side("incast_drop");
  const pooled t = twin_side("incast_32to1_1MB.cm", load_balancing::oblivious, false);
  ASSERT_EQ(h.flows, t.flows);
  expect_within("incast, NSCC: mean FCT", t.mean_us, h.mean_us);
  expect_within("incast, NSCC: last FCT", t.last_us, h.last_us);
}

TEST(UecFidelity, IncastWithNsccAndTrimmingMatchesHtsim) {
  const pooled h = htsim_side("incast_trim");
  const pooled t = twin_side("incast_32to1_1MB.cm", load_balancing::reps, true);
  ASSERT_EQ(h.flows, t.flows);
  expect_within("incast, trimming: mean FCT", t.mean_us, h.mean_us);
  expect_within("incast, trimming: last FCT", t.last_us, h.last_us);
}

}  // namespace
}  // namespace rocelab::fabric::twin

// The twin's Ultra Ethernet fabric against UEC's own simulator, htsim_uec
// (ultraethernet/uet-htsim, commit in tests/data/uec-htsim/COMMIT), on the same inputs:
// a permutation with spraying, a 32-to-1 incast with NSCC, that incast with trimming, and
// a 16-to-1 incast beside 48 background flows with staggered starts
// (tests/data/uec-htsim/README.md; bench/twin/uec_htsim/run regenerates htsim's side).
//
// The twin runs plain specs (tests/data/uec-htsim/*.yaml) with `fabric.uec.profile:
// htsim`, built into its config by the experiments library as `rocelab run` builds it, so
// every constant htsim derives (queues, ECN, trimming, RTO) comes from the profile, for
// that fabric. The flows are htsim's connection matrix: `start T` is whole microseconds,
// and htsim prints absolute finish times, so its FCT is finish - start. Pooled over seeds
// 1..5 on both sides, each cell (a group's mean FCT, its last and first FCT as means over
// seeds) is within 15% of htsim's.
#include "rocelab/fabric/twin/twin.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "twin_test_support.hpp"

namespace rocelab::fabric::twin {
namespace {

using testing::fixed_messages;

const std::string data_dir = std::string(ROCELAB_SOURCE_DIR) + "/tests/data/uec-htsim/";
constexpr int seeds = 5;
constexpr std::uint64_t mss_bytes = 4096;
constexpr double tolerance = 0.15;

// One connection of htsim's matrix: "src->dst start T size BYTES", T in us (htsim reads a
// double and truncates it to whole us, UecSrc::connectPort).
struct connection {
  std::uint32_t src = 0, dst = 0;
  std::int64_t start_ns = 0;
  std::uint64_t bytes = 0;
};

std::vector<connection> load_matrix(const std::string& file) {
  std::ifstream in(data_dir + file);
  EXPECT_TRUE(in) << data_dir + file;
  std::vector<connection> out;
  std::string line;
  while (std::getline(in, line)) {
    unsigned src = 0, dst = 0;
    double start_us = 0;
    unsigned long long size = 0;
    if (std::sscanf(line.c_str(), "%u->%u start %lf size %llu", &src, &dst, &start_us, &size) != 4) continue;
    out.push_back({src, dst, static_cast<std::int64_t>(static_cast<std::uint32_t>(start_us)) * 1000, size});
  }
  return out;
}

// htsim sends whole packets (its "total bytes" is packets x MSS), so the twin's message is
// rounded up to whole MSS.
std::vector<message> messages_of(const std::vector<connection>& matrix) {
  std::vector<message> out;
  for (const connection& c : matrix) {
    message m;
    m.src = c.src;
    m.dst = c.dst;
    m.start_ns = c.start_ns;
    m.bytes = (c.bytes + mss_bytes - 1) / mss_bytes * mss_bytes;
    out.push_back(m);
  }
  return out;
}

struct flow_fct {
  std::uint32_t src = 0, dst = 0;
  double fct_us = 0;
};

// htsim's "Flow Uec_<src>_<dst> ... finished at T" lines, T absolute in us, as FCTs
// (T - the connection's start). The scenarios have one connection per (src, dst).
std::vector<flow_fct> load_htsim_fcts(const std::string& file, const std::vector<connection>& matrix) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> start_us;
  for (const connection& c : matrix) {
    const bool fresh = start_us.emplace(std::make_pair(c.src, c.dst), static_cast<double>(c.start_ns) / 1e3).second;
    EXPECT_TRUE(fresh) << "a (src, dst) pair repeats in the matrix: " << c.src << "->" << c.dst;
  }
  std::ifstream in(data_dir + "htsim/" + file);
  std::vector<flow_fct> out;
  std::string line;
  while (std::getline(in, line)) {
    unsigned src = 0, dst = 0;
    const auto at = line.find("finished at ");
    if (at == std::string::npos || std::sscanf(line.c_str(), "Flow Uec_%u_%u ", &src, &dst) != 2) continue;
    const auto it = start_us.find({src, dst});
    EXPECT_NE(it, start_us.end()) << file << ": no connection " << src << "->" << dst;
    if (it == start_us.end()) continue;
    out.push_back({src, dst, std::stod(line.substr(at + 12)) - it->second});
  }
  return out;
}

// A group of flows the test checks (a whole scenario, an incast's senders, ...).
struct group {
  std::string name;
  std::function<bool(const flow_fct&)> member;
  bool first = false;  // check its first FCT too
};

// A group's cells pooled over seeds: the mean FCT of all its flows, and the means over
// seeds of its last and first FCT.
struct cells {
  double mean_us = 0, last_us = 0, first_us = 0;
  std::size_t flows = 0;
};

cells pool(const std::vector<std::vector<flow_fct>>& runs, const group& g) {
  cells c;
  double sum = 0;
  for (const auto& run : runs) {
    double last = 0, first = 1e300;
    for (const flow_fct& f : run) {
      if (!g.member(f)) continue;
      sum += f.fct_us;
      last = std::max(last, f.fct_us);
      first = std::min(first, f.fct_us);
      ++c.flows;
    }
    c.last_us += last / static_cast<double>(runs.size());
    c.first_us += first / static_cast<double>(runs.size());
  }
  c.mean_us = c.flows > 0 ? sum / static_cast<double>(c.flows) : 0;
  return c;
}

struct scenario {
  std::string name;    // htsim's files: htsim/<name>_s<seed>.fct
  std::string spec;    // the twin's spec, beside the matrix
  std::string matrix;  // htsim's connection matrix
};

std::vector<std::vector<flow_fct>> twin_runs(const scenario& sc, const std::vector<connection>& matrix) {
  std::vector<std::vector<flow_fct>> runs;
  auto spec = experiments::load_spec_file(data_dir + sc.spec);
  EXPECT_TRUE(spec.ok()) << (spec.ok() ? "" : spec.error().message());
  if (!spec.ok()) return runs;
  for (int s = 1; s <= seeds; ++s) {
    auto config = experiments::to_twin_config(*spec, static_cast<std::uint64_t>(s));
    EXPECT_TRUE(config.ok()) << (config.ok() ? "" : config.error().message());
    if (!config.ok()) return runs;
    fixed_messages load(messages_of(matrix));
    auto r = run_twin(*config, load);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
    if (!r.ok()) return runs;
    std::vector<flow_fct> run;
    for (const auto& f : r->flows) {
      EXPECT_TRUE(f.completed()) << sc.name << " seed " << s << ": " << f.src << "->" << f.dst;
      run.push_back({f.src, f.dst, static_cast<double>(f.fct_ns) / 1e3});
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

std::vector<std::vector<flow_fct>> htsim_runs(const scenario& sc, const std::vector<connection>& matrix) {
  std::vector<std::vector<flow_fct>> runs;
  for (int s = 1; s <= seeds; ++s) {
    runs.push_back(load_htsim_fcts(sc.name + "_s" + std::to_string(s) + ".fct", matrix));
    EXPECT_EQ(runs.back().size(), matrix.size()) << sc.name << " seed " << s << ": htsim flows that finished";
  }
  return runs;
}

void expect_within(const std::string& what, double twin, double htsim) {
  std::printf("%-44s twin %9.1f us   htsim %9.1f us   %+6.1f%%\n", what.c_str(), twin, htsim,
              100 * (twin - htsim) / htsim);
  EXPECT_LE(std::fabs(twin - htsim), tolerance * htsim) << what << ": twin " << twin << " us, htsim " << htsim << " us";
}

void expect_matches_htsim(const scenario& sc, std::vector<group> groups) {
  const auto matrix = load_matrix(sc.matrix);
  ASSERT_FALSE(matrix.empty());
  const auto h = htsim_runs(sc, matrix);
  const auto t = twin_runs(sc, matrix);
  ASSERT_EQ(t.size(), h.size());
  groups.insert(groups.begin(), group{"", [](const flow_fct&) { return true; }, false});
  for (const group& g : groups) {
    const cells tc = pool(t, g), hc = pool(h, g);
    ASSERT_EQ(tc.flows, hc.flows) << g.name;
    ASSERT_GT(hc.flows, 0u) << g.name;
    const std::string prefix = sc.name + (g.name.empty() ? "" : ", " + g.name);
    expect_within(prefix + ": mean FCT", tc.mean_us, hc.mean_us);
    expect_within(prefix + ": last FCT", tc.last_us, hc.last_us);
    if (g.first) expect_within(prefix + ": first FCT", tc.first_us, hc.first_us);
  }
}

TEST(UecFidelity, PermutationWithSprayingMatchesHtsim) {
  expect_matches_htsim({"perm", "perm.yaml", "perm_64_2MB.cm"}, {});
}

TEST(UecFidelity, IncastWithNsccMatchesHtsim) {
  expect_matches_htsim({"incast_drop", "incast_drop.yaml", "incast_32to1_1MB.cm"}, {});
}

TEST(UecFidelity, IncastWithNsccAndTrimmingMatchesHtsim) {
  expect_matches_htsim({"incast_trim", "incast_trim.yaml", "incast_32to1_1MB.cm"}, {});
}

// 96 hosts on 12 leaves of 8: the incast into host 0, its two senders on host 0's own
// leaf (hosts 1 and 2) apart, and the background flows (none to host 0).
TEST(UecFidelity, StaggeredIncastBesideBackgroundMatchesHtsim) {
  constexpr std::uint32_t receiver = 0, hosts_per_leaf = 8;
  expect_matches_htsim({"incast_bg", "incast_bg.yaml", "incast16_bg48_96.cm"},
                       {{"incast", [](const flow_fct& f) { return f.dst == receiver; }, true},
                        {"incast, receiver's leaf",
                         [](const flow_fct& f) { return f.dst == receiver && f.src / hosts_per_leaf == receiver / hosts_per_leaf; },
                         false},
                        {"background", [](const flow_fct& f) { return f.dst != receiver; }, false}});
}

}  // namespace
}  // namespace rocelab::fabric::twin

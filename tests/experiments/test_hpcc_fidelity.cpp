// The twin in HPCC ns-3 compatibility mode against that simulator's own outputs on the
// same scenarios (shared/scenarios/hpcc-ns3), by `rocelab run --hpcc`'s path.
//
// What two packet simulators can share is the distribution, not each flow: which of 16
// DCQCN senders is ahead at a given microsecond depends on event order, so flow k of one
// run is not flow k of the other. Compared: mean, median and last FCT (issue 4: within 5%)
// and the number of PFC pauses (within 20%).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>
#include <vector>

#include "rocelab/experiments/hpcc_ns3.hpp"

namespace rocelab::experiments {
namespace {

std::string scenario_dir(const std::string& name) {
  return std::string(ROCELAB_SHARED_DIR) + "/scenarios/hpcc-ns3/" + name;
}

std::vector<double> sorted_fcts(std::istream& in) {
  std::vector<double> out;
  std::string sip, dip;
  unsigned sport = 0, dport = 0;
  long long bytes = 0, start = 0, fct = 0, ideal = 0;
  while (in >> sip >> dip >> sport >> dport >> bytes >> start >> fct >> ideal) out.push_back(static_cast<double>(fct));
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t pauses_in(std::istream& in) {
  std::size_t n = 0;
  long long t = 0;
  int node = 0, type = 0, ifindex = 0, kind = 0;
  while (in >> t >> node >> type >> ifindex >> kind) n += kind == 1;
  return n;
}

double mean(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); }
double median(const std::vector<double>& v) { return v[(v.size() + 1) / 2 - 1]; }  // nearest rank

struct fidelity_case {
  const char* scenario;
  double pause_tolerance;
};

class hpcc_fidelity : public ::testing::TestWithParam<fidelity_case> {};

TEST_P(hpcc_fidelity, fct_distribution_and_pause_count_match_ns3) {
  const std::string dir = scenario_dir(GetParam().scenario);
  auto sc = load_hpcc_scenario(dir + "/config.txt");
  ASSERT_TRUE(sc.ok()) << sc.error().message();
  auto records = run_hpcc_scenario(*sc);
  ASSERT_TRUE(records.ok()) << records.error().message();

  std::ifstream ns3_fct(dir + "/fct.txt");
  const auto expected = sorted_fcts(ns3_fct);
  std::istringstream ours_text(format_hpcc_fct(*sc, *records));
  const auto ours = sorted_fcts(ours_text);
  ASSERT_EQ(ours.size(), expected.size()) << "every flow completes";
  EXPECT_NEAR(mean(ours), mean(expected), 0.05 * mean(expected)) << "mean FCT";
  EXPECT_NEAR(median(ours), median(expected), 0.05 * median(expected)) << "median FCT";
  EXPECT_NEAR(ours.back(), expected.back(), 0.05 * expected.back()) << "last flow";

  std::ifstream ns3_pfc(dir + "/pfc.txt");
  const auto expected_pauses = static_cast<double>(pauses_in(ns3_pfc));
  std::istringstream ours_pfc(format_hpcc_pfc(*sc, *records));
  const auto our_pauses = static_cast<double>(pauses_in(ours_pfc));
  EXPECT_NEAR(our_pauses, expected_pauses, GetParam().pause_tolerance * expected_pauses)
      << "ns-3 " << expected_pauses << " pauses, twin " << our_pauses;
}

// Issue 4 asks for pause counts within 20%. incast16_buf4MB was at -24% (59 vs 78) while
// the compat reaction point cut on the first CNP; HPCC ns-3's cnp_received_mlx defers the
// first cut by one rate-reduce period (dcqcn_config::first_cut_after_monitor_period),
// which brings it to 63 (-19%). The count is small, so a few threshold crossings decide it.
INSTANTIATE_TEST_SUITE_P(shared_scenarios, hpcc_fidelity,
                         ::testing::Values(fidelity_case{"incast16_noqmon", 0.2}, fidelity_case{"incast16_buf4MB", 0.2},
                                           fidelity_case{"incast16_buf2MB", 0.2}),
                         [](const auto& info) { return std::string(info.param.scenario); });

}  // namespace
}  // namespace rocelab::experiments

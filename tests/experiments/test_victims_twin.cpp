// Victim traffic on the twin: an 8-to-1 incast whose senders also send short flows to idle
// hosts. With PFC only, the incast's receiver port fills, the switch pauses the senders'
// links and the victim flows wait with the incast (find_victims names them, at the
// senders' NICs); with ECN/DCQCN the incast's QPs slow down before XOFF and the victims'
// p99 slowdown falls below PFC only's.
#include "rocelab/experiments/analysis/victims.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/spec/spec.hpp"
#include "rocelab/experiments/run/summary.hpp"

namespace rocelab::experiments {
namespace {

// 100 Gb/s, 17 hosts: 1-8 write 512 KiB each to 0 (4 MiB through one port, ~340 us);
// each sender also sends six 16 KiB victim flows, 25 us apart from 10 us on, to its own
// idle host (9-16), on the incast's priority. The 3 MiB buffer is below the burst, so
// PFC pauses; a paused sender's link carries 1/8 of a port, shared with its victims.
constexpr const char* scenario = R"(
topology:
  hosts: 17
  link_gbps: 100
  link_delay_ns: 1us
switch:
  buffer_bytes: 3MiB
  ecn:
    kmin_bytes: 20KB
    kmax_bytes: 200KB
    pmax: 0.1
workload:
  incast:
    receiver: 0
    sender_hosts: 1-8
    flow_bytes: 512KiB
  victim:
    flow_bytes: 16KiB
    flows_per_sender: 6
    start_ns: 10us
    gap_ns: 25us
twin:
  stop_ns: 50ms
  queue_sample_interval_ns: 1us
)";

struct outcome {
  run_records records;
  run_summary summary;
  fabric::twin::twin_config config;
};

outcome run_scenario(const std::vector<std::string>& overrides) {
  auto spec = load_spec(scenario, "victims.yaml");
  EXPECT_TRUE(spec.ok()) << spec.error().message();
  for (const auto& o : overrides) EXPECT_TRUE(apply_override(*spec, o).ok()) << o;
  EXPECT_TRUE(validate(*spec).ok()) << validate(*spec).message();
  auto ran = run_experiment(*spec);
  EXPECT_TRUE(ran.ok()) << ran.error().message();
  outcome o;
  o.records = std::move(ran->repeats.front());
  o.summary = summarize({&o.records}, ran->seeds);
  o.config = *to_twin_config(*spec, spec->seed);
  return o;
}

TEST(victims_twin, pfc_only_pauses_the_victims_and_ecn_relieves_them) {
  const outcome pfc = run_scenario({"switch.ecn.enabled=false", "nic.dcqcn.enabled=false"});
  const run_records& r = pfc.records;
  ASSERT_EQ(r.flows.size(), 8u + 48u);
  for (const auto& f : r.flows) ASSERT_TRUE(f.completed());
  EXPECT_EQ(r.totals.drops, 0u) << "lossless";
  ASSERT_GT(pfc.summary.paused_ns, 0) << "the incast must make PFC pause";
  const flow_stats& pfc_victims = pfc.summary.by_kind.at("victim");
  EXPECT_EQ(pfc_victims.flows, 48u);
  EXPECT_GT(pfc_victims.slowdown_p99, 4.0) << "paused victims";

  // The analysis agrees: victim flows are victims, at their sender's NIC (hop 0: the
  // switch paused the sender's link), and no incast flow is.
  auto flows = correlate_flows(r, twin_paths(pfc.config.topology, pfc.config.seed));
  const victim_analysis v = find_victims(r, flows);
  EXPECT_TRUE(v.from_queue_samples);
  std::size_t victim_kind = 0;
  for (const auto& vf : v.victims) {
    const flow_record& f = r.flows[vf.flow];
    EXPECT_EQ(f.kind, workload_kind::victim) << "flow " << vf.flow;
    victim_kind += f.kind == workload_kind::victim;
    EXPECT_GT(vf.victim_paused_ns, 0);
    EXPECT_EQ(vf.hops.front(), 0u) << "paused at the sender's NIC";
  }
  EXPECT_GE(victim_kind, 40u) << "most victim flows waited behind a pause";

  const outcome ecn = run_scenario({});
  EXPECT_EQ(ecn.records.totals.drops, 0u);
  EXPECT_GT(ecn.records.totals.ce_marked, 0u);
  const flow_stats& ecn_victims = ecn.summary.by_kind.at("victim");
  EXPECT_EQ(ecn_victims.completed, 48u);
  EXPECT_LT(ecn_victims.slowdown_p99, pfc_victims.slowdown_p99 * 0.5)
      << "ECN " << ecn_victims.slowdown_p99 << " against PFC only " << pfc_victims.slowdown_p99;
  EXPECT_LT(ecn.summary.paused_ns, pfc.summary.paused_ns);
}

}  // namespace
}  // namespace rocelab::experiments

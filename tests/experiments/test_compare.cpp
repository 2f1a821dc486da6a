// The fabric decision report: examples/compare-fabrics.yaml at its small scale on the
// twin, the cost model, profile and compare-section parsing, and the stored runs.
#include "rocelab/experiments/compare/compare.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "rocelab/store/run_store.hpp"

namespace rocelab::experiments {
namespace {

const std::string example = std::string(ROCELAB_SOURCE_DIR) + "/examples/compare-fabrics.yaml";

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("rocelab-compare-" + std::to_string(::getpid()) + "-" + name)).string();
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(CompareProfiles, ShippedProfilesLoadWithTheirFields) {
  auto ib = load_fabric_profile(std::string(ROCELAB_SOURCE_DIR) + "/examples/fabric-profiles/infiniband-ndr.yaml");
  ASSERT_TRUE(ib.ok()) << ib.error().message();
  EXPECT_EQ(ib->sw.name, "InfiniBand NDR class");
  EXPECT_EQ(ib->sw.link, fabric::link_layer::infiniband);
  EXPECT_EQ(ib->routing, fabric::routing_mode::adaptive);
  EXPECT_EQ(ib->sw.port_to_port_latency_ns, 130);
  EXPECT_EQ(ib->sw.buffer_bytes, 64ll << 20);
  for (const char* f : {"roce-shallow-buffer.yaml", "roce-deep-buffer.yaml"}) {
    auto p = load_fabric_profile(std::string(ROCELAB_SOURCE_DIR) + "/examples/fabric-profiles/" + f);
    ASSERT_TRUE(p.ok()) << f << ": " << p.error().message();
    EXPECT_EQ(p->sw.link, fabric::link_layer::roce);
    EXPECT_GT(p->sw.price_per_port_usd, 0);
  }
}

TEST(CompareProfiles, AWrongFieldNamesFileLineAndTheValidFields) {
  const std::string path = temp_path("bad.yaml");
  write(path, "name: x\nlink: roce\nbufer_bytes: 1MiB\n");
  auto p = load_fabric_profile(path);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message().find(path + ":3: bufer_bytes"), std::string::npos) << p.error().message();
  EXPECT_NE(p.error().message().find("buffer_bytes"), std::string::npos);
  write(path, "name: x\nlink: ethernet\nbuffer_bytes: 1MiB\n");
  p = load_fabric_profile(path);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message().find(":2: link"), std::string::npos) << p.error().message();
  std::filesystem::remove(path);
}

fabric_profile_file shallow_profile() {
  auto p = load_fabric_profile(std::string(ROCELAB_SOURCE_DIR) + "/examples/fabric-profiles/roce-shallow-buffer.yaml");
  EXPECT_TRUE(p.ok()) << p.error().message();
  return p.ok() ? *p : fabric_profile_file{};
}

speed_prices seed_row(fabric::link_layer link, double gbps) {
  for (const speed_prices& row : seed_speed_prices(link))
    if (row.gbps == gbps) return row;
  ADD_FAILURE() << "no " << gbps << "G row";
  return {};
}

topology_spec leaf_spine(std::uint32_t hosts, std::uint32_t leaves, std::uint32_t spines, double gbps) {
  topology_spec t;
  t.type = "leaf_spine";
  t.hosts = hosts;
  t.leaves = leaves;
  t.spines = spines;
  t.link_gbps = gbps;
  return t;
}

// The user's report: a 200 Gb/s 64-host leaf-spine was priced as one 64-port switch with
// 400G NICs and optics. Priced now as simulated: 8 leaves and 4 spines of the profile's
// 64 x 400G box, 200G NICs and host optics from the seed table, the 400G uplinks (8 x
// 200G / 4 spines) at the profile's own 400G optic price.
TEST(CompareCost, PricesTheSimulatedLeafSpineAtItsLinkSpeed) {
  const fabric_profile_file p = shallow_profile();
  ASSERT_EQ(p.sw.port_gbps, 400);
  auto c = topology_cost(p, leaf_spine(64, 8, 4, 200));
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->topology, "leaf_spine");
  EXPECT_DOUBLE_EQ(c->switches, 8 + 4);
  EXPECT_EQ(c->radix, 64u);
  EXPECT_DOUBLE_EQ(c->uplink_gbps, 400);
  EXPECT_DOUBLE_EQ(c->ports_per_leaf, 8 * 0.5 + 4);  // 200G host links are half a 400G port
  EXPECT_DOUBLE_EQ(c->ports_per_spine, 8);
  const speed_prices at200 = seed_row(fabric::link_layer::roce, 200);
  EXPECT_NE(at200.nic_usd, p.sw.nic_price_usd) << "the 200G seed price is not the profile's 400G one";
  EXPECT_DOUBLE_EQ(c->host_prices.gbps, 200);
  EXPECT_DOUBLE_EQ(c->nic_usd, 64 * at200.nic_usd);
  EXPECT_DOUBLE_EQ(c->optics, 64 + 2 * 8 * 4);
  EXPECT_DOUBLE_EQ(c->optics_usd, 64 * at200.optic_usd + 2 * 8 * 4 * p.sw.optic_price_usd);
  EXPECT_DOUBLE_EQ(c->switch_usd, 12 * 64 * p.sw.price_per_port_usd);
  EXPECT_DOUBLE_EQ(c->total_usd, c->nic_usd + c->switch_usd + c->optics_usd);
  EXPECT_DOUBLE_EQ(c->per_gpu_usd, c->total_usd / 64);
  const std::string basis = cost_basis_text(*c);
  for (const char* part : {"8 leaves", "4 spines", "12 switches", "NICs 200G", "400G"})
    EXPECT_NE(basis.find(part), std::string::npos) << part << " in: " << basis;
}

struct cost_case {
  const char* name;
  topology_spec topology;
  double switches;
  double nic_gbps_priced;
};

class CompareCostCases : public ::testing::TestWithParam<cost_case> {};

TEST_P(CompareCostCases, SwitchCountAndSpeedPricedFollowTheSpec) {
  const cost_case& k = GetParam();
  const fabric_profile_file p = shallow_profile();
  auto c = topology_cost(p, k.topology);
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_DOUBLE_EQ(c->switches, k.switches);
  EXPECT_DOUBLE_EQ(c->host_prices.gbps, k.nic_gbps_priced);
  auto expected = prices_at(p, k.topology.link_gbps);
  ASSERT_TRUE(expected.ok());
  EXPECT_DOUBLE_EQ(c->nic_usd, k.topology.hosts * expected->nic_usd);
}

topology_spec single(std::uint32_t hosts, double gbps) {
  topology_spec t;
  t.hosts = hosts;
  t.link_gbps = gbps;
  return t;
}

INSTANTIATE_TEST_SUITE_P(
    Topologies, CompareCostCases,
    ::testing::Values(cost_case{"single_switch_48_at_400G", single(48, 400), 1, 400},
                      // 128 x 200G is 64 400G ports in breakout: one box.
                      cost_case{"single_switch_128_at_200G_breakout", single(128, 200), 1, 200},
                      // 128 x 400G does not fit a 64-port box: two.
                      cost_case{"single_switch_128_at_400G_two_boxes", single(128, 400), 2, 400},
                      // 100G at 2:1 on 2 spines: 8 x 100 / (2 x 2) = 200G uplinks.
                      cost_case{"leaf_spine_16_at_100G", leaf_spine(16, 2, 2, 100), 4, 100},
                      // A speed between rows is priced at the next row up.
                      cost_case{"single_switch_at_150G", single(8, 150), 1, 200}),
    [](const ::testing::TestParamInfo<cost_case>& i) { return std::string(i.param.name); });

TEST(CompareCost, ASpeedAboveThePriceTableIsAnErrorNamingIt) {
  auto c = topology_cost(shallow_profile(), single(8, 1600));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message().find("no price for 1600G"), std::string::npos) << c.error().message();
  EXPECT_NE(c.error().message().find("800G"), std::string::npos) << c.error().message();
}

// judge(): a verdict names a winner only when the paired difference over the common seeds
// is outside noise and more than the 1% tie tolerance; the user's "cheapest uec" on 0.7%
// from one seed is a tie.
struct verdict_case {
  const char* name;
  std::vector<double> a, b;  // per seed; lower is better
  bool tie;
};

class CompareVerdict : public ::testing::TestWithParam<verdict_case> {};

TEST_P(CompareVerdict, ATieWhenThePairedDifferenceCIIncludesZero) {
  const verdict_case& k = GetParam();
  std::vector<fabric_metrics> f(2);
  f[0].fabric = "roce-tuned";
  f[1].fabric = "uec";
  for (std::size_t i = 0; i < k.a.size(); ++i) f[0].seeds.push_back(1 + i);
  for (std::size_t i = 0; i < k.b.size(); ++i) f[1].seeds.push_back(1 + i);
  f[0].per_seed["usd_per_busbw_gbps"] = k.a;
  f[1].per_seed["usd_per_busbw_gbps"] = k.b;
  for (auto& m : f) m.ci["usd_per_busbw_gbps"] = mean_ci95(m.per_seed["usd_per_busbw_gbps"]);
  auto v = judge(f, "usd_per_busbw_gbps", "cheapest", false);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->tie(), k.tie);
  const std::string text = verdict_text(*v, f);
  EXPECT_EQ(text.find("tie") != std::string::npos, k.tie) << text;
  if (!k.tie) {
    EXPECT_EQ(v->best, "uec");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CompareVerdict,
    ::testing::Values(
        // uec 0.7% cheaper on average, the seeds disagree by more: noise.
        verdict_case{"seven_tenths_of_a_percent_in_noise", {10.00, 10.30, 9.80}, {9.95, 10.15, 9.86}, true},
        // one seed: no estimate of the noise, so no winner.
        verdict_case{"one_seed", {10.07}, {10.0}, true},
        // The twin's all-reduce is the same on every seed: a CI of no width, and 0.5% apart.
        verdict_case{"deterministic_half_percent", {10.0, 10.0, 10.0}, {9.95, 9.95, 9.95}, true},
        // uec cheaper on every seed by a steady 5%.
        verdict_case{"steady_five_percent", {10.0, 10.3, 9.8}, {9.5, 9.79, 9.31}, false}),
    [](const ::testing::TestParamInfo<verdict_case>& i) { return std::string(i.param.name); });

// The comparison itself: 3 seeds per fabric with CIs, a tie between two fabrics that only
// differ in name, and the cost of the 200G leaf-spine it ran.
TEST(Compare, PoolsSeedsCallsNoiseATieAndPricesTheTopologyItRan) {
  compare_settings s;
  auto spec = load_compare_spec(example, s);
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  spec->workload.incast.enabled = false;
  spec->workload.background.enabled = false;
  spec->topology.link_gbps = 200;
  spec->topology.spines = 2;  // 8 x 200G per leaf over 2 spines: 800G uplinks
  s.scale_hosts.clear();
  s.fabrics = {"roce-default"};
  ASSERT_TRUE(load_profiles(s).ok());
  s.profiles["roce-same"] = s.profiles.at("roce-default");
  s.fabrics = {"roce-default", "roce-same"};
  auto r = run_compare(*spec, s);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->seeds, 3u);
  const fabric_profile_file& p = s.profiles.at("roce-default");
  for (const fabric_metrics& m : r->fabrics) {
    SCOPED_TRACE(m.fabric);
    EXPECT_EQ(m.seeds.size(), 3u);
    ASSERT_TRUE(m.ci.contains("allreduce.busbw_gbps"));
    EXPECT_EQ(m.ci.at("allreduce.busbw_gbps").n, 3u);
    EXPECT_DOUBLE_EQ(m.cost.switches, 2 + 2);
    EXPECT_DOUBLE_EQ(m.cost.nic_usd, 16 * seed_row(fabric::link_layer::roce, 200).nic_usd);
    EXPECT_NE(m.cost.nic_usd, 16 * p.sw.nic_price_usd) << "not the profile's 400G NIC";
    EXPECT_DOUBLE_EQ(m.cost.uplink_prices.optic_usd, seed_row(fabric::link_layer::roce, 800).optic_usd);
  }
  ASSERT_FALSE(r->verdicts.empty());
  for (const metric_verdict& v : r->verdicts) EXPECT_TRUE(v.tie()) << verdict_text(v, r->fabrics);
  const std::string html = compare_html(*r);
  EXPECT_NE(html.find("tie between"), std::string::npos);
  EXPECT_NE(html.find(cost_basis_text(r->fabrics[0].cost)), std::string::npos);
  const auto j = nlohmann::json::parse(compare_json(*r));
  EXPECT_TRUE(j["verdicts"][0]["tie"].get<bool>());
  EXPECT_EQ(j["fabrics"][0]["ci"]["allreduce.busbw_gbps"]["n"], 3);
  s.seeds = 1;
  auto one = run_compare(*spec, s);
  ASSERT_FALSE(one.ok());
  EXPECT_NE(one.error().message().find("at least 3 seeds"), std::string::npos) << one.error().message();
}

TEST(CompareSpec, TheCompareSectionIsReadAndSpecErrorsKeepTheirLines) {
  compare_settings s;
  auto spec = load_compare_spec(example, s);
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  EXPECT_EQ(spec->name, "compare-fabrics");
  EXPECT_EQ(s.fabrics, (std::vector<std::string>{"ib", "roce-tuned", "roce-default"}));
  EXPECT_EQ(s.scale_hosts, (std::vector<std::uint32_t>{16, 32}));
  EXPECT_EQ(s.small_message_bytes, 64 * 1024);
  ASSERT_TRUE(load_profiles(s).ok());
  EXPECT_EQ(s.profiles.at("ib").sw.link, fabric::link_layer::infiniband);
  EXPECT_EQ(s.profiles.at("roce-default").sw.link, fabric::link_layer::roce);

  const std::string path = temp_path("spec.yaml");
  write(path, "compare:\n  fabrics: [ib]\n  compute_ms_per_step: 3\nname: x\ntopology:\n  hosts: 4\n  link_gbs: 100\n");
  compare_settings t;
  auto bad = load_compare_spec(path, t);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find(":7:"), std::string::npos) << bad.error().message();
  write(path, "name: x\ncompare:\n  fabric: [ib]\n");
  bad = load_compare_spec(path, t);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find(":3: compare.fabric"), std::string::npos) << bad.error().message();
  std::filesystem::remove(path);
}

TEST(Compare, TheExampleRunsOnEveryFabricProducesTheReportAndStoresTheRuns) {
  compare_settings s;
  auto spec = load_compare_spec(example, s);
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  ASSERT_TRUE(load_profiles(s).ok());
  const std::string db_path = temp_path("runs.db");
  auto db = store::run_store::open(db_path);
  ASSERT_TRUE(db.ok()) << db.error().message();
  auto r = run_compare(*spec, s, &*db);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->fabrics.size(), 3u);
  for (const fabric_metrics& m : r->fabrics) {
    SCOPED_TRACE(m.fabric);
    EXPECT_TRUE(m.has_allreduce && m.has_incast && m.has_background);
    EXPECT_GT(m.busbw_gbps, 0);
    EXPECT_LE(m.busbw_gbps, 400) << "a ring's bus bandwidth cannot beat the link";
    EXPECT_NEAR(m.busbw_gbps, m.algbw_gbps * 2 * 15 / 16, 1e-6);
    EXPECT_GT(m.incast_fct_p50_ns, 0);
    EXPECT_GE(m.incast_fct_p99_ns, m.incast_fct_p50_ns);
    // 12 x 2 MB into one 400 Gb/s port needs 480 us of that link at least.
    EXPECT_GE(m.incast_fct_p99_ns, 480'000);
    EXPECT_GT(m.small_messages, 0u);
    EXPECT_GT(m.small_fct_p99_ns, 0);
    EXPECT_GT(m.link_util_mean, 0);
    EXPECT_LE(m.link_util_max, 1.0 + 1e-9);
    EXPECT_NEAR(m.comm_share + m.mfu_factor, 1.0, 1e-9);
    EXPECT_EQ(m.drops, 0u);
    EXPECT_EQ(m.incomplete_flows, 0u);
    EXPECT_GT(m.cost.per_gpu_usd, 0);
    EXPECT_NEAR(m.usd_per_busbw_gbps, m.cost.per_gpu_usd / m.busbw_gbps, 1e-9);
    EXPECT_FALSE(m.run_ids.empty());
  }
  const fabric_metrics& ib = r->fabrics[0];
  EXPECT_EQ(ib.link, "infiniband");
  EXPECT_EQ(ib.pause_frames, 0u) << "credits, not pause frames";
  EXPECT_GT(ib.paused_ns, 0) << "the incast stalls on credits";
  const fabric_metrics& tuned = r->fabrics[1];
  EXPECT_FALSE(tuned.tuning_note.empty());
  EXPECT_EQ(tuned.settings.count("switch.ecn.kmin_bytes"), 1u);
  EXPECT_GT(r->fabrics[2].pause_frames, 0u) << "the shallow-buffer RoCE incast pauses";
  ASSERT_EQ(r->scale.size(), 2u);
  EXPECT_EQ(r->scale[0].hosts, 16u);
  EXPECT_EQ(r->scale[1].busbw_gbps.size(), 3u);
  EXPECT_FALSE(r->scale[1].cheapest.empty());

  // The report: JSON with every fabric, HTML with the table.
  const auto j = nlohmann::json::parse(compare_json(*r));
  EXPECT_EQ(j["fabrics"].size(), 3u);
  EXPECT_EQ(j["fabrics"][0]["pauses"]["kind"], "credit_stalls");
  EXPECT_EQ(j["scale"].size(), 2u);
  const std::string html = compare_html(*r);
  EXPECT_NE(html.find("<table>"), std::string::npos);
  for (const char* f : {"ib", "roce-tuned", "roce-default", "cost per GPU per Gb/s busbw", "incast FCT p99"})
    EXPECT_NE(html.find(f), std::string::npos) << f;
  const std::string out = std::string(ROCELAB_BINARY_DIR) + "/compare-report";
  std::filesystem::create_directories(out);
  write(out + "/report.html", html);
  write(out + "/report.json", compare_json(*r));

  // Every run is in the store, named by fabric and scenario.
  auto runs = db->runs();
  ASSERT_TRUE(runs.ok());
  std::size_t ids = 0;
  for (const auto& m : r->fabrics) ids += m.run_ids.size();
  EXPECT_EQ(runs->size(), ids);
  bool found = false;
  for (const auto& run : *runs)
    if (run.name == "compare/ib/incast") {
      found = true;
      EXPECT_EQ(run.parameters.at("fabric.link"), "infiniband");
      auto rec = db->load(run.id);
      ASSERT_TRUE(rec.ok());
      EXPECT_FALSE(rec->flows.empty());
    }
  EXPECT_TRUE(found);
  // roce-tuned's search is a stored sweep with one trial per budgeted point.
  auto sweeps = db->sweeps();
  ASSERT_TRUE(sweeps.ok());
  ASSERT_EQ(sweeps->size(), 1u);
  auto trials = db->trials(sweeps->front().id);
  ASSERT_TRUE(trials.ok());
  EXPECT_EQ(trials->size(), s.tune_budget);
  EXPECT_EQ(trials->front().params.count("switch.ecn.kmin_bytes"), 1u);
  std::filesystem::remove(db_path);
  std::filesystem::remove(db_path + "-wal");
  std::filesystem::remove(db_path + "-shm");
}

// The progress lines number every step against the total counted before the runs: the
// lines are "step 1 of n" .. "step n of n", one per step, and n is the hand count.
struct step_case {
  const char* name;
  std::vector<std::string> fabrics;
  std::vector<std::uint32_t> scale_hosts;
  tuning_method tune_method;
  std::uint32_t tune_budget;
  bool background;
  std::uint32_t expected_steps;
};

class CompareSteps : public ::testing::TestWithParam<step_case> {};

TEST_P(CompareSteps, EveryStepIsNumberedAgainstTheTrueTotal) {
  const step_case& c = GetParam();
  compare_settings s;
  auto spec = load_compare_spec(example, s);
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  s.fabrics = c.fabrics;
  s.scale_hosts = c.scale_hosts;
  s.tune_method = c.tune_method;
  s.tune_budget = c.tune_budget;
  spec->workload.background.enabled = c.background;
  ASSERT_TRUE(load_profiles(s).ok());
  const std::uint32_t n = compare_steps(*spec, s);
  EXPECT_EQ(n, c.expected_steps);
  std::vector<std::string> lines;
  auto r = run_compare(*spec, s, nullptr, [&](const std::string& line) { lines.push_back(line); });
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(lines.size(), n);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string prefix = "step " + std::to_string(i + 1) + " of " + std::to_string(n) + ": ";
    EXPECT_EQ(lines[i].rfind(prefix, 0), 0u) << lines[i];
  }
}

INSTANTIATE_TEST_SUITE_P(
    Plans, CompareSteps,
    ::testing::Values(
        // 3 fabrics x 3 workloads, 8 tuning trials, 2 scale points x 3 fabrics.
        step_case{"example", {"ib", "roce-tuned", "roce-default"}, {16, 32}, tuning_method::bayes, 8, true, 9 + 8 + 6},
        // No background: 2 workloads each; a 3-parameter grid within 9 points has 2 per axis.
        step_case{"grid_two_workloads", {"roce-tuned", "ib"}, {}, tuning_method::grid, 9, false, 4 + 8},
        step_case{"one_fabric_no_scale", {"roce-default"}, {}, tuning_method::bayes, 8, true, 3}),
    [](const ::testing::TestParamInfo<step_case>& i) { return std::string(i.param.name); });


// Ultra Ethernet beside RoCE on the same example: a full row (no PFC, trims instead of
// drops), the report's title, table and verdict naming it.
TEST(Compare, UecRunsBesideRoceWithTrimsInItsMetrics) {
  auto profile = load_fabric_profile(std::string(ROCELAB_SOURCE_DIR) + "/examples/fabric-profiles/uec.yaml");
  ASSERT_TRUE(profile.ok()) << profile.error().message();
  EXPECT_EQ(profile->sw.link, fabric::link_layer::uec);
  compare_settings s;
  auto spec = load_compare_spec(example, s);
  ASSERT_TRUE(spec.ok()) << spec.error().message();
  s.fabrics = {"roce-default", "uec"};
  s.scale_hosts = {16};
  ASSERT_TRUE(load_profiles(s).ok());
  auto r = run_compare(*spec, s);
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->fabrics.size(), 2u);
  const fabric_metrics& uec = r->fabrics[1];
  EXPECT_EQ(uec.link, "uec");
  EXPECT_EQ(uec.congestion, "none") << "UEC's own NSCC, not DCQCN";
  EXPECT_TRUE(uec.has_allreduce && uec.has_incast && uec.has_background);
  EXPECT_GT(uec.busbw_gbps, 0);
  EXPECT_LE(uec.busbw_gbps, 400);
  EXPECT_GE(uec.incast_fct_p99_ns, 480'000);
  EXPECT_EQ(uec.pause_frames, 0u);
  EXPECT_EQ(uec.paused_ns, 0);
  EXPECT_EQ(uec.drops, 0u) << "a UEC switch trims what it would drop";
  EXPECT_EQ(uec.retransmits, uec.trims) << "every resend answers a trim: the incast's queueing is no timeout";
  EXPECT_EQ(uec.incomplete_flows, 0u);
  EXPECT_GT(uec.cost.per_gpu_usd, 0);
  const auto j = nlohmann::json::parse(compare_json(*r));
  EXPECT_EQ(j["fabrics"][1]["pauses"]["kind"], "none");
  EXPECT_TRUE(j["fabrics"][1].contains("trims"));
  const std::string html = compare_html(*r);
  for (const char* f : {"Ultra Ethernet", "drops / trims / retransmits", "Loss and recovery"})
    EXPECT_NE(html.find(f), std::string::npos) << f;
  // The verdict names uec: as the best, tied with it, or against the best.
  ASSERT_FALSE(r->verdicts.empty());
  EXPECT_NE(verdict_text(r->verdicts.front(), r->fabrics).find("uec"), std::string::npos);
}

TEST(Compare, RejectsAnUnknownFabric) {
  compare_settings s;
  auto spec = load_compare_spec(example, s);
  ASSERT_TRUE(spec.ok());
  s.fabrics = {"token-ring"};
  EXPECT_FALSE(run_compare(*spec, s).ok());
}

}  // namespace
}  // namespace rocelab::experiments

#include "rocelab/traffic/background.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include "fake_twin_context.hpp"
#include "rocelab/traffic/composite.hpp"
#include "rocelab/traffic/flow_size_cdf.hpp"
#include "rocelab/traffic/incast.hpp"
#include "rocelab/traffic/random.hpp"

namespace rocelab::traffic {
namespace {

TEST(flow_size_cdf, builtins_load_with_their_published_shape) {
  auto ws = flow_size_cdf::builtin("websearch");
  ASSERT_TRUE(ws.ok()) << ws.error().message();
  EXPECT_EQ(ws->points().size(), 12u);
  EXPECT_DOUBLE_EQ(ws->quantile(0.15), 10000);
  EXPECT_DOUBLE_EQ(ws->quantile(0.70), 1e6);
  EXPECT_DOUBLE_EQ(ws->quantile(1.0), 30e6);
  EXPECT_DOUBLE_EQ(ws->quantile(0.65), 600000);  // midway between 0.60 (200 KB) and 0.70 (1 MB)
  auto hd = flow_size_cdf::builtin("hadoop");
  ASSERT_TRUE(hd.ok()) << hd.error().message();
  EXPECT_DOUBLE_EQ(hd->quantile(0.5), 700);
  EXPECT_FALSE(flow_size_cdf::builtin("nope").ok());
}

TEST(flow_size_cdf, mean_is_the_integral_of_the_interpolated_cdf) {
  auto cdf = flow_size_cdf::from_points({{100, 0.5}, {300, 1.0}});
  ASSERT_TRUE(cdf.ok());
  // Atom of 0.5 at 100 B, then uniform 100..300 with mass 0.5: 50 + 100.
  EXPECT_DOUBLE_EQ(cdf->mean_bytes(), 150);
  auto ws = flow_size_cdf::builtin("websearch");
  EXPECT_NEAR(ws->mean_bytes(), 1'711'250, 1);  // sum of segment midpoints x their mass
  EXPECT_NEAR(flow_size_cdf::builtin("hadoop")->mean_bytes(), 120'420.75, 1);
}

TEST(flow_size_cdf, sampling_matches_mean_and_quantiles) {
  for (const char* name : {"websearch", "hadoop"}) {
    auto cdf = flow_size_cdf::builtin(name);
    ASSERT_TRUE(cdf.ok());
    random_stream rng(42, 0);
    constexpr int n = 400'000;
    std::vector<double> xs(n);
    double sum = 0;
    for (auto& x : xs) sum += (x = static_cast<double>(cdf->sample(rng.uniform())));
    // The tail makes the mean converge slowly (websearch: sd ~ 3.5 MB): 3 sigma/sqrt(n).
    EXPECT_NEAR(sum / n, cdf->mean_bytes(), 0.03 * cdf->mean_bytes()) << name;
    std::sort(xs.begin(), xs.end());
    for (double p : {0.1, 0.5, 0.9, 0.99}) {
      const double q = xs[static_cast<std::size_t>(p * n)];
      EXPECT_NEAR(q, cdf->quantile(p), 0.03 * cdf->quantile(p) + 2) << name << " p" << p;
    }
  }
}

TEST(flow_size_cdf, file_errors_name_the_line) {
  auto bad = flow_size_cdf::parse("# sizes\n100 0.5\n50 0.7\n200 1\n", "my.cdf");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("my.cdf:3"), std::string::npos) << bad.error().message();
  auto junk = flow_size_cdf::parse("100 0.5\nabc\n", "my.cdf");
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.error().message().find("my.cdf:2"), std::string::npos) << junk.error().message();
  auto no_one = flow_size_cdf::parse("100 0.5\n", "my.cdf");
  EXPECT_FALSE(no_one.ok());
  // Percent, as the HPCC traffic generator writes it.
  auto pct = flow_size_cdf::parse("0 0\n1000 50\n2000 100\n", "pct.cdf");
  ASSERT_TRUE(pct.ok()) << pct.error().message();
  EXPECT_DOUBLE_EQ(pct->quantile(0.5), 1000);
}

TEST(flow_size_cdf, loads_a_user_file) {
  const std::string path = ::testing::TempDir() + "/user.cdf";
  std::ofstream(path) << "1000 0\n5000 1 # all between 1 and 5 KB\n";
  auto cdf = flow_size_cdf::load_file(path);
  ASSERT_TRUE(cdf.ok()) << cdf.error().message();
  EXPECT_DOUBLE_EQ(cdf->mean_bytes(), 3000);
  EXPECT_EQ(cdf->name(), path);
  EXPECT_FALSE(flow_size_cdf::load_file(path + ".missing").ok());
}

background_config websearch_at(double load, std::int64_t duration_ns) {
  background_config cfg;
  cfg.cdf = *flow_size_cdf::builtin("websearch");
  cfg.load = load;
  cfg.duration_ns = duration_ns;
  return cfg;
}

TEST(background, offered_load_is_within_tolerance) {
  for (double load : {0.3, 0.5, 0.8}) {
    // 16 hosts x 200 ms at 100 Gb/s: ~1200 flows per host at load 0.5.
    const auto cfg = websearch_at(load, 200'000'000);
    const auto msgs = background_messages(cfg, 16, 100, 9);
    std::map<std::uint32_t, double> per_host;
    double mean_sampled = 0;
    for (const auto& m : msgs) {
      per_host[m.src] += static_cast<double>(m.bytes);
      mean_sampled += static_cast<double>(m.bytes);
      EXPECT_NE(m.src, m.dst);
      EXPECT_GE(m.start_ns, 0);
      EXPECT_LT(m.start_ns, 200'000'000);
    }
    mean_sampled /= static_cast<double>(msgs.size());
    // Arrival count: Poisson with mean lambda x T per host.
    const double expected_flows = load * 100e9 * 0.2 / (8 * cfg.cdf.mean_bytes()) * 16;
    EXPECT_NEAR(static_cast<double>(msgs.size()), expected_flows, 4 * std::sqrt(expected_flows)) << load;
    // Offered bytes over the window: the heavy tail gives ~5% noise at this size.
    double total = 0;
    for (const auto& [h, b] : per_host) total += b;
    const double offered = total * 8 / 0.2 / 16 / 100e9;
    EXPECT_NEAR(offered, load, 0.1 * load) << load << " (mean sampled " << mean_sampled << ")";
  }
}

TEST(background, destinations_are_uniform_over_the_other_hosts) {
  auto cfg = websearch_at(0.5, 100'000'000);
  cfg.hosts = {2, 5, 7, 11};
  const auto msgs = background_messages(cfg, 12, 100, 3);
  std::map<std::pair<std::uint32_t, std::uint32_t>, int> pairs;
  for (const auto& m : msgs) ++pairs[{m.src, m.dst}];
  EXPECT_EQ(pairs.size(), 12u);  // 4 x 3 ordered pairs
  for (const auto& [p, n] : pairs) EXPECT_NEAR(n, static_cast<double>(msgs.size()) / 12, 0.25 * msgs.size() / 12);
}

TEST(background, same_seed_same_flows) {
  const auto cfg = websearch_at(0.5, 10'000'000);
  const auto a = background_messages(cfg, 32, 100, 1);
  const auto b = background_messages(cfg, 32, 100, 1);
  const auto c = background_messages(cfg, 32, 100, 2);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].src, b[i].src);
    EXPECT_EQ(a[i].dst, b[i].dst);
    EXPECT_EQ(a[i].bytes, b[i].bytes);
    EXPECT_EQ(a[i].start_ns, b[i].start_ns);
  }
  bool differs = a.size() != c.size();
  for (std::size_t i = 0; !differs && i < a.size(); ++i) differs = a[i].start_ns != c[i].start_ns;
  EXPECT_TRUE(differs);
  for (std::size_t i = 1; i < a.size(); ++i) EXPECT_LE(a[i - 1].start_ns, a[i].start_ns);
}

TEST(background, max_flows_keeps_the_earliest) {
  auto cfg = websearch_at(0.5, 10'000'000);
  cfg.max_flows = 10;
  const auto msgs = background_messages(cfg, 32, 100, 1);
  ASSERT_EQ(msgs.size(), 10u);
  const auto all = background_messages(websearch_at(0.5, 10'000'000), 32, 100, 1);
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(msgs[i].start_ns, all[i].start_ns);
}

TEST(composite, completions_go_back_to_the_part_that_posted) {
  auto bg = websearch_at(0.5, 1'000'000);
  auto background = make_background(bg, 8, 1);
  ASSERT_TRUE(background.ok());
  incast_config ic;
  ic.receiver = 0;
  ic.sender_count = 4;
  ic.rounds = 2;
  auto incast = make_incast(ic, 8, 1);
  ASSERT_TRUE(incast.ok());
  std::vector<std::unique_ptr<fabric::twin::workload>> parts;
  parts.push_back(std::move(*background));
  parts.push_back(std::move(*incast));
  composite_workload w(std::move(parts));
  testing::fake_twin_context ctx(8);
  w.start(ctx);
  const auto first = ctx.posts.size();
  ctx.drain(w, 1000);
  // The incast's second round was posted by the incast when its first round finished.
  std::size_t incast_msgs = 0;
  for (const auto& p : ctx.posts) incast_msgs += p.m.kind == workload_kind::incast;
  EXPECT_EQ(incast_msgs, 8u);
  EXPECT_EQ(ctx.posts.size(), first + 4);
}

}  // namespace
}  // namespace rocelab::traffic

// The calibration file: what a lab's measurement writes is what the twin reads back, and
// a file that is wrong is refused naming where.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "rocelab/experiments/calibration/calibration.hpp"

namespace rocelab::experiments {
namespace {

fabric::delay_quantiles ramp(std::int64_t from, std::int64_t step, std::uint64_t samples) {
  fabric::delay_quantiles q;
  for (std::size_t i = 0; i < q.ns.size(); ++i) q.ns[i] = from + step * static_cast<std::int64_t>(i);
  q.samples = samples;
  return q;
}

calibration sample() {
  calibration c;
  c.lab = "virtual";
  c.taken_at = "2026-11-29T04:00:00Z";
  c.spec = "virtual-incast-8to1";
  c.link_gbps = 0.5;
  c.mtu_bytes = 4096;
  c.hosts = {{"h1", ramp(9'000, 700, 200), ramp(4'000, 300, 200), 0.4987},
             {"h2", ramp(11'000, 900, 200), ramp(5'000, 100, 200), 0.4990}};
  c.pairs = {{"h1", "h2", ramp(160'000, 2'000, 200)}};
  c.ports = {{0, ramp(20'000, 1'000, 300)}, {1, ramp(30'000, 1'000, 100)}};
  return c;
}

TEST(calibration_file, what_is_written_reads_back_the_same) {
  const auto c = sample();
  const auto text = calibration_yaml(c);
  auto back = parse_calibration(text, "cal.yaml");
  ASSERT_TRUE(back.ok()) << back.error().message() << "\n" << text;
  EXPECT_EQ(back->lab, "virtual");
  EXPECT_EQ(back->taken_at, c.taken_at);
  EXPECT_EQ(back->spec, c.spec);
  EXPECT_DOUBLE_EQ(back->link_gbps, 0.5);
  EXPECT_EQ(back->mtu_bytes, 4096u);
  ASSERT_EQ(back->hosts.size(), 2u);
  EXPECT_EQ(back->hosts[1].name, "h2");
  EXPECT_EQ(back->hosts[1].send_processing, c.hosts[1].send_processing);
  EXPECT_EQ(back->hosts[0].receive_processing, c.hosts[0].receive_processing);
  EXPECT_DOUBLE_EQ(back->hosts[0].achieved_gbps, 0.4987);
  ASSERT_EQ(back->pairs.size(), 1u);
  EXPECT_EQ(back->pairs[0].base_rtt, c.pairs[0].base_rtt);
  ASSERT_EQ(back->ports.size(), 2u);
  EXPECT_EQ(back->ports[1].forwarding, c.ports[1].forwarding);
  EXPECT_TRUE(back->cnp_loop.empty()) << "a loop not measured stays not measured";
  EXPECT_EQ(back->host("h1")->achieved_gbps, c.hosts[0].achieved_gbps);
  EXPECT_EQ(back->host("h9"), nullptr);
}

TEST(calibration_file, says_how_its_delays_were_taken_and_a_file_without_it_was_idle) {
  auto c = sample();
  EXPECT_EQ(c.load, calibration_load_idle);
  c.load = calibration_load_workload;
  auto back = parse_calibration(calibration_yaml(c), "cal.yaml");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->load, calibration_load_workload);

  std::string text = calibration_yaml(sample());
  const auto at = text.find("load: idle\n");
  ASSERT_NE(at, std::string::npos) << text;
  auto without = parse_calibration(text.substr(0, at) + text.substr(at + 11), "old.yaml");
  ASSERT_TRUE(without.ok()) << without.error().message();
  EXPECT_EQ(without->load, calibration_load_idle);

  auto wrong = parse_calibration(text.substr(0, at) + "load: busy\n" + text.substr(at + 11), "bad.yaml");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message().find("bad.yaml:"), std::string::npos) << wrong.error().message();
  EXPECT_NE(wrong.error().message().find("load 'busy'"), std::string::npos) << wrong.error().message();
}

// The pacing lateness is kept per host when it was measured; a host without it (and a
// file from before it) reads as not measured.
TEST(calibration_file, keeps_a_hosts_pacing_lateness_and_reads_a_file_without_it) {
  auto c = sample();
  c.hosts[1].pacing_lateness = ramp(1'000, 40'000, 500);
  const auto text = calibration_yaml(c);
  EXPECT_EQ(text.find("pacing_lateness_ns"), text.rfind("pacing_lateness_ns")) << "h1 measured none:\n" << text;
  auto back = parse_calibration(text, "cal.yaml");
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->hosts[1].pacing_lateness, c.hosts[1].pacing_lateness);
  EXPECT_TRUE(back->hosts[0].pacing_lateness.empty());
  auto old = parse_calibration(calibration_yaml(sample()), "old.yaml");
  ASSERT_TRUE(old.ok()) << old.error().message();
  EXPECT_TRUE(old->hosts[1].pacing_lateness.empty());
}

TEST(calibration_file, pools_the_ports_weighted_by_their_samples) {
  const auto pooled = sample().forwarding_pooled();
  EXPECT_EQ(pooled.samples, 400u);
  EXPECT_EQ(pooled.ns[0], (300 * 20'000 + 100 * 30'000) / 400);
  EXPECT_TRUE(calibration{}.forwarding_pooled().empty());
}

TEST(calibration_file, is_written_whole_and_read_back_from_disk) {
  const auto dir = std::filesystem::temp_directory_path() / ("rocelab-cal-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / "lab.yaml").string();
  ASSERT_TRUE(write_calibration_file(sample(), path).ok());
  EXPECT_FALSE(write_calibration_file(sample(), path).ok()) << "an existing calibration is not replaced silently";
  EXPECT_TRUE(write_calibration_file(sample(), path, existing_output::replace).ok());
  auto back = read_calibration_file(path);
  ASSERT_TRUE(back.ok()) << back.error().message();
  EXPECT_EQ(back->hosts.size(), 2u);
  std::filesystem::remove_all(dir);
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(calibration_file, refuses_what_is_wrong_naming_the_line_and_field) {
  const auto text = calibration_yaml(sample());
  struct broken {
    std::string text, expect;
  };
  const std::vector<broken> cases = {
      {replaced(text, "rocelab_calibration: 1", "rocelab_calibration: 2"), "this rocelab reads version 1"},
      {replaced(text, "link_gbps: 0.5", "link_gbps: fast"), "link_gbps: 'fast' is not a number"},
      {replaced(text, "name: h2", "name: h1"), "host h1 is listed twice"},
      {replaced(text, "achieved_gbps: 0.4987", "achieved_gbps: -1"), "achieved_gbps must not be negative"},
      {replaced(text, "[9000, 9700", "[9000, 8700"), "non-negative and non-decreasing"},
      {replaced(text, "{samples: 300, quantiles: [20000", "{samples: 300, quantiles: [x"), "is not a whole number"},
      {replaced(text, "taken_at:", "taken_on:"), "taken_at is missing"},
  };
  for (const auto& c : cases) {
    auto r = parse_calibration(c.text, "cal.yaml");
    ASSERT_FALSE(r.ok()) << c.expect;
    EXPECT_NE(r.error().message().find(c.expect), std::string::npos) << r.error().message();
    EXPECT_EQ(r.error().message().rfind("cal.yaml:", 0), 0u) << r.error().message();
  }
}

}  // namespace
}  // namespace rocelab::experiments

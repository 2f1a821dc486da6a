// Buffer validation (experiments/buffers/buffers.hpp): profile fields and their errors, the
// headroom arithmetic against a hand calculation, and the two twin searches' properties.
#include <fstream>
#include <iostream>

#include <gtest/gtest.h>

#include "../support/temp_dir.hpp"
#include "rocelab/experiments/buffers/buffers.hpp"
#include "rocelab/experiments/run/runner.hpp"
#include "rocelab/experiments/run/summary.hpp"

namespace rocelab::experiments {
namespace {

const std::string profiles_dir = std::string(ROCELAB_SOURCE_DIR) + "/examples/fabric-profiles/";

// A 16-port 100G switch, per-port headroom, 100 m cables, 1 us NIC response.
fabric_profile_file small_switch(std::int64_t buffer_bytes) {
  fabric_profile_file p;
  p.sw.name = "test 16x100G " + std::to_string(buffer_bytes / 1024) + " KiB";
  p.sw.port_gbps = 100;
  p.sw.ports = 16;
  p.sw.buffer_bytes = buffer_bytes;
  p.sw.cell_bytes = 256;
  p.sw.alpha = 1;
  p.sw.cable_m = 100;
  p.sw.peer_response_ns = 1000;
  return p;
}

// 8 x 256 KiB into one port at 100 Gb/s: 2 MiB at once.
experiment_spec incast_spec(std::uint32_t senders = 8, std::int64_t flow_bytes = 256 * 1024) {
  experiment_spec s;
  s.name = "buffers-test";
  s.topology.hosts = senders + 1;
  s.workload.incast.enabled = true;
  s.workload.incast.senders = senders;
  s.workload.incast.flow_bytes = flow_bytes;
  s.sw.pfc.enabled = true;
  s.sw.pfc.priorities = {3};
  s.sw.ecn.enabled = false;
  s.nic.dcqcn_enabled = false;
  s.nic.mtu_bytes = 1024;
  return s;
}

TEST(buffer_profiles, examples_carry_the_headroom_policy) {
  auto shallow = load_fabric_profile(profiles_dir + "roce-shallow-buffer.yaml");
  auto deep = load_fabric_profile(profiles_dir + "roce-deep-buffer.yaml");
  ASSERT_TRUE(shallow.ok()) << shallow.error().message();
  ASSERT_TRUE(deep.ok()) << deep.error().message();
  EXPECT_TRUE(shallow->sw.headroom_shared);
  EXPECT_DOUBLE_EQ(shallow->sw.headroom_oversubscription, 2);
  EXPECT_FALSE(deep->sw.headroom_shared);
  EXPECT_GT(deep->sw.buffer_bytes, 10 * shallow->sw.buffer_bytes);
  EXPECT_EQ(deep->sw.peer_response_ns, 1000);
}

TEST(buffer_profiles, a_bad_field_names_file_line_and_field) {
  testing::temp_dir dir("buffers");
  const std::string path = dir.file("bad.yaml");
  std::ofstream(path) << "name: bad\nports: 32\nbuffer_bytes: 16MiB\nheadroom: sometimes\n";
  auto p = load_fabric_profile(path);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message().find(path + ":4: headroom"), std::string::npos) << p.error().message();
  std::ofstream(path) << "name: bad\nports: 32\nbuffer_bytes: 16MiB\nalpha: 0\n";
  p = load_fabric_profile(path);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message().find(":4: alpha"), std::string::npos) << p.error().message();
}

TEST(buffer_headroom, matches_the_hand_calculation) {
  // 100 Gb/s, 100 m, RoCE MTU 1024 (largest frame, a WRITE with its RETH: 1024 + 78 = 1102), 1 us response:
  //   cable     2 x 100 m x 5 ns/m = 1000 ns at 100 Gb/s         = 12500 B
  //   MTUs      2 x (1102 + 20 preamble/IFG)                    =  2244 B
  //   PFC frame 64 + 20                                         =    84 B
  //   response  ceil(1000 ns x 100 Gb/s / 512 bit) = 196 quanta = 196 x 64 B = 12544 B
  //   total                                                     = 27372 B
  const headroom_figures h = profile_headroom(small_switch(4 << 20), incast_spec());
  EXPECT_EQ(h.cable_bytes, 12500);
  EXPECT_EQ(h.mtu_bytes, 2244);
  EXPECT_EQ(h.pfc_frame_bytes, 84);
  EXPECT_EQ(h.response_bytes, 12544);
  EXPECT_EQ(h.per_pg_bytes, 27372);
  // Per port, one lossless PG on each of 16 ports; shared with oversubscription 2: half.
  EXPECT_EQ(h.reserved_bytes, 16 * 27372);
  auto pooled = small_switch(4 << 20);
  pooled.sw.headroom_shared = true;
  pooled.sw.headroom_oversubscription = 2;
  EXPECT_EQ(profile_headroom(pooled, incast_spec()).reserved_bytes, 8 * 27372);
  EXPECT_EQ(h.shared_bytes, (4 << 20) - 16 * 27372);
}

TEST(buffer_headroom, the_run_gets_the_profile_switch) {
  auto s = spec_on_profile(incast_spec(), small_switch(4 << 20));
  ASSERT_TRUE(s.ok()) << s.error().message();
  EXPECT_DOUBLE_EQ(s->topology.link_gbps, 100);
  EXPECT_EQ(s->topology.link_delay_ns, 500);  // 100 m of fibre
  EXPECT_EQ(s->sw.pfc.headroom_bytes, 27372);
  // The 7 ports outside the 9-port run keep their reserve.
  EXPECT_EQ(s->sw.buffer_bytes, ((4 << 20) - 7 * 27372) / 256 * 256);
  // A buffer the headroom would eat is an error naming the profile.
  auto tiny = spec_on_profile(incast_spec(), small_switch(256 * 1024));
  ASSERT_FALSE(tiny.ok());
  EXPECT_NE(tiny.error().message().find("test 16x100G"), std::string::npos);
}

TEST(buffer_validation, lossless_degree_grows_with_the_buffer_and_pfc_keeps_every_degree) {
  std::vector<fabric_profile_file> profiles{small_switch(2 << 20), small_switch(4 << 20), small_switch(8 << 20)};
  auto r = validate_buffers(incast_spec(), profiles, {});
  ASSERT_TRUE(r.ok()) << r.error().message();
  ASSERT_EQ(r->profiles.size(), 3u);
  std::uint32_t previous = 0;
  for (const profile_buffers& p : r->profiles) {
    SCOPED_TRACE(p.profile);
    EXPECT_EQ(p.max_degree_searched, 15u);
    // With headroom sized for the cable and response time, PFC never drops.
    EXPECT_EQ(p.lossless_degree_pfc, 15u);
    EXPECT_LE(p.lossless_degree_no_pfc, p.lossless_degree_pfc);
    EXPECT_GE(p.lossless_degree_no_pfc, previous) << "more buffer never lowers the loss-free degree";
    previous = p.lossless_degree_no_pfc;
    std::cerr << p.profile << ": loss-free without PFC up to " << p.lossless_degree_no_pfc << "-to-1, "
              << p.probes.size() << " twin runs\n";
    // The answer is a boundary the search actually saw: its degree loss-free, one more lossy.
    if (p.lossless_degree_no_pfc < 15) {
      bool saw_lossy_next = false, saw_clean = p.lossless_degree_no_pfc == 0;
      for (const auto& q : p.probes) {
        if (q.search != "degree_no_pfc") continue;
        if (q.degree == p.lossless_degree_no_pfc + 1 && q.drops > 0) saw_lossy_next = true;
        if (q.degree == p.lossless_degree_no_pfc && q.drops == 0) saw_clean = true;
      }
      EXPECT_TRUE(saw_lossy_next && saw_clean);
    }
  }
  // 256 KiB from each sender: 2 MiB of switch cannot take the 15-to-1 (3.75 MiB) without PFC.
  EXPECT_LT(r->profiles[0].lossless_degree_no_pfc, 15u);
}

TEST(buffer_validation, buffer_for_a_p99_target_meets_it_and_a_smaller_one_does_not) {
  buffers_settings settings;
  settings.buffer_tolerance = 0.05;
  settings.max_buffer_factor = 8;
  // PFC off: too little buffer drops and retransmits, which is what a p99 target catches.
  experiment_spec spec = incast_spec(12, 256 * 1024);
  spec.sw.pfc.enabled = false;
  // Calibrate the target from the workload itself: 1.5 x the p99 on a switch with ample buffer.
  auto ample = validate_buffers(spec, {small_switch(64 << 20)}, [] {
    buffers_settings s;
    s.p99_target_ns = 1'000'000'000;
    s.max_degree = 1;
    return s;
  }());
  ASSERT_TRUE(ample.ok()) << ample.error().message();
  settings.p99_target_ns = ample->profiles[0].p99_at_profile_ns * 3 / 2;
  settings.max_degree = 1;  // the degree search is the other test's

  auto r = validate_buffers(spec, {small_switch(1 << 20)}, settings);
  ASSERT_TRUE(r.ok()) << r.error().message();
  const profile_buffers& p = r->profiles[0];
  EXPECT_FALSE(p.target_met_by_profile) << "1 MiB drops a 3 MiB incast";
  ASSERT_EQ(p.target, target_outcome::met) << to_string(p.target);
  std::cerr << "target " << settings.p99_target_ns << " ns: " << p.buffer_for_target_bytes << " B\n";
  const buffer_probe* at = nullptr;
  const buffer_probe* below = nullptr;
  for (const auto& q : p.probes) {
    if (q.search != "buffer_for_target") continue;
    if (q.buffer_bytes == p.buffer_for_target_bytes) at = &q;
    const bool meets = q.complete && q.fct_p99_ns <= settings.p99_target_ns;
    if (q.buffer_bytes < p.buffer_for_target_bytes && !meets && (!below || q.buffer_bytes > below->buffer_bytes))
      below = &q;
  }
  ASSERT_NE(at, nullptr);
  EXPECT_LE(at->fct_p99_ns, settings.p99_target_ns);
  ASSERT_NE(below, nullptr);
  EXPECT_LE(static_cast<double>(p.buffer_for_target_bytes) / static_cast<double>(below->buffer_bytes) - 1,
            settings.buffer_tolerance + 0.01);
}

// A fake executor: the real twin, with what `change` does to each probe's spec first (a
// switch that is not what its profile says).
trial_runner twin_with(std::function<void(experiment_spec&)> change) {
  return [change](const experiment_spec& probe) -> result<trial_runs> {
    experiment_spec s = probe;
    change(s);
    auto ran = run_experiment(s);
    if (!ran.ok()) return std::move(ran).error();
    trial_runs out;
    out.seeds = ran->seeds;
    out.repeats = std::move(ran->repeats);
    return out;
  };
}

// The user's report: "at most 4967.5 KiB" from a run with 3,502 drops while PFC was on.
// Here the switch holds a fifth of the headroom the profile computes: PFC is on and
// packets drop, and the answer is the shortfall, with the drops and headroom figures.
TEST(buffer_validation, a_pfc_on_drop_is_a_headroom_shortfall_never_an_answer) {
  buffers_settings settings;
  settings.p99_target_ns = 1'000'000'000;  // any run that completes meets it
  settings.max_degree = 4;
  settings.runner = twin_with([](experiment_spec& s) { s.sw.pfc.headroom_bytes /= 5; });
  auto r = validate_buffers(incast_spec(8, 256 * 1024), {small_switch(2 << 20)}, settings);
  ASSERT_TRUE(r.ok()) << r.error().message();
  const profile_buffers& p = r->profiles[0];
  EXPECT_EQ(p.target, target_outcome::headroom_shortfall) << to_string(p.target);
  EXPECT_EQ(p.buffer_for_target_bytes, 0) << "no size is read from a lossy lossless class";
  EXPECT_EQ(target_text(p), "headroom shortfall");
  ASSERT_FALSE(p.shortfalls.empty());
  for (const buffer_probe& q : p.shortfalls) {
    EXPECT_TRUE(q.pfc);
    EXPECT_GT(q.drops, 0u);
    EXPECT_GT(q.headroom_drops, 0u) << "the twin dropped them for want of headroom";
  }
  const buffer_probe& last = p.probes.back();
  EXPECT_EQ(last.search, "buffer_for_target");
  EXPECT_TRUE(last.headroom_shortfall()) << "the search stops at the first lossy PFC run";
  const std::string text = shortfall_text(p);
  for (const std::string& part : {std::to_string(p.shortfalls.front().drops) + " drops", std::string("headroom per port and PG"),
                                  std::string("26.7 KiB"), std::string("PFC on")})
    EXPECT_NE(text.find(part), std::string::npos) << part << " in: " << text;
  EXPECT_NE(buffers_json(*r).find("\"target_outcome\": \"headroom_shortfall\""), std::string::npos);
  EXPECT_NE(buffers_html(*r).find("headroom shortfall"), std::string::npos);
}

// p99 over buffer size is not monotone (the user saw 4.3, 4.1, 1.4, 1.7, 0.85 ms). A fake
// executor makes it so on purpose: sizes in [1.5, 2.2) MiB and from 3.2 MiB up run the
// workload as written and meet the target; [2.2, 3.2) MiB and below 1.5 MiB run it with
// flows 8 x larger and miss. Bisection from the range's middle lands in the lucky band;
// the answer must lie above every probed size that missed.
TEST(buffer_validation, the_buffer_answer_holds_at_every_larger_probed_size) {
  const experiment_spec spec = [] {
    experiment_spec s = incast_spec(4, 64 * 1024);
    s.sw.pfc.enabled = false;
    return s;
  }();
  auto band_meets = [](std::int64_t run_buffer) {
    return run_buffer >= (3 << 20) + (1 << 20) / 5 || (run_buffer >= (3 << 20) / 2 && run_buffer < (11 << 20) / 5);
  };
  auto ample = spec_on_profile(spec, small_switch(8 << 20));
  ASSERT_TRUE(ample.ok()) << ample.error().message();
  auto calibration = run_experiment(*ample);
  ASSERT_TRUE(calibration.ok()) << calibration.error().message();
  std::vector<const run_records*> runs;
  for (const auto& rec : calibration->repeats) runs.push_back(&rec);
  buffers_settings settings;
  settings.p99_target_ns = 2 * summarize(runs, calibration->seeds).all.fct_p99_ns;
  settings.max_degree = 1;
  settings.runner = twin_with([band_meets](experiment_spec& s) {
    if (!band_meets(s.sw.buffer_bytes)) s.workload.incast.flow_bytes *= 8;
  });
  auto r = validate_buffers(spec, {small_switch(1 << 20)}, settings);
  ASSERT_TRUE(r.ok()) << r.error().message();
  const profile_buffers& p = r->profiles[0];
  ASSERT_GT(p.buffer_for_target_bytes, 0);
  std::int64_t largest_miss = 0;
  for (const auto& q : p.probes) {
    if (q.search != "buffer_for_target") continue;
    const bool meets = q.complete && q.fct_p99_ns <= settings.p99_target_ns;
    std::cerr << q.buffer_bytes / 1024 << " KiB: p99 " << q.fct_p99_ns / 1000 << " us" << (meets ? "" : " (misses)") << "\n";
    if (!meets) largest_miss = std::max(largest_miss, q.buffer_bytes);
  }
  EXPECT_GT(p.buffer_for_target_bytes, largest_miss) << "every probed size at or above the answer meets the target";
  // The miss band's top is 3.2 MiB of run buffer (the profile's size less the 7 other
  // ports' headroom): the answer is above it, not in the lucky band below.
  EXPECT_GE(p.buffer_for_target_bytes, (3 << 20) + (1 << 20) / 5);
}

TEST(buffer_validation, every_probe_pools_at_least_three_seeds) {
  buffers_settings settings;
  settings.max_degree = 2;
  auto r = validate_buffers(incast_spec(), {small_switch(4 << 20)}, settings);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->seeds_per_probe, 3u);
  for (const auto& q : r->profiles[0].probes) EXPECT_EQ(q.seeds, 3u) << q.search << " " << q.degree;
  settings.seeds_per_probe = 1;
  auto one = validate_buffers(incast_spec(), {small_switch(4 << 20)}, settings);
  ASSERT_FALSE(one.ok());
  EXPECT_NE(one.error().message().find("at least 3 seeds"), std::string::npos) << one.error().message();
}

TEST(buffer_validation, errors_say_what_is_missing) {
  experiment_spec no_incast = incast_spec();
  no_incast.workload.incast.enabled = false;
  no_incast.workload.background.enabled = true;
  auto r = validate_buffers(no_incast, {small_switch(4 << 20)}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("incast"), std::string::npos);
  auto ib = load_fabric_profile(profiles_dir + "infiniband-ndr.yaml");
  ASSERT_TRUE(ib.ok());
  r = validate_buffers(incast_spec(), {*ib}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("RoCE"), std::string::npos);
}

// Progress: every twin run's line is "step i of n: <profile>: ...", n counted before the
// runs; the steps are the searches (per profile: degree with PFC, without, and the buffer
// for the target when there is one), each named in order, one line per probe run.
TEST(buffer_validation, progress_numbers_each_search_against_the_true_total) {
  const std::vector<fabric_profile_file> profiles{small_switch(2 << 20), small_switch(8 << 20)};
  struct step_case {
    const char* name;
    std::int64_t p99_target_ns;
    std::uint32_t expected_steps;
  };
  for (const step_case& c : {step_case{"degree searches only", 0, 4}, step_case{"and the p99 target", 5'000'000, 6}}) {
    SCOPED_TRACE(c.name);
    buffers_settings settings;
    settings.p99_target_ns = c.p99_target_ns;
    settings.max_degree = 4;
    const std::uint32_t n = buffers_steps(profiles.size(), settings);
    EXPECT_EQ(n, c.expected_steps);
    std::vector<std::string> lines;
    auto r = validate_buffers(incast_spec(), profiles, settings, [&](const std::string& l) { lines.push_back(l); });
    ASSERT_TRUE(r.ok()) << r.error().message();
    std::size_t probes = 0;
    for (const auto& p : r->profiles) probes += p.probes.size();
    EXPECT_EQ(lines.size(), probes) << "one line per twin run";
    std::uint32_t step = 0;
    const auto prefix = [n](std::uint32_t i) { return "step " + std::to_string(i) + " of " + std::to_string(n) + ": "; };
    for (const std::string& line : lines) {
      if (line.rfind(prefix(step + 1), 0) == 0) ++step;
      ASSERT_GE(step, 1u) << line;
      ASSERT_EQ(line.rfind(prefix(step), 0), 0u) << line;
      const std::string& profile = profiles[(step - 1) / (n / profiles.size())].sw.name;
      EXPECT_EQ(line.find(profile + ": "), prefix(step).size()) << line;
    }
    EXPECT_EQ(step, n) << "every step ran";
  }
}

TEST(buffer_validation, report_has_the_table_and_plots) {
  buffers_settings settings;
  settings.p99_target_ns = 5'000'000;
  settings.max_degree = 4;
  auto r = validate_buffers(incast_spec(), {small_switch(2 << 20), small_switch(8 << 20)}, settings);
  ASSERT_TRUE(r.ok()) << r.error().message();
  const std::string html = buffers_html(*r);
  for (const char* id : {"lossless-degree", "headroom-reserve", "p99-vs-buffer"})
    EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_NE(html.find("largest loss-free incast, PFC off"), std::string::npos);
  const std::string json = buffers_json(*r);
  EXPECT_NE(json.find("\"lossless_degree_no_pfc\""), std::string::npos);
}

}  // namespace
}  // namespace rocelab::experiments

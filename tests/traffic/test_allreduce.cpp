#include "rocelab/traffic/allreduce.hpp"

#include <gtest/gtest.h>

#include <map>

#include "fake_twin_context.hpp"

namespace rocelab::traffic {
namespace {

using testing::fake_twin_context;

std::uint32_t step_of(const fabric::twin::message& m) { return static_cast<std::uint32_t>((m.tag >> 20) & 0xfffff); }
// The tag's low field: slice x ranks + rank (the rank itself with one slice).
std::uint32_t rank_of(const fabric::twin::message& m) { return static_cast<std::uint32_t>(m.tag & 0xfffff); }

struct algo_case {
  const char* name;
  allreduce_algorithm algorithm;
  std::uint32_t ranks;
  std::uint64_t bytes;
  std::uint32_t steps;
};

const algo_case algo_cases[] = {
    {"ring8", allreduce_algorithm::ring, 8, 8 * 1024 * 1024, 14},
    {"ring3_uneven", allreduce_algorithm::ring, 3, 1000, 4},
    {"hd8", allreduce_algorithm::halving_doubling, 8, 8 * 1024 * 1024, 6},
    {"hd16", allreduce_algorithm::halving_doubling, 16, 1 << 20, 8},
    {"hd2", allreduce_algorithm::halving_doubling, 2, 4096, 2},
};

TEST(allreduce, every_rank_sends_2_n_minus_1_over_n_of_the_buffer) {
  for (const auto& c : algo_cases) {
    const auto s = allreduce_schedule(c.algorithm, c.ranks, c.bytes);
    ASSERT_EQ(s.size(), c.ranks) << c.name;
    for (std::uint32_t r = 0; r < c.ranks; ++r) {
      ASSERT_EQ(s[r].size(), c.steps) << c.name;
      std::uint64_t sent = 0;
      for (const auto& step : s[r]) sent += step.bytes;
      const double expected = 2.0 * (c.ranks - 1) / c.ranks * static_cast<double>(c.bytes);
      // Exact when S divides by n; within one byte per step otherwise.
      EXPECT_NEAR(static_cast<double>(sent), expected, c.steps) << c.name << " rank " << r;
      if (c.bytes % c.ranks == 0) {
        EXPECT_EQ(sent * c.ranks, 2 * (c.ranks - 1) * c.bytes) << c.name;
      }
    }
    // What rank r receives at step k is what its sender sends at step k to it.
    for (std::uint32_t r = 0; r < c.ranks; ++r)
      for (std::uint32_t k = 0; k < c.steps; ++k) {
        const std::uint32_t from = s[r][k].from_rank;
        EXPECT_EQ(s[from][k].to_rank, r) << c.name;
      }
  }
}

TEST(allreduce, halving_doubling_halves_then_doubles) {
  const auto s = allreduce_schedule(allreduce_algorithm::halving_doubling, 8, 8000);
  const std::uint64_t expected[] = {4000, 2000, 1000, 1000, 2000, 4000};
  const std::uint32_t partner_of_5[] = {1, 7, 4, 4, 7, 1};
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(s[5][k].bytes, expected[k]) << k;
    EXPECT_EQ(s[5][k].to_rank, partner_of_5[k]) << k;
  }
}

// The test completes messages in a scrambled order and checks that step k+1 of a rank is
// only ever posted after that rank's step-k message was delivered and its step-k chunk
// arrived.
TEST(allreduce, step_k_plus_1_waits_for_step_k_of_that_rank) {
  for (const auto& c : algo_cases) {
    allreduce_config cfg;
    cfg.algorithm = c.algorithm;
    cfg.rank_count = c.ranks;
    cfg.bytes = c.bytes;
    auto w = make_allreduce(cfg, c.ranks + 1);
    ASSERT_TRUE(w.ok()) << c.name << ": " << w.error().message();
    fake_twin_context ctx(c.ranks + 1);
    (*w)->start(ctx);
    ASSERT_EQ(ctx.posts.size(), c.ranks) << c.name << ": only step 0 at the start";

    std::map<std::pair<std::uint32_t, std::uint32_t>, bool> sent, received;  // (rank, step)
    std::int64_t t = 0;
    std::size_t checked = 0;
    std::uint64_t turn = 0;
    for (;;) {
      // Pick a pending post: alternately the newest and the oldest.
      std::vector<std::size_t> pending;
      for (std::size_t i = 0; i < ctx.posts.size(); ++i)
        if (!ctx.posts[i].done) pending.push_back(i);
      if (pending.empty()) break;
      const std::size_t pick = (turn++ % 2) ? pending.back() : pending.front();
      const auto m = ctx.posts[pick].m;
      const std::size_t before = ctx.posts.size();
      ctx.complete(**w, pick, t += 10);
      sent[{rank_of(m), step_of(m)}] = true;
      received[{m.dst, step_of(m)}] = true;  // rank == host here
      for (std::size_t i = before; i < ctx.posts.size(); ++i) {
        const auto& n = ctx.posts[i].m;
        const std::uint32_t r = rank_of(n), k = step_of(n);
        ASSERT_GT(k, 0u) << c.name;
        EXPECT_TRUE((sent[{r, k - 1}])) << c.name << " rank " << r << " step " << k;
        EXPECT_TRUE((received[{r, k - 1}])) << c.name << " rank " << r << " step " << k;
        ++checked;
      }
    }
    EXPECT_EQ(ctx.posts.size(), static_cast<std::size_t>(c.ranks) * c.steps) << c.name;
    EXPECT_EQ(checked, static_cast<std::size_t>(c.ranks) * (c.steps - 1)) << c.name;
    ASSERT_EQ(ctx.reports.size(), 1u) << c.name;
    EXPECT_EQ(ctx.reports[0].time_ns, t) << c.name;
    EXPECT_EQ(ctx.reports[0].ranks, c.ranks);
  }
}

TEST(allreduce, bandwidth_uses_nccl_tests_definitions) {
  // 8 ranks, 1 GB in 100 ms: algbw = 1e9 B / 0.1 s = 10 GB/s = 80 Gb/s; busbw = 80 x 14/8.
  const auto r = allreduce_bandwidth(allreduce_algorithm::ring, 8, 1'000'000'000, 100'000'000);
  EXPECT_DOUBLE_EQ(r.algbw_gbps, 80.0);
  EXPECT_DOUBLE_EQ(r.busbw_gbps, 140.0);
  EXPECT_EQ(r.algorithm, "ring");
}

TEST(allreduce, iterations_run_back_to_back_with_a_gap) {
  allreduce_config cfg;
  cfg.rank_count = 4;
  cfg.bytes = 4000;
  cfg.iterations = 3;
  cfg.iteration_gap_ns = 1000;
  cfg.ranks = {4, 5, 6, 7};
  auto w = make_allreduce(cfg, 8);
  ASSERT_TRUE(w.ok());
  fake_twin_context ctx(8);
  (*w)->start(ctx);
  ctx.drain(**w, 50);
  ASSERT_EQ(ctx.reports.size(), 3u);
  EXPECT_EQ(ctx.posts.size(), 3u * 4 * 6);
  for (const auto& r : ctx.reports) EXPECT_EQ(r.time_ns, 6 * 50);
  for (const auto& p : ctx.posts) {
    EXPECT_GE(p.m.src, 4u);
    EXPECT_EQ(p.m.kind, workload_kind::allreduce);
  }
}

// Rings over rails, 4 servers of 4 ranks: the server's ring, then rail i's ring over the
// servers, then the server's ring again; every step a permutation; the bytes each phase
// moves are NCCL's: 2(g-1)/g x S within the server, 2(N-1)/N x S/g along the rail.
TEST(allreduce, hierarchical_ring_runs_the_servers_rings_then_one_ring_a_rail) {
  constexpr std::uint32_t g = 4, servers = 4, n = g * servers;
  constexpr std::uint64_t bytes = 1 << 20;
  const auto s = allreduce_schedule(allreduce_algorithm::hierarchical_ring, n, bytes, g);
  ASSERT_EQ(s.size(), n);
  constexpr std::uint32_t steps = 2 * (g - 1) + 2 * (servers - 1);
  for (std::uint32_t r = 0; r < n; ++r) {
    ASSERT_EQ(s[r].size(), steps);
    std::uint64_t local = 0, rail = 0;
    for (std::uint32_t k = 0; k < steps; ++k) {
      const allreduce_send& send = s[r][k];
      const bool in_server = k < g - 1 || k >= steps - (g - 1);
      if (in_server) {
        EXPECT_EQ(send.to_rank, r / g * g + (r % g + 1) % g) << "rank " << r << " step " << k;
        local += send.bytes;
      } else {
        EXPECT_EQ(send.to_rank % g, r % g) << "rail steps stay on the rank's rail";
        EXPECT_EQ(send.to_rank / g, (r / g + 1) % servers);
        rail += send.bytes;
      }
      EXPECT_EQ(s[send.from_rank][k].to_rank, r) << "what r receives at step k is sent to it at step k";
    }
    EXPECT_EQ(local, 2 * (g - 1) * bytes / g);
    EXPECT_EQ(rail, 2 * (servers - 1) * (bytes / g) / servers);
  }
  // One rank a server is the plain ring.
  const auto ring = allreduce_schedule(allreduce_algorithm::ring, 8, 8000);
  const auto one = allreduce_schedule(allreduce_algorithm::hierarchical_ring, 8, 8000, 1);
  ASSERT_EQ(one.size(), ring.size());
  for (std::uint32_t r = 0; r < 8; ++r)
    for (std::uint32_t k = 0; k < ring[r].size(); ++k) {
      EXPECT_EQ(one[r][k].to_rank, ring[r][k].to_rank);
      EXPECT_EQ(one[r][k].bytes, ring[r][k].bytes);
    }
}

// Slices: each a whole all-reduce of its part of the buffer, and a rank's slice p+1 starts
// when its first step of slice p is complete (not before, not all at once).
TEST(allreduce, slices_pipeline_the_buffer_one_step_apart) {
  allreduce_config cfg;
  cfg.rank_count = 4;
  cfg.bytes = 4800;  // 3 slices of 4 chunks of 400
  cfg.slices = 3;
  auto w = make_allreduce(cfg, 4);
  ASSERT_TRUE(w.ok());
  fake_twin_context ctx(4);
  (*w)->start(ctx);
  // Slice 0's first step of every rank only.
  ASSERT_EQ(ctx.posts.size(), 4u);
  for (const auto& p : ctx.posts) EXPECT_EQ(rank_of(p.m) / 4, 0u);
  // Complete every message in post order, 1 us apart: 3 slices x 4 ranks x 6 steps.
  for (std::size_t i = 0; i < ctx.posts.size(); ++i) ctx.complete(**w, i, static_cast<std::int64_t>(i + 1) * 1000);
  ASSERT_EQ(ctx.posts.size(), 3u * 4 * 6);
  std::map<std::uint32_t, std::uint64_t> sent;
  for (const auto& p : ctx.posts) sent[p.m.src] += p.m.bytes;
  for (const auto& [src, b] : sent) EXPECT_EQ(b, 2u * 3 * 4800 / 4) << "rank " << src << ": 2(n-1)/n of the buffer";
  ASSERT_EQ(ctx.reports.size(), 1u);
  EXPECT_EQ(ctx.reports[0].bytes, 4800u);
  // Rank 0's slice 1 came after its slice-0 step 0 and before its slice-0 last step.
  std::size_t first_slice1 = 0, last_slice0 = 0;
  for (std::size_t i = 0; i < ctx.posts.size(); ++i) {
    const auto& m = ctx.posts[i].m;
    if (m.src != 0) continue;
    if (rank_of(m) / 4 == 1 && first_slice1 == 0) first_slice1 = i;
    if (rank_of(m) / 4 == 0) last_slice0 = i;
  }
  EXPECT_GE(first_slice1, 4u);
  EXPECT_LT(first_slice1, last_slice0) << "the slices overlap";
  for (const auto& p : ctx.posts) EXPECT_LT(rank_of(p.m) / 4, 3u);
}

TEST(allreduce, invalid_configs) {
  auto with = [](auto change) {
    allreduce_config cfg;
    change(cfg);
    return validate(cfg, 8);
  };
  EXPECT_FALSE(with([](auto& c) { c.algorithm = allreduce_algorithm::halving_doubling, c.rank_count = 6; }).ok());
  EXPECT_FALSE(with([](auto& c) { c.rank_count = 9; }).ok());
  EXPECT_FALSE(with([](auto& c) { c.rank_count = 4, c.bytes = 3; }).ok());
  EXPECT_FALSE(with([](auto& c) { c.ranks = {1, 1}; }).ok());
  EXPECT_TRUE(with([](auto& c) { c.rank_count = 8; }).ok());
  EXPECT_FALSE(with([](auto& c) { c.slices = 0; }).ok());
  EXPECT_FALSE(with([](auto& c) { c.slices = 17; }).ok());
  EXPECT_FALSE(with([](auto& c) { c.slices = 4, c.bytes = 31; }).ok()) << "fewer bytes than ranks x slices";
  EXPECT_FALSE(with([](auto& c) { c.algorithm = allreduce_algorithm::hierarchical_ring, c.ranks_per_host = 3; }).ok());
  EXPECT_TRUE(with([](auto& c) { c.algorithm = allreduce_algorithm::hierarchical_ring, c.ranks_per_host = 4; }).ok());
}

}  // namespace
}  // namespace rocelab::traffic

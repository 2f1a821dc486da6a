#include "rocelab/traffic/allreduce.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <map>
#include <string>
#include <tuple>

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

// Rank r's bytes over all its steps.
std::uint64_t bytes_sent(const allreduce_plan& p, std::uint32_t r) {
  std::uint64_t sent = 0;
  for (const auto& step : p.steps_of(r))
    for (const auto& m : p.sends_of(step)) sent += m.bytes;
  return sent;
}

// Every step receives exactly the messages addressed to it.
void expect_receives_match_sends(const allreduce_plan& p, const std::string& name) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> addressed;  // (rank, step)
  for (std::uint32_t r = 0; r < p.ranks(); ++r)
    for (const auto& step : p.steps_of(r))
      for (const auto& m : p.sends_of(step)) {
        ASSERT_LT(m.to_rank, p.ranks()) << name;
        ASSERT_LT(m.to_step, p.steps_of(m.to_rank).size()) << name;
        ++addressed[{m.to_rank, m.to_step}];
      }
  for (std::uint32_t r = 0; r < p.ranks(); ++r)
    for (std::uint32_t k = 0; k < p.steps_of(r).size(); ++k)
      EXPECT_EQ((addressed[{r, k}]), p.steps_of(r)[k].receives) << name << " rank " << r << " step " << k;
}

TEST(allreduce, every_rank_sends_2_n_minus_1_over_n_of_the_buffer) {
  for (const auto& c : algo_cases) {
    const auto s = allreduce_schedule(c.algorithm, c.ranks, c.bytes);
    ASSERT_EQ(s.ranks(), c.ranks) << c.name;
    for (std::uint32_t r = 0; r < c.ranks; ++r) {
      ASSERT_EQ(s.steps_of(r).size(), c.steps) << c.name;
      const std::uint64_t sent = bytes_sent(s, r);
      const double expected = 2.0 * (c.ranks - 1) / c.ranks * static_cast<double>(c.bytes);
      // Exact when S divides by n; within one byte per step otherwise.
      EXPECT_NEAR(static_cast<double>(sent), expected, c.steps) << c.name << " rank " << r;
      if (c.bytes % c.ranks == 0) {
        EXPECT_EQ(sent * c.ranks, 2 * (c.ranks - 1) * c.bytes) << c.name;
      }
      for (const auto& step : s.steps_of(r)) EXPECT_EQ(step.sends, 1u) << c.name;
    }
    expect_receives_match_sends(s, c.name);
  }
}

TEST(allreduce, halving_doubling_halves_then_doubles) {
  const auto s = allreduce_schedule(allreduce_algorithm::halving_doubling, 8, 8000);
  const std::uint64_t expected[] = {4000, 2000, 1000, 1000, 2000, 4000};
  const std::uint32_t partner_of_5[] = {1, 7, 4, 4, 7, 1};
  for (int k = 0; k < 6; ++k) {
    const allreduce_send& m = s.sends_of(s.steps_of(5)[k])[0];
    EXPECT_EQ(m.bytes, expected[k]) << k;
    EXPECT_EQ(m.to_rank, partner_of_5[k]) << k;
    EXPECT_EQ(m.to_step, static_cast<std::uint32_t>(k)) << "the partner takes it in the same step";
  }
}

// Completes the workload's messages in a scrambled order (the oldest pending one every
// third time, else the newest), 10 ns apart, and checks that every message it posts comes
// after all earlier steps of its rank and slice are complete: their messages delivered and
// what they receive arrived (`plans`: the slices' plans). Returns the last completion's
// time.
std::int64_t complete_scrambled(fabric::twin::workload& w, fake_twin_context& ctx,
                                const std::vector<allreduce_plan>& plans, const std::string& name) {
  const std::uint32_t n = plans.front().ranks();
  // (slice, rank, step) -> its messages delivered, the messages that arrived into it.
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::uint32_t> sent, received;
  auto complete_before = [&](std::uint32_t slice, std::uint32_t r, std::uint32_t k) {
    for (std::uint32_t j = 0; j < k; ++j) {
      const allreduce_step& st = plans[slice].steps_of(r)[j];
      if (sent[{slice, r, j}] != st.sends || received[{slice, r, j}] != st.receives) return false;
    }
    return true;
  };
  std::int64_t t = 0;
  std::uint64_t turn = 0;
  for (;;) {
    std::vector<std::size_t> pending;
    for (std::size_t i = 0; i < ctx.posts.size(); ++i)
      if (!ctx.posts[i].done) pending.push_back(i);
    if (pending.empty()) break;
    const std::size_t pick = (turn++ % 3) ? pending.back() : pending.front();
    const auto m = ctx.posts[pick].m;
    const std::size_t before = ctx.posts.size();
    ctx.complete(w, pick, t += 10);
    const std::uint32_t slice = rank_of(m) / n, r = rank_of(m) % n, k = step_of(m);
    const allreduce_send& send = plans[slice].sends_of(plans[slice].steps_of(r)[k])[m.tag >> 62];
    ++sent[{slice, r, k}];
    ++received[{slice, send.to_rank, send.to_step}];
    for (std::size_t i = before; i < ctx.posts.size(); ++i) {
      const auto& next = ctx.posts[i].m;
      const std::uint32_t ns = rank_of(next) / n, nr = rank_of(next) % n;
      EXPECT_TRUE(complete_before(ns, nr, step_of(next))) << name << " rank " << nr << " step " << step_of(next);
    }
  }
  return t;
}

// On rings and halving-doubling every step sends one message: only step 0 is posted at the
// start, and step k+1 of a rank only after its step-k message was delivered and its step-k
// chunk arrived.
TEST(allreduce, step_k_plus_1_waits_for_step_k_of_that_rank) {
  for (const auto& c : algo_cases) {
    allreduce_config cfg;
    cfg.algorithm = c.algorithm;
    cfg.rank_count = c.ranks;
    cfg.bytes = c.bytes;
    auto w = make_allreduce(cfg, c.ranks);
    ASSERT_TRUE(w.ok()) << c.name << ": " << w.error().message();
    fake_twin_context ctx(c.ranks);
    (*w)->start(ctx);
    ASSERT_EQ(ctx.posts.size(), c.ranks) << c.name << ": only step 0 at the start";
    const std::int64_t t = complete_scrambled(**w, ctx, {allreduce_schedule(c.algorithm, c.ranks, c.bytes)}, c.name);
    EXPECT_EQ(ctx.posts.size(), static_cast<std::size_t>(c.ranks) * c.steps) << c.name;
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
  ASSERT_EQ(s.ranks(), n);
  constexpr std::uint32_t steps = 2 * (g - 1) + 2 * (servers - 1);
  for (std::uint32_t r = 0; r < n; ++r) {
    ASSERT_EQ(s.steps_of(r).size(), steps);
    std::uint64_t local = 0, rail = 0;
    for (std::uint32_t k = 0; k < steps; ++k) {
      ASSERT_EQ(s.steps_of(r)[k].sends, 1u);
      const allreduce_send& send = s.sends_of(s.steps_of(r)[k])[0];
      const bool in_server = k < g - 1 || k >= steps - (g - 1);
      if (in_server) {
        EXPECT_EQ(send.to_rank, r / g * g + (r % g + 1) % g) << "rank " << r << " step " << k;
        local += send.bytes;
      } else {
        EXPECT_EQ(send.to_rank % g, r % g) << "rail steps stay on the rank's rail";
        EXPECT_EQ(send.to_rank / g, (r / g + 1) % servers);
        rail += send.bytes;
      }
      EXPECT_EQ(send.to_step, k) << "what r sends at step k its receiver takes in its step k";
    }
    EXPECT_EQ(local, 2 * (g - 1) * bytes / g);
    EXPECT_EQ(rail, 2 * (servers - 1) * (bytes / g) / servers);
  }
  expect_receives_match_sends(s, "hierarchical_ring");
  // One rank a server is the plain ring.
  const auto ring = allreduce_schedule(allreduce_algorithm::ring, 8, 8000);
  const auto one = allreduce_schedule(allreduce_algorithm::hierarchical_ring, 8, 8000, 1);
  EXPECT_EQ(one.first_step, ring.first_step);
  ASSERT_EQ(one.sends.size(), ring.sends.size());
  for (std::size_t i = 0; i < ring.sends.size(); ++i) {
    EXPECT_EQ(one.sends[i].to_rank, ring.sends[i].to_rank);
    EXPECT_EQ(one.sends[i].to_step, ring.sends[i].to_step);
    EXPECT_EQ(one.sends[i].bytes, ring.sends[i].bytes);
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

// NCCL's binary tree: position 0 the root with one child, at most two children each,
// odd positions the leaves, depth about log2(m); the complement's leaves are the other
// half, so no rank is a leaf of both trees.
TEST(allreduce, binary_trees_are_trees_and_the_two_share_no_leaf) {
  for (std::uint32_t m = 1; m <= 70; ++m) {
    const auto up = binary_tree_parents(m);
    ASSERT_EQ(up.size(), m);
    EXPECT_EQ(up[0], m) << "position 0 is the root";
    std::vector<std::uint32_t> children(m, 0);
    for (std::uint32_t p = 1; p < m; ++p) {
      ASSERT_LT(up[p], m) << "m " << m << " position " << p;
      ++children[up[p]];
      std::uint32_t depth = 0;
      for (std::uint32_t q = p; q != 0; q = up[q])
        ASSERT_LE(++depth, 2 + std::bit_width(m)) << "m " << m << ": a cycle or too deep";
    }
    if (m > 1) {
      EXPECT_EQ(children[0], 1u) << m;
    }
    for (std::uint32_t p = 0; p < m; ++p) {
      EXPECT_LE(children[p], 2u) << "m " << m << " position " << p;
      if (p % 2 == 1) {
        EXPECT_EQ(children[p], 0u) << "m " << m << ": odd positions are leaves";
      }
    }
  }
  for (std::uint32_t n : {2u, 3u, 8u, 13u, 64u}) {
    std::vector<int> leaf_in(n, 0);
    for (std::uint32_t slice = 0; slice < 2; ++slice) {
      const auto p = allreduce_schedule(allreduce_algorithm::tree, n, 1000, 1, slice);
      for (std::uint32_t r = 0; r < n; ++r)
        if (p.steps_of(r).size() == 2 && p.steps_of(r)[0].sends == 1) ++leaf_in[r];  // sends up, then hears back
    }
    for (std::uint32_t r = 0; r < n; ++r) EXPECT_LE(leaf_in[r], 1) << "n " << n << ": rank " << r << " is a leaf twice";
  }
}

// A tree moves the whole buffer on every edge, once up and once down: a leaf sends it once,
// an inner rank once up and once to each child, the root once to each child. Steps: the
// root and the leaves 2, inner ranks 4 (receive, send up, receive, send down).
TEST(allreduce, tree_reduces_up_and_broadcasts_down_the_whole_buffer) {
  constexpr std::uint32_t n = 13;
  constexpr std::uint64_t bytes = 4096;
  for (std::uint32_t slice = 0; slice < 2; ++slice) {
    const auto p = allreduce_schedule(allreduce_algorithm::tree, n, bytes, 1, slice);
    std::uint32_t roots = 0;
    for (std::uint32_t r = 0; r < n; ++r) {
      const auto steps = p.steps_of(r);
      for (const auto& step : steps)
        for (const auto& m : p.sends_of(step)) EXPECT_EQ(m.bytes, bytes);
      const std::uint32_t children = steps[0].sends == 0 ? steps[0].receives : 0;
      if (steps.size() == 2 && children > 0) ++roots;
      EXPECT_TRUE(steps.size() == 2 || steps.size() == 4) << "rank " << r;
      EXPECT_EQ(bytes_sent(p, r), bytes * ((steps.size() == 4 || children == 0 ? 1 : 0) + children)) << "rank " << r;
    }
    EXPECT_EQ(roots, 1u);
    expect_receives_match_sends(p, "tree slice " + std::to_string(slice));
  }
}

// Trees over rails, 8 servers of 4 NICs: the server's ring, a tree over the servers on the
// rank's own rail, the server's ring again; the rails of a server alternate the two trees,
// and so does the next slice.
TEST(allreduce, hierarchical_tree_runs_a_tree_a_rail_between_the_servers_rings) {
  constexpr std::uint32_t g = 4, servers = 8, n = g * servers;
  constexpr std::uint64_t bytes = 1 << 20;
  for (std::uint32_t slice = 0; slice < 2; ++slice) {
    const auto p = allreduce_schedule(allreduce_algorithm::hierarchical_tree, n, bytes, g, slice);
    ASSERT_EQ(p.ranks(), n);
    expect_receives_match_sends(p, "hierarchical_tree");
    for (std::uint32_t r = 0; r < n; ++r) {
      const auto steps = p.steps_of(r);
      ASSERT_GE(steps.size(), 2 * (g - 1) + 2);
      std::uint64_t local = 0, rail = 0;
      for (std::uint32_t k = 0; k < steps.size(); ++k) {
        const bool in_server = k < g - 1 || k >= steps.size() - (g - 1);
        for (const auto& m : p.sends_of(steps[k])) {
          if (in_server) {
            EXPECT_EQ(m.to_rank, r / g * g + (r % g + 1) % g);
            local += m.bytes;
          } else {
            EXPECT_EQ(m.to_rank % g, r % g) << "tree steps stay on the rank's rail";
            EXPECT_NE(m.to_rank / g, r / g);
            EXPECT_EQ(m.bytes, bytes / g) << "the shard the server's ring left on this rank";
            rail += m.bytes;
          }
        }
      }
      EXPECT_EQ(local, 2 * (g - 1) * bytes / g);
      EXPECT_GE(rail, bytes / g);
    }
  }
  // Rail 0 and rail 1 of a server use different trees, and slice 1 swaps them: server 2 is
  // an inner member of tree 0 (4 rail steps) and a leaf of tree 1 (2).
  auto rail_steps = [&](std::uint32_t slice, std::uint32_t rank) {
    const auto p = allreduce_schedule(allreduce_algorithm::hierarchical_tree, n, bytes, g, slice);
    return p.steps_of(rank).size() - 2 * (g - 1);
  };
  EXPECT_EQ(rail_steps(0, 2 * g), 4u);
  EXPECT_EQ(rail_steps(0, 2 * g + 1), 2u);
  EXPECT_EQ(rail_steps(1, 2 * g), 2u);
  EXPECT_EQ(rail_steps(1, 2 * g + 1), 4u);
  // One rank a server is the tree.
  const auto tree = allreduce_schedule(allreduce_algorithm::tree, 8, 8000);
  const auto one = allreduce_schedule(allreduce_algorithm::hierarchical_tree, 8, 8000, 1);
  EXPECT_EQ(one.first_step, tree.first_step);
  ASSERT_EQ(one.sends.size(), tree.sends.size());
  for (std::size_t i = 0; i < tree.sends.size(); ++i) EXPECT_EQ(one.sends[i].to_rank, tree.sends[i].to_rank);
}

// Trees end to end, messages completed in a scrambled order: every message a rank posts
// comes after all its earlier steps are complete (a tree's receive-only steps included),
// every planned message is posted once, and the iteration is reported once.
TEST(allreduce, tree_steps_wait_for_the_steps_before_them) {
  struct tree_case {
    const char* name;
    allreduce_algorithm algorithm;
    std::uint32_t ranks, g, slices;
  };
  for (const tree_case c : {tree_case{"tree13", allreduce_algorithm::tree, 13, 1, 1},
                            tree_case{"tree8x3", allreduce_algorithm::tree, 8, 1, 3},
                            tree_case{"htree4x4x2", allreduce_algorithm::hierarchical_tree, 16, 4, 2}}) {
    allreduce_config cfg;
    cfg.algorithm = c.algorithm;
    cfg.rank_count = c.ranks;
    cfg.ranks_per_host = c.g;
    cfg.slices = c.slices;
    cfg.bytes = 1 << 16;
    auto w = make_allreduce(cfg, c.ranks);
    ASSERT_TRUE(w.ok()) << c.name << ": " << w.error().message();
    std::vector<allreduce_plan> plans;
    std::size_t planned = 0;
    for (std::uint32_t p = 0; p < c.slices; ++p) {
      plans.push_back(allreduce_schedule(c.algorithm, c.ranks, cfg.bytes / c.slices, c.g, p));
      planned += plans.back().sends.size();
    }
    fake_twin_context ctx(c.ranks);
    (*w)->start(ctx);
    const std::int64_t t = complete_scrambled(**w, ctx, plans, c.name);
    EXPECT_EQ(ctx.posts.size(), planned) << c.name;
    ASSERT_EQ(ctx.reports.size(), 1u) << c.name;
    EXPECT_EQ(ctx.reports[0].time_ns, t) << c.name;
    EXPECT_EQ(ctx.reports[0].algorithm, to_string(c.algorithm));
  }
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
  EXPECT_FALSE(with([](auto& c) { c.algorithm = allreduce_algorithm::hierarchical_tree, c.ranks_per_host = 3; }).ok());
  EXPECT_TRUE(with([](auto& c) { c.algorithm = allreduce_algorithm::tree, c.rank_count = 7; }).ok());
}

}  // namespace
}  // namespace rocelab::traffic

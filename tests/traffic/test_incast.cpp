#include "rocelab/traffic/incast.hpp"

#include <gtest/gtest.h>

#include <set>

#include "fake_twin_context.hpp"

namespace rocelab::traffic {
namespace {

using testing::fake_twin_context;

TEST(incast, sixteen_to_one_posts_one_message_per_sender) {
  incast_config cfg;
  cfg.receiver = 0;
  cfg.sender_count = 16;
  cfg.flow_bytes = 64 * 1024;
  auto w = make_incast(cfg, 17, 1);
  ASSERT_TRUE(w.ok()) << w.error().message();
  fake_twin_context ctx(17);
  (*w)->start(ctx);
  ASSERT_EQ(ctx.posts.size(), 16u);
  std::set<std::uint32_t> senders;
  for (const auto& p : ctx.posts) {
    EXPECT_EQ(p.m.dst, 0u);
    EXPECT_EQ(p.m.bytes, 64u * 1024);
    EXPECT_EQ(p.m.start_ns, 0);
    EXPECT_EQ(p.m.kind, workload_kind::incast);
    senders.insert(p.m.src);
  }
  EXPECT_EQ(senders.size(), 16u);
  EXPECT_EQ(senders.count(0), 0u);
}

TEST(incast, next_round_starts_a_gap_after_the_last_completion) {
  incast_config cfg;
  cfg.receiver = 3;
  cfg.senders = {0, 1, 2};
  cfg.rounds = 3;
  cfg.round_gap_ns = 500;
  cfg.start_ns = 1000;
  auto w = make_incast(cfg, 4, 7);
  ASSERT_TRUE(w.ok());
  fake_twin_context ctx(4);
  (*w)->start(ctx);
  ASSERT_EQ(ctx.posts.size(), 3u);
  ctx.complete(**w, 0, 2000);
  ctx.complete(**w, 1, 2500);
  EXPECT_EQ(ctx.posts.size(), 3u) << "round 2 must wait for the whole of round 1";
  ctx.complete(**w, 2, 3000);
  ASSERT_EQ(ctx.posts.size(), 6u);
  for (std::size_t i = 3; i < 6; ++i) {
    EXPECT_EQ(ctx.posts[i].m.start_ns, 3500);
    EXPECT_EQ(ctx.posts[i].m.tag >> 32, 1u);
  }
  ctx.drain(**w, 100);
  EXPECT_EQ(ctx.posts.size(), 9u);
}

TEST(incast, jitter_stays_in_range_and_depends_only_on_the_seed) {
  incast_config cfg;
  cfg.receiver = 0;
  cfg.sender_count = 8;
  cfg.start_jitter_ns = 1000;
  const auto senders = incast_senders(cfg, 64, 5);
  ASSERT_EQ(senders.size(), 8u);
  const auto a = incast_round(cfg, senders, 0, 0, 5);
  const auto b = incast_round(cfg, senders, 0, 0, 5);
  const auto c = incast_round(cfg, senders, 0, 0, 6);
  bool any_differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_GE(a[i].start_ns, 0);
    EXPECT_LE(a[i].start_ns, 1000);
    EXPECT_EQ(a[i].start_ns, b[i].start_ns);
    any_differs |= a[i].start_ns != c[i].start_ns;
  }
  EXPECT_TRUE(any_differs);
  EXPECT_EQ(incast_senders(cfg, 64, 5), senders);
}

TEST(incast, invalid_configs_name_the_field) {
  struct {
    const char* name;
    void (*change)(incast_config&);
    const char* needle;
  } cases[] = {
      {"receiver out of range", [](incast_config& c) { c.receiver = 9; }, "receiver"},
      {"too many senders", [](incast_config& c) { c.sender_count = 8; }, "senders 8"},
      {"zero bytes", [](incast_config& c) { c.sender_count = 2, c.flow_bytes = 0; }, "flow_bytes"},
      {"sender is receiver", [](incast_config& c) { c.senders = {0, 1}; }, "is the receiver"},
  };
  for (const auto& c : cases) {
    incast_config cfg;
    c.change(cfg);
    const status st = validate(cfg, 4);
    ASSERT_FALSE(st.ok()) << c.name;
    EXPECT_NE(st.message().find(c.needle), std::string::npos) << c.name << ": " << st.message();
  }
}

}  // namespace
}  // namespace rocelab::traffic

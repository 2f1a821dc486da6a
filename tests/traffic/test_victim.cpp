#include "rocelab/traffic/victim.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "fake_twin_context.hpp"
#include "rocelab/traffic/incast.hpp"

namespace rocelab::traffic {
namespace {

using testing::fake_twin_context;

// Hosts 1-4 send to host 0; 5-8 are idle.
incast_config four_to_one() {
  incast_config c;
  c.receiver = 0;
  c.senders = {1, 2, 3, 4};
  return c;
}

TEST(victim, defaults_send_from_the_incast_senders_to_the_hosts_outside_it) {
  const incast_config incast = four_to_one();
  victim_config cfg;
  cfg.flows_per_sender = 2;
  cfg.start_ns = 5000;
  cfg.gap_ns = 3000;
  auto w = make_victims(cfg, &incast, 9, 1);
  ASSERT_TRUE(w.ok()) << w.error().message();
  fake_twin_context ctx(9);
  (*w)->start(ctx);
  ASSERT_EQ(ctx.posts.size(), 8u);
  // k = 0: sender i -> receivers[i]; k = 1: sender i -> receivers[i + 1], so at each start
  // time every receiver gets one flow (no fan-in at the victims' own ports).
  const std::uint32_t expect_dst[2][4] = {{5, 6, 7, 8}, {6, 7, 8, 5}};
  for (std::size_t n = 0; n < ctx.posts.size(); ++n) {
    const auto& m = ctx.posts[n].m;
    const std::size_t k = n / 4, i = n % 4;
    EXPECT_EQ(m.src, incast.senders[i]) << n;
    EXPECT_EQ(m.dst, expect_dst[k][i]) << n;
    EXPECT_EQ(m.bytes, 64u * 1024) << "default flow size";
    EXPECT_EQ(m.kind, workload_kind::victim);
    EXPECT_EQ(m.priority, -1) << "the NIC's data priority, the incast's";
    EXPECT_EQ(m.start_ns, 5000 + static_cast<std::int64_t>(k) * 3000);
    EXPECT_EQ(m.tag, (static_cast<std::uint64_t>(k) << 32) | i);
  }
}

TEST(victim, follow_the_senders_the_incast_draws_from_the_seed) {
  incast_config incast;
  incast.receiver = 2;
  incast.sender_count = 5;
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const auto drawn = incast_senders(incast, 12, seed);
    auto ends = resolve_victim_hosts({}, &incast, 12, seed);
    ASSERT_TRUE(ends.ok()) << ends.error().message();
    EXPECT_EQ(ends->senders, drawn);
    std::set<std::uint32_t> outside;
    for (std::uint32_t h = 0; h < 12; ++h)
      if (h != 2 && std::find(drawn.begin(), drawn.end(), h) == drawn.end()) outside.insert(h);
    EXPECT_EQ(std::set<std::uint32_t>(ends->receivers.begin(), ends->receivers.end()), outside);
    EXPECT_EQ(ends->receivers.size(), 6u);
  }
}

TEST(victim, explicit_hosts_receivers_size_and_priority) {
  const incast_config incast = four_to_one();
  victim_config cfg;
  cfg.hosts = {1, 2};
  cfg.receivers = {7};
  cfg.flow_bytes = 4096;
  cfg.priority = 5;
  auto msgs = victim_messages(cfg, &incast, 9, 1);
  ASSERT_TRUE(msgs.ok()) << msgs.error().message();
  ASSERT_EQ(msgs->size(), 2u);
  for (const auto& m : *msgs) {
    EXPECT_EQ(m.dst, 7u);
    EXPECT_EQ(m.bytes, 4096u);
    EXPECT_EQ(m.priority, 5);
  }
  EXPECT_EQ((*msgs)[0].src, 1u);
  EXPECT_EQ((*msgs)[1].src, 2u);
}

TEST(victim, a_receiver_that_is_the_sender_is_skipped) {
  victim_config cfg;
  cfg.hosts = {3, 4};
  cfg.receivers = {3, 4};
  auto msgs = victim_messages(cfg, nullptr, 5, 1);
  ASSERT_TRUE(msgs.ok()) << msgs.error().message();
  ASSERT_EQ(msgs->size(), 2u);
  EXPECT_EQ((*msgs)[0].dst, 4u);
  EXPECT_EQ((*msgs)[1].dst, 3u);
}

struct error_case {
  const char* name;
  std::uint32_t hosts;
  victim_config cfg;
  bool with_incast;
  const char* field;  // the error starts with it
};

TEST(victim, errors_name_the_field) {
  victim_config bad_receiver;
  bad_receiver.receivers = {0};
  victim_config out_of_range;
  out_of_range.hosts = {9};
  victim_config no_bytes;
  no_bytes.flow_bytes = 0;
  victim_config only_self;
  only_self.hosts = {6};
  only_self.receivers = {6};
  const error_case cases[] = {
      {"every host is in the incast", 5, {}, true, "receivers: "},
      {"the incast's receiver is congested", 9, bad_receiver, true, "receivers: "},
      {"no incast to take senders from", 9, {}, false, "hosts: "},
      {"sender not a host", 9, out_of_range, true, "hosts: "},
      {"zero bytes", 9, no_bytes, true, "flow_bytes: "},
      {"a sender with only itself to send to", 9, only_self, true, "receivers: "},
  };
  const incast_config incast = four_to_one();
  for (const auto& c : cases) {
    auto msgs = victim_messages(c.cfg, c.with_incast ? &incast : nullptr, c.hosts, 1);
    ASSERT_FALSE(msgs.ok()) << c.name;
    EXPECT_EQ(msgs.error().message().rfind(c.field, 0), 0u) << c.name << ": " << msgs.error().message();
  }
}

}  // namespace
}  // namespace rocelab::traffic

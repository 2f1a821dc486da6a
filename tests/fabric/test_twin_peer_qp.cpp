// The twin with one RC QP per peer (nic_config::one_qp_per_peer), as the labs' NICs run:
// messages to one peer go one after another on one QP, in the order of their starts,
// under one reaction point; messages to other peers do not wait.
#include "rocelab/fabric/twin/twin.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "twin_test_support.hpp"

namespace rocelab::fabric::twin {
namespace {

using testing::fixed_messages;
using testing::single_switch;

twin_config quiet(bool per_peer, bool dcqcn = false) {
  twin_config c = single_switch(10, 32 << 20, true, dcqcn, dcqcn);
  c.nic.one_qp_per_peer = per_peer;
  return c;
}

message msg(std::uint32_t src, std::uint32_t dst, std::uint64_t bytes, std::int64_t start_ns = 0) {
  return message{src, dst, bytes, start_ns, workload_kind::other, -1, 0};
}

// 1 MiB at 1024 B MTU over 100 Gb/s: 1024 frames of 1106 B on the wire (the first 16 B
// more for its RETH), 88.48 ns each.
constexpr double mib_on_wire_ns = 1024 * 1106 * 8 / 100.0;

TEST(TwinPeerQp, MessagesToOnePeerGoOneAfterAnotherOnOneQp) {
  fixed_messages load({msg(1, 0, 1 << 20), msg(1, 0, 1 << 20)});
  auto got = run_twin(quiet(true), load);
  ASSERT_TRUE(got.ok()) << got.error().message();
  const flow_record& first = got->flows.at(0);
  const flow_record& second = got->flows.at(1);
  EXPECT_EQ(first.qp, second.qp) << "one QP for the pair";
  EXPECT_EQ(second.start_ns, 0) << "the record starts at the post, waiting included";
  // The first runs alone at line rate; the second follows its last frame back to back.
  EXPECT_NEAR(static_cast<double>(first.fct_ns), static_cast<double>(first.ideal_fct_ns), 10.0);
  EXPECT_NEAR(static_cast<double>(second.end_ns - first.end_ns), mib_on_wire_ns, 20.0);

  // A QP per message: the two share the NIC round robin and end together.
  fixed_messages apart({msg(1, 0, 1 << 20), msg(1, 0, 1 << 20)});
  auto shared = run_twin(quiet(false), apart);
  ASSERT_TRUE(shared.ok()) << shared.error().message();
  EXPECT_NE(shared->flows.at(0).qp, shared->flows.at(1).qp);
  EXPECT_GT(static_cast<double>(shared->flows.at(0).fct_ns), 1.9 * static_cast<double>(first.fct_ns));
  EXPECT_NEAR(static_cast<double>(shared->flows.at(0).end_ns), static_cast<double>(shared->flows.at(1).end_ns),
              2 * 89.0);
}

TEST(TwinPeerQp, MessagesToOtherPeersOrOnOtherPrioritiesDoNotWait) {
  message other_prio = msg(1, 0, 1 << 20);
  other_prio.priority = 1;
  fixed_messages load({msg(1, 0, 1 << 20), msg(1, 2, 1 << 20), other_prio});
  auto got = run_twin(quiet(true), load);
  ASSERT_TRUE(got.ok()) << got.error().message();
  // Three QPs, served round robin: all three end within a few frames of each other.
  const auto& f = got->flows;
  EXPECT_NE(f[0].qp, f[1].qp);
  EXPECT_NE(f[0].qp, f[2].qp);
  for (int i = 1; i < 3; ++i)
    EXPECT_NEAR(static_cast<double>(f[i].end_ns), static_cast<double>(f[0].end_ns), 3 * 89.0) << i;
  EXPECT_GT(static_cast<double>(f[0].fct_ns), 2.9 * mib_on_wire_ns);
}

// A message posted early for a later start joins its QP at that start, as the labs post
// it then: the QP serves its messages in the order of their starts, not of the calls.
TEST(TwinPeerQp, AMessageJoinsItsQpAtItsStart) {
  const std::int64_t later = 30'000;  // the first 1 MiB takes ~93 us
  fixed_messages load({msg(1, 0, 64 << 10, later), msg(1, 0, 1 << 20, 0)});
  auto got = run_twin(quiet(true), load);
  ASSERT_TRUE(got.ok()) << got.error().message();
  const flow_record& small = got->flows.at(0);
  const flow_record& big = got->flows.at(1);
  EXPECT_EQ(small.start_ns, later);
  EXPECT_NEAR(static_cast<double>(big.fct_ns), static_cast<double>(big.ideal_fct_ns), 10.0) << "nothing ahead of it";
  EXPECT_GT(small.end_ns, big.end_ns) << "the later start waits behind the 1 MiB";
}

// An incast cuts the senders' rates; the message a sender posts to the same receiver when
// its incast message completes meets its QP's cut rate (DCQCN recovers over timer
// periods), while on a QP of its own it starts at line rate.
class incast_then_one_more final : public workload {
 public:
  void start(twin_context& ctx) override {
    for (std::uint32_t s = 1; s <= 8; ++s) (void)ctx.post(msg(s, 0, 1 << 20));
  }
  void on_message_complete(std::uint64_t, const message& m, const flow_record&, twin_context& ctx) override {
    if (m.src == 1 && m.bytes == (1u << 20)) (void)ctx.post(msg(1, 0, 256 << 10, ctx.now_ns()));
  }
};

TEST(TwinPeerQp, ACutRateCarriesOverToTheQpsNextMessage) {
  std::int64_t per_peer_fct = 0, per_message_fct = 0, ideal = 0;
  for (bool per_peer : {true, false}) {
    incast_then_one_more load;
    auto got = run_twin(quiet(per_peer, true), load);
    ASSERT_TRUE(got.ok()) << got.error().message();
    ASSERT_TRUE(testing::all_completed(*got));
    ASSERT_EQ(got->flows.size(), 9u);
    std::uint64_t cnps = 0;
    for (int i = 0; i < 8; ++i) cnps += got->flows[static_cast<std::size_t>(i)].cnps;
    ASSERT_GT(cnps, 0u) << "the incast was marked";
    EXPECT_GE(got->totals.cnps, cnps) << "the run counts the CNPs its notification points sent";
    const flow_record& next = got->flows.back();
    EXPECT_EQ(next.qp == got->flows[0].qp, per_peer);
    (per_peer ? per_peer_fct : per_message_fct) = next.fct_ns;
    ideal = next.ideal_fct_ns;
  }
  // The other senders finish beside it, so a fresh QP shares the port at first.
  EXPECT_LT(static_cast<double>(per_message_fct), 3.0 * static_cast<double>(ideal)) << "a fresh QP starts at line rate";
  EXPECT_GT(per_peer_fct, 2 * per_message_fct) << "the QP's cut rate carries over";
}

}  // namespace
}  // namespace rocelab::fabric::twin

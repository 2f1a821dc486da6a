#include "rocelab/protocol/clock_datagram.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace rocelab::protocol {
namespace {

TEST(clock_datagram, a_probe_and_an_answer_round_trip_in_forty_bytes) {
  const clock_datagram probe{clock_datagram_kind::probe, 0xfedcba9876543210ULL, -42, 0, 0};
  const auto bytes = encode(probe);
  EXPECT_EQ(bytes.size(), 40u);
  EXPECT_EQ(bytes[0], 'R');
  EXPECT_EQ(bytes[4], clock_datagram_version);
  EXPECT_EQ(bytes[5], 1);
  EXPECT_EQ(bytes[8], 0xfe) << "the cookie is big-endian";
  auto back = decode_clock_datagram(bytes);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->kind, clock_datagram_kind::probe);
  EXPECT_EQ(back->cookie, probe.cookie);
  EXPECT_EQ(back->t1_ns, -42);

  clock_datagram answer = probe;
  answer.kind = clock_datagram_kind::answer;
  answer.t2_ns = std::numeric_limits<std::int64_t>::max();
  answer.t3_ns = std::numeric_limits<std::int64_t>::min();
  auto a = decode_clock_datagram(encode(answer));
  ASSERT_TRUE(a) << a.error().message();
  EXPECT_EQ(a->kind, clock_datagram_kind::answer);
  EXPECT_EQ(a->t2_ns, answer.t2_ns);
  EXPECT_EQ(a->t3_ns, answer.t3_ns);
}

void expect_refused(std::span<const std::uint8_t> bytes, const std::string& naming) {
  auto r = decode_clock_datagram(bytes);
  ASSERT_FALSE(r) << "accepted; expected a refusal naming " << naming;
  EXPECT_EQ(r.error().code(), error_code::malformed_input);
  EXPECT_NE(r.error().message().find(naming), std::string::npos) << r.error().message();
}

TEST(clock_datagram, malformed_datagrams_are_refused_naming_what_is_wrong) {
  const auto good = encode(clock_datagram{clock_datagram_kind::answer, 7, 1, 2, 3});
  expect_refused(std::span(good.data(), 39), "39 bytes");
  std::vector<std::uint8_t> longer(good.begin(), good.end());
  longer.push_back(0);
  expect_refused(longer, "41 bytes");
  auto bad = good;
  bad[1] = 'X';
  expect_refused(bad, "magic");
  bad = good;
  bad[4] = 9;
  expect_refused(bad, "version 9");
  bad = good;
  bad[5] = 3;
  expect_refused(bad, "unknown kind 3");
  bad = good;
  bad[7] = 1;
  expect_refused(bad, "reserved");
  bad = good;
  bad[5] = 1;  // a probe with the controller's times filled in
  expect_refused(bad, "a probe carries controller times");
}

}  // namespace
}  // namespace rocelab::protocol

// On a host with an RDMA NIC (label hw): two RC queue pairs on the same device, connected
// to each other through the NIC's loopback, move RDMA WRITEs as perftest would, and the
// bytes arrive. The address whose RoCE v2 GID the QPs use comes from ROCELAB_HW_IP (an
// address configured on the RDMA netdev); without a device or that address the test
// skips and says which is missing.
#include "rocelab/traffic/verbs/rc_endpoint.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace rocelab::traffic::verbs {
namespace {

struct pair_of_endpoints {
  std::unique_ptr<rc_endpoint> a, b;
};

// Both endpoints, connected, or the reason the host cannot run the test.
result<pair_of_endpoints> connected_pair() {
  auto devices = list_devices();
  if (!devices) return std::move(devices).error();
  const char* ip = std::getenv("ROCELAB_HW_IP");
  if (ip == nullptr || *ip == '\0')
    return status(error_code::unavailable, "RDMA device " + devices->front() +
                                               " found, but ROCELAB_HW_IP (an address on its netdev) is not set");
  endpoint_options o;
  o.device = devices->front();
  o.local_ip = ip;
  pair_of_endpoints p;
  auto a = rc_endpoint::open(o);
  if (!a) return std::move(a).error();
  o.initial_psn = 0x1234;
  auto b = rc_endpoint::open(o);
  if (!b) return std::move(b).error();
  p.a = std::move(*a);
  p.b = std::move(*b);
  if (auto st = p.a->connect(p.b->local()); !st.ok()) return st;
  if (auto st = p.b->connect(p.a->local()); !st.ok()) return st;
  return p;
}

TEST(hw_verbs_loopback, rdma_writes_arrive_in_the_peers_buffer) {
  auto pair = connected_pair();
  if (!pair) GTEST_SKIP() << pair.error().message();
  auto& [a, b] = *pair;
  auto src = a->buffer();
  for (std::size_t i = 0; i < 4096; ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 1);
  std::fill_n(b->buffer().begin(), 4096, std::uint8_t{0});
  ASSERT_TRUE(a->post_write(1, 0, 0, 4096, true).ok());
  std::array<ibv_wc, 4> wc{};
  std::size_t got = 0;
  for (int spin = 0; spin < 1'000'000 && got == 0; ++spin) {
    auto n = a->poll(wc);
    ASSERT_TRUE(n.ok()) << n.error().message();
    got = *n;
  }
  ASSERT_EQ(got, 1u) << "no completion for the write";
  EXPECT_TRUE(std::equal(src.begin(), src.begin() + 4096, b->buffer().begin()));
}

TEST(hw_verbs_loopback, write_bw_moves_every_byte_it_reports) {
  auto pair = connected_pair();
  if (!pair) GTEST_SKIP() << pair.error().message();
  auto r = pair->a->write_bw(65536, 2000, 64, std::chrono::seconds(30));
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->messages, 2000u);
  EXPECT_EQ(r->bytes, 2000u * 65536u);
  EXPECT_GT(r->gbps(), 0.0);
}

TEST(hw_verbs_loopback, write_lat_times_every_round_trip) {
  auto pair = connected_pair();
  if (!pair) GTEST_SKIP() << pair.error().message();
  result<write_lat_result> responder = status(error_code::internal, "the responder did not run");
  std::thread peer([&] { responder = pair->b->write_lat(false, 64, 1000, std::chrono::seconds(30)); });
  auto initiator = pair->a->write_lat(true, 64, 1000, std::chrono::seconds(30));
  peer.join();
  ASSERT_TRUE(initiator.ok()) << initiator.error().message();
  ASSERT_TRUE(responder.ok()) << responder.error().message();
  EXPECT_EQ(initiator->half_rtt_ns.size(), 1000u);
  EXPECT_TRUE(std::all_of(initiator->half_rtt_ns.begin(), initiator->half_rtt_ns.end(),
                          [](std::int64_t ns) { return ns > 0; }));
}

}  // namespace
}  // namespace rocelab::traffic::verbs

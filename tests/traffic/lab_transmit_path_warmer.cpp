// transmit_path_warmer: its frame goes to the namespace's own loopback, at the size asked
// for, with an EtherType nothing takes, and on no other interface (a soft NIC sends it
// beside a lab's wire, which must never see it). Root: a namespace of the test's own.
#include "rocelab/traffic/soft_nic/transmit_path_warmer.hpp"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "../support/test_netns.hpp"

namespace rocelab::traffic::soft_nic {
namespace {

struct seen_frame {
  int ifindex = 0;
  std::size_t bytes = 0;
  std::uint16_t ethertype = 0;
};

TEST(lab_transmit_path_warmer, its_frame_reaches_the_loopback_alone_and_nothing_else) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (a network namespace, AF_PACKET)";
  auto ns = test::test_netns::create();
  ASSERT_TRUE(ns.ok()) << ns.error().message();
  // Every interface of the namespace, incoming frames only.
  auto sniffer = ns->run_inside([]() -> result<unique_fd> {
    unique_fd fd(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(ETH_P_ALL)));
    if (!fd.valid()) return status::from_errno("socket(AF_PACKET)");
    const int one = 1;
    if (::setsockopt(fd.get(), SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) != 0)
      return status::from_errno("PACKET_IGNORE_OUTGOING");
    return fd;
  });
  ASSERT_TRUE(sniffer.ok()) << sniffer.error().message();
  auto lo = ns->run_inside([]() -> result<int> {
    const unsigned index = ::if_nametoindex("lo");
    if (index == 0) return status::from_errno("if_nametoindex(lo)");
    return static_cast<int>(index);
  });
  ASSERT_TRUE(lo.ok()) << lo.error().message();

  constexpr std::size_t frame_bytes = 4170;
  const status warmed = ns->run_inside([&]() -> status {
    auto warmer = transmit_path_warmer::open(frame_bytes);
    if (!warmer) return status(error_code::unavailable, "no packet socket on lo");
    for (int i = 0; i < 3; ++i)
      if (!warmer->warm()) return status(error_code::io_error, "the loopback refused the frame");
    return status::success();
  });
  ASSERT_TRUE(warmed.ok()) << warmed.message();

  std::vector<seen_frame> seen;
  std::array<std::uint8_t, 9000> buf{};
  for (int polls = 0; polls < 20; ++polls) {
    pollfd p{sniffer->get(), POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) break;
    sockaddr_ll from{};
    socklen_t len = sizeof from;
    for (ssize_t n; (n = ::recvfrom(sniffer->get(), buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from),
                                    &len)) > 0;
         len = sizeof from)
      seen.push_back({from.sll_ifindex, static_cast<std::size_t>(n),
                      static_cast<std::uint16_t>(buf[12] << 8 | buf[13])});
  }
  std::size_t warm_frames = 0;
  for (const auto& f : seen) {
    EXPECT_EQ(f.ifindex, *lo) << "a frame of " << f.bytes << " bytes, EtherType " << f.ethertype
                             << ", on another interface";
    if (f.ethertype == transmit_path_warmer::ethertype) {
      ++warm_frames;
      EXPECT_EQ(f.bytes, frame_bytes);
    }
  }
  EXPECT_EQ(warm_frames, 3u) << "each warm() is one frame, received by the loopback";
}

}  // namespace
}  // namespace rocelab::traffic::soft_nic

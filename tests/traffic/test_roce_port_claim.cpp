// roce_port_claim: a UDP port with no socket makes the kernel answer with ICMP port
// unreachable (a connected sender sees ECONNREFUSED); claimed, the kernel takes the
// datagrams and answers nothing; a port already claimed is refused with its number.
// Loopback of the test's own namespace only.
#include "rocelab/traffic/soft_nic/roce_port_claim.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "rocelab/common/unique_fd.hpp"

namespace rocelab::traffic::soft_nic {
namespace {

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

// A UDP port free at the moment of asking (the kernel's pick for an ephemeral bind).
std::uint16_t free_port() {
  unique_fd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_in a = loopback(0);
  EXPECT_EQ(::bind(s.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  EXPECT_EQ(::getsockname(s.get(), reinterpret_cast<sockaddr*>(&a), &len), 0);
  return ntohs(a.sin_port);
}

// Sends datagrams to 127.0.0.1:port from a connected socket and returns the first error
// the kernel reports for them (ECONNREFUSED once an ICMP port unreachable came back), or
// 0 when none came. Loopback delivers the ICMP within the send; a few tries, bounded.
int error_after_sending_to(std::uint16_t port) {
  unique_fd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  const sockaddr_in a = loopback(port);
  if (::connect(s.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) return errno;
  char byte = 0;
  for (int i = 0; i < 5; ++i) {
    if (::send(s.get(), &byte, 1, 0) < 0) return errno;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (::recv(s.get(), &byte, 1, MSG_DONTWAIT) < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return errno;
  }
  return 0;
}

TEST(roce_port_claim, a_claimed_port_takes_datagrams_without_an_icmp_answer) {
  const std::uint16_t port = free_port();
  ASSERT_EQ(error_after_sending_to(port), ECONNREFUSED) << "an unclaimed port must be answered, or the test says nothing";
  auto claim = roce_port_claim::claim(port);
  ASSERT_TRUE(claim.ok()) << claim.error().message();
  EXPECT_EQ(error_after_sending_to(port), 0) << "the claimed port was answered with an ICMP error";
}

TEST(roce_port_claim, a_port_already_claimed_is_refused_naming_it) {
  const std::uint16_t port = free_port();
  auto first = roce_port_claim::claim(port);
  ASSERT_TRUE(first.ok()) << first.error().message();
  auto second = roce_port_claim::claim(port);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message().find("UDP port " + std::to_string(port)), std::string::npos)
      << second.error().message();
  EXPECT_NE(second.error().message().find("bind"), std::string::npos) << second.error().message();
}

}  // namespace
}  // namespace rocelab::traffic::soft_nic

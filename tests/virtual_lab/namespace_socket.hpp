// Raw sockets on the interfaces of a virtual lab's namespaces, for lab tests that put
// frames on a wire and read what arrives.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sched.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>

#include "rocelab/common/unique_fd.hpp"

namespace rocelab::test {

// An AF_PACKET socket (non-blocking, every protocol, own transmissions not looped back)
// bound to `ifname` in network namespace `netns`. It is opened on a thread that enters the
// namespace, so the caller stays where it is. `fd` is invalid when the namespace or the
// interface does not exist.
struct namespace_socket {
  unique_fd fd;
  int ifindex = 0;
};

inline namespace_socket open_namespace_socket(const std::string& netns, const std::string& ifname,
                                              int receive_buffer_bytes) {
  namespace_socket s;
  std::thread t([&] {
    unique_fd ns(::open(("/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC));
    if (!ns.valid() || ::setns(ns.get(), CLONE_NEWNET) != 0) return;
    s.fd = unique_fd(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(ETH_P_ALL)));
    s.ifindex = static_cast<int>(::if_nametoindex(ifname.c_str()));
    const int one = 1;
    ::setsockopt(s.fd.get(), SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
    ::setsockopt(s.fd.get(), SOL_SOCKET, SO_RCVBUFFORCE, &receive_buffer_bytes, sizeof receive_buffer_bytes);
    sockaddr_ll a{};
    a.sll_family = AF_PACKET;
    a.sll_protocol = htons(ETH_P_ALL);
    a.sll_ifindex = s.ifindex;
    ::bind(s.fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a);
  });
  t.join();
  return s;
}

// "aa:bb:cc:dd:ee:ff" as bytes (zeros where the text is not a MAC).
inline std::array<std::uint8_t, 6> mac_of(const std::string& text) {
  std::array<std::uint8_t, 6> m{};
  unsigned b[6] = {};
  std::sscanf(text.c_str(), "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]);
  for (int i = 0; i < 6; ++i) m[i] = static_cast<std::uint8_t>(b[i]);
  return m;
}

}  // namespace rocelab::test

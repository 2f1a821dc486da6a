#pragma once
// The UDP port an RNIC owns, claimed in a soft NIC's namespace. A hardware NIC consumes
// RoCEv2 frames (UDP 4791) before the host's stack sees them; a soft NIC reads them with a
// packet socket, and the namespace's kernel also takes each one up its IP stack, finds no
// socket on 4791 and answers with ICMP port unreachable (rate-limited, ~4% of the frames
// of an 8-to-1 incast's capture), frames no RoCE fabric carries. A UDP socket bound to the
// port with a socket filter that accepts nothing stops that: the kernel delivers to it and
// the filter drops, so nothing queues and nothing answers.
//
// Ownership: the socket, closed in the destructor (unique_fd).

#include <cstdint>
#include <utility>

#include "rocelab/common/result.hpp"
#include "rocelab/common/unique_fd.hpp"

namespace rocelab::traffic::soft_nic {

class roce_port_claim {
 public:
  // Binds 0.0.0.0:`port` in the caller's network namespace. An error names the port and
  // the reason (EADDRINUSE: something else in the namespace holds it).
  [[nodiscard]] static result<roce_port_claim> claim(std::uint16_t port);

 private:
  explicit roce_port_claim(unique_fd fd) : fd_(std::move(fd)) {}
  unique_fd fd_;
};

}  // namespace rocelab::traffic::soft_nic

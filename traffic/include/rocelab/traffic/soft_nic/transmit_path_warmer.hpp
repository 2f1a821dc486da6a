#pragma once
// Sends one frame to the network namespace's own loopback, where no protocol takes its
// EtherType (IEEE 802 local experimental 1, 0x88B5), so it goes no further than that
// namespace's receive path. A soft NIC sends it a few hundred microseconds before an
// armed instant: it runs the kernel's transmit and receive code (skb allocation, the
// driver, the softirq) on the NIC's CPU, which after an idle spell made the first frame
// on each CPU cost 30-100 us instead of ~8 us and so staggered every sender behind it
// (bench/virtual_lab/start_skew). Nothing reaches the lab's wire.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "rocelab/fabric/soft_switch/packet_port.hpp"

namespace rocelab::traffic::soft_nic {

class transmit_path_warmer {
 public:
  static constexpr std::uint16_t ethertype = 0x88B5;
  // A send-only packet socket on "lo" of the caller's namespace, with a frame of
  // `frame_bytes` (at least 60): as large as the first data frame, so the same allocation
  // sizes are hit. nullopt when there is no such socket (no CAP_NET_RAW, no loopback).
  [[nodiscard]] static std::optional<transmit_path_warmer> open(std::size_t frame_bytes);
  // false when the kernel refused the frame (the loopback down).
  bool warm() noexcept { return port_.send(frame_); }

 private:
  transmit_path_warmer(fabric::soft_switch::packet_port port, std::size_t frame_bytes);
  fabric::soft_switch::packet_port port_;
  std::vector<std::uint8_t> frame_;
};

}  // namespace rocelab::traffic::soft_nic

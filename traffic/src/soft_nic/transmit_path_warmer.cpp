#include "rocelab/traffic/soft_nic/transmit_path_warmer.hpp"

#include <algorithm>
#include <utility>

namespace rocelab::traffic::soft_nic {

std::optional<transmit_path_warmer> transmit_path_warmer::open(std::size_t frame_bytes) {
  fabric::soft_switch::packet_port_options o;
  o.ifname = "lo";
  o.receive = false;
  auto port = fabric::soft_switch::packet_port::open(o);
  if (!port) return std::nullopt;
  return transmit_path_warmer(std::move(*port), frame_bytes);
}

// Destination and source MAC all zero (the loopback's own), then the EtherType.
transmit_path_warmer::transmit_path_warmer(fabric::soft_switch::packet_port port, std::size_t frame_bytes)
    : port_(std::move(port)), frame_(std::max<std::size_t>(frame_bytes, 60), 0) {
  frame_[12] = static_cast<std::uint8_t>(ethertype >> 8);
  frame_[13] = static_cast<std::uint8_t>(ethertype & 0xFF);
}

}  // namespace rocelab::traffic::soft_nic

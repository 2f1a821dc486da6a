#pragma once
// The NIC process's receive side: frames from the port into the rc_nic, its receive
// completions out as recv events, and the receive processing it measures: a message's last
// data frame in (the kernel's stamp at the port's ring, the moment it reached this NIC) to
// its ACK handed to the port, for every message whose ACK went out in the same on_frame
// call (not one held by a PFC pause).
#include <cstdint>
#include <span>

#include "rocelab/fabric/latency_histogram.hpp"
#include "rocelab/fabric/soft_switch/packet_port.hpp"
#include "rocelab/traffic/soft_nic/rc_nic.hpp"

namespace rocelab::traffic::soft_nic {

class frame_receiver {
 public:
  // Registers the NIC's receive completion callback, which refers to this object: it
  // stays where it is built (not copied, not moved) for as long as the NIC runs.
  frame_receiver(rc_nic& nic, fabric::soft_switch::packet_port& port, int out_fd);
  frame_receiver(const frame_receiver&) = delete;
  frame_receiver& operator=(const frame_receiver&) = delete;

  // One received frame (packet_port::receive's callback).
  void operator()(std::span<const std::uint8_t> frame);

  [[nodiscard]] const fabric::latency_histogram& rx_processing() const noexcept { return rx_processing_; }

 private:
  rc_nic& nic_;
  fabric::soft_switch::packet_port& port_;
  fabric::latency_histogram rx_processing_;
  bool message_received_ = false;  // set by the receive completion of the frame in hand
};

}  // namespace rocelab::traffic::soft_nic

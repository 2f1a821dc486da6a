#pragma once
// The NIC process's frame sink: rc_nic's frames to its AF_PACKET port.
#include <sched.h>

#include <cstdint>
#include <span>

#include "rocelab/fabric/soft_switch/packet_port.hpp"
#include "rocelab/traffic/soft_nic/rc_nic.hpp"

namespace rocelab::traffic::soft_nic {

class port_sink final : public frame_sink {
 public:
  explicit port_sink(fabric::soft_switch::packet_port& p) : port_(p) {}
  bool send(std::span<const std::uint8_t> frame) override {
    const bool sent = port_.send(frame);
    if (yield_after_send_) {
      yield_after_send_ = false;
      ::sched_yield();
    }
    return sent;
  }
  // The next frame handed to the port is followed at once by sched_yield(2): at an armed
  // instant the CPU goes to the senders of equal priority still waiting to send their
  // first frame before this one does the bookkeeping of its own (sched_yield rotates
  // equal SCHED_FIFO priorities on a CPU).
  void yield_after_next_send(bool on) noexcept { yield_after_send_ = on; }

 private:
  fabric::soft_switch::packet_port& port_;
  bool yield_after_send_ = false;
};

}  // namespace rocelab::traffic::soft_nic

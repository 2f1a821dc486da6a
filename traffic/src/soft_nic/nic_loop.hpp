#pragma once
// The NIC process's timing core: one thread waits until the next due packet, DCQCN or
// retransmit timer, received frame, command or armed instant, whichever is first, and
// then does what is due. Every part it drives is built by run_nic_process and borrowed.
#include <atomic>
#include <cstdint>

#include "nic_frame_receiver.hpp"
#include "nic_port_sink.hpp"
#include "nic_post_scheduler.hpp"
#include "nic_process_io.hpp"
#include "rocelab/fabric/soft_switch/packet_port.hpp"
#include "rocelab/fabric/soft_switch/realtime_clock.hpp"
#include "rocelab/traffic/soft_nic/nic_process.hpp"
#include "rocelab/traffic/soft_nic/rc_nic.hpp"

namespace rocelab::traffic::soft_nic {

struct nic_loop {
  const nic_process_config& cfg;
  const std::atomic<bool>& stop;
  fabric::soft_switch::realtime_clock& clk;
  fabric::soft_switch::packet_port& port;
  port_sink& sink;
  rc_nic& nic;
  frame_receiver& receiver;
  post_scheduler& posts;
  line_reader& in;
  int in_fd;
  int out_fd;

  // Until `stop`, the config's deadline, a stop command or the end of the input.
  void run();

 private:
  // Yields the CPU until the armed `instant`, then sends its first frames before anything
  // else (no command read, no JSON) and hands the CPU to the senders still waiting for it.
  void send_at_instant(std::int64_t instant);
  // Sleeps in ppoll(2) until a frame, a command (or the input's end) or `wake_ns`.
  void sleep_until(std::int64_t now_ns, std::int64_t wake_ns);
};

}  // namespace rocelab::traffic::soft_nic

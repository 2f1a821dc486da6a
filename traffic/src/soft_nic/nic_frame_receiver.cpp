#include "nic_frame_receiver.hpp"

#include "nic_process_io.hpp"
#include "rocelab/fabric/soft_switch/realtime_clock.hpp"

namespace rocelab::traffic::soft_nic {

namespace ss = fabric::soft_switch;

frame_receiver::frame_receiver(rc_nic& nic, ss::packet_port& port, int out_fd) : nic_(nic), port_(port) {
  nic_.on_receive_complete([this, out_fd](const receive_completion& c) {
    message_received_ = true;
    write_event(out_fd, recv_event{c.local_qpn, c.peer, c.msn, c.bytes, c.ce_marked, c.end_ns});
  });
}

void frame_receiver::operator()(std::span<const std::uint8_t> frame) {
  const nic_counters before = nic_.counters();
  message_received_ = false;
  nic_.on_frame(frame, ss::monotonic_ns());
  if (!message_received_) return;
  const nic_counters& after = nic_.counters();
  const std::uint64_t responses =
      (after.tx_acks - before.tx_acks) + (after.tx_naks - before.tx_naks) + (after.tx_cnps - before.tx_cnps);
  const std::int64_t stamp = port_.frame_stamp_ns();
  if (stamp == 0 || after.tx_acks == before.tx_acks || after.tx_frames - before.tx_frames != responses) return;
  rx_processing_.record(ss::monotonic_ns() - (stamp - ss::realtime_offset_ns()));
}

}  // namespace rocelab::traffic::soft_nic

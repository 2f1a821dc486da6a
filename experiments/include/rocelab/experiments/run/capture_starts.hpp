#pragma once
// When each sender's first data packet shows in the mirror capture of a virtual-lab run.
//
// The run's start offsets (run_records::start_offsets_ns) are the senders' own: the
// instant each soft NIC handed its first data packet to its port (nic_fleet.hpp). The
// capture is a second witness. The lab's mirror session sends an arrival copy of every
// packet that begins a message (soft_switch/mirror.hpp: arrivals), stamped by the switch
// when the packet reached it; those are the capture's start witness. Without them (a
// capture of another session) the first packets the egress mirror shows stand in, taken
// behind the switch: an incast's first packets reach the capture one after another
// through the receiver's egress queue, (n - 1) frame times apart at the least (8 senders
// of 4 KiB frames at 0.5 Gb/s: ~460 us), whatever the senders did.
//
// Data packets go to the receiver's QP for the sender (soft_nic::receive_qpn), so a
// sender's data flows are the capture's RoCE flows from its address to a QPN of
// 0x200 + its index; its ACKs and CNPs (to 0x100 + n) do not count.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rocelab::captures {
struct capture_analysis;
}

namespace rocelab::experiments {

struct capture_starts {
  std::map<std::string, std::int64_t> offsets_ns;
  // true: from the switch's arrival copies (at its ingress); false: from the first packets
  // the capture shows (behind the switch's egress).
  bool at_ingress = false;
};

// For each host of `scheduled_ns` (name -> the scheduled start of its first message on
// the run's timeline): its first data packet's time (CLOCK_REALTIME; the switch's arrival
// stamp where the capture has arrival copies, else the capture's timestamp) minus
// t0_realtime_ns minus that scheduled start. Hosts whose data the capture does not hold
// are left out. `hosts` and `host_ipv4` by host index ("h2", "198.18.0.2").
[[nodiscard]] capture_starts capture_start_offsets(
    const captures::capture_analysis& captured, const std::vector<std::string>& hosts,
    const std::vector<std::string>& host_ipv4, std::int64_t t0_realtime_ns,
    const std::map<std::string, std::int64_t>& scheduled_ns);

}  // namespace rocelab::experiments

#pragma once
// Which hop a captured PFC frame paused, in the virtual lab.
//
// The mirror copies every PFC frame on the switch's ports (the hosts' and, with pfc_tx,
// the switch's own); the capture analysis merges them into pause intervals keyed by the
// frame's source MAC. A frame from switch port p stops the NIC of the host on p from
// transmitting on that priority: (host's device, port 0). A frame from a host stops the
// switch's egress port toward that host: ("sw" device, port p). Both with source
// "capture", so the report can say where each interval came from. Frames from a MAC the
// lab does not know stay on the capture device, port 0.

#include <cstdint>
#include <string>
#include <vector>

#include "rocelab/common/records.hpp"

namespace rocelab::captures {
struct capture_analysis;
}

namespace rocelab::experiments {

struct lab_port_macs {
  std::vector<std::string> host_mac;         // by host index: the host NIC's MAC
  std::vector<std::string> switch_port_mac;  // by host index: the switch port it is cabled to
};

struct pause_devices {
  std::uint32_t first_host = 0;  // device index of host 0 (hosts follow in order)
  std::uint32_t switch_device = 0;
  std::uint32_t capture_device = 0;
};

// Intervals on the run's timeline (capture time minus t0_ns), one per captured interval.
[[nodiscard]] std::vector<pause_interval> attribute_capture_pauses(const captures::capture_analysis& captured,
                                                                   const lab_port_macs& macs,
                                                                   const pause_devices& devices, std::int64_t t0_ns);

// Sum of the intervals' lengths (run_totals::paused_ns, as the twin counts it).
[[nodiscard]] std::int64_t paused_ns_total(const std::vector<pause_interval>& pauses);

}  // namespace rocelab::experiments

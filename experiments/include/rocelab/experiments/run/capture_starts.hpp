#pragma once
// When each sender really started, from the mirror capture of a virtual-lab run.
//
// The soft NICs report when they started each message (run_records::start_offsets_ns,
// source "nic"); the wire is the stricter witness: a sender's first data packet on the
// mirror. Data packets go to the receiver's QP for the sender (soft_nic::receive_qpn),
// so a sender's data flows are the capture's RoCE flows from its address to a QPN of
// 0x200 + its index; its ACKs and CNPs (to 0x100 + n) do not count.

#include <cstdint>
#include <string>
#include <vector>

#include "rocelab/common/records.hpp"

namespace rocelab::captures {
struct capture_analysis;
}

namespace rocelab::experiments {

// Replaces `records.start_offsets_ns` (measured by the NICs) with the capture's: for each
// host with an offset, its first data packet's capture time (CLOCK_REALTIME) minus
// t0_realtime_ns, minus the host's scheduled first start (its NIC-reported first start
// minus its NIC offset). Hosts whose data the capture does not hold keep their NIC
// offset; start_source becomes "capture" when every host was found, "capture+nic" when
// some were not. `host_ipv4` by host index ("198.18.0.2").
void capture_start_offsets(const captures::capture_analysis& captured, const std::vector<std::string>& host_ipv4,
                           std::int64_t t0_realtime_ns, run_records& records);

}  // namespace rocelab::experiments

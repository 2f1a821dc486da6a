#pragma once
// `ethtool -S IF` through the kernel's ethtool ioctl (SIOCETHTOOL: ETHTOOL_GSSET_INFO for
// the count, ETHTOOL_GSTRINGS for the names, ETHTOOL_GSTATS for the values), in the
// calling thread's network namespace. mlx5 reports its per-priority PFC counters here
// (rx_prio3_pause, tx_prio3_pause, rx_prio3_pause_duration, tx_prio3_pause_transition).

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "rocelab/agents/nic/nic_driver.hpp"
#include "rocelab/common/result.hpp"

namespace rocelab::agents::nic {

// Errors: not_found (no such interface), unsupported (the driver has no statistics).
[[nodiscard]] result<std::vector<nic_counter>> read_ethtool_stats(const std::string& ifname);

// One SIOCETHTOOL request on the interface: `request` is the command struct and the array
// after it, as one buffer of u64 words. Like the kernel, the call may write as many array
// entries as the set has at that moment, whatever count the request carried.
using ethtool_ioctl_fn = std::function<status(std::span<std::uint64_t> request, const char* what)>;

// read_ethtool_stats over `ioctl` (tests stand in a driver there). The set's size comes
// from GSSET_INFO; GSTRINGS and GSTATS must then report that same count, else the set
// changed in between (mlx5 adds its per-priority PFC counters when PFC is enabled) and the
// whole read starts again, a bounded number of times (error unavailable when it never
// holds still). Buffers have room for the set to grow in between, since the kernel
// does not bound its writes by the request's count.
[[nodiscard]] result<std::vector<nic_counter>> read_ethtool_stats(const std::string& ifname,
                                                                 const ethtool_ioctl_fn& ioctl);

// The subset the congestion analysis uses: per-priority pause and traffic counters and
// the buffer-drop counters (names containing "pause", "prio", "discard" or "out_of_buffer").
[[nodiscard]] bool is_congestion_counter(const std::string& ethtool_name) noexcept;

}  // namespace rocelab::agents::nic

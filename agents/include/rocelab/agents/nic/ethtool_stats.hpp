#pragma once
// `ethtool -S IF` through the kernel's ethtool ioctl (SIOCETHTOOL: ETHTOOL_GSSET_INFO for
// the count, ETHTOOL_GSTRINGS for the names, ETHTOOL_GSTATS for the values), in the
// calling thread's network namespace. mlx5 reports its per-priority PFC counters here
// (rx_prio3_pause, tx_prio3_pause, rx_prio3_pause_duration, tx_prio3_pause_transition).

#include <string>
#include <vector>

#include "rocelab/agents/nic/nic_driver.hpp"
#include "rocelab/common/result.hpp"

namespace rocelab::agents::nic {

// Errors: not_found (no such interface), unsupported (the driver has no statistics).
[[nodiscard]] result<std::vector<nic_counter>> read_ethtool_stats(const std::string& ifname);

// The subset the congestion analysis uses: per-priority pause and traffic counters and
// the buffer-drop counters (names containing "pause", "prio", "discard" or "out_of_buffer").
[[nodiscard]] bool is_congestion_counter(const std::string& ethtool_name) noexcept;

}  // namespace rocelab::agents::nic

#include "rocelab/agents/nic/ethtool_stats.hpp"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <vector>

#include "rocelab/common/unique_fd.hpp"

namespace rocelab::agents::nic {
namespace {

status ethtool_ioctl(int fd, const std::string& ifname, void* data, const char* what) {
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
  ifr.ifr_data = static_cast<char*>(data);
  if (::ioctl(fd, SIOCETHTOOL, &ifr) == 0) return status::success();
  const int e = errno;
  if (e == ENODEV) return {error_code::not_found, "ethtool " + std::string(what) + " on " + ifname + ": no such interface", e};
  if (e == EOPNOTSUPP)
    return {error_code::unsupported, "ethtool " + std::string(what) + " on " + ifname + ": the driver has no statistics", e};
  errno = e;
  return status::from_errno("ethtool " + std::string(what) + " on " + ifname);
}

// Buffers for the variable-length ethtool structs, 8-byte aligned for the u64 arrays.
std::vector<std::uint64_t> aligned_buffer(std::size_t bytes) { return std::vector<std::uint64_t>((bytes + 7) / 8); }

}  // namespace

result<std::vector<nic_counter>> read_ethtool_stats(const std::string& ifname) {
  if (ifname.empty() || ifname.size() >= IFNAMSIZ)
    return status(error_code::invalid_argument, "interface name '" + ifname + "' is not a valid name");
  unique_fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return status::from_errno("socket for ethtool on " + ifname);
  return read_ethtool_stats(ifname, [&](std::span<std::uint64_t> request, const char* what) {
    return ethtool_ioctl(fd.get(), ifname, request.data(), what);
  });
}

result<std::vector<nic_counter>> read_ethtool_stats(const std::string& ifname, const ethtool_ioctl_fn& ioctl) {
  // The kernel answers GSTRINGS and GSTATS with the set's size at that moment and writes
  // that many entries, whatever count the request carried (net/ethtool/ioctl.c). So the
  // size comes from one GSSET_INFO, the buffers leave room for the set to grow in the
  // meantime, and a reply whose count differs from GSSET_INFO's (the names and values
  // would not belong together) starts the read over.
  constexpr int attempts = 5;
  std::uint32_t last_counts[3] = {0, 0, 0};
  for (int attempt = 0; attempt < attempts; ++attempt) {
    // GSSET_INFO: the number of ETH_SS_STATS strings (the struct is followed by one u32).
    auto info_buf = aligned_buffer(sizeof(ethtool_sset_info) + sizeof(std::uint32_t));
    auto* info = reinterpret_cast<ethtool_sset_info*>(info_buf.data());
    info->cmd = ETHTOOL_GSSET_INFO;
    info->sset_mask = 1ULL << ETH_SS_STATS;
    ROCELAB_RETURN_IF_ERROR(ioctl(info_buf, "GSSET_INFO"));
    if ((info->sset_mask & (1ULL << ETH_SS_STATS)) == 0)
      return status(error_code::unsupported, "ethtool on " + ifname + ": the driver has no statistics");
    const std::uint32_t n = info->data[0];
    if (n == 0) return std::vector<nic_counter>{};
    // Room for the set to grow by its own size again (at least 1024 entries) before the
    // two reads: mlx5's per-priority and per-channel counters come and go in such steps.
    const std::size_t capacity = std::size_t{n} + std::max<std::size_t>(n, 1024);

    auto strings_buf = aligned_buffer(sizeof(ethtool_gstrings) + capacity * ETH_GSTRING_LEN);
    auto* strings = reinterpret_cast<ethtool_gstrings*>(strings_buf.data());
    strings->cmd = ETHTOOL_GSTRINGS;
    strings->string_set = ETH_SS_STATS;
    strings->len = n;
    ROCELAB_RETURN_IF_ERROR(ioctl(strings_buf, "GSTRINGS"));

    auto stats_buf = aligned_buffer(sizeof(ethtool_stats) + capacity * sizeof(std::uint64_t));
    auto* stats = reinterpret_cast<ethtool_stats*>(stats_buf.data());
    stats->cmd = ETHTOOL_GSTATS;
    stats->n_stats = n;
    ROCELAB_RETURN_IF_ERROR(ioctl(stats_buf, "GSTATS"));

    if (strings->len > capacity || stats->n_stats > capacity)
      return status(error_code::internal, "ethtool on " + ifname + ": the statistics set grew from " +
                                              std::to_string(n) + " to " +
                                              std::to_string(std::max(strings->len, stats->n_stats)) +
                                              " entries between two calls, beyond the room left for it");
    last_counts[0] = n, last_counts[1] = strings->len, last_counts[2] = stats->n_stats;
    if (strings->len != n || stats->n_stats != n) continue;  // the set changed in between
    std::vector<nic_counter> out;
    out.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      const char* name = reinterpret_cast<const char*>(strings->data) + std::size_t{i} * ETH_GSTRING_LEN;
      out.push_back({std::string(name, ::strnlen(name, ETH_GSTRING_LEN)), stats->data[i]});
    }
    return out;
  }
  return status(error_code::unavailable,
                "ethtool on " + ifname + ": the statistics set kept changing while being read (" +
                    std::to_string(attempts) + " attempts; last: " + std::to_string(last_counts[0]) + " announced, " +
                    std::to_string(last_counts[1]) + " names, " + std::to_string(last_counts[2]) +
                    " values); is the driver being reconfigured?");
}

bool is_congestion_counter(const std::string& name) noexcept {
  for (const char* word : {"pause", "prio", "discard", "out_of_buffer"})
    if (name.find(word) != std::string::npos) return true;
  return false;
}

}  // namespace rocelab::agents::nic

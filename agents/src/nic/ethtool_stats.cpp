#include "rocelab/agents/nic/ethtool_stats.hpp"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>

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
std::unique_ptr<std::uint64_t[]> aligned_buffer(std::size_t bytes) {
  return std::make_unique<std::uint64_t[]>((bytes + 7) / 8);
}

}  // namespace

result<std::vector<nic_counter>> read_ethtool_stats(const std::string& ifname) {
  if (ifname.empty() || ifname.size() >= IFNAMSIZ)
    return status(error_code::invalid_argument, "interface name '" + ifname + "' is not a valid name");
  unique_fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return status::from_errno("socket for ethtool on " + ifname);

  // GSSET_INFO: the number of ETH_SS_STATS strings (the struct is followed by one u32).
  auto info_buf = aligned_buffer(sizeof(ethtool_sset_info) + sizeof(std::uint32_t));
  auto* info = reinterpret_cast<ethtool_sset_info*>(info_buf.get());
  info->cmd = ETHTOOL_GSSET_INFO;
  info->sset_mask = 1ULL << ETH_SS_STATS;
  ROCELAB_RETURN_IF_ERROR(ethtool_ioctl(fd.get(), ifname, info, "GSSET_INFO"));
  if ((info->sset_mask & (1ULL << ETH_SS_STATS)) == 0)
    return status(error_code::unsupported, "ethtool on " + ifname + ": the driver has no statistics");
  const std::uint32_t n = info->data[0];
  std::vector<nic_counter> out;
  if (n == 0) return out;

  auto strings_buf = aligned_buffer(sizeof(ethtool_gstrings) + std::size_t{n} * ETH_GSTRING_LEN);
  auto* strings = reinterpret_cast<ethtool_gstrings*>(strings_buf.get());
  strings->cmd = ETHTOOL_GSTRINGS;
  strings->string_set = ETH_SS_STATS;
  strings->len = n;
  ROCELAB_RETURN_IF_ERROR(ethtool_ioctl(fd.get(), ifname, strings, "GSTRINGS"));

  auto stats_buf = aligned_buffer(sizeof(ethtool_stats) + std::size_t{n} * sizeof(std::uint64_t));
  auto* stats = reinterpret_cast<ethtool_stats*>(stats_buf.get());
  stats->cmd = ETHTOOL_GSTATS;
  stats->n_stats = n;
  ROCELAB_RETURN_IF_ERROR(ethtool_ioctl(fd.get(), ifname, stats, "GSTATS"));

  // The driver may report fewer than it announced if its set shrank in between.
  const std::uint32_t count = std::min(n, std::min(strings->len, stats->n_stats));
  out.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const char* name = reinterpret_cast<const char*>(strings->data) + std::size_t{i} * ETH_GSTRING_LEN;
    out.push_back({std::string(name, ::strnlen(name, ETH_GSTRING_LEN)), stats->data[i]});
  }
  return out;
}

bool is_congestion_counter(const std::string& name) noexcept {
  for (const char* word : {"pause", "prio", "discard", "out_of_buffer"})
    if (name.find(word) != std::string::npos) return true;
  return false;
}

}  // namespace rocelab::agents::nic

#pragma once
// RoCEv2 GID selection. A RoCE port's GID table has, for every IP address of its netdev,
// one entry per RoCE version; the kernel says which in
// /sys/class/infiniband/DEV/ports/PORT/gid_attrs/types/N ("IB/RoCE v1" or "RoCE v2") and
// names the netdev in gid_attrs/ndevs/N. RoCEv2 (UDP 4791, routable) needs the "RoCE v2"
// entry whose GID is the interface's address (IPv4 as ::ffff:a.b.c.d). Reading an unused
// entry's type fails (EINVAL), so such entries are skipped, as rdma-core's
// ibv_query_gid_ex and perftest's GID auto-selection do.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocelab/common/result.hpp"

namespace rocelab::traffic::verbs {

using gid_bytes = std::array<std::uint8_t, 16>;

enum class gid_type : std::uint8_t { ib_roce_v1, roce_v2, unknown };

struct gid_entry {
  std::uint32_t index = 0;
  gid_bytes gid{};
  gid_type type = gid_type::unknown;
  std::string netdev;  // empty when the kernel names none
};

// "fe80:0000:0000:0000:0e42:a1ff:fe01:0203" (sysfs format: 8 groups of 4 hex digits).
[[nodiscard]] result<gid_bytes> parse_sysfs_gid(std::string_view text);
[[nodiscard]] std::string format_gid(const gid_bytes& gid);
// "198.18.0.1" -> ::ffff:198.18.0.1; an IPv6 address as itself.
[[nodiscard]] result<gid_bytes> gid_of_address(std::string_view ip);
[[nodiscard]] gid_type parse_gid_type(std::string_view text) noexcept;

// The used entries of DEV's port (zero GIDs and entries without a readable type skipped).
// Errors: not_found naming the gids directory when the device or port does not exist.
[[nodiscard]] result<std::vector<gid_entry>> read_gid_table(const std::string& sysfs_root, const std::string& device,
                                                            std::uint32_t port);

// The RoCE v2 entry for `ip` (the address the traffic uses); not_found listing what the
// table has when there is none.
[[nodiscard]] result<gid_entry> select_roce_v2_gid(const std::vector<gid_entry>& table, std::string_view ip);

}  // namespace rocelab::traffic::verbs

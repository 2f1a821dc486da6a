#include "rocelab/traffic/verbs/gid_table.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "rocelab/common/sysfs_line.hpp"

namespace rocelab::traffic::verbs {
namespace fs = std::filesystem;

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

result<gid_bytes> parse_sysfs_gid(std::string_view text) {
  gid_bytes out{};
  // 8 groups of 4 hex digits separated by ':' = 39 characters.
  if (text.size() != 39) return status(error_code::malformed_input, "GID '" + std::string(text) + "' is not 8 groups of 4 hex digits");
  for (int g = 0; g < 8; ++g) {
    const std::size_t at = static_cast<std::size_t>(g) * 5;
    if (g < 7 && text[at + 4] != ':')
      return status(error_code::malformed_input, "GID '" + std::string(text) + "': ':' expected after group " + std::to_string(g));
    int v[4];
    for (int k = 0; k < 4; ++k) {
      v[k] = hex_digit(text[at + static_cast<std::size_t>(k)]);
      if (v[k] < 0) return status(error_code::malformed_input, "GID '" + std::string(text) + "': not hex");
    }
    out[static_cast<std::size_t>(2 * g)] = static_cast<std::uint8_t>(v[0] << 4 | v[1]);
    out[static_cast<std::size_t>(2 * g + 1)] = static_cast<std::uint8_t>(v[2] << 4 | v[3]);
  }
  return out;
}

std::string format_gid(const gid_bytes& gid) {
  char text[40];
  char* p = text;
  for (int g = 0; g < 8; ++g) {
    p += std::snprintf(p, 6, g < 7 ? "%02x%02x:" : "%02x%02x", gid[static_cast<std::size_t>(2 * g)],
                       gid[static_cast<std::size_t>(2 * g + 1)]);
  }
  return std::string(text, 39);
}

result<gid_bytes> gid_of_address(std::string_view ip) {
  const std::string s(ip);
  gid_bytes out{};
  in_addr v4{};
  if (::inet_pton(AF_INET, s.c_str(), &v4) == 1) {
    out[10] = 0xff;
    out[11] = 0xff;
    std::memcpy(out.data() + 12, &v4, 4);
    return out;
  }
  in6_addr v6{};
  if (::inet_pton(AF_INET6, s.c_str(), &v6) == 1) {
    std::memcpy(out.data(), &v6, 16);
    return out;
  }
  return status(error_code::invalid_argument, "'" + s + "' is not an IPv4 or IPv6 address");
}

gid_type parse_gid_type(std::string_view text) noexcept {
  if (text == "RoCE v2") return gid_type::roce_v2;
  if (text == "IB/RoCE v1") return gid_type::ib_roce_v1;
  return gid_type::unknown;
}

result<std::vector<gid_entry>> read_gid_table(const std::string& sysfs_root, const std::string& device, std::uint32_t port) {
  const fs::path port_dir = fs::path(sysfs_root) / "class/infiniband" / device / "ports" / std::to_string(port);
  const fs::path gids = port_dir / "gids";
  std::error_code ec;
  if (!fs::is_directory(gids, ec))
    return status(error_code::not_found, "no GID table for " + device + " port " + std::to_string(port) + " (" +
                                             gids.string() + " is missing)");
  std::vector<gid_entry> out;
  for (const auto& e : fs::directory_iterator(gids, ec)) {
    const std::string name = e.path().filename().string();
    std::uint32_t index = 0;
    try {
      index = static_cast<std::uint32_t>(std::stoul(name));
    } catch (...) {
      continue;
    }
    const auto text = read_sysfs_line(e.path());
    if (!text) continue;
    auto gid = parse_sysfs_gid(*text);
    if (!gid.ok()) return gid.error().with_context(e.path().string());
    if (*gid == gid_bytes{}) continue;  // unused entry
    // An unused or stale entry's type cannot be read (EINVAL): skip it.
    const auto type = read_sysfs_line(port_dir / "gid_attrs/types" / name);
    if (!type) continue;
    gid_entry entry{index, *gid, parse_gid_type(*type), read_sysfs_line(port_dir / "gid_attrs/ndevs" / name).value_or("")};
    out.push_back(std::move(entry));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  return out;
}

result<gid_entry> select_roce_v2_gid(const std::vector<gid_entry>& table, std::string_view ip) {
  auto wanted = gid_of_address(ip);
  if (!wanted.ok()) return wanted.error();
  for (const auto& e : table)
    if (e.type == gid_type::roce_v2 && e.gid == *wanted) return e;
  std::string have;
  for (const auto& e : table)
    have += (have.empty() ? "" : ", ") + std::to_string(e.index) + ": " + format_gid(e.gid) +
            (e.type == gid_type::roce_v2 ? " v2" : e.type == gid_type::ib_roce_v1 ? " v1" : " ?");
  return status(error_code::not_found, "no RoCE v2 GID for " + std::string(ip) + " (" + format_gid(*wanted) +
                                           "); the table has " + (have.empty() ? "no entries" : have));
}

}  // namespace rocelab::traffic::verbs

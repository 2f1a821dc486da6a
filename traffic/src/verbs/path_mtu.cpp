#include "rocelab/traffic/verbs/path_mtu.hpp"

#include <algorithm>

namespace rocelab::traffic::verbs {
namespace {

bool is_mtu(int v) noexcept { return v >= IBV_MTU_256 && v <= IBV_MTU_4096; }

}  // namespace

result<ibv_mtu> mtu_from_bytes(std::int64_t bytes) {
  for (int m = IBV_MTU_256; m <= IBV_MTU_4096; ++m)
    if (bytes == std::int64_t{128} << m) return static_cast<ibv_mtu>(m);
  return status(error_code::invalid_argument,
                "path MTU " + std::to_string(bytes) +
                    " is not a RoCE path MTU: 256, 512, 1024, 2048 or 4096 bytes (the payload per packet; the "
                    "port's active MTU is the largest of these at least 96 bytes below the netdev's MTU, the "
                    "kernel's iboe_get_mtu, so 4096 needs a netdev MTU of 4192 or more)");
}

std::uint32_t mtu_bytes(ibv_mtu mtu) noexcept { return is_mtu(mtu) ? 128u << static_cast<int>(mtu) : 0u; }

result<path_mtu_decision> decide_path_mtu(ibv_mtu requested, ibv_mtu active, std::uint8_t peer) {
  if (!is_mtu(requested))
    return status(error_code::invalid_argument, "path MTU: requested value " + std::to_string(requested) + " is not an ibv_mtu");
  if (!is_mtu(active))
    return status(error_code::invalid_argument,
                  "path MTU: the port's active MTU " + std::to_string(active) + " is not an ibv_mtu (port down?)");
  if (peer != 0 && !is_mtu(peer))
    return status(error_code::invalid_argument, "path MTU: the peer's MTU " + std::to_string(peer) + " is not an ibv_mtu");
  path_mtu_decision d;
  d.mtu = requested;
  if (active < d.mtu) {
    d.note = "path MTU " + std::to_string(mtu_bytes(requested)) + " lowered to the port's active MTU " +
             std::to_string(mtu_bytes(active)) + " (the netdev's MTU is below what the request needs)";
    d.mtu = active;
  }
  if (peer != 0 && peer < d.mtu) {
    const auto p = static_cast<ibv_mtu>(peer);
    d.note += (d.note.empty() ? "" : "; ") + std::string("path MTU ") + std::to_string(mtu_bytes(d.mtu)) +
              " lowered to the peer's " + std::to_string(mtu_bytes(p));
    d.mtu = p;
  }
  return d;
}

}  // namespace rocelab::traffic::verbs

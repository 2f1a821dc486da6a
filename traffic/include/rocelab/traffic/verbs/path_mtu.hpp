#pragma once
// The path MTU of an RC QP, decided as perftest's set_mtu (src/perftest_parameters.c)
// decides it: the IB MTU values only (256, 512, 1024, 2048, 4096 bytes), and never above
// the port's active MTU (ibv_query_port: a RoCE port's active MTU follows its netdev's
// MTU), else the QP sends frames the link cannot carry and ends in IBV_WC_RETRY_EXC_ERR.
// Where perftest falls back to the active MTU on a value it does not know, rocelab refuses
// it: a spec asking for 1500 or 9000 (netdev MTUs, not path MTUs) is a mistake to report.
// Pure: no verbs calls.

#include <cstdint>
#include <string>

#include <infiniband/verbs.h>

#include "rocelab/common/result.hpp"

namespace rocelab::traffic::verbs {

// 256..4096 bytes (a power of two) -> IBV_MTU_256..IBV_MTU_4096; anything else is
// invalid_argument naming the values there are.
[[nodiscard]] result<ibv_mtu> mtu_from_bytes(std::int64_t bytes);
// IBV_MTU_256 -> 256, ... ; 0 for a value outside the enum.
[[nodiscard]] std::uint32_t mtu_bytes(ibv_mtu mtu) noexcept;

struct path_mtu_decision {
  ibv_mtu mtu = IBV_MTU_1024;
  std::string note;  // non-empty when the request was lowered, saying by what
};

// min(requested, port active MTU, peer's MTU); peer 0: not known yet. Errors
// (invalid_argument) when `requested` or `active` is not an ibv_mtu value.
[[nodiscard]] result<path_mtu_decision> decide_path_mtu(ibv_mtu requested, ibv_mtu active, std::uint8_t peer);

}  // namespace rocelab::traffic::verbs

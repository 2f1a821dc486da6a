#pragma once
// What one side of an RC connection tells the other before they can talk (perftest's
// out-of-band exchange, rc_pingpong's "LID QPN PSN GID"): its QP number, first PSN, GID,
// and for RDMA WRITE the remote key and virtual address of its buffer and its length.
// Serialized as a fixed 48-byte big-endian record (a wire struct, size asserted) so the
// controller can carry it as opaque bytes, or as a JSON object with a hex GID.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rocelab/common/result.hpp"
#include "rocelab/traffic/verbs/gid_table.hpp"

namespace rocelab::traffic::verbs {

struct connection_data {
  std::uint32_t qpn = 0;        // 24 bits
  std::uint32_t psn = 0;        // 24 bits: the first PSN this side sends
  gid_bytes gid{};
  std::uint32_t rkey = 0;
  std::uint64_t addr = 0;       // the buffer's virtual address in the peer's process
  std::uint32_t length = 0;     // bytes of that buffer the peer may write
  std::uint16_t lid = 0;        // 0 on RoCE
  std::uint8_t mtu = 0;         // ibv_mtu enum (IBV_MTU_1024 = 3, ...); 0: negotiate
  friend bool operator==(const connection_data&, const connection_data&) = default;
};

inline constexpr std::size_t connection_data_bytes = 48;

[[nodiscard]] std::array<std::uint8_t, connection_data_bytes> to_bytes(const connection_data& c);
// Errors: wrong length, a version byte this code does not know, QPN or PSN beyond 24 bits.
[[nodiscard]] result<connection_data> connection_data_from_bytes(const std::uint8_t* data, std::size_t size);

[[nodiscard]] nlohmann::json to_json(const connection_data& c);
[[nodiscard]] result<connection_data> connection_data_from_json(const nlohmann::json& j);

}  // namespace rocelab::traffic::verbs

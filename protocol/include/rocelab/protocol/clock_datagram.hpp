#pragma once
// The UDP clock exchange between an agent and its controller: the agent sends a probe
// (t1 read just before the send), the controller answers with the kernel's receive time
// of the probe (t2) and the time it sends the answer (t3), and the agent takes the kernel's
// receive time of the answer (t4). Kernel receive timestamps (SO_TIMESTAMPNS) leave out
// how long either side took to get to the datagram, so a loaded io thread or 64 TLS
// sessions ahead of it do not widen the exchange's round trip (t4 - t1) - (t3 - t2); the
// TLS probes (clock_probe) keep those waits in it.
//
// Datagram (40 bytes both ways, so an answer is never larger than what asked for it;
// integers big-endian):
//   0  char[4] magic  "RLCK"
//   4  u8  version    clock_datagram_version
//   5  u8  kind       1 probe (agent -> controller), 2 answer (controller -> agent)
//   6  u16 reserved   0
//   8  u64 cookie     the session's (welcome.clock_cookie): the controller answers only
//                     cookies of live agent sessions, the agent only its own
//  16  i64 t1_ns      agent's clock, echoed in the answer (matches it to its probe)
//  24  i64 t2_ns      controller's clock (0 in a probe)
//  32  i64 t3_ns      controller's clock (0 in a probe)
// Pure: bytes in, values out.

#include <array>
#include <cstdint>
#include <span>

#include "rocelab/common/byte_order.hpp"
#include "rocelab/common/result.hpp"

namespace rocelab::protocol {

inline constexpr std::uint8_t clock_datagram_version = 1;
inline constexpr std::size_t clock_datagram_bytes = 40;

struct clock_datagram_wire {
  std::array<char, 4> magic;
  std::uint8_t version;
  std::uint8_t kind;
  std::array<std::uint8_t, 2> reserved;
  wire::be64 cookie;
  wire::be64 t1_ns;
  wire::be64 t2_ns;
  wire::be64 t3_ns;
};
static_assert(sizeof(clock_datagram_wire) == clock_datagram_bytes);

enum class clock_datagram_kind : std::uint8_t { probe = 1, answer = 2 };

struct clock_datagram {
  clock_datagram_kind kind = clock_datagram_kind::probe;
  std::uint64_t cookie = 0;
  std::int64_t t1_ns = 0;
  std::int64_t t2_ns = 0;
  std::int64_t t3_ns = 0;
};

[[nodiscard]] std::array<std::uint8_t, clock_datagram_bytes> encode(const clock_datagram& d);
// Errors (malformed_input) name what is wrong: the size, the magic, the version, the kind,
// the reserved bytes, or a probe that carries controller times.
[[nodiscard]] result<clock_datagram> decode_clock_datagram(std::span<const std::uint8_t> bytes);

}  // namespace rocelab::protocol

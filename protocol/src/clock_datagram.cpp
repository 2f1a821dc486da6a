#include "rocelab/protocol/clock_datagram.hpp"

#include <cstring>
#include <string>

namespace rocelab::protocol {

namespace {

constexpr std::array<char, 4> magic{'R', 'L', 'C', 'K'};

status malformed(const std::string& what) {
  return status(error_code::malformed_input, "clock datagram: " + what);
}

}  // namespace

std::array<std::uint8_t, clock_datagram_bytes> encode(const clock_datagram& d) {
  clock_datagram_wire w{};
  w.magic = magic;
  w.version = clock_datagram_version;
  w.kind = static_cast<std::uint8_t>(d.kind);
  w.cookie.set(d.cookie);
  w.t1_ns.set(static_cast<std::uint64_t>(d.t1_ns));
  w.t2_ns.set(static_cast<std::uint64_t>(d.t2_ns));
  w.t3_ns.set(static_cast<std::uint64_t>(d.t3_ns));
  std::array<std::uint8_t, clock_datagram_bytes> out{};
  std::memcpy(out.data(), &w, sizeof w);
  return out;
}

result<clock_datagram> decode_clock_datagram(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != clock_datagram_bytes)
    return malformed(std::to_string(bytes.size()) + " bytes, expected " + std::to_string(clock_datagram_bytes));
  clock_datagram_wire w{};
  std::memcpy(&w, bytes.data(), sizeof w);
  if (w.magic != magic) return malformed("bad magic");
  if (w.version != clock_datagram_version)
    return malformed("version " + std::to_string(w.version) + " (this side speaks " +
                     std::to_string(clock_datagram_version) + ")");
  if (w.kind != static_cast<std::uint8_t>(clock_datagram_kind::probe) &&
      w.kind != static_cast<std::uint8_t>(clock_datagram_kind::answer))
    return malformed("unknown kind " + std::to_string(w.kind));
  if (w.reserved[0] != 0 || w.reserved[1] != 0) return malformed("reserved bytes are not 0");
  clock_datagram d;
  d.kind = static_cast<clock_datagram_kind>(w.kind);
  d.cookie = w.cookie.value();
  d.t1_ns = static_cast<std::int64_t>(w.t1_ns.value());
  d.t2_ns = static_cast<std::int64_t>(w.t2_ns.value());
  d.t3_ns = static_cast<std::int64_t>(w.t3_ns.value());
  if (d.kind == clock_datagram_kind::probe && (d.t2_ns != 0 || d.t3_ns != 0))
    return malformed("a probe carries controller times");
  return d;
}

}  // namespace rocelab::protocol

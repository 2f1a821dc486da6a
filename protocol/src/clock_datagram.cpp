#include "rocelab/protocol/clock_datagram.hpp"

#include <cstring>
#include <string>

namespace rocelab::protocol {

namespace {

constexpr std::array<char, 4> magic{'R', 'L', 'C', 'K'};

void store_be64(std::array<std::uint8_t, 8>& out, std::uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v);
    v >>= 8;
  }
}

std::uint64_t load_be64(const std::array<std::uint8_t, 8>& in) {
  std::uint64_t v = 0;
  for (const std::uint8_t b : in) v = (v << 8) | b;
  return v;
}

status malformed(const std::string& what) {
  return status(error_code::malformed_input, "clock datagram: " + what);
}

}  // namespace

std::array<std::uint8_t, clock_datagram_bytes> encode(const clock_datagram& d) {
  clock_datagram_wire w{};
  w.magic = magic;
  w.version = clock_datagram_version;
  w.kind = static_cast<std::uint8_t>(d.kind);
  store_be64(w.cookie_be, d.cookie);
  store_be64(w.t1_be, static_cast<std::uint64_t>(d.t1_ns));
  store_be64(w.t2_be, static_cast<std::uint64_t>(d.t2_ns));
  store_be64(w.t3_be, static_cast<std::uint64_t>(d.t3_ns));
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
  d.cookie = load_be64(w.cookie_be);
  d.t1_ns = static_cast<std::int64_t>(load_be64(w.t1_be));
  d.t2_ns = static_cast<std::int64_t>(load_be64(w.t2_be));
  d.t3_ns = static_cast<std::int64_t>(load_be64(w.t3_be));
  if (d.kind == clock_datagram_kind::probe && (d.t2_ns != 0 || d.t3_ns != 0))
    return malformed("a probe carries controller times");
  return d;
}

}  // namespace rocelab::protocol

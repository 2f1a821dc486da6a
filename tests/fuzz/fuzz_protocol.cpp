// Any bytes as a protocol frame: decode_frame must return a message or an
// error, never crash, read out of bounds (ASan), hit undefined behaviour (UBSan) or
// throw; and whatever it accepts must encode again and decode to the same frame bytes.
// The same bytes as a UDP clock datagram: accepted only at its fixed size, and then
// encoded back to exactly those bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "rocelab/protocol/clock_datagram.hpp"
#include "rocelab/protocol/messages.hpp"

using namespace rocelab::protocol;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  if (auto d = decode_clock_datagram(bytes)) {
    const auto again = encode(*d);
    if (size != again.size() || !std::equal(again.begin(), again.end(), data)) __builtin_trap();
  }
  (void)parse_header(bytes);
  auto m = decode_frame(bytes);
  if (!m) return 0;
  auto again = encode(*m);
  if (!again) __builtin_trap();  // a decoded message is within the limits by construction
  auto back = decode_frame(*again);
  if (!back || type_of(*back) != type_of(*m)) __builtin_trap();
  auto third = encode(*back);
  if (!third || *third != *again) __builtin_trap();  // encoding is a fixed point after one trip
  return 0;
}

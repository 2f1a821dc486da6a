// Any bytes as a frame on every link type we dissect, then through the analyzer: no
// crash, no read past the end (ASan), no undefined behaviour (UBSan), no hang.
#include <cstddef>
#include <cstdint>
#include <span>

#include "rocelab/captures/congestion_analyzer.hpp"
#include "rocelab/captures/dissect.hpp"

using namespace rocelab::captures;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  dissected_frame frame;
  for (link_type link : {link_type::ethernet, link_type::raw, link_type::ipv4, link_type::ipv6,
                         link_type::null_bsd}) {
    dissect(link, bytes, frame);
    if (frame.inner_offset > size) __builtin_trap();
  }
  congestion_analyzer analyzer;
  const packet_view packet{.timestamp_ns = 1, .interface_id = 0,
                           .original_length = static_cast<std::uint32_t>(size), .bytes = bytes};
  analyzer.add(packet);
  analyzer.add(packet);
  (void)analyzer.finish();
  return 0;
}

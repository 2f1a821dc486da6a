// Any bytes as a capture file (pcap or pcapng, either byte order): the reader must end
// with packets or an error, never crash, over-read or loop; then the analyzer runs on
// whatever it yields.
#include <cstddef>
#include <cstdint>
#include <span>

#include "rocelab/captures/analyze_capture.hpp"

using namespace rocelab::captures;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto reader = capture_file_reader::from_memory(std::span<const std::uint8_t>(data, size));
  if (!reader.ok()) return 0;
  const auto analysis = analyze_capture(*reader, {.link_gbps = 100});
  // Every packet occupies at least a record header, so a reader that yields more packets
  // than the input has bytes is looping.
  if (analysis.analysis.frames > size) __builtin_trap();
  return 0;
}

#pragma once
// Helpers shared by the capture file tests: owned copies of packets, so a test can keep
// what a reader yielded and compare it with what was written.

#include <cstdint>
#include <ostream>
#include <vector>

#include "rocelab/captures/capture_file.hpp"

namespace rocelab::captures::test {

struct packet_copy {
  std::int64_t timestamp_ns = 0;
  std::uint32_t interface_id = 0;
  std::uint32_t original_length = 0;
  std::vector<std::uint8_t> bytes;
  bool operator==(const packet_copy&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const packet_copy& p) {
  return os << "{ts " << p.timestamp_ns << ", if " << p.interface_id << ", len "
            << p.original_length << ", caplen " << p.bytes.size() << "}";
}

inline packet_view view_of(const packet_copy& p) {
  return {p.timestamp_ns, p.interface_id, p.original_length, p.bytes};
}

// Every packet the reader yields, to its end (check reader.error() afterwards).
inline std::vector<packet_copy> read_all(capture_file_reader& reader) {
  std::vector<packet_copy> out;
  packet_view view;
  while (reader.next(view)) {
    out.push_back({view.timestamp_ns, view.interface_id, view.original_length,
                   {view.bytes.begin(), view.bytes.end()}});
  }
  return out;
}

}  // namespace rocelab::captures::test

#include "rocelab/captures/analyze_capture.hpp"

namespace rocelab::captures {

capture_file_analysis analyze_capture(capture_file_reader& reader, const analyzer_options& options) {
  congestion_analyzer analyzer(options);
  analyzer.set_interfaces(reader.interfaces());
  std::size_t known_interfaces = reader.interfaces().size();
  packet_view packet;
  while (reader.next(packet)) {
    // pcapng may declare interfaces between packets; re-read only when a packet names one
    // the analyzer has not seen, which keeps this off the per-packet path.
    if (packet.interface_id >= known_interfaces) [[unlikely]] {
      analyzer.set_interfaces(reader.interfaces());
      known_interfaces = reader.interfaces().size();
    }
    analyzer.add(packet);
  }
  capture_file_analysis out;
  out.analysis = analyzer.finish();
  out.format = reader.format();
  out.interfaces = reader.interfaces();
  out.read_status = reader.error();
  return out;
}

result<capture_file_analysis> analyze_capture_file(const std::string& path,
                                                   const analyzer_options& options) {
  auto reader = capture_file_reader::open_sequential(path);
  if (!reader) return reader.error().with_context("analyzing " + path);
  capture_file_analysis out = analyze_capture(*reader, options);
  if (!out.read_status.ok()) out.read_status = out.read_status.with_context(path);
  return out;
}

}  // namespace rocelab::captures

#pragma once
// Analyzes a whole capture file: the loop behind `rocelab analyze`.

#include <string>
#include <vector>

#include "rocelab/captures/capture_file.hpp"
#include "rocelab/captures/congestion_analyzer.hpp"
#include "rocelab/common/result.hpp"

namespace rocelab::captures {

struct capture_file_analysis {
  capture_analysis analysis;
  capture_format format = capture_format::pcap;
  std::vector<interface_info> interfaces;
  // ok, or why the file ended early; the analysis then covers the packets read before.
  status read_status;
};

// Fails only when the file cannot be opened or is not a capture at all.
result<capture_file_analysis> analyze_capture_file(const std::string& path,
                                                   const analyzer_options& options);

// Analyzes what `reader` yields, to its end.
capture_file_analysis analyze_capture(capture_file_reader& reader, const analyzer_options& options);

}  // namespace rocelab::captures

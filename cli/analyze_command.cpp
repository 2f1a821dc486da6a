// rocelab analyze FILE [--json] [--link-gbps G]: congestion events from a capture file.
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

#include "command.hpp"
#include "number_checks.hpp"
#include "rocelab/captures/analyze_capture.hpp"
#include "rocelab/captures/capture_analysis_json.hpp"

namespace rocelab::cli {
namespace {

struct analyze_args {
  std::string file;
  bool json = false;
  double link_gbps = 100;
};

// An interval's length in microseconds with three decimals, from integer nanoseconds:
// epoch timestamps (1.7e18 ns) have no nanosecond left once converted to double, so the
// subtraction comes first and the printing is integer arithmetic.
std::string duration_us_text(std::int64_t start_ns, std::int64_t end_ns) {
  const std::int64_t ns = end_ns - start_ns;
  const std::uint64_t magnitude = ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%llu.%03llu us", ns < 0 ? "-" : "",
                static_cast<unsigned long long>(magnitude / 1000), static_cast<unsigned long long>(magnitude % 1000));
  return buf;
}

void print_text(const captures::capture_file_analysis& result) {
  const auto& a = result.analysis;
  const auto& r = a.roce;
  std::printf("frames      %llu (malformed %llu, truncated %llu)\n",
              static_cast<unsigned long long>(a.frames), static_cast<unsigned long long>(a.malformed),
              static_cast<unsigned long long>(a.truncated));
  std::printf("roce        %llu packets, %llu bytes: data %llu, ack %llu, nak %llu, cnp %llu\n",
              static_cast<unsigned long long>(r.packets), static_cast<unsigned long long>(r.bytes),
              static_cast<unsigned long long>(r.data), static_cast<unsigned long long>(r.ack),
              static_cast<unsigned long long>(r.nak), static_cast<unsigned long long>(r.cnp));
  std::printf("ecn         not-ECT %llu, ECT(0) %llu, ECT(1) %llu, CE %llu\n",
              static_cast<unsigned long long>(r.ecn.not_ect), static_cast<unsigned long long>(r.ecn.ect0),
              static_cast<unsigned long long>(r.ecn.ect1), static_cast<unsigned long long>(r.ecn.ce));
  std::printf("pfc         %llu frames\n", static_cast<unsigned long long>(a.pfc.frames));
  for (int p = 0; p < 8; ++p) {
    const auto& c = a.pfc.by_priority[p];
    if (c.frames == 0) continue;
    std::printf("  prio %d    %llu frames: %llu xoff, %llu xon, %llu quanta\n", p,
                static_cast<unsigned long long>(c.frames), static_cast<unsigned long long>(c.xoff),
                static_cast<unsigned long long>(c.xon), static_cast<unsigned long long>(c.quanta));
  }
  std::printf("pause       %llu frames (802.3x), %llu quanta\n",
              static_cast<unsigned long long>(a.pause.frames), static_cast<unsigned long long>(a.pause.quanta));
  std::printf("erspan      %llu packets\n", static_cast<unsigned long long>(a.erspan_packets));
  std::printf("flows       %zu\n", a.flows.size());
  for (const auto& f : a.flows) {
    std::printf("  %s -> %s qp 0x%06x: %llu packets, %llu bytes, %s, CE %llu, CNP %llu, retransmits %llu\n",
                captures::format_ip(f.src).c_str(), captures::format_ip(f.dst).c_str(), f.dest_qp,
                static_cast<unsigned long long>(f.packets), static_cast<unsigned long long>(f.bytes),
                duration_us_text(f.first_ns, f.last_ns).c_str(), static_cast<unsigned long long>(f.ce),
                static_cast<unsigned long long>(f.cnp), static_cast<unsigned long long>(f.retransmits));
  }
  std::printf("pauses      %zu intervals at %.0f Gb/s\n", a.pauses.size(), a.link_gbps);
  for (const auto& p : a.pauses) {
    std::printf("  %s prio %u: %lld .. %lld (%s, %u frames)\n", p.port.c_str(), p.priority,
                static_cast<long long>(p.start_ns), static_cast<long long>(p.end_ns),
                duration_us_text(p.start_ns, p.end_ns).c_str(), p.frames);
  }
}

std::function<int()> setup(CLI::App& app) {
  auto args = std::make_shared<analyze_args>();
  app.description("Count RoCEv2 traffic, ECN marks, CNPs, PFC/PAUSE frames and pause intervals in a capture");
  app.add_option("file", args->file, "pcap or pcapng file")->required()->check(CLI::ExistingFile);
  app.add_flag("--json", args->json, "Print one JSON object");
  app.add_option("--link-gbps", args->link_gbps, "Link speed for pause quanta (one quantum = 512 bit times)")
      ->check(finite_in(0.001, 100000, "Gb/s"))
      ->capture_default_str();
  return [args] {
    auto analyzed = captures::analyze_capture_file(args->file, {.link_gbps = args->link_gbps});
    if (!analyzed) {
      std::cerr << "rocelab analyze: " << analyzed.error().message() << "\n";
      return 1;
    }
    if (args->json) {
      nlohmann::ordered_json j = captures::to_json(analyzed->analysis);
      j["file"] = args->file;
      j["format"] = analyzed->format == captures::capture_format::pcapng ? "pcapng" : "pcap";
      if (!analyzed->read_status.ok()) j["error"] = analyzed->read_status.message();
      std::cout << j.dump(2) << "\n";
    } else {
      print_text(*analyzed);
    }
    if (!analyzed->read_status.ok()) {
      std::cerr << "rocelab analyze: " << analyzed->read_status.message()
                << " (counts cover the packets before it)\n";
      return 1;
    }
    return 0;
  };
}

}  // namespace

ROCELAB_COMMAND(analyze, setup);

}  // namespace rocelab::cli

// rocelab analyze FILE [--json] [--link-gbps G]: congestion events from a capture file.
#include <cstdio>
#include <iostream>

#include "command.hpp"
#include "rocelab/captures/analyze_capture.hpp"
#include "rocelab/captures/capture_analysis_json.hpp"

namespace rocelab::cli {
namespace {

struct analyze_args {
  std::string file;
  bool json = false;
  double link_gbps = 100;
};

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
    std::printf("  %s -> %s qp 0x%06x: %llu packets, %llu bytes, %.3f us, CE %llu, CNP %llu, retransmits %llu\n",
                captures::format_ip(f.src).c_str(), captures::format_ip(f.dst).c_str(), f.dest_qp,
                static_cast<unsigned long long>(f.packets), static_cast<unsigned long long>(f.bytes),
                (static_cast<double>(f.last_ns) - static_cast<double>(f.first_ns)) / 1e3, static_cast<unsigned long long>(f.ce),
                static_cast<unsigned long long>(f.cnp), static_cast<unsigned long long>(f.retransmits));
  }
  std::printf("pauses      %zu intervals at %.0f Gb/s\n", a.pauses.size(), a.link_gbps);
  for (const auto& p : a.pauses) {
    std::printf("  %s prio %u: %lld .. %lld (%.3f us, %u frames)\n", p.port.c_str(), p.priority,
                static_cast<long long>(p.start_ns), static_cast<long long>(p.end_ns),
                (static_cast<double>(p.end_ns) - static_cast<double>(p.start_ns)) / 1e3, p.frames);
  }
}

std::function<int()> setup(CLI::App& app) {
  auto args = std::make_shared<analyze_args>();
  app.description("Count RoCEv2 traffic, ECN marks, CNPs, PFC/PAUSE frames and pause intervals in a capture");
  app.add_option("file", args->file, "pcap or pcapng file")->required()->check(CLI::ExistingFile);
  app.add_flag("--json", args->json, "Print one JSON object");
  app.add_option("--link-gbps", args->link_gbps, "Link speed for pause quanta (one quantum = 512 bit times)")
      ->check(CLI::PositiveNumber)
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

// rocelab analyze FILE [--json] [--flows] [--pauses] [--tables DIR] [--link-gbps G]:
// congestion events from a capture file, as a summary a pause storm does not drown.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <iostream>
#include <string>

#include "command.hpp"
#include "number_checks.hpp"
#include "rocelab/common/output_file.hpp"
#include "rocelab/captures/analyze_capture.hpp"
#include "rocelab/captures/capture_analysis_json.hpp"
#include "rocelab/captures/capture_summary.hpp"

namespace rocelab::cli {
namespace {

struct analyze_args {
  std::string file;
  bool json = false;
  bool flows = false;   // every flow, not the ten worst
  bool pauses = false;  // every pause interval, not the summary
  std::string tables;   // a directory for flows.csv, pauses.csv, pause_summary.csv
  bool force = false;   // --tables: replace tables that are there
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

void print_flow(std::FILE* out, const captures::roce_flow& f) {
  std::fprintf(out, "  %s -> %s qp 0x%06x: %llu packets, %llu bytes, %s, CE %llu, CNP %llu, retransmits %llu\n",
               captures::format_ip(f.src).c_str(), captures::format_ip(f.dst).c_str(), f.dest_qp,
               static_cast<unsigned long long>(f.packets), static_cast<unsigned long long>(f.bytes),
               duration_us_text(f.first_ns, f.last_ns).c_str(), static_cast<unsigned long long>(f.ce),
               static_cast<unsigned long long>(f.cnp), static_cast<unsigned long long>(f.retransmits));
}

void print_pause(std::FILE* out, const captures::capture_analysis& a, const captures::pause_interval& p) {
  std::fprintf(out, "  %s prio %u: %lld .. %lld (%s, %u frames)\n", captures::port_name(a, p).c_str(), p.priority,
               static_cast<long long>(p.start_ns), static_cast<long long>(p.end_ns),
               duration_us_text(p.start_ns, p.end_ns).c_str(), p.frames);
}

// The summary: counts, pause time per port and priority, and ten each of the longest
// pauses and the flows with most retransmissions and CE marks. The full lists on request.
void print_text(const captures::capture_file_analysis& result, const analyze_args& args) {
  std::FILE* out = stdout;
  const auto& a = result.analysis;
  const auto& r = a.roce;
  std::fprintf(out, "frames      %llu (malformed %llu, truncated %llu)\n",
               static_cast<unsigned long long>(a.frames), static_cast<unsigned long long>(a.malformed),
               static_cast<unsigned long long>(a.truncated));
  std::fprintf(out, "roce        %llu packets, %llu bytes: data %llu, ack %llu, nak %llu, cnp %llu\n",
               static_cast<unsigned long long>(r.packets), static_cast<unsigned long long>(r.bytes),
               static_cast<unsigned long long>(r.data), static_cast<unsigned long long>(r.ack),
               static_cast<unsigned long long>(r.nak), static_cast<unsigned long long>(r.cnp));
  std::fprintf(out, "ecn         not-ECT %llu, ECT(0) %llu, ECT(1) %llu, CE %llu\n",
               static_cast<unsigned long long>(r.ecn.not_ect), static_cast<unsigned long long>(r.ecn.ect0),
               static_cast<unsigned long long>(r.ecn.ect1), static_cast<unsigned long long>(r.ecn.ce));
  std::fprintf(out, "pfc         %llu frames\n", static_cast<unsigned long long>(a.pfc.frames));
  for (int p = 0; p < 8; ++p) {
    const auto& c = a.pfc.by_priority[p];
    if (c.frames == 0) continue;
    std::fprintf(out, "  prio %d    %llu frames: %llu xoff, %llu xon, %llu quanta\n", p,
                 static_cast<unsigned long long>(c.frames), static_cast<unsigned long long>(c.xoff),
                 static_cast<unsigned long long>(c.xon), static_cast<unsigned long long>(c.quanta));
  }
  std::fprintf(out, "pause       %llu frames (802.3x), %llu quanta\n",
               static_cast<unsigned long long>(a.pause.frames), static_cast<unsigned long long>(a.pause.quanta));
  std::fprintf(out, "erspan      %llu packets\n", static_cast<unsigned long long>(a.erspan_packets));

  std::fprintf(out, "flows       %zu%s\n", a.flows.size(), args.flows ? "" : " (every flow: --flows)");
  if (args.flows) {
    for (const auto& f : a.flows) print_flow(out, f);
  } else {
    if (const auto worst = captures::flows_by_retransmits(a, 10); !worst.empty()) {
      std::fprintf(out, " most retransmissions\n");
      for (std::size_t i : worst) print_flow(out, a.flows[i]);
    }
    if (const auto marked = captures::flows_by_ce(a, 10); !marked.empty()) {
      std::fprintf(out, " most CE marks\n");
      for (std::size_t i : marked) print_flow(out, a.flows[i]);
    }
  }

  std::fprintf(out, "pauses      %zu intervals on %zu ports at %.0f Gb/s%s\n", static_cast<std::size_t>(a.pause_interval_count), a.ports.size(),
               a.link_gbps, args.pauses ? "" : " (every interval: --pauses)");
  if (args.pauses) {
    for (const auto& p : a.pauses) print_pause(out, a, p);
    return;
  }
  const auto& summary = a.pause_summary;
  if (!summary.empty()) {
    std::fprintf(out, "  %-17s %4s %10s %7s %16s %16s\n", "port", "prio", "intervals", "frames", "paused",
                 "longest");
    for (const auto& s : summary)
      std::fprintf(out, "  %-17s %4u %10llu %7llu %16s %16s\n", a.ports[s.port].c_str(), s.priority,
                   static_cast<unsigned long long>(s.intervals), static_cast<unsigned long long>(s.frames),
                   duration_us_text(0, s.paused_ns).c_str(), duration_us_text(0, s.longest_ns).c_str());
    std::fprintf(out, " longest\n");
    for (const auto& p : a.longest_pause_intervals) print_pause(out, a, p);
  }
}

// --tables DIR: flows.csv, pauses.csv and pause_summary.csv, one header line each.
// Through common/output_file.hpp: never through a symlink; tables already there are
// replaced only with --force.
status write_tables(const std::string& dir, const captures::capture_analysis& a, existing_output existing) {
  std::ostringstream flows, pauses, summary;
  flows << "src,dst,dest_qp,packets,bytes,first_ns,last_ns,ce,cnp,retransmits,psn_rewinds\n";
  for (const auto& f : a.flows)
    flows << captures::format_ip(f.src) << ',' << captures::format_ip(f.dst) << ',' << f.dest_qp << ','
          << f.packets << ',' << f.bytes << ',' << f.first_ns << ',' << f.last_ns << ',' << f.ce << ',' << f.cnp
          << ',' << f.retransmits << ',' << f.psn_rewinds << '\n';
  pauses << "port,priority,start_ns,end_ns,frames\n";
  for (const auto& p : a.pauses)
    pauses << a.ports[p.port] << ',' << unsigned{p.priority} << ',' << p.start_ns << ',' << p.end_ns << ','
           << p.frames << '\n';
  summary << "port,priority,intervals,frames,paused_ns,longest_ns\n";
  for (const auto& s : a.pause_summary)
    summary << a.ports[s.port] << ',' << unsigned{s.priority} << ',' << s.intervals << ',' << s.frames << ','
            << s.paused_ns << ',' << s.longest_ns << '\n';
  return write_output_files(dir, {{"flows.csv", flows.str()}, {"pauses.csv", pauses.str()},
                                  {"pause_summary.csv", summary.str()}},
                            existing);
}

std::function<int()> setup(CLI::App& app) {
  auto args = std::make_shared<analyze_args>();
  app.description("Count RoCEv2 traffic, ECN marks, CNPs, PFC/PAUSE frames and pause intervals in a capture");
  app.add_option("file", args->file, "pcap or pcapng file, or - for standard input (e.g. zcat F.pcapng.gz | ...)")
      ->required()
      ->check(CLI::ExistingFile | CLI::IsMember({"-"}));
  app.add_flag("--json", args->json, "Print one JSON object (the summary; with --flows/--pauses the full lists)");
  app.add_flag("--flows", args->flows, "Every flow, not the ten with most retransmissions and CE marks");
  app.add_flag("--pauses", args->pauses, "Every pause interval, not the per-port summary and the ten longest");
  app.add_option("--tables", args->tables, "Write flows.csv, pauses.csv and pause_summary.csv into this directory");
  app.add_flag("--force", args->force,
               "--tables: replace tables that are there already (without it such a directory is refused, nothing "
               "written); never writes through a symlink");
  app.add_option("--link-gbps", args->link_gbps, "Link speed for pause quanta (one quantum = 512 bit times)")
      ->check(finite_in(0.001, 100000, "Gb/s"))
      ->capture_default_str();
  return [args] {
    // Every interval only when printed or written: the summary is kept as they close.
    const bool every_interval = args->pauses || !args->tables.empty();
    auto analyzed = captures::analyze_capture_file(
        args->file, {.link_gbps = args->link_gbps, .keep_pause_intervals = every_interval});
    if (!analyzed) {
      std::cerr << "rocelab analyze: " << analyzed.error().message() << "\n";
      return 1;
    }
    if (args->json) {
      nlohmann::ordered_json j =
          captures::to_json(analyzed->analysis, {.flows = args->flows, .pauses = args->pauses});
      j["file"] = args->file;
      j["format"] = analyzed->format == captures::capture_format::pcapng ? "pcapng" : "pcap";
      if (!analyzed->read_status.ok()) j["error"] = analyzed->read_status.message();
      std::cout << j.dump(2) << "\n";
    } else {
      print_text(*analyzed, *args);
    }
    if (!args->tables.empty()) {
      if (auto st = write_tables(args->tables, analyzed->analysis,
                                 args->force ? existing_output::replace : existing_output::refuse);
          !st.ok()) {
        std::cerr << "rocelab analyze: " << st.message() << "\n";
        return 1;
      }
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

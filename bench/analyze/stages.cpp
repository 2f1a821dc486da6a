// Where analyze's time per frame goes: the same capture read three ways in one process,
// each pass timed in CPU time of the thread (best of --repeats):
//   read     the reader alone (record headers, every packet's length summed)
//   dissect  the reader and dissect() of every packet
//   analyze  analyze_capture() with the options of `rocelab analyze` (summary only)
// Each pass reads the file as `rocelab analyze` does (capture_file_reader::open_sequential),
// so each pays the same copy of the file out of the page cache.
#include <CLI/CLI.hpp>

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

#include "rocelab/captures/analyze_capture.hpp"
#include "rocelab/captures/dissect.hpp"

using namespace rocelab::captures;

namespace {

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Time the stages of rocelab analyze on one capture file"};
  std::string path;
  int repeats = 3;
  app.add_option("file", path, "pcap or pcapng file")->required();
  app.add_option("--repeats", repeats, "Passes of each stage; the best is reported")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::uint64_t frames = 0, sink = 0;
  const auto pass = [&](const char* stage) -> double {
    auto reader = capture_file_reader::open_sequential(path);
    if (!reader) {
      std::cerr << "bench_analyze_stages: " << reader.error().message() << "\n";
      std::exit(1);
    }
    const double t0 = thread_cpu_s();
    packet_view p;
    frames = 0;
    if (stage[0] == 'r') {
      while (reader->next(p)) {
        ++frames;
        sink += p.bytes.size();
      }
    } else if (stage[0] == 'd') {
      dissected_frame f;
      while (reader->next(p)) {
        ++frames;
        dissect(link_type::ethernet, p.bytes, f);
        sink += f.dest_qp + f.is_mac_control;
      }
    } else {
      const auto a = analyze_capture(*reader, {.keep_pause_intervals = false});
      frames = a.analysis.frames;
      sink += a.analysis.roce.packets;
    }
    return thread_cpu_s() - t0;
  };
  std::printf("%-8s %10s %8s %8s\n", "stage", "cpu s", "ns/frame", "Mpps");
  for (const char* stage : {"read", "dissect", "analyze"}) {
    double best = 1e9;
    for (int i = 0; i < repeats; ++i) best = std::min(best, pass(stage));
    std::printf("%-8s %10.3f %8.1f %8.2f\n", stage, best, best * 1e9 / static_cast<double>(frames),
                static_cast<double>(frames) / best / 1e6);
  }
  return sink == 0 ? 1 : 0;
}

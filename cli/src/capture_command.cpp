// `rocelab capture`: live capture to pcapng through libpcap (--iface) or DPDK (--dpdk).
//
//   rocelab capture --iface X | --dpdk "EAL ARGS" [--ports 0,1] [--snaplen N]
//                   [--duration S] [--count N] -w FILE
//
// Stops at the duration, the packet count, or SIGINT/SIGTERM, then writes one Interface
// Statistics Block per interface and prints a summary (packets, bytes, timestamp source,
// drop counters) to stderr. Once capturing it prints "rocelab capture: capturing on ..."
// to stderr, so scripts and tests know when to start sending.
// Exit codes: 0 ok, 1 runtime error, 2 usage.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"
#include "number_checks.hpp"
#include "progress_line.hpp"
#include "rocelab/captures/capture_file.hpp"
#include "rocelab/captures/capture_source.hpp"
#include "rocelab/captures/dpdk_source.hpp"
#include "rocelab/captures/pcap_source.hpp"

namespace rocelab::cli {
namespace {

namespace cap = rocelab::captures;

// Set by the signal handler, read by the capture loop between polls.
volatile std::sig_atomic_t stop_requested = 0;

extern "C" void on_stop_signal(int) { stop_requested = 1; }

// No SA_RESTART: a signal interrupts libpcap's poll(2) so the loop sees the flag at once.
void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

std::int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct capture_options {
  std::string iface;
  std::string dpdk_eal_args;
  std::vector<std::uint16_t> dpdk_ports;
  std::uint32_t snaplen = 65535;
  double duration_s = 0;  // 0: no limit
  bool quiet = false;     // no progress line
  std::uint64_t count = 0;  // 0: no limit
  std::string output;
};

constexpr int exit_ok = 0;
constexpr int exit_runtime_error = 1;
constexpr int exit_usage = 2;
constexpr auto poll_interval = std::chrono::milliseconds(100);

int fail(const status& st) {
  std::cerr << "rocelab capture: " << st.message() << '\n';
  return exit_runtime_error;
}

int run_capture(const capture_options& o) {
  if (o.iface.empty() == o.dpdk_eal_args.empty()) {
    std::cerr << "rocelab capture: give exactly one of --iface or --dpdk\n";
    return exit_usage;
  }
  if (o.output.empty()) {
    std::cerr << "rocelab capture: -w FILE is required\n";
    return exit_usage;
  }
  if (!o.dpdk_ports.empty() && o.dpdk_eal_args.empty()) {
    std::cerr << "rocelab capture: --ports needs --dpdk\n";
    return exit_usage;
  }
  if (o.snaplen == 0 || o.duration_s < 0) {
    std::cerr << "rocelab capture: --snaplen must be positive and --duration not negative\n";
    return exit_usage;
  }

  std::unique_ptr<cap::capture_source> source;
  cap::dpdk_source* dpdk = nullptr;  // for per-port statistics
  if (!o.iface.empty()) {
    cap::pcap_source_options options;
    options.interface = o.iface;
    options.snaplen = o.snaplen;
    auto opened = cap::pcap_source::open(options);
    if (!opened) return fail(opened.error());
    source = std::move(opened).value();
  } else {
    cap::dpdk_source_options options;
    options.eal_args = o.dpdk_eal_args;
    options.ports = o.dpdk_ports;
    options.snaplen = o.snaplen;
    auto opened = cap::dpdk_source::open(options);
    if (!opened) return fail(opened.error());
    dpdk = opened->get();
    source = std::move(opened).value();
  }

  const auto interfaces = source->interfaces();
  auto created = cap::pcapng_writer::create(o.output, interfaces);
  if (!created) return fail(created.error().with_context("creating " + o.output));
  cap::pcapng_writer writer = std::move(created).value();

  install_stop_handlers();
  std::string names;
  for (const auto& i : interfaces) names += (names.empty() ? "" : ", ") + i.name;
  std::cerr << "rocelab capture: capturing on " << names << " (timestamps "
            << cap::to_string(source->timestamps()) << ") to " << o.output << std::endl;

  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto deadline =
      o.duration_s > 0
          ? start + std::chrono::duration_cast<clock::duration>(
                        std::chrono::duration<double>(o.duration_s))
          : clock::time_point::max();
  std::uint64_t written = 0;
  std::uint64_t written_bytes = 0;
  status write_error;
  const cap::packet_sink sink = [&](const cap::packet_view& packet) {
    // A poll can deliver past the count or after a failed write; those packets are
    // dropped here rather than written.
    if (!write_error.ok() || (o.count > 0 && written >= o.count)) return;
    write_error = writer.write(packet);
    if (!write_error.ok()) return;
    ++written;
    written_bytes += packet.original_length;
  };

  status run_error;
  // On a terminal, once a second: frames, their rate and the drops so far.
  progress_line progress(o.quiet, std::chrono::seconds(1));
  std::uint64_t shown_frames = 0;
  auto shown_at = start;
  while (stop_requested == 0 && write_error.ok()) {
    if (o.count > 0 && written >= o.count) break;
    const auto now = clock::now();
    if (now >= deadline) break;
    if (progress.due()) {
      const cap::capture_stats so_far = source->stats();
      const double seconds = std::chrono::duration<double>(now - shown_at).count();
      char text[256];
      std::snprintf(text, sizeof text, "%llu frames, %.0f frames/s, drops %llu, %.0f s",
                    static_cast<unsigned long long>(written),
                    seconds > 0 ? static_cast<double>(written - shown_frames) / seconds : 0.0,
                    static_cast<unsigned long long>(so_far.kernel_dropped + so_far.if_dropped + so_far.imissed +
                                                    so_far.rx_nombuf),
                    std::chrono::duration<double>(now - start).count());
      progress.update(text);
      shown_frames = written;
      shown_at = now;
    }
    const auto wait = std::min<clock::duration>(poll_interval, deadline - now);
    auto polled = source->poll(std::chrono::duration_cast<std::chrono::milliseconds>(wait), sink);
    if (!polled) {
      run_error = polled.error();
      break;
    }
  }

  progress.finish();
  // Statistics and the file's end are written even after an error, so what was captured
  // stays readable.
  const cap::capture_stats total = source->stats();
  const std::int64_t now_ns = realtime_ns();
  status stats_error;
  if (dpdk != nullptr) {
    const auto per_port = dpdk->port_stats();
    for (std::uint32_t i = 0; i < per_port.size() && stats_error.ok(); ++i) {
      const auto& s = per_port[i].stats;
      stats_error = writer.write_interface_statistics(i, now_ns, s.received,
                                                      s.imissed + s.rx_nombuf + s.kernel_dropped);
    }
  } else {
    stats_error = writer.write_interface_statistics(0, now_ns, total.received,
                                                    total.kernel_dropped + total.if_dropped);
  }
  const status close_error = writer.close();

  std::cerr << "rocelab capture: " << written << " packets, " << written_bytes
            << " bytes written to " << o.output << "; timestamps " << cap::to_string(source->timestamps()) << '\n'
            << "rocelab capture: drops: imissed=" << total.imissed
            << " rx_nombuf=" << total.rx_nombuf << " ierrors=" << total.ierrors
            << " kernel_dropped=" << total.kernel_dropped << " if_dropped=" << total.if_dropped
            << '\n';
  if (!total.notes.empty()) std::cerr << "rocelab capture: notes: " << total.notes << '\n';

  if (!run_error.ok()) return fail(run_error);
  if (!write_error.ok()) return fail(write_error.with_context("writing " + o.output));
  if (!stats_error.ok()) return fail(stats_error.with_context("writing " + o.output));
  if (!close_error.ok()) return fail(close_error.with_context("closing " + o.output));
  return exit_ok;
}

std::function<int()> setup_capture(CLI::App& app) {
  app.description("Capture live traffic to pcapng through libpcap or DPDK");
  auto o = std::make_shared<capture_options>();
  // --iface/--dpdk exclusivity and -w are checked in run_capture rather than by CLI11, so
  // these usage errors exit with 2 like the others.
  app.add_option("--iface,-i", o->iface, "Interface to capture on with libpcap");
  app.add_option("--dpdk", o->dpdk_eal_args,
                 "Capture with DPDK; the DPDK EAL arguments, split on whitespace (e.g. "
                 "\"--no-huge --no-pci -m 256 --no-shconf --file-prefix=rl1 "
                 "--vdev=net_af_packet0,iface=eth0\")");
  app.add_option("--ports", o->dpdk_ports, "DPDK port ids to capture on (default: all)")
      ->delimiter(',');
  app.add_option("--snaplen", o->snaplen, "Bytes kept per packet")->capture_default_str();
  app.add_flag("--quiet", o->quiet, "No progress line on a terminal");
  app.add_option("--duration", o->duration_s, "Stop after this many seconds (0: no limit)")
      ->check(finite_in(0, 1e9, "s"));
  app.add_option("--count,-c", o->count, "Stop after this many packets (0: no limit)");
  app.add_option("-w,--write", o->output, "pcapng file to write (required)");
  return [o] { return run_capture(*o); };
}

}  // namespace
}  // namespace rocelab::cli

ROCELAB_COMMAND(capture, rocelab::cli::setup_capture);

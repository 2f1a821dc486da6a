#include "rocelab/experiments/lab/virtual_backend.hpp"

#include "lab/lab_for_spec.hpp"
#include "rocelab/fabric/drivers/soft_switch_driver.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <iostream>

#include <nlohmann/json.hpp>

#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/captures/analyze_capture.hpp"
#include "rocelab/common/own_executable.hpp"
#include "rocelab/common/realtime_section.hpp"
#include "rocelab/common/unique_fd.hpp"
#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/run/capture_pauses.hpp"
#include "rocelab/experiments/lab/cpu_placement.hpp"
#include "rocelab/experiments/run/capture_starts.hpp"
#include "rocelab/experiments/run/flow_timeline.hpp"
#include "rocelab/experiments/run/start_skew.hpp"
#include "rocelab/experiments/run/virtual_accounting.hpp"
#include "rocelab/fabric/soft_switch/control_client.hpp"
#include "rocelab/fabric/soft_switch/realtime_clock.hpp"
#include "rocelab/fabric/soft_switch/switch_settings.hpp"
#include "rocelab/traffic/soft_nic/nic_fleet.hpp"
#include "rocelab/traffic/soft_nic/nic_process.hpp"
#include "rocelab/common/spawn.hpp"

namespace rocelab::experiments {

namespace lab = agents::lab;
namespace nic = traffic::soft_nic;
using json = nlohmann::json;

namespace {

constexpr double max_link_gbps = 2.0;

status check_spec(const experiment_spec& spec) {
  if (spec.topology.type != "single_switch")
    return status(error_code::unsupported, "topology.type: the virtual lab has one switch (single_switch)");
  if (spec.topology.link_gbps > max_link_gbps)
    return status(error_code::invalid_argument,
                  "topology.link_gbps: " + std::to_string(spec.topology.link_gbps) +
                      " is more than the virtual lab keeps up with (at most 2; the soft switch forwards ~150-200k "
                      "frames/s); use 0.5 or 1");
  if (spec.topology.hosts < 2 || spec.topology.hosts > 64)
    return status(error_code::invalid_argument, "topology.hosts: the virtual lab has 2..64 hosts");
  if (spec.nic.data_priority != 3)
    return status(error_code::unsupported, "nic.data_priority: the virtual lab carries RoCE on priority 3 only");
  return status::success();
}

// The spec's headroom, but never less than the soft path needs: the switch's headroom
// calculator with its reaction budget (lab_headroom_bytes; the switch runs at SCHED_FIFO).
std::int64_t headroom_for(const experiment_spec& spec, int netdev_mtu) {
  const auto rate_bps = static_cast<std::int64_t>(spec.topology.link_gbps * 1e9);
  const std::int64_t software_path =
      fabric::soft_switch::lab_headroom_bytes(rate_bps, netdev_mtu, fabric::soft_switch::lab_response_budget_ns);
  return std::max(spec.sw.pfc.headroom_bytes, software_path);
}
std::int64_t headroom_for(const experiment_spec& spec, const lab::lab_state& s) { return headroom_for(spec, s.mtu); }

// Go-back-N must not time out behind a full buffer's drain at the lab's slow rate.
std::int64_t retransmit_timeout_for(const experiment_spec& spec) {
  const auto drain_ns = static_cast<std::int64_t>(static_cast<double>(spec.sw.buffer_bytes) * 8e9 /
                                                  (spec.topology.link_gbps * 1e9));
  return std::max(spec.nic.retransmit_timeout_ns, 2 * drain_ns);
}

}  // namespace

experiment_spec as_the_virtual_lab_runs_it(const experiment_spec& spec) {
  experiment_spec out = spec;
  out.nic.retransmit_timeout_ns = retransmit_timeout_for(spec);
  out.sw.pfc.headroom_bytes = headroom_for(spec, lab::lab_options{}.mtu);
  out.nic.qp_per_peer = true;  // the soft NIC fleet connects one RC QP per peer
  return out;
}

lab::lab_options lab_options_for(const experiment_spec& spec, const std::string& lab_name,
                                 const std::string& state_root, const std::string& rocelab_binary) {
  lab::lab_options lo;
  lo.name = lab_name;
  if (!state_root.empty()) lo.state_root = state_root;
  lo.hosts = static_cast<int>(spec.topology.hosts);
  lo.link_gbps = spec.topology.link_gbps;
  lo.buffer_kb = std::max<std::int64_t>(1, spec.sw.buffer_bytes / 1024);
  lo.mtu = static_cast<int>(std::max<std::uint32_t>(spec.nic.mtu_bytes + 104, 1500));
  lo.rocelab_binary = rocelab_binary;
  if (!spec.sw.pfc.enabled) lo.switch_args.push_back("--no-pfc");
  if (!spec.sw.ecn.enabled) lo.switch_args.push_back("--no-ecn");
  return lo;
}

status configure_lab_switch(const lab::lab_state& s, const experiment_spec& spec,
                            fabric::drivers::soft_switch_driver* snapshot) {
  std::unique_ptr<fabric::drivers::soft_switch_driver> own;
  if (snapshot == nullptr) {
    auto d = fabric::drivers::soft_switch_driver::connect({s.control_socket});
    if (!d) return d.error().with_context("connecting to the switch");
    own = std::move(*d);
    snapshot = own.get();
  }
  json fields = json::array();
  // The buffer's thresholds as the twin's switch takes them from the spec (spec/build.cpp):
  // lossless PGs under switch.dynamic_th with their headroom and XON offset, lossy PGs and
  // queues under switch.lossy_dynamic_th, the accounting cell and the pause time. Without
  // them the lab ran its own defaults whatever the spec said (a spec at dynamic_th -7
  // paused on the twin and never on the lab).
  fields.push_back({{"field", "cell_bytes"}, {"value", spec.sw.cell_bytes}});
  fields.push_back({{"field", "pfc.pause_quanta"}, {"value", spec.sw.pfc.pause_quanta}});
  for (std::uint32_t p = 0; p < 8; ++p) {
    const bool lossless = spec.sw.pfc.enabled && std::find(spec.sw.pfc.priorities.begin(), spec.sw.pfc.priorities.end(),
                                                           p) != spec.sw.pfc.priorities.end();
    if (lossless) {
      fields.push_back({{"field", "pg.dynamic_th"}, {"value", spec.sw.dynamic_th}, {"priority", p}});
      fields.push_back({{"field", "pg.headroom_bytes"}, {"value", headroom_for(spec, s)}, {"priority", p}});
      fields.push_back({{"field", "pg.xon_offset_bytes"}, {"value", spec.sw.pfc.xon_offset_bytes}, {"priority", p}});
    } else {
      fields.push_back({{"field", "pg.dynamic_th"}, {"value", spec.sw.lossy_dynamic_th}, {"priority", p}});
      fields.push_back({{"field", "queue.dynamic_th"}, {"value", spec.sw.lossy_dynamic_th}, {"priority", p}});
    }
  }
  for (std::uint32_t q : spec.sw.ecn.queues) {
    if (q > 7) continue;
    fields.push_back({{"field", "queue.ecn.enabled"}, {"value", spec.sw.ecn.enabled}, {"priority", q}});
    if (!spec.sw.ecn.enabled) continue;
    fields.push_back({{"field", "queue.ecn.kmin_bytes"}, {"value", spec.sw.ecn.kmin_bytes}, {"priority", q}});
    fields.push_back({{"field", "queue.ecn.kmax_bytes"}, {"value", spec.sw.ecn.kmax_bytes}, {"priority", q}});
    fields.push_back({{"field", "queue.ecn.pmax"}, {"value", spec.sw.ecn.pmax}, {"priority", q}});
  }
  fields.push_back({{"field", "ecn_mark_on_dequeue"}, {"value", spec.sw.ecn_mark_on_dequeue}});
  // The lossless class: the data and CNP DSCPs onto their priorities, as on a SONiC switch.
  auto cls = lossless_class_of(spec);
  if (!cls) return cls.error();
  json dscp = json::object();
  for (const auto& [d, tc] : fabric::switch_class_entries(*cls)) dscp[std::to_string(d)] = tc;
  fields.push_back({{"field", "dscp_to_tc"}, {"value", std::move(dscp)}});
  const auto& wd = spec.sw.pfc.watchdog;
  fields.push_back({{"field", "pfc.watchdog.enabled"}, {"value", wd.enabled}});
  if (wd.enabled) {
    fields.push_back({{"field", "pfc.watchdog.detection_ns"}, {"value", wd.detection_ns}});
    fields.push_back({{"field", "pfc.watchdog.restoration_ns"}, {"value", wd.restoration_ns}});
    fields.push_back({{"field", "pfc.watchdog.action"}, {"value", wd.action}});
  }
  ROCELAB_RETURN_IF_ERROR(snapshot->apply_fields(fields).with_context("setting the switch"));
  auto c = fabric::soft_switch::control_client::connect(s.control_socket);
  if (!c) return c.error().with_context("connecting to the switch");
  if (auto z = c->call({{"op", "reset_counters"}}); !z) return z.error().with_context("resetting switch counters");
  return status::success();
}

namespace {

// The run's own switch counters (counts_since a snapshot at its start), as samples of
// device "sw" and into the totals.
void add_switch_counters(const switch_counts& c, std::int64_t t_ns, run_records& out) {
  const auto device = static_cast<std::uint32_t>(out.devices.size());
  out.devices.push_back("sw");
  for (std::uint32_t port = 0; port < c.ports.size(); ++port) {
    const auto& p = c.ports[port];
    auto sample = [&](const char* name, std::uint64_t v) { out.counters.push_back({device, port, name, t_ns, v}); };
    sample("rx_packets", p.rx_packets);
    sample("tx_packets", p.tx_packets);
    sample("pfc_tx_frames", p.pfc_tx_frames);
    sample("pfc_rx_frames", p.pfc_rx_frames);
    sample("ingress_limit_drops", p.ingress_limit_drops);
    sample("egress_limit_drops", p.egress_limit_drops);
    sample("headroom_drops", p.headroom_drops);
    sample("pool_drops", p.pool_drops);
    sample("ring_drops", p.ring_drops);
    sample("ring_wait_max_ns", static_cast<std::uint64_t>(p.ring_wait_max_ns));
    sample("ring_wait_over_budget", p.ring_wait_over_budget);
    sample("ecn_marked", p.ecn_marked);
    out.totals.pfc_pause_frames += p.pfc_tx_frames;
    out.totals.drops += p.drops();
    out.totals.ce_marked += p.ecn_marked;
    out.totals.packets_forwarded += p.tx_packets;
  }
  out.counters.push_back({device, 0, "mirror_frames", t_ns, c.mirror_frames});
  out.counters.push_back({device, 0, "mirror_pfc_frames", t_ns, c.mirror_pfc_frames});
  out.counters.push_back({device, 0, "mirror_arrival_frames", t_ns, c.mirror_arrival_frames});
  out.counters.push_back({device, 0, "mirror_errors", t_ns, c.mirror_errors});
}

// The switch's counters now, parsed.
result<switch_counts> read_switch_counts(fabric::soft_switch::control_client& c) {
  auto j = c.call({{"op", "counters"}});
  if (!j) return j.error().with_context("reading the switch's counters");
  return parse_switch_counts(*j);
}

// The egress queue depths the switch sampled during the run, on the run's timeline (T0
// at `t0_monotonic_ns`), as device `device`'s queue samples.
void add_queue_samples(fabric::soft_switch::control_client& c, std::int64_t t0_monotonic_ns, std::uint32_t device,
                       run_records& out) {
  for (int pages = 0; pages < 1000; ++pages) {
    auto j = c.call({{"op", "queue_samples"}});
    if (!j || !j->value("ok", false)) break;
    for (const auto& x : j->value("samples", json::array())) {
      if (!x.is_array() || x.size() != 4) continue;
      const std::int64_t t = x[0].get<std::int64_t>() - t0_monotonic_ns;
      if (t < 0) continue;
      out.queues.push_back({device, x[1].get<std::uint32_t>(), x[2].get<std::uint8_t>(), t, x[3].get<std::uint64_t>()});
    }
    if (const std::uint64_t dropped = j->value("dropped", std::uint64_t{0}); dropped > 0)
      std::cerr << "rocelab: the switch dropped " << dropped << " queue samples (its buffer was full)\n";
    if (!j->value("more", false)) break;
  }
}

// The PFC frames the switch has sent since `start`, read on a control connection of its
// own every 250 ms while a run goes, for its progress line; none until the first read
// and after a failed one. Joined by its destructor.
class pause_poller {
 public:
  pause_poller(const std::string& control_socket, switch_counts start)
      : thread_([this, control_socket, start = std::move(start)](std::stop_token stop) {
          auto c = fabric::soft_switch::control_client::connect(control_socket);
          if (!c) return;
          while (!stop.stop_requested()) {
            auto now = read_switch_counts(*c);
            auto since = now ? counts_since(start, *now) : result<switch_counts>(now.error());
            std::uint64_t sent = 0;
            if (since)
              for (const auto& port : since->ports) sent += port.pfc_tx_frames;
            frames_.store(since ? static_cast<std::int64_t>(sent) : -1, std::memory_order_relaxed);
            std::unique_lock lock(mutex_);
            wake_.wait_for(lock, stop, std::chrono::milliseconds(250), [] { return false; });
          }
        }) {}

  [[nodiscard]] std::optional<std::uint64_t> frames() const {
    const std::int64_t v = frames_.load(std::memory_order_relaxed);
    if (v < 0) return std::nullopt;
    return static_cast<std::uint64_t>(v);
  }

 private:
  std::atomic<std::int64_t> frames_{-1};
  std::mutex mutex_;
  std::condition_variable_any wake_;
  std::jthread thread_;  // last: stopped and joined before the members it uses go
};

// `rocelab capture --dpdk` in the capture namespace, its stderr on a pipe to us. Started
// before the NICs, stopped (SIGINT) after them; ready once it prints "capturing on".
class capture_process {
 public:
  static result<capture_process> start(const lab::lab_state& s, const std::string& binary, const std::string& file,
                                       bool use_dpdk) {
    int err[2];
    if (::pipe2(err, O_CLOEXEC) != 0) return status::from_errno("pipe");
    unique_fd rd(err[0]), wr(err[1]);
    // EAL as tests/captures/lab_dpdk_capture.cpp: no hugepages, no PCI, one lcore, a
    // private file prefix so parallel runs do not share DPDK runtime state.
    const std::string prefix = "rlrun" + std::to_string(::getpid());
    // The PMD's ring, sized explicitly (its defaults are 512 frames of 2 KiB, which would
    // cut the lab's 4 KiB frames): frames of the next power of two above the largest
    // mirror copy (interface MTU + Ethernet header + the PMD's TPACKET2 header), 16384 of
    // them, one queue pair. The capture polls under SCHED_OTHER while the switch and the
    // NICs run real-time, so on a 2-core machine it may get no CPU for the length of an
    // incast: the ring holds a whole lab run (an 8-to-1 incast of 2 x 8 MiB is ~9000 mirror
    // frames); with 4096 frames a third of a run's frames were seen missing.
    // `rocelab capture` sizes its mbufs from framesz (captures/dpdk_source.hpp).
    std::uint32_t frame = 2048;
    while (frame < static_cast<std::uint32_t>(s.mtu) + 18 + 64) frame *= 2;
    const std::string eal = "-l 0 --no-huge --no-pci -m 512 --no-shconf --no-telemetry --file-prefix=" + prefix +
                            " --vdev=net_af_packet0,iface=" + s.capture_ifname + ",qpairs=1,framesz=" +
                            std::to_string(frame) + ",blocksz=" + std::to_string(frame * 8) + ",framecnt=16384";
    unique_fd devnull(::open("/dev/null", O_RDWR | O_CLOEXEC));
    spawn_options child;
    // libpcap in immediate mode keeps a TPACKET_V2 ring of snaplen-sized slots: at its
    // default 64 KiB snaplen the 32 MiB buffer held ~500 frames, and a capture starved
    // through a 2:1 incast lost half of its 1,026 mirror copies. A snaplen of the largest
    // mirror copy (as the PMD's frames above) holds ~7,000 of the lab's 4 KiB frames.
    if (use_dpdk)
      child.argv = {binary, "capture", "--dpdk", eal, "-w", file};
    else
      child.argv = {binary, "capture", "--iface", s.capture_ifname, "--snaplen",
                    std::to_string(static_cast<std::uint32_t>(s.mtu) + 18 + 64), "-w", file};
    child.netns = s.capture_netns;
    child.stdin_fd = devnull.get();
    child.stdout_fd = wr.get();
    child.stderr_fd = wr.get();
    // The capture ends with the run's thread, also when the controller is killed.
    child.death_signal = SIGTERM;
    auto spawned = spawn(child);
    if (!spawned) return spawned.error();
    const pid_t pid = *spawned;
    capture_process c;
    c.pid_ = pid;
    c.err_ = std::move(rd);
    if (use_dpdk) c.runtime_dir_ = "/var/run/dpdk/" + prefix;
    wr.reset();
    const std::int64_t deadline = fabric::soft_switch::monotonic_ns() + 20'000'000'000;
    while (c.text_.find("capturing on") == std::string::npos) {
      if (fabric::soft_switch::monotonic_ns() > deadline || !c.read(200)) {
        c.stop();
        return status(error_code::unavailable, "rocelab capture did not start: " + c.text_);
      }
    }
    return c;
  }
  capture_process() = default;
  capture_process(capture_process&& o) noexcept
      : pid_(std::exchange(o.pid_, -1)),
        err_(std::move(o.err_)),
        text_(std::move(o.text_)),
        runtime_dir_(std::move(o.runtime_dir_)) {}
  capture_process& operator=(capture_process&& o) noexcept {
    stop();
    pid_ = std::exchange(o.pid_, -1);
    err_ = std::move(o.err_);
    text_ = std::move(o.text_);
    runtime_dir_ = std::move(o.runtime_dir_);
    return *this;
  }
  ~capture_process() { stop(); }

  // SIGINT, then its summary; SIGKILL if it does not exit within 10 s.
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGINT);
    const std::int64_t deadline = fabric::soft_switch::monotonic_ns() + 10'000'000'000;
    int st = 0;
    while (::waitpid(pid_, &st, WNOHANG) == 0) {
      if (fabric::soft_switch::monotonic_ns() > deadline) {
        ::kill(pid_, SIGKILL);
        (void)::waitpid(pid_, &st, 0);
        break;
      }
      (void)read(50);
    }
    while (read(0)) {
    }
    pid_ = -1;
    // DPDK leaves its (empty) runtime directory behind, one per capture's file prefix.
    if (!runtime_dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(runtime_dir_, ignored);
      runtime_dir_.clear();
    }
  }
  [[nodiscard]] const std::string& text() const { return text_; }

 private:
  // false at EOF.
  bool read(int wait_ms) {
    if (!err_.valid()) return false;
    pollfd p{err_.get(), POLLIN, 0};
    if (::poll(&p, 1, wait_ms) <= 0) return true;
    char buf[4096];
    const ssize_t n = ::read(err_.get(), buf, sizeof buf);
    if (n <= 0) return false;
    text_.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  pid_t pid_ = -1;
  unique_fd err_;
  std::string text_;
  std::string runtime_dir_;  // DPDK's, removed once the capture has exited
};

// "name=123" in the capture's summary line, or 0.
std::uint64_t summary_value(const std::string& text, const std::string& name) {
  const auto at = text.rfind(name + "=");
  if (at == std::string::npos) return 0;
  return std::strtoull(text.c_str() + at + name.size() + 1, nullptr, 10);
}

void add_capture(const captures::capture_file_analysis& a, const std::string& summary, const switch_counts& mirror,
                 const std::string& kept_file, std::int64_t t_ns, std::int64_t t0_realtime_ns,
                 const lab::lab_state& lab, bool timestamps_at_arrival,
                 const std::map<std::string, std::int64_t>& first_scheduled_ns, run_records& out) {
  // The switch's device (its counters may not have been read): the paused hop of a host's PFC frame.
  auto sw = std::find(out.devices.begin(), out.devices.end(), "sw");
  if (sw == out.devices.end()) sw = out.devices.insert(out.devices.end(), "sw");
  const auto switch_device = static_cast<std::uint32_t>(sw - out.devices.begin());
  const auto device = static_cast<std::uint32_t>(out.devices.size());
  out.devices.push_back("capture");
  const auto& c = a.analysis;
  auto sample = [&](const char* name, std::uint64_t v) { out.counters.push_back({device, 0, name, t_ns, v}); };
  sample("capture.frames", c.frames);
  sample("capture.roce_data", c.roce.data);
  sample("capture.roce_ack", c.roce.ack);
  sample("capture.roce_nak", c.roce.nak);
  sample("capture.cnp", c.roce.cnp);
  sample("capture.ce", c.roce.ecn.ce);
  sample("capture.pfc_frames", c.pfc.frames);
  sample("capture.retransmits", std::accumulate(c.flows.begin(), c.flows.end(), std::uint64_t{0},
                                                [](std::uint64_t n, const auto& f) { return n + f.retransmits; }));
  std::uint64_t reported_drops = 0;
  for (const char* k : {"imissed", "rx_nombuf", "ierrors", "kernel_dropped", "if_dropped"}) {
    sample((std::string("capture.") + k).c_str(), summary_value(summary, k));
    if (std::string_view(k) != "ierrors") reported_drops += summary_value(summary, k);
  }
  // Loss: every copy the switch mirrored (or failed to) that the file does not hold.
  const capture_accounting acc = account_capture(mirror.mirror_frames, mirror.mirror_errors, c.frames, reported_drops);
  sample("capture.mirrored", acc.expected);
  sample("capture.loss", acc.loss);
  sample("capture.extra", acc.extra);
  out.capture = run_records::capture_info{kept_file, acc.expected, acc.captured, acc.loss};
  // Capture timestamps are CLOCK_REALTIME; the run's timeline starts at T0 on
  // CLOCK_MONOTONIC, mapped through the offset read when the run started.
  // Each PFC frame's hop from its source MAC (capture_pauses.hpp); the soft NICs are
  // devices 0..N-1 by host index.
  lab_port_macs macs;
  for (const auto& h : lab.hosts) {
    macs.host_mac.push_back(h.mac);
    macs.switch_port_mac.push_back(h.switch_port_mac);
  }
  const auto paused = attribute_capture_pauses(c, macs, {0, switch_device, device}, t0_realtime_ns);
  out.pauses.insert(out.pauses.end(), paused.begin(), paused.end());
  out.totals.paused_ns += paused_ns_total(paused);
  // The capture's witness of the senders' starts, beside the NICs' own (start_offsets_ns):
  // each sender's first data packet as the switch's arrival copy stamped it
  // (capture_starts.hpp), whatever stamps the capture itself puts on frames. Without
  // arrival copies, the first packet at the switch's egress, after the receiver's egress
  // queue has serialised the incast's first packets, and only where the capture stamps
  // frames at arrival (libpcap; DPDK's af_packet PMD stamps a burst when it is polled,
  // milliseconds later on a loaded host). Per sending host "start.capture_offset_ns"
  // (never negative: a packet reaches the switch after its sender sent it), their spread
  // as "capture.start_skew_ns", and "capture.start_at_ingress" 1 or 0.
  std::vector<std::string> ipv4;
  for (const auto& h : lab.hosts) ipv4.push_back(h.ipv4);
  const auto seen = capture_start_offsets(c, out.hosts, ipv4, t0_realtime_ns, first_scheduled_ns);
  if (seen.at_ingress || timestamps_at_arrival) {
    for (std::uint32_t h = 0; h < out.hosts.size(); ++h)
      if (const auto it = seen.offsets_ns.find(out.hosts[h]); it != seen.offsets_ns.end() && it->second >= 0)
        out.counters.push_back({h, 0, "start.capture_offset_ns", t_ns, static_cast<std::uint64_t>(it->second)});
    if (!seen.offsets_ns.empty()) {
      sample("capture.start_skew_ns", static_cast<std::uint64_t>(start_skew_ns(seen.offsets_ns)));
      sample("capture.start_at_ingress", seen.at_ingress ? 1 : 0);
    }
  }
}

}  // namespace

std::chrono::milliseconds virtual_run_limit(const experiment_spec& spec) {
  return std::chrono::milliseconds(std::max<std::int64_t>(30'000, spec.twin.stop_ns / 1'000'000));
}

result<spec_lab> lab_for_spec(const experiment_spec& spec, const std::string& lab_name, const std::string& state_root,
                              const std::string& rocelab_binary, const std::function<void()>& on_bring_up) {
  auto existing = lab::load_lab(state_root, lab_name);
  if (existing.ok() && existing->hosts.size() >= spec.topology.hosts &&
      std::abs(existing->link_gbps - spec.topology.link_gbps) < 1e-9 && lab::lab_inspect(lab_name, state_root).switch_alive)
    return spec_lab{std::move(*existing), false};
  if (existing.ok() || !lab::lab_inspect(lab_name, state_root).namespaces.empty())
    return status(error_code::unavailable, "lab '" + lab_name +
                                               "' is up but does not fit the spec (hosts or link rate); take it "
                                               "down with `rocelab lab down --name " + lab_name + "`");
  if (on_bring_up) on_bring_up();
  auto up = lab::lab_up(lab_options_for(spec, lab_name, state_root, rocelab_binary));
  if (!up) return up.error().with_context("bringing up lab '" + lab_name + "'");
  return spec_lab{std::move(*up), true};
}

result<run_records> run_virtual(const experiment_spec& spec, std::uint64_t seed,
                                const virtual_backend_options& options) {
  ROCELAB_RETURN_IF_ERROR(check_spec(spec));
  const std::string root = options.state_root.empty() ? lab::default_state_root : options.state_root;
  const std::string binary = options.rocelab_binary.empty() ? own_executable_path() : options.rocelab_binary;
  std::unique_ptr<fabric::twin::workload> own_workload;
  fabric::twin::workload* load = options.workload;
  if (load == nullptr) {
    auto made = make_workload(spec, seed);
    if (!made) return made.error();
    own_workload = std::move(*made);
    load = own_workload.get();
  }

  // Reuse a lab that is up and fits; otherwise bring one up for this run.
  auto lab_up = lab_for_spec(spec, options.lab_name, root, binary);
  if (!lab_up) return lab_up.error();
  const lab::lab_state& state = lab_up->state;
  const bool ours = lab_up->brought_up;
  // The switch's settings as they were before the run: put back afterwards on a lab the
  // run did not bring up (one it brought up goes down with them).
  std::unique_ptr<fabric::drivers::soft_switch_driver> switch_snapshot;
  auto result_or = [&]() -> result<run_records> {
    auto driver = fabric::drivers::soft_switch_driver::connect({state.control_socket});
    if (!driver) return driver.error().with_context("lab '" + options.lab_name + "': connecting to the switch");
    switch_snapshot = std::move(*driver);
    ROCELAB_RETURN_IF_ERROR(
        configure_lab_switch(state, spec, switch_snapshot.get()).with_context("lab '" + options.lab_name + "'"));
    auto cls = lossless_class_of(spec);
    if (!cls) return cls.error();
    std::vector<nic::fleet_host> hosts;
    for (std::uint32_t i = 0; i < spec.topology.hosts; ++i) {
      const auto& h = state.hosts[i];
      auto mac = nic::parse_mac(h.mac);
      auto ip = nic::parse_ipv4(h.ipv4);
      if (!mac || !ip) return status(error_code::malformed_input, "lab state: addresses of " + h.name);
      hosts.push_back({h.name, h.netns, h.ifname, {*mac, *ip}});
    }
    nic::fleet_options fo;
    fo.rocelab_binary = binary;
    fo.log_dir = options.log_dir;
    fo.nic.line_rate_bps = static_cast<std::int64_t>(spec.topology.link_gbps * 1e9);
    fo.nic.mtu_bytes = spec.nic.mtu_bytes;
    fo.nic.data_priority = cls->data_priority;
    fo.nic.data_dscp = cls->data_dscp;
    fo.nic.dcqcn_enabled = spec.nic.dcqcn_enabled;
    fo.nic.dcqcn = spec.nic.dcqcn;
    // The lab dilated k times (scaling.hardware_gbps): DCQCN with the hardware's knobs on
    // the lab's clock.
    if (spec.scaling.hardware_gbps > 0) fo.nic.dcqcn.time_scale = time_scale(spec);
    fo.nic.pfc_enabled = spec.sw.pfc.enabled;
    fo.ideal_fct_ns = ideal_fct_of(spec);
    fo.nic.ack_every_packets = spec.nic.ack_every_packets;
    fo.nic.retransmit_timeout_ns = retransmit_timeout_for(spec);
    fo.links = options.nic_links;
    // Every NIC of a virtual lab runs on this machine, as a child or as an agent's job.
    fo.start_cpus = nic::this_process_cpus();
    // Before T0: the NICs and the switch agree on the lossless class, or the run fails
    // naming what disagrees (fabric/lossless_class.hpp).
    {
      const auto& ports = switch_snapshot->ports();
      auto sw = switch_snapshot->read_settings(ports);
      if (!sw) return sw.error().with_context("lab '" + options.lab_name + "': reading the switch's settings");
      fabric::lossless_observation seen;
      for (const auto& h : hosts)
        seen.nics.push_back({h.name, fo.nic.data_dscp, fo.nic.data_priority, fo.nic.dcqcn.cnp_dscp,
                             fo.nic.dcqcn.cnp_802p_prio});
      seen.switch_ports = fabric::drivers::lossless_ports(*sw, ports);
      ROCELAB_RETURN_IF_ERROR(fabric::check_lossless_class(*cls, seen).with_context("lab '" + options.lab_name + "'"));
    }
    // Capture: plain copies of every frame the switch sends (egress), so each data packet
    // is seen once, with the CE mark it left with. Kept where options.capture_file says;
    // otherwise a file in /tmp, removed after the analysis.
    std::string capture_file = options.capture_file;
    const bool remove_capture = capture_file.empty();
    if (capture_file.empty()) capture_file = "/tmp/rocelab-" + options.lab_name + "-" + std::to_string(::getpid()) + ".pcapng";
    auto c = fabric::soft_switch::control_client::connect(state.control_socket);
    if (!c) return c.error().with_context("connecting to the switch");
    capture_process cap;
    bool used_dpdk = options.capture_dpdk;
    if (options.capture) {
      // The lab gives the capture veth a 9216-byte MTU (ERSPAN headroom); plain mirror
      // copies are at most the lab's MTU, so the capture side takes that, and the DPDK
      // ring frames above are sized for it.
      if (auto st = lab::run_program({"ip", "-n", state.capture_netns, "link", "set", state.capture_ifname, "mtu",
                                      std::to_string(state.mtu)});
          !st.ok())
        return st.with_context("setting the capture interface's MTU");
      auto started = capture_process::start(state, binary, capture_file, options.capture_dpdk);
      if (!started && options.capture_dpdk) {
        // A machine where DPDK cannot start at all (no af_packet PMD, EAL refused): the run
        // still captures, with libpcap on the same veth, and records which one it used.
        std::cerr << "rocelab: DPDK capture failed (" << started.error().message().substr(0, 200)
                  << "); capturing with libpcap instead\n";
        used_dpdk = false;
        started = capture_process::start(state, binary, capture_file, false);
      }
      if (!started) return started.error().with_context("capture");
      cap = std::move(*started);
      // Mirror on once the capture is ready: every copy the switch counts from here on is
      // one the capture should hold. pfc_tx: the switch's own PFC frames too, so the
      // capture shows its pauses. arrivals: a copy of each message's first packet as it
      // reached the switch, the capture's witness of the senders' starts.
      auto m = c->call({{"op", "mirror"},
                        {"enabled", true},
                        {"direction", "egress"},
                        {"erspan", 0},
                        {"pfc_tx", true},
                        {"arrivals", true}});
      if (!m || !m->value("ok", false)) return status(error_code::unavailable, "enabling the mirror session");
    }
    // The run's counters are the switch's from here: reset, and read back as the snapshot
    // the end is measured against (counters a reset does not reach, and a switch shared
    // with other users, still give this run's own counts).
    if (auto z = c->call({{"op", "reset_counters"}}); !z) return z.error().with_context("resetting switch counters");
    auto start_counts = read_switch_counts(*c);
    if (!start_counts) return start_counts.error().with_context("lab '" + options.lab_name + "'");
    std::int64_t response_budget_ns = fabric::soft_switch::lab_response_budget_ns;
    if (auto st = c->call({{"op", "status"}}); st && st->value("response_budget_ns", std::int64_t{0}) > 0)
      response_budget_ns = st->value("response_budget_ns", std::int64_t{0});
    // Queue depths as the twin samples them, in real time: the spec's interval, but at
    // least 1 ms (the switch's loop wakes for every sample).
    const std::int64_t sample_interval_ns = std::max<std::int64_t>(spec.twin.queue_sample_interval_ns, 1'000'000);
    if (auto q = c->call({{"op", "queue_sampling"}, {"interval_ns", sample_interval_ns}}); !q || !q->value("ok", false))
      std::cerr << "rocelab: the switch does not sample its queues; queues.csv stays empty\n";
    // The switch on a CPU of its own, the NICs on the others once their start is out
    // (cpu_placement.hpp); the NIC processes inherit this process's CPUs as they start.
    std::optional<cpu_placement> placement;
    const auto split = split_cpus(fo.start_cpus);
    if (split && state.switch_pid > 0) placement.emplace(state.switch_pid, *split);
    // The CPUs the NICs run on once started: the split's, or all of this process's.
    const std::size_t nic_cpus = placement && placement->placed() ? split->nic_cpus.size() : fo.start_cpus.size();
    auto fleet = nic::nic_fleet::start(hosts, fo);
    if (placement) placement->release_self();
    if (!fleet) return fleet.error().with_context("starting the soft NICs");
    const auto limit = virtual_run_limit(spec);
    std::function<void(std::uint64_t, std::uint64_t)> fleet_progress;
    std::optional<pause_poller> pauses;
    if (options.on_progress) {
      pauses.emplace(state.control_socket, *start_counts);
      fleet_progress = [&](std::uint64_t done, std::uint64_t posted) {
        options.on_progress({.completed = done, .posted = posted, .pause_frames = pauses->frames()});
      };
    }
    // This thread relays the workload's posts and completions to and from the NICs, so it
    // runs above them as the agents' relay does (soft_nic::lab_relay_rt_priority): at
    // normal priority a closed loop's next round reached its senders up to 11.5 ms apart
    // through an incast that held both CPUs.
    auto ran = [&] {
      const realtime_section relay(nic::lab_relay_rt_priority);
      return (*fleet)->run(*load, limit, options.cancel_requested, fleet_progress);
    }();
    pauses.reset();  // joined before the switch's counters are read for the record
    if (!ran) return ran.error();
    if (options.on_fleet_result) options.on_fleet_result(*ran);
    // T0 of the run's timeline: the fleet's armed start; queue samples and capture times
    // are put on it, so they line up with the flows.
    const std::int64_t t0_monotonic = ran->t0_ns;
    const std::int64_t t0_realtime = fabric::soft_switch::realtime_offset_ns() + t0_monotonic;
    run_records out = std::move(ran->records);
    out.lost_hosts = ran->lost_hosts;
    const std::int64_t t_end = out.flows.empty() ? 0 : out.flows.back().end_ns;
    for (std::uint32_t h = 0; h < ran->nic_counters.size(); ++h)
      for (const auto& [k, v] : ran->nic_counters[h].items())
        if (v.is_number_unsigned() || v.is_number_integer())
          out.counters.push_back({h, 0, "nic." + k, t_end, v.get<std::uint64_t>()});
    fleet->reset();
    // Mirror off first, so the counter read below and the file hold the same frames.
    if (options.capture) (void)c->call({{"op", "mirror"}, {"enabled", false}});
    (void)c->call({{"op", "queue_sampling"}, {"interval_ns", 0}});
    switch_counts run_counts;
    auto end_counts = read_switch_counts(*c);
    auto own = end_counts ? counts_since(*start_counts, *end_counts) : result<switch_counts>(end_counts.error());
    if (own) {
      run_counts = *own;
      add_switch_counters(run_counts, t_end, out);
      add_queue_samples(*c, t0_monotonic, static_cast<std::uint32_t>(out.devices.size() - 1), out);
      out.degraded = degraded_reasons(run_counts, response_budget_ns);
    } else {
      out.degraded.push_back("the switch's counters of this run are unknown: " + own.error().message());
    }
    {
      std::vector<std::int64_t> cpu_ns;
      for (const auto& k : ran->nic_counters) cpu_ns.push_back(k.is_object() ? k.value("cpu_ns", std::int64_t{-1}) : -1);
      std::int64_t last_end = 0;
      for (const auto& f : out.flows) last_end = std::max(last_end, f.end_ns);
      if (const auto busy = nic_cpu_busy(cpu_ns, last_end, nic_cpus))
        if (auto why = nic_cpu_degraded_reason(*busy, nic_cpus, cpu_ns.size()); !why.empty())
          out.degraded.push_back(std::move(why));
    }
    if (options.capture) {
      ::usleep(200'000);  // frames in flight to the capture veth
      cap.stop();
      captures::analyzer_options ao;
      ao.link_gbps = spec.topology.link_gbps;
      auto a = captures::analyze_capture_file(capture_file, ao);
      if (!a) return a.error().with_context("analysing the capture " + capture_file);
      if (options.on_capture) options.on_capture(*a, t0_realtime);
      add_capture(*a, cap.text(), run_counts, remove_capture ? std::string() : capture_file, t_end, t0_realtime,
                  state, !used_dpdk, ran->first_scheduled_ns, out);
      out.counters.push_back({static_cast<std::uint32_t>(out.devices.size() - 1), 0, "capture.dpdk", t_end,
                              used_dpdk ? 1u : 0u});
      // Per-flow transmit timelines from the switch's egress copies, their stamps fitted to
      // the ports' rate (flow_timeline.hpp); host h is device h, as for the NICs' counters.
      std::vector<std::string> ipv4;
      for (std::uint32_t h = 0; h < spec.topology.hosts; ++h) ipv4.push_back(state.hosts[h].ipv4);
      const std::int64_t bin_ns = spec.twin.flow_timeline_interval_ns > 0 ? spec.twin.flow_timeline_interval_ns
                                                                           : default_flow_timeline_bin_ns;
      if (auto packets = capture_flow_packets(capture_file, out.flows, ipv4, t0_realtime, spec.topology.link_gbps * 1e9)) {
        auto timeline = flow_timeline_samples(out.flows, *packets, bin_ns, 0);
        out.counters.insert(out.counters.end(), std::make_move_iterator(timeline.begin()),
                            std::make_move_iterator(timeline.end()));
      } else {
        std::cerr << "rocelab: no flow timelines: " << packets.error().message() << "\n";
      }
      if (remove_capture) std::remove(capture_file.c_str());
      if (out.capture && out.capture->loss > 0)
        std::cerr << "rocelab: the capture lost " << out.capture->loss << " of " << out.capture->mirrored
                  << " mirrored frames\n";
    }
    // One host clock measured every start: no clock uncertainty to add.
    if (auto skew = start_skew_violation(out, spec.timing.max_start_skew_ns); !skew.empty())
      out.degraded.push_back(std::move(skew));
    for (const auto& d : out.degraded) std::cerr << "rocelab: run degraded: " << d << "\n";
    for (const auto& l : ran->lost_hosts) std::cerr << "rocelab: lost during the run: " << l << "\n";
    if (ran->cancelled)
      std::cerr << "rocelab: virtual run cancelled; keeping the records of what ran\n";
    else if (!ran->completed && ran->lost_hosts.empty())
      std::cerr << "rocelab: virtual run stopped after " << limit.count() << " ms with flows incomplete\n";
    return out;
  }();
  if (!ours && switch_snapshot && switch_snapshot->has_snapshot())
    if (auto st = switch_snapshot->restore(); !st.ok())
      std::cerr << "rocelab: restoring the switch of lab '" << options.lab_name << "': " << st.message() << "\n";
  if (ours && !options.keep_lab) {
    if (auto st = lab::lab_down(options.lab_name, root); !st.ok())
      std::cerr << "rocelab: taking down lab '" << options.lab_name << "': " << st.message() << "\n";
  }
  return result_or;
}

}  // namespace rocelab::experiments

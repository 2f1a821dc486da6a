#include "rocelab/traffic/soft_nic/nic_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string_view>

#include "rocelab/fabric/latency_histogram.hpp"
#include "rocelab/fabric/soft_switch/latency_histogram_json.hpp"
#include "rocelab/fabric/soft_switch/packet_port.hpp"
#include "rocelab/fabric/soft_switch/realtime_clock.hpp"
#include "rocelab/traffic/soft_nic/cpu_pin.hpp"
#include "rocelab/traffic/soft_nic/transmit_path_warmer.hpp"

namespace rocelab::traffic::soft_nic {

namespace ss = fabric::soft_switch;
using json = nlohmann::json;

namespace {

// This process's CPU time, user and system, in ns; -1 when the kernel will not say.
std::int64_t process_cpu_ns() {
  rusage ru{};
  if (::getrusage(RUSAGE_SELF, &ru) != 0) return -1;
  return (static_cast<std::int64_t>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1'000'000 + ru.ru_utime.tv_usec +
          ru.ru_stime.tv_usec) *
         1000;
}

// Writes whole lines; the orchestrator reads a pipe, so a short write only happens when
// the pipe is full and then we wait for it (bounded by the orchestrator reading).
void write_line(int fd, const json& j) {
  std::string s = j.dump();
  s.push_back('\n');
  std::string_view rest = s;
  while (!rest.empty()) {
    const ssize_t n = ::write(fd, rest.data(), rest.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        pollfd p{fd, POLLOUT, 0};
        (void)::poll(&p, 1, 100);
        continue;
      }
      return;  // the orchestrator went away; nothing to tell
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
}

class port_sink final : public frame_sink {
 public:
  explicit port_sink(ss::packet_port& p) : port_(p) {}
  bool send(std::span<const std::uint8_t> frame) override {
    const bool sent = port_.send(frame);
    if (yield_after_send_) {
      yield_after_send_ = false;
      ::sched_yield();
    }
    return sent;
  }
  // The next frame handed to the port is followed at once by sched_yield(2): at an armed
  // instant the CPU goes to the senders of equal priority still waiting to send their
  // first frame before this one does the bookkeeping of its own (sched_yield rotates
  // equal SCHED_FIFO priorities on a CPU).
  void yield_after_next_send(bool on) noexcept { yield_after_send_ = on; }

 private:
  ss::packet_port& port_;
  bool yield_after_send_ = false;
};

// Reads newline-terminated lines from a non-blocking fd.
class line_reader {
 public:
  explicit line_reader(int fd) : fd_(fd) {}
  // false at EOF or error.
  bool fill() {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n > 0) {
        pending_.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0) return false;
      return errno == EAGAIN || errno == EINTR;
    }
  }
  bool next(std::string& line) {
    const auto nl = pending_.find('\n');
    if (nl == std::string::npos) return false;
    line = pending_.substr(0, nl);
    pending_.erase(0, nl + 1);
    return true;
  }

 private:
  int fd_;
  std::string pending_;
};

// A post command, decoded: what rc_nic::post takes.
struct work_request {
  std::uint32_t qpn = 0;
  verb v = verb::rdma_write;
  std::uint64_t bytes = 0;
  std::uint64_t ref = 0;
};

work_request work_request_of(const json& c) {
  work_request w;
  w.qpn = c.value("qpn", 0u);
  w.v = c.value("verb", "write") == "send" ? verb::send : verb::rdma_write;
  w.bytes = c.value("bytes", std::uint64_t{0});
  w.ref = c.value("ref", std::uint64_t{0});
  return w;
}

// The scheduling policy of the calling process: SCHED_FIFO at `priority`, or the default
// policy for 0. false when refused (no CAP_SYS_NICE).
bool set_priority(int priority) {
  sched_param sp{};
  sp.sched_priority = priority;
  return ::sched_setscheduler(0, (priority > 0 ? SCHED_FIFO : SCHED_OTHER) | SCHED_RESET_ON_FORK, &sp) == 0;
}

// Frames go nowhere; the size of the first one is kept.
class discard_sink final : public frame_sink {
 public:
  bool send(std::span<const std::uint8_t> frame) override {
    if (first_bytes_ == 0) first_bytes_ = frame.size();
    return true;
  }
  [[nodiscard]] std::size_t first_bytes() const noexcept { return first_bytes_; }

 private:
  std::size_t first_bytes_ = 0;
};

// Runs a post and its first frame once on a scratch NIC whose frames go nowhere, so the
// code and data the first armed post touches (post, frame building, ICRC, the zero
// payload) are mapped before T0 instead of faulted in after it, once per sender. Returns
// that first data frame's size (0 without a QP).
std::size_t warm_send_path(const nic_process_config& cfg) {
  if (cfg.qps.empty()) return 0;
  discard_sink sink;
  ss::realtime_clock clk;
  auto scratch = rc_nic::create(cfg.nic, clk, sink);
  if (!scratch || !(*scratch)->connect(cfg.qps.front()).ok()) return 0;
  const std::int64_t now_ns = ss::monotonic_ns();
  (void)(*scratch)->post(cfg.qps.front().local_qpn, verb::rdma_write, 2ull * cfg.nic.mtu_bytes, 0, now_ns);
  (void)(*scratch)->poll_transmit(now_ns);
  return sink.first_bytes();
}

}  // namespace

status run_nic_process(int in_fd, int out_fd, const std::atomic<bool>& stop) {
  // The first line is the config; wait for it at most 10 s.
  line_reader in(in_fd);
  std::string line;
  const int flags = ::fcntl(in_fd, F_GETFL);
  if (flags < 0 || ::fcntl(in_fd, F_SETFL, flags | O_NONBLOCK) != 0) return status::from_errno("stdin O_NONBLOCK");
  const std::int64_t config_deadline = ss::monotonic_ns() + 10'000'000'000;
  while (!in.next(line)) {
    if (ss::monotonic_ns() > config_deadline) return status(error_code::cancelled, "no config line within 10 s");
    pollfd p{in_fd, POLLIN, 0};
    (void)::poll(&p, 1, 100);
    if (!in.fill()) return status(error_code::malformed_input, "input closed before the config line");
  }
  json cj = json::parse(line, nullptr, false);
  if (cj.is_discarded()) return status(error_code::malformed_input, "config line is not JSON");
  auto cfg = nic_process_config_from_json(cj);
  if (!cfg) return cfg.error();

  // Sleeps are down to microseconds here (pacing gaps at 1 Gb/s are a few us to tens of
  // us); the default 50 us timer slack would smear them.
  (void)::prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  if (cfg->rt_priority > 0) {
    if (!set_priority(cfg->rt_priority))
      std::fprintf(stderr, "nic-run: SCHED_FIFO %d refused (%s); pacing and PFC reaction not bounded\n",
                   cfg->rt_priority, std::strerror(errno));
  }

  ss::packet_port_options po;
  po.ifname = cfg->ifname;
  po.frames = 1024;
  po.frame_bytes = 8192;
  auto port = ss::packet_port::open(po);
  if (!port) return port.error().with_context("opening " + cfg->ifname);
  ss::realtime_clock clk;
  port_sink sink(*port);
  auto nic = rc_nic::create(cfg->nic, clk, sink);
  if (!nic) return nic.error();
  for (const auto& q : cfg->qps) ROCELAB_RETURN_IF_ERROR((*nic)->connect(q));
  (*nic)->on_send_complete([out_fd](const send_completion& c) {
    write_line(out_fd, {{"ev", "sent"}, {"ref", c.tag}, {"qpn", c.local_qpn}, {"peer", c.peer}, {"bytes", c.bytes},
                        {"start_ns", c.start_ns}, {"first_tx_ns", c.first_tx_ns}, {"last_tx_ns", c.last_tx_ns},
                        {"wire_bytes", c.wire_bytes}, {"last_wire_bytes", c.last_wire_bytes}, {"end_ns", c.end_ns},
                        {"retransmits", c.retransmits}, {"cnps", c.cnps}});
  });
  // Receive processing: a message's last data frame in (the kernel's stamp at the port's
  // ring, the moment it reached this NIC) to its ACK handed to the port, for every message
  // whose ACK went out in the same on_frame call (not one held by a PFC pause).
  fabric::latency_histogram rx_processing;
  bool message_received = false;  // set by the receive completion on_frame is handling
  (*nic)->on_receive_complete([out_fd, &message_received](const receive_completion& c) {
    message_received = true;
    write_line(out_fd, {{"ev", "recv"}, {"qpn", c.local_qpn}, {"peer", c.peer}, {"msn", c.msn}, {"bytes", c.bytes},
                        {"ce", c.ce_marked}, {"end_ns", c.end_ns}});
  });
  const auto on_frame = [&](std::span<const std::uint8_t> f) {
    const nic_counters before = (*nic)->counters();
    message_received = false;
    (*nic)->on_frame(f, ss::monotonic_ns());
    if (!message_received) return;
    const nic_counters& after = (*nic)->counters();
    const std::uint64_t responses = (after.tx_acks - before.tx_acks) + (after.tx_naks - before.tx_naks) +
                                    (after.tx_cnps - before.tx_cnps);
    const std::int64_t stamp = port->frame_stamp_ns();
    if (stamp == 0 || after.tx_acks == before.tx_acks || after.tx_frames - before.tx_frames != responses) return;
    rx_processing.record(ss::monotonic_ns() - (stamp - ss::realtime_offset_ns()));
  };
  const std::size_t first_frame_bytes = warm_send_path(*cfg);
  auto warmer = transmit_path_warmer::open(first_frame_bytes);
  if (!warmer && cfg->start_rt_priority > 0)
    std::fprintf(stderr, "nic-run: no packet socket on lo; armed starts go without warming the transmit path\n");
  cpu_pin pin(cfg->start_cpu);
  write_line(out_fd, {{"ev", "ready"}, {"t_ns", ss::monotonic_ns()}});
  const std::int64_t ready_cpu_ns = process_cpu_ns();  // the setup above is not the run's

  // Posts armed for a later instant (at_ns), in time order; a multimap keeps arrival
  // order among equal instants. Decoded on arrival. armed_boost_ns before its instant a
  // post goes to the NIC armed (rc_nic::post_armed: queued, its first frame built, held
  // by the NIC until the instant), so the instant itself costs only handing that frame
  // to the port; armed_instant is then the instant it waits for (never_ns: none). A post
  // whose QP is still busy stays here and is posted at its instant.
  std::multimap<std::int64_t, work_request> held;
  std::int64_t armed_instant = fabric::never_ns;
  auto next_instant = [&] { return std::min(armed_instant, held.empty() ? fabric::never_ns : held.begin()->first); };
  // How well armed starts held: posts armed, those that arrived after their instant, and
  // the largest lateness of a post against its instant (its arrival, its release, or for
  // a post armed in the NIC the poll_transmit that sent its first frame).
  std::uint64_t armed_posts = 0, armed_arrived_late = 0;
  std::int64_t armed_late_max_ns = 0;
  // start_rt_priority held (armed_boost_ns before a held instant until its first frames
  // are out), times taken; a refusal (no CAP_SYS_NICE) stops further tries.
  bool boosted = false;
  std::uint64_t armed_boosts = 0, armed_boosts_refused = 0;
  // Boosts held on start_cpu and refused there; warm-up frames sent to lo.
  std::uint64_t armed_pins = 0, armed_pins_refused = 0, armed_warmups = 0;
  // The armed instant whose transmit path was last warmed (once per instant).
  std::int64_t warmed_instant = fabric::never_ns;
  auto post = [&](const work_request& w) {
    auto id = (*nic)->post(w.qpn, w.v, w.bytes, w.ref, ss::monotonic_ns());
    if (!id) write_line(out_fd, {{"ev", "error"}, {"ref", w.ref}, {"error", id.error().message()}});
  };
  // Posts whose instant has come, in order.
  auto release_due = [&] {
    for (std::int64_t now_ns = ss::monotonic_ns(); !held.empty() && held.begin()->first <= now_ns;
         now_ns = ss::monotonic_ns()) {
      armed_late_max_ns = std::max(armed_late_max_ns, now_ns - held.begin()->first);
      post(held.begin()->second);
      held.erase(held.begin());
    }
  };
  // After a poll_transmit at t: an armed instant it reached is settled (its lateness
  // counted), and once the released posts' first frames are out the NIC goes back below
  // the switch, unless the next armed instant is already close.
  auto after_transmit = [&](std::int64_t t) {
    if (armed_instant <= t) {
      armed_late_max_ns = std::max(armed_late_max_ns, t - armed_instant);
      armed_instant = fabric::never_ns;
    }
    if (boosted && next_instant() - t > armed_boost_ns) {
      (void)set_priority(cfg->rt_priority);
      pin.release();
      boosted = false;
    }
  };
  bool input_open = true;
  std::int64_t next_tx = fabric::never_ns;
  for (;;) {
    const std::int64_t now = ss::monotonic_ns();
    if (stop.load() || (cfg->deadline_ns > 0 && now > cfg->deadline_ns)) break;
    clk.run_due(now);
    port->receive(256, on_frame);
    if (input_open) input_open = in.fill();
    bool stop_cmd = false;
    while (in.next(line)) {
      json c = json::parse(line, nullptr, false);
      const std::string op = c.is_object() ? c.value("op", "") : "";
      if (op == "stop") {
        stop_cmd = true;
        break;
      }
      if (op != "post") {
        write_line(out_fd, {{"ev", "error"}, {"error", "unknown command: " + line}});
        continue;
      }
      const work_request w = work_request_of(c);
      const std::int64_t at_ns = c.value("at_ns", std::int64_t{0});
      if (at_ns > 0) {
        ++armed_posts;
        const std::int64_t now_ns = ss::monotonic_ns();
        if (at_ns > now_ns) {
          held.emplace(at_ns, w);
          continue;
        }
        ++armed_arrived_late;
        armed_late_max_ns = std::max(armed_late_max_ns, now_ns - at_ns);
      }
      post(w);
    }
    if (stop_cmd || !input_open) break;
    release_due();
    if (armed_instant == fabric::never_ns && !held.empty() &&
        held.begin()->first - ss::monotonic_ns() <= armed_boost_ns) {
      // The next instant's posts, in arrival order, to the NIC armed; the first refused
      // (its QP busy) and those after it stay held, so the order holds.
      const std::int64_t instant = held.begin()->first;
      for (auto it = held.begin(); it != held.end() && it->first == instant;) {
        const work_request& w = it->second;
        auto id = (*nic)->post_armed(w.qpn, w.v, w.bytes, w.ref, instant);
        if (!id && id.error().code() == error_code::unavailable) break;
        if (!id) write_line(out_fd, {{"ev", "error"}, {"ref", w.ref}, {"error", id.error().message()}});
        if (id) armed_instant = instant;
        it = held.erase(it);
      }
    }
    const std::int64_t t = ss::monotonic_ns();
    next_tx = (*nic)->poll_transmit(t);
    after_transmit(t);
    std::int64_t wake = std::min(next_tx, clk.next_due_ns());
    if (const std::int64_t instant = next_instant(); instant != fabric::never_ns) {
      wake = std::min(wake, instant);
      if (!boosted && cfg->start_rt_priority > 0 && armed_boosts_refused == 0) {
        if (instant - t <= armed_boost_ns) {
          boosted = set_priority(cfg->start_rt_priority);
          ++(boosted ? armed_boosts : armed_boosts_refused);
          if (boosted && cfg->start_cpu >= 0) ++(pin.hold() ? armed_pins : armed_pins_refused);
        } else {
          wake = std::min(wake, instant - armed_boost_ns);
        }
      }
      // The last armed_spin_ns before the instant: yield instead of sleep. Every sender
      // is then runnable at the instant and takes the CPU from the one before it as soon
      // as that one has sent (sched_yield rotates equal SCHED_FIFO priorities), instead
      // of each waiting for its own timer wake-up (tens of microseconds on the lab's VM)
      // behind the others'. Bounded by the instant; only at start_rt_priority.
      // armed_spin_ns before the instant, the transmit path is warmed, once per instant and
      // whatever timer woke the loop; only with time to spare, since the first warm-up on
      // a cold CPU costs what the first frame would have, and the CPU's other senders warm
      // after it.
      if (boosted && warmer && warmed_instant != instant) {
        if (instant - t <= armed_spin_ns) {
          warmed_instant = instant;
          if (instant - t >= armed_spin_ns / 2) armed_warmups += warmer->warm() ? 1 : 0;
        } else {
          wake = std::min(wake, instant - armed_spin_ns);
        }
      }
      if (boosted && wake == instant) {
        if (instant - t <= armed_spin_ns) {
          while (ss::monotonic_ns() < instant) ::sched_yield();
          // The instant: its first frames go before anything else (no command read, no
          // JSON), then the CPU goes to the senders still waiting for it.
          const std::int64_t at = ss::monotonic_ns();
          clk.run_due(at);
          port->receive(256, on_frame);
          release_due();
          sink.yield_after_next_send(true);
          next_tx = (*nic)->poll_transmit(at, 1);
          sink.yield_after_next_send(false);
          after_transmit(at);
          continue;
        }
        wake = instant - armed_spin_ns;
      }
    }
    if (wake <= t) continue;
    // Sleep in poll(2) until a frame, a command or the next send/timer. ppoll takes the
    // nanoseconds; anything not due within 1 s is re-checked after 100 ms (stop flag).
    std::int64_t wait_ns = std::min<std::int64_t>(wake - t, 100'000'000);
    pollfd fds[2] = {{port->fd(), POLLIN, 0}, {in_fd, POLLIN, 0}};
    const timespec ts{static_cast<time_t>(wait_ns / 1'000'000'000), static_cast<long>(wait_ns % 1'000'000'000)};
    (void)::ppoll(fds, input_open ? 2 : 1, &ts, nullptr);
  }
  json counters = to_json((*nic)->counters());
  counters["ev"] = "counters";
  counters["outstanding_messages"] = (*nic)->outstanding_messages();
  counters["port_kernel_drops"] = port->stats().kernel_drops;
  // The NIC's own CPU time since it was ready: the soft NICs share the CPUs they run on,
  // and how busy they kept them says how late a NIC may have answered.
  if (const std::int64_t now_cpu = process_cpu_ns(); now_cpu >= 0 && ready_cpu_ns >= 0)
    counters["cpu_ns"] = now_cpu - ready_cpu_ns;
  counters["port_tx_errors"] = port->stats().tx_errors;
  counters["rx_processing"] = ss::to_json(rx_processing);
  counters["armed_posts"] = armed_posts;
  counters["armed_arrived_late"] = armed_arrived_late;
  counters["armed_late_max_ns"] = armed_late_max_ns;
  counters["armed_boosts"] = armed_boosts;
  counters["armed_boosts_refused"] = armed_boosts_refused;
  counters["armed_pins"] = armed_pins;
  counters["armed_pins_refused"] = armed_pins_refused;
  counters["armed_warmups"] = armed_warmups;
  const auto rp = (*nic)->dcqcn_counters();
  counters["dcqcn_rate_decreases"] = rp.rate_decreases;
  counters["dcqcn_fast_recovery"] = rp.fast_recovery;
  counters["dcqcn_additive_increase"] = rp.additive_increase;
  counters["dcqcn_hyper_increase"] = rp.hyper_increase;
  write_line(out_fd, counters);
  return status::success();
}

}  // namespace rocelab::traffic::soft_nic

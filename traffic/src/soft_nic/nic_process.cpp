// `rocelab nic-run`'s body (nic_process.hpp): reads the config line, opens the port and
// builds the NIC, then runs the timing core (nic_loop.hpp) and ends with the counters line.
#include "rocelab/traffic/soft_nic/nic_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "nic_frame_receiver.hpp"
#include "nic_loop.hpp"
#include "nic_port_sink.hpp"
#include "nic_post_scheduler.hpp"
#include "nic_process_io.hpp"
#include "nic_process_report.hpp"
#include "rocelab/captures/wire/roce.hpp"
#include "rocelab/common/realtime_section.hpp"
#include "rocelab/fabric/soft_switch/packet_port.hpp"
#include "rocelab/fabric/soft_switch/realtime_clock.hpp"
#include "rocelab/traffic/soft_nic/cpu_pin.hpp"
#include "rocelab/traffic/soft_nic/nic_channel.hpp"
#include "rocelab/traffic/soft_nic/roce_port_claim.hpp"
#include "rocelab/traffic/soft_nic/transmit_path_warmer.hpp"

namespace rocelab::traffic::soft_nic {

namespace ss = fabric::soft_switch;

namespace {

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

// The config line, the first on the input; waited for at most 10 s.
result<nic_process_config> read_config(int in_fd, line_reader& in) {
  const int flags = ::fcntl(in_fd, F_GETFL);
  if (flags < 0 || ::fcntl(in_fd, F_SETFL, flags | O_NONBLOCK) != 0) return status::from_errno("stdin O_NONBLOCK");
  const std::int64_t config_deadline = ss::monotonic_ns() + 10'000'000'000;
  std::string line;
  while (!in.next(line)) {
    if (ss::monotonic_ns() > config_deadline) return status(error_code::cancelled, "no config line within 10 s");
    pollfd p{in_fd, POLLIN, 0};
    (void)::poll(&p, 1, 100);
    if (!in.fill()) return status(error_code::malformed_input, "input closed before the config line");
  }
  const nlohmann::json cj = nlohmann::json::parse(line, nullptr, false);
  if (cj.is_discarded()) return status(error_code::malformed_input, "config line is not JSON");
  return nic_process_config_from_json(cj);
}

sent_event sent_event_of(const send_completion& c) {
  sent_event e;
  e.ref = c.tag;
  e.qpn = c.local_qpn;
  e.peer = c.peer;
  e.bytes = c.bytes;
  e.start_ns = c.start_ns;
  e.end_ns = c.end_ns;
  e.first_tx_ns = c.first_tx_ns;
  e.last_tx_ns = c.last_tx_ns;
  e.wire_bytes = c.wire_bytes;
  e.last_wire_bytes = c.last_wire_bytes;
  e.retransmits = c.retransmits;
  e.cnps = c.cnps;
  return e;
}

}  // namespace

status run_nic_process(int in_fd, int out_fd, const std::atomic<bool>& stop) {
  line_reader in(in_fd);
  auto cfg = read_config(in_fd, in);
  if (!cfg) return cfg.error();

  // Sleeps are down to microseconds here (pacing gaps at 1 Gb/s are a few us to tens of
  // us); the default 50 us timer slack would smear them.
  (void)::prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  if (cfg->rt_priority > 0) {
    if (!set_thread_priority(cfg->rt_priority))
      std::fprintf(stderr, "nic-run: SCHED_FIFO %d refused (%s); pacing and PFC reaction not bounded\n",
                   cfg->rt_priority, std::strerror(errno));
  }

  ss::packet_port_options po;
  po.ifname = cfg->ifname;
  po.frames = 1024;
  po.frame_bytes = 8192;
  auto port = ss::packet_port::open(po);
  if (!port) return port.error().with_context("opening " + cfg->ifname);
  // Held as long as the NIC runs (roce_port_claim.hpp).
  const auto claim = roce_port_claim::claim(captures::wire::roce_v2_udp_port);
  if (!claim)
    std::fprintf(stderr, "nic-run: %s; the namespace's kernel may answer RoCE frames with ICMP port unreachable\n",
                 claim.error().message().c_str());
  ss::realtime_clock clk;
  port_sink sink(*port);
  auto nic = rc_nic::create(cfg->nic, clk, sink);
  if (!nic) return nic.error();
  for (const auto& q : cfg->qps) ROCELAB_RETURN_IF_ERROR((*nic)->connect(q));
  (*nic)->on_send_complete([out_fd](const send_completion& c) { write_event(out_fd, sent_event_of(c)); });
  frame_receiver receiver(**nic, *port, out_fd);
  const std::size_t first_frame_bytes = warm_send_path(*cfg);
  auto warmer = transmit_path_warmer::open(first_frame_bytes);
  if (!warmer && cfg->start_rt_priority > 0)
    std::fprintf(stderr, "nic-run: no packet socket on lo; armed starts go without warming the transmit path\n");
  cpu_pin pin(cfg->start_cpu);
  write_event(out_fd, ready_event{ss::monotonic_ns()});
  const std::int64_t ready_cpu_ns = process_cpu_ns();  // the setup above is not the run's

  post_scheduler posts(**nic, *cfg, pin, warmer, out_fd);
  nic_loop loop{*cfg, stop, clk, *port, sink, **nic, receiver, posts, in, in_fd, out_fd};
  loop.run();
  write_event(out_fd, final_counters(**nic, *port, ready_cpu_ns, receiver.rx_processing(), posts.counters()));
  return status::success();
}

}  // namespace rocelab::traffic::soft_nic

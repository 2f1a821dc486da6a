#include "rocelab/traffic/soft_nic/nic_fleet.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <iostream>
#include <map>

#include "rocelab/common/unique_fd.hpp"
#include "rocelab/fabric/soft_switch/realtime_clock.hpp"
#include "rocelab/traffic/soft_nic/nic_process.hpp"

namespace rocelab::traffic::soft_nic {

using json = nlohmann::json;
namespace ss = fabric::soft_switch;

namespace {

struct child_process {
  std::string host;
  pid_t pid = -1;
  unique_fd to_child;    // its stdin
  unique_fd from_child;  // its stdout
  std::string buffer;
  bool ready = false;
  bool closed = false;
  json counters;
};

bool write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  int spins = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN && ++spins < 2000) {
        pollfd p{fd, POLLOUT, 0};
        (void)::poll(&p, 1, 5);
        continue;
      }
      return false;
    }
    off += static_cast<std::size_t>(n);
  }
  return true;
}

// fork + setns into the host's namespace + exec `rocelab nic-run`; the child's stdin and
// stdout are pipes to us, its stderr the log file.
result<child_process> spawn(const fleet_host& h, const fleet_options& o) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return status::from_errno("pipe");
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return status::from_errno("pipe");
  }
  child_process c;
  c.host = h.name;
  c.to_child = unique_fd(in[1]);
  c.from_child = unique_fd(out[0]);
  unique_fd child_in(in[0]), child_out(out[1]);
  const std::string log = o.log_dir.empty() ? "/dev/null" : o.log_dir + "/nic-" + h.name + ".log";
  const std::string ns_path = "/run/netns/" + h.netns;
  unique_fd log_fd(::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  unique_fd ns_fd(::open(ns_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!ns_fd.valid()) return status::from_errno("opening " + ns_path);
  const pid_t pid = ::fork();
  if (pid < 0) return status::from_errno("fork");
  if (pid == 0) {
    // Only async-signal-safe calls until exec.
    ::dup2(child_in.get(), 0);
    ::dup2(child_out.get(), 1);
    if (log_fd.valid()) ::dup2(log_fd.get(), 2);
    if (::setns(ns_fd.get(), CLONE_NEWNET) != 0) ::_exit(126);
    const char* argv[] = {o.rocelab_binary.c_str(), "nic-run", nullptr};
    ::execv(argv[0], const_cast<char* const*>(argv));
    ::_exit(127);
  }
  c.pid = pid;
  const int fl = ::fcntl(c.from_child.get(), F_GETFL);
  (void)::fcntl(c.from_child.get(), F_SETFL, fl | O_NONBLOCK);
  return c;
}

// Wire bytes of a message alone at line rate: the ideal FCT (serialisation only; the
// lab's propagation is negligible against it at its link rates).
std::int64_t ideal_fct_ns(std::uint64_t bytes, const nic_config& n) {
  const std::uint64_t packets = (bytes + n.mtu_bytes - 1) / n.mtu_bytes;
  // Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4, preamble and IFG 20, RETH 16 once.
  const std::uint64_t wire = bytes + packets * (14 + 20 + 8 + 12 + 4 + 4 + 20) + 16;
  return static_cast<std::int64_t>(static_cast<double>(wire) * 8e9 / static_cast<double>(n.line_rate_bps));
}

}  // namespace

class nic_fleet::impl final : public fabric::twin::twin_context {
 public:
  std::vector<fleet_host> lab_hosts;
  fleet_options options;
  std::vector<child_process> children;
  std::int64_t t0 = 0;
  std::int64_t callback_now = -1;  // ctx.now_ns() during a completion callback
  fabric::twin::workload* load = nullptr;
  std::vector<fabric::twin::message> messages;
  fleet_result out;
  std::multimap<std::int64_t, std::uint64_t> pending;        // start time -> message id
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::deque<std::uint64_t>> awaiting_delivery;
  std::size_t acknowledged = 0;
  status failure;

  [[nodiscard]] std::int64_t now_ns() const override {
    return callback_now >= 0 ? callback_now : ss::monotonic_ns() - t0;
  }
  [[nodiscard]] std::uint32_t hosts() const override { return static_cast<std::uint32_t>(lab_hosts.size()); }
  [[nodiscard]] double link_gbps() const override { return static_cast<double>(options.nic.line_rate_bps) / 1e9; }

  std::uint64_t post(const fabric::twin::message& m) override {
    const std::uint64_t id = messages.size();
    messages.push_back(m);
    flow_record r;
    r.src = m.src;
    r.dst = m.dst;
    r.qp = send_qpn(m.dst);
    r.priority = options.nic.data_priority;
    r.kind = m.kind;
    r.bytes = m.bytes;
    r.start_ns = std::max(now_ns(), m.start_ns);
    r.ideal_fct_ns = ideal_fct_ns(m.bytes, options.nic);
    r.tag = m.tag;
    out.records.flows.push_back(r);
    if (m.src >= children.size() || m.dst >= children.size() || m.src == m.dst || m.bytes == 0) {
      failure = status(error_code::invalid_argument, "workload posted an invalid message (src " +
                                                         std::to_string(m.src) + ", dst " + std::to_string(m.dst) + ")");
      return id;
    }
    if (r.start_ns > now_ns()) {
      pending.emplace(r.start_ns, id);
    } else {
      dispatch(id);
    }
    return id;
  }

  void report_allreduce(const allreduce_result& result) override { out.records.allreduce.push_back(result); }

  void dispatch(std::uint64_t id) {
    const auto& m = messages[id];
    awaiting_delivery[{m.src, m.dst}].push_back(id);
    const json j = {{"op", "post"}, {"qpn", send_qpn(m.dst)}, {"verb", "write"}, {"bytes", m.bytes}, {"ref", id}};
    if (!write_all(children[m.src].to_child.get(), j.dump() + "\n"))
      failure = status(error_code::io_error, "the NIC of " + children[m.src].host + " stopped taking commands");
  }

  void handle(std::uint32_t host, const json& e) {
    const std::string ev = e.value("ev", "");
    if (ev == "ready") {
      children[host].ready = true;
    } else if (ev == "counters") {
      children[host].counters = e;
    } else if (ev == "error") {
      failure = status(error_code::internal, "NIC of " + children[host].host + ": " + e.value("error", "?"));
    } else if (ev == "sent") {
      const auto id = e.value("ref", std::uint64_t{0});
      if (id >= out.records.flows.size()) return;
      flow_record& r = out.records.flows[id];
      if (r.completed()) return;
      r.start_ns = e.value("start_ns", std::int64_t{0}) - t0;
      r.end_ns = e.value("end_ns", std::int64_t{0}) - t0;
      r.fct_ns = r.end_ns - r.start_ns;
      r.retransmits = e.value("retransmits", std::uint64_t{0});
      r.cnps = e.value("cnps", std::uint64_t{0});
      ++acknowledged;
      callback_now = r.end_ns;
      const flow_record copy = r;  // the callback may post and grow the vector
      load->on_message_complete(id, messages[id], copy, *this);
      callback_now = -1;
    } else if (ev == "recv") {
      const auto src = e.value("peer", 0u);
      delivery d{src, host, e.value("bytes", std::uint64_t{0}), e.value("ce", std::uint64_t{0}),
                 e.value("end_ns", std::int64_t{0}) - t0};
      out.deliveries.push_back(d);
      auto& q = awaiting_delivery[{src, host}];
      if (!q.empty()) {
        out.records.flows[q.front()].ce_marked = d.ce_marked;
        q.pop_front();
      }
    }
  }

  // Reads whatever the children wrote, waiting at most wait_ms for the first byte.
  void pump(int wait_ms) {
    std::vector<pollfd> fds;
    for (auto& c : children) fds.push_back({c.closed ? -1 : c.from_child.get(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), wait_ms) <= 0) return;
    for (std::uint32_t i = 0; i < children.size(); ++i) {
      auto& c = children[i];
      if (c.closed || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      char buf[16384];
      for (;;) {
        const ssize_t n = ::read(c.from_child.get(), buf, sizeof buf);
        if (n > 0) {
          c.buffer.append(buf, static_cast<std::size_t>(n));
          continue;
        }
        if (n == 0) c.closed = true;
        break;
      }
      std::size_t nl;
      while ((nl = c.buffer.find('\n')) != std::string::npos) {
        const std::string line = c.buffer.substr(0, nl);
        c.buffer.erase(0, nl + 1);
        const json e = json::parse(line, nullptr, false);
        if (e.is_object()) handle(i, e);
      }
    }
  }

  void stop_children() {
    for (auto& c : children)
      if (c.pid > 0 && c.to_child.valid()) (void)write_all(c.to_child.get(), "{\"op\":\"stop\"}\n");
    const std::int64_t deadline = ss::monotonic_ns() + 3'000'000'000;
    auto all_closed = [&] {
      return std::all_of(children.begin(), children.end(), [](const child_process& c) { return c.closed; });
    };
    while (!all_closed() && ss::monotonic_ns() < deadline) pump(50);
    for (auto& c : children) {
      if (c.pid <= 0) continue;
      int st = 0;
      pid_t r = ::waitpid(c.pid, &st, WNOHANG);
      for (int i = 0; r == 0 && i < 40; ++i) {
        ::usleep(50'000);
        r = ::waitpid(c.pid, &st, WNOHANG);
      }
      if (r == 0) {
        std::cerr << "rocelab: NIC of " << c.host << " (pid " << c.pid << ") did not stop; killing it\n";
        ::kill(c.pid, SIGKILL);
        (void)::waitpid(c.pid, &st, 0);
      }
      c.pid = -1;
    }
  }

  ~impl() { stop_children(); }
};

nic_fleet::nic_fleet(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
nic_fleet::~nic_fleet() = default;

result<std::unique_ptr<nic_fleet>> nic_fleet::start(const std::vector<fleet_host>& hosts, const fleet_options& options) {
  if (hosts.size() < 2) return status(error_code::invalid_argument, "a fleet needs at least 2 hosts");
  if (options.rocelab_binary.empty()) return status(error_code::invalid_argument, "no rocelab binary");
  auto p = std::make_unique<impl>();
  p->lab_hosts = hosts;
  p->options = options;
  for (std::uint32_t i = 0; i < hosts.size(); ++i) {
    nic_process_config cfg;
    cfg.ifname = hosts[i].ifname;
    cfg.rt_priority = options.rt_priority;
    cfg.nic = options.nic;
    cfg.nic.local = hosts[i].address;
    for (std::uint32_t j = 0; j < hosts.size(); ++j) {
      if (j == i) continue;
      // Initial PSNs differ per direction (IBTA leaves them to the consumer; perftest
      // draws them at random) so a stray packet of one QP cannot pass for another's.
      qp_connection tx;
      tx.local_qpn = send_qpn(j);
      tx.remote_qpn = receive_qpn(i);
      tx.remote = hosts[j].address;
      tx.send_psn = (i * 0x10000u + j * 0x100u + 1) & 0xFFFFFFu;
      tx.recv_psn = (j * 0x10000u + i * 0x100u + 7) & 0xFFFFFFu;
      tx.udp_src_port = static_cast<std::uint16_t>(0xC000 + i * 64 + j);
      tx.peer = j;
      qp_connection rx;
      rx.local_qpn = receive_qpn(j);
      rx.remote_qpn = send_qpn(i);
      rx.remote = hosts[j].address;
      rx.send_psn = (i * 0x10000u + j * 0x100u + 7) & 0xFFFFFFu;
      rx.recv_psn = (j * 0x10000u + i * 0x100u + 1) & 0xFFFFFFu;
      rx.udp_src_port = static_cast<std::uint16_t>(0xD000 + i * 64 + j);
      rx.peer = j;
      cfg.qps.push_back(tx);
      cfg.qps.push_back(rx);
    }
    auto c = spawn(hosts[i], options);
    if (!c) return c.error().with_context("starting the NIC of " + hosts[i].name);
    p->children.push_back(std::move(*c));
    if (!write_all(p->children.back().to_child.get(), to_json(cfg).dump() + "\n"))
      return status(error_code::io_error, "sending the config to the NIC of " + hosts[i].name);
  }
  const std::int64_t deadline = ss::monotonic_ns() + options.ready_timeout.count() * 1'000'000;
  auto all_ready = [&] {
    return std::all_of(p->children.begin(), p->children.end(), [](const child_process& c) { return c.ready; });
  };
  while (!all_ready() && ss::monotonic_ns() < deadline) {
    p->pump(50);
    for (const auto& c : p->children)
      if (c.closed && !c.ready)
        return status(error_code::unavailable, "the NIC of " + c.host + " exited before it was ready (see its log)");
  }
  if (!all_ready()) return status(error_code::cancelled, "the NICs were not ready in time");
  return std::unique_ptr<nic_fleet>(new nic_fleet(std::move(p)));
}

result<fleet_result> nic_fleet::run(fabric::twin::workload& load, std::chrono::milliseconds timeout,
                                    const std::function<bool()>& cancel_requested) {
  impl& p = *impl_;
  p.load = &load;
  for (const auto& h : p.lab_hosts) {
    p.out.records.hosts.push_back(h.name);
    p.out.records.devices.push_back(h.name);
  }
  p.out.records.backend = "virtual";
  p.t0 = ss::monotonic_ns();
  load.start(p);
  const std::int64_t deadline = p.t0 + timeout.count() * 1'000'000;
  for (;;) {
    if (!p.failure.ok()) break;
    const std::int64_t now = ss::monotonic_ns();
    while (!p.pending.empty() && p.pending.begin()->first <= now - p.t0) {
      const auto id = p.pending.begin()->second;
      p.pending.erase(p.pending.begin());
      p.dispatch(id);
    }
    if (p.pending.empty() && p.acknowledged == p.messages.size()) break;
    if (now > deadline) break;
    if (cancel_requested && cancel_requested()) {
      p.out.cancelled = true;
      break;
    }
    std::int64_t wait_ns = 20'000'000;
    if (!p.pending.empty()) wait_ns = std::min(wait_ns, p.pending.begin()->first - (now - p.t0));
    p.pump(static_cast<int>(std::max<std::int64_t>(0, wait_ns / 1'000'000)));
    if (std::any_of(p.children.begin(), p.children.end(), [](const child_process& c) { return c.closed; })) {
      p.failure = status(error_code::unavailable, "a NIC process exited during the run (see its log)");
      break;
    }
  }
  // Deliveries of the last messages can trail their ACK slightly; give them a moment.
  for (int i = 0; i < 10; ++i) p.pump(10);
  p.out.completed = p.pending.empty() && p.acknowledged == p.messages.size();
  p.stop_children();
  for (auto& c : p.children) p.out.nic_counters.push_back(c.counters);
  if (!p.failure.ok()) return p.failure;
  for (const auto& f : p.out.records.flows) p.out.records.totals.retransmits += f.retransmits;
  for (const auto& c : p.out.nic_counters) p.out.records.totals.cnps += c.value("tx_cnps", std::uint64_t{0});
  return std::move(p.out);
}

}  // namespace rocelab::traffic::soft_nic

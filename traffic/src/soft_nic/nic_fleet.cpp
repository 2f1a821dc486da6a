#include "rocelab/traffic/soft_nic/nic_fleet.hpp"

#include <algorithm>
#include <climits>
#include <deque>
#include <map>
#include <set>
#include <variant>

#include "rocelab/fabric/soft_switch/realtime_clock.hpp"
#include "rocelab/traffic/soft_nic/nic_channel.hpp"
#include "rocelab/traffic/soft_nic/nic_process.hpp"

namespace rocelab::traffic::soft_nic {

using json = nlohmann::json;
namespace ss = fabric::soft_switch;

namespace {

constexpr std::int64_t no_first_tx = INT64_MIN;

// How far ahead of their instant `messages` armed posts are written: `base_ns` plus 20 us
// a post (the NICs, at a real-time priority, wake for each line). The opening schedule
// gets 50 ms (the NICs may still be settling), a completion's burst 2 ms.
std::int64_t arm_lead_ns(std::int64_t base_ns, std::size_t messages) {
  return base_ns + static_cast<std::int64_t>(std::min<std::size_t>(messages, 100'000)) * 20'000;
}

// Each sender's first message (earliest scheduled): when its NIC put its first data packet
// on the wire (first_tx_ns, on the run's timeline) against the schedule; a NIC that does
// not report it (a hardware NIC's job), when it started the message.
// Flows not started (lost hosts) have no say.
void record_start_offsets(run_records& r, const std::vector<std::int64_t>& scheduled_ns,
                          const std::vector<std::int64_t>& first_tx_ns,
                          std::map<std::string, std::int64_t>& first_scheduled_ns) {
  std::map<std::uint32_t, std::size_t> first;  // host -> message id
  for (std::size_t id = 0; id < r.flows.size() && id < scheduled_ns.size(); ++id) {
    const flow_record& f = r.flows[id];
    if (!f.completed()) continue;
    auto [it, fresh] = first.emplace(f.src, id);
    if (!fresh && scheduled_ns[id] < scheduled_ns[it->second]) it->second = id;
  }
  for (const auto& [host, id] : first) {
    if (host >= r.hosts.size()) continue;
    const bool on_wire = id < first_tx_ns.size() && first_tx_ns[id] != no_first_tx;
    r.start_offsets_ns[r.hosts[host]] = (on_wire ? first_tx_ns[id] : r.flows[id].start_ns) - scheduled_ns[id];
    first_scheduled_ns[r.hosts[host]] = scheduled_ns[id];
  }
  r.start_source = "nic";
}

}  // namespace

class nic_fleet::impl final : public fabric::twin::twin_context {
 public:
  struct nic_state {
    bool ready = false;
    bool lost = false;
    json counters;
  };
  std::vector<fleet_host> lab_hosts;
  fleet_options options;
  std::unique_ptr<nic_links> links;
  std::vector<nic_state> nics;
  std::vector<char> acked;       // per message
  std::vector<std::int64_t> scheduled_ns;  // per message: when the workload asked it to start
  std::vector<std::int64_t> first_tx_ns;   // per message, on the run's timeline; no_first_tx: not reported
  // While the workload's opening schedule is taken (run() before T0), or a completion
  // callback runs: the messages it posts to start at once. The opening schedule goes to
  // its NICs armed for T0 + each start; a callback's burst of two or more (the next round
  // of an incast) is armed for one instant shortly ahead, so its senders start together;
  // a callback's single post (a collective's next step) goes out at once.
  bool arming = false;
  std::vector<std::uint64_t> armed;
  std::size_t lost_unacked = 0;  // messages to or from a lost host, not acknowledged
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
    r.ideal_fct_ns = options.ideal_fct_ns ? options.ideal_fct_ns(m.src, m.dst, m.bytes) : 0;
    r.tag = m.tag;
    out.records.flows.push_back(r);
    acked.push_back(0);
    scheduled_ns.push_back(r.start_ns);
    first_tx_ns.push_back(no_first_tx);
    out.wire.emplace_back();
    if (m.src >= nics.size() || m.dst >= nics.size() || m.src == m.dst || m.bytes == 0) {
      failure = status(error_code::invalid_argument, "workload posted an invalid message (src " +
                                                         std::to_string(m.src) + ", dst " + std::to_string(m.dst) + ")");
      return id;
    }
    if (touches_lost(id)) {
      ++lost_unacked;  // never sent; its flow stays unfinished
      return id;
    }
    if (arming || (callback_now >= 0 && r.start_ns <= callback_now)) {
      armed.push_back(id);
    } else if (r.start_ns > now_ns()) {
      pending.emplace(r.start_ns, id);
    } else {
      dispatch(id);
    }
    return id;
  }

  void report_allreduce(const allreduce_result& result) override { out.records.allreduce.push_back(result); }

  [[nodiscard]] bool touches_lost(std::uint64_t id) const {
    return nics[messages[id].src].lost || nics[messages[id].dst].lost;
  }

  // The messages a completion callback posted to start at once (see `armed`).
  void dispatch_burst() {
    if (armed.size() == 1) dispatch(armed.front());
    if (armed.size() > 1) {
      // Never before T0: a completion reported early (a carrier's clock ahead) posts on the timeline.
      const std::int64_t at_ns = std::max(ss::monotonic_ns() + arm_lead_ns(2'000'000, armed.size()), t0);
      for (const std::uint64_t id : armed) dispatch(id, at_ns);
    }
    armed.clear();
  }

  // at_ns > 0: the NIC holds the post until that CLOCK_MONOTONIC instant (nic_process.hpp).
  void dispatch(std::uint64_t id, std::int64_t at_ns = 0) {
    const auto& m = messages[id];
    if (touches_lost(id)) return;  // counted in lost_unacked when its host was lost
    awaiting_delivery[{m.src, m.dst}].push_back(id);
    const post_command post{send_qpn(m.dst), verb::rdma_write, m.bytes, id, at_ns};
    if (!links->send(m.src, encode_line(post))) mark_lost(m.src, "its NIC stopped taking commands");
  }

  // A NIC gone mid-run: the run goes on without it (partial), its messages unfinished.
  void mark_lost(std::uint32_t host, const std::string& why) {
    if (nics[host].lost) return;
    nics[host].lost = true;
    out.lost_hosts.push_back(lab_hosts[host].name + ": " + why);
    lost_unacked = 0;
    for (std::uint64_t id = 0; id < messages.size(); ++id)
      if (!acked[id] && touches_lost(id)) ++lost_unacked;
    for (auto it = pending.begin(); it != pending.end();)
      it = touches_lost(it->second) ? pending.erase(it) : std::next(it);
  }

  void check_lost() {
    for (std::uint32_t h = 0; h < nics.size(); ++h)
      if (!nics[h].lost)
        if (auto why = links->lost(h); !why.empty()) mark_lost(h, why);
  }

  [[nodiscard]] bool all_done() const { return pending.empty() && acknowledged + lost_unacked == messages.size(); }

  // A line a NIC's carrier handed on. One the channel cannot read fails the run: the
  // NIC and the fleet no longer agree on what was said.
  void on_line(std::uint32_t host, const std::string& line) {
    auto e = decode_event_line(line);
    if (!e) {
      if (failure.ok()) failure = e.error().with_context("NIC of " + lab_hosts[host].name);
      return;
    }
    std::visit([&](const auto& event) { handle(host, event); }, *e);
  }

  void handle(std::uint32_t host, const ready_event&) { nics[host].ready = true; }
  void handle(std::uint32_t host, const counters_event& e) { nics[host].counters = e.counters; }
  void handle(std::uint32_t host, const error_event& e) {
    failure = status(error_code::internal, "NIC of " + lab_hosts[host].name + ": " + e.error);
  }

  void handle(std::uint32_t, const sent_event& e) {
    const std::uint64_t id = e.ref;
    if (id >= out.records.flows.size()) return;
    flow_record& r = out.records.flows[id];
    if (r.completed() || acked[id]) return;
    acked[id] = 1;
    if (touches_lost(id)) --lost_unacked;
    r.start_ns = e.start_ns - t0;
    r.end_ns = e.end_ns - t0;
    if (e.first_tx_ns && *e.first_tx_ns > 0) first_tx_ns[id] = *e.first_tx_ns - t0;
    if (first_tx_ns[id] != no_first_tx && e.last_tx_ns && *e.last_tx_ns > 0) {
      message_wire& w = out.wire[id];
      w.reported = true;
      w.first_tx_ns = first_tx_ns[id];
      w.last_tx_ns = *e.last_tx_ns - t0;
      w.wire_bytes = e.wire_bytes.value_or(0);
      w.last_wire_bytes = e.last_wire_bytes.value_or(0);
    }
    r.fct_ns = r.end_ns - r.start_ns;
    // Not counted per message (a hardware NIC): not measured.
    r.retransmits_measured = e.retransmits.has_value();
    r.retransmits = e.retransmits.value_or(0);
    r.cnps_measured = e.cnps.has_value();
    r.cnps = e.cnps.value_or(0);
    ++acknowledged;
    callback_now = r.end_ns;
    const flow_record copy = r;  // the callback may post and grow the vector
    load->on_message_complete(id, messages[id], copy, *this);
    callback_now = -1;
    dispatch_burst();
  }

  void handle(std::uint32_t host, const recv_event& e) {
    delivery d{e.peer, host, e.bytes, e.ce_marked, e.end_ns - t0};
    out.deliveries.push_back(d);
    auto& q = awaiting_delivery[{e.peer, host}];
    if (!q.empty()) {
      out.records.flows[q.front()].ce_marked = d.ce_marked;
      q.pop_front();
    }
  }

  void pump(int wait_ms) {
    links->receive(wait_ms, [this](std::uint32_t h, const std::string& line) { on_line(h, line); });
    check_lost();
  }

  void stop_nics() {
    if (links) links->stop([this](std::uint32_t h, const std::string& line) { on_line(h, line); });
  }

  ~impl() { stop_nics(); }
};

nic_fleet::nic_fleet(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
nic_fleet::~nic_fleet() = default;

std::vector<nic_process_config> fleet_configs(const std::vector<fleet_host>& hosts, const fleet_options& options) {
  std::vector<nic_process_config> out;
  for (std::uint32_t i = 0; i < hosts.size(); ++i) {
    nic_process_config cfg;
    cfg.ifname = hosts[i].ifname;
    cfg.rt_priority = options.rt_priority;
    cfg.start_rt_priority = options.start_rt_priority;
    if (!options.start_cpus.empty()) cfg.start_cpu = options.start_cpus[i % options.start_cpus.size()];
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
    out.push_back(std::move(cfg));
  }
  return out;
}

result<std::unique_ptr<nic_fleet>> nic_fleet::start(const std::vector<fleet_host>& hosts, const fleet_options& options) {
  if (hosts.size() < 2) return status(error_code::invalid_argument, "a fleet needs at least 2 hosts");
  auto p = std::make_unique<impl>();
  p->lab_hosts = hosts;
  p->options = options;
  p->nics.resize(hosts.size());
  fleet_options placed = options;
  if (!options.links && placed.start_cpus.empty()) placed.start_cpus = this_process_cpus();
  const auto configs = fleet_configs(hosts, placed);
  auto links = options.links ? options.links(hosts, configs) : start_nic_processes(hosts, configs, options);
  if (!links) return links.error();
  p->links = std::move(*links);
  const std::int64_t deadline = ss::monotonic_ns() + options.ready_timeout.count() * 1'000'000;
  auto all_ready = [&] {
    return std::all_of(p->nics.begin(), p->nics.end(), [](const impl::nic_state& n) { return n.ready; });
  };
  while (!all_ready() && ss::monotonic_ns() < deadline) {
    p->links->receive(50, [&](std::uint32_t h, const std::string& line) { p->on_line(h, line); });
    for (std::uint32_t h = 0; h < hosts.size(); ++h)
      if (!p->nics[h].ready)
        if (auto why = p->links->lost(h); !why.empty())
          return status(error_code::unavailable, "the NIC of " + hosts[h].name + " ended before it was ready: " + why);
  }
  if (!all_ready()) return status(error_code::cancelled, "the NICs were not ready in time");
  return std::unique_ptr<nic_fleet>(new nic_fleet(std::move(p)));
}

result<fleet_result> nic_fleet::run(fabric::twin::workload& load, std::chrono::milliseconds timeout,
                                    const std::function<bool()>& cancel_requested,
                                    const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  impl& p = *impl_;
  p.load = &load;
  for (const auto& h : p.lab_hosts) {
    p.out.records.hosts.push_back(h.name);
    p.out.records.devices.push_back(h.name);
  }
  p.out.records.backend = "virtual";
  // Armed start: the workload's opening schedule goes to the NICs before T0, each post
  // held by its NIC until T0 + its start, so every sender starts on its own clock; what
  // is posted later (completions' follow-ups) goes out when posted. T0 leaves time to
  // write the schedule.
  p.arming = true;
  p.callback_now = 0;
  load.start(p);
  p.callback_now = -1;
  p.arming = false;
  p.t0 = ss::monotonic_ns() + arm_lead_ns(50'000'000, p.armed.size());
  for (const std::uint64_t id : p.armed) p.dispatch(id, p.t0 + p.scheduled_ns[id]);
  p.armed.clear();
  const std::int64_t deadline = p.t0 + timeout.count() * 1'000'000;
  for (;;) {
    if (!p.failure.ok()) break;
    const std::int64_t now = ss::monotonic_ns();
    while (!p.pending.empty() && p.pending.begin()->first <= now - p.t0) {
      const auto id = p.pending.begin()->second;
      p.pending.erase(p.pending.begin());
      p.dispatch(id);
    }
    if (p.all_done()) break;
    if (now > deadline) break;
    if (cancel_requested && cancel_requested()) {
      p.out.cancelled = true;
      break;
    }
    if (progress) progress(p.acknowledged, p.messages.size());
    std::int64_t wait_ns = 20'000'000;
    if (!p.pending.empty()) wait_ns = std::min(wait_ns, p.pending.begin()->first - (now - p.t0));
    p.pump(static_cast<int>(std::max<std::int64_t>(0, wait_ns / 1'000'000)));
    if (std::all_of(p.nics.begin(), p.nics.end(), [](const impl::nic_state& n) { return n.lost; })) {
      p.failure = status(error_code::unavailable, "every NIC was lost during the run");
      break;
    }
  }
  // Deliveries of the last messages can trail their ACK slightly; give them a moment.
  for (int i = 0; i < 10; ++i) p.pump(10);
  p.out.completed = p.pending.empty() && p.acknowledged == p.messages.size();
  p.stop_nics();
  for (auto& n : p.nics) p.out.nic_counters.push_back(n.counters);
  if (!p.failure.ok()) return p.failure;
  auto& totals = p.out.records.totals;
  for (const auto& f : p.out.records.flows) {
    totals.retransmits += f.retransmits;
    // A completed flow whose NIC did not count its retransmits leaves the total unknown.
    if (f.completed() && !f.retransmits_measured) totals.retransmits_measured = false;
  }
  record_start_offsets(p.out.records, p.scheduled_ns, p.first_tx_ns, p.out.first_scheduled_ns);
  p.out.t0_ns = p.t0;
  // CNPs sent: every NIC's counters line must carry them (a hardware NIC's job reports its
  // port's np_cnp_sent where the host has it), else the total is not measured.
  for (const auto& c : p.out.nic_counters) {
    if (c.is_object() && c.contains("tx_cnps") && c["tx_cnps"].is_number_unsigned())
      totals.cnps += c["tx_cnps"].get<std::uint64_t>();
    else
      totals.cnps_measured = false;
  }
  return std::move(p.out);
}

}  // namespace rocelab::traffic::soft_nic

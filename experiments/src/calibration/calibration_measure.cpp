#include "rocelab/experiments/calibration/calibration_measure.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <tuple>
#include <utility>

#include "rocelab/experiments/run/backend_traits.hpp"

namespace rocelab::experiments {

status calibration_refusal(const experiment_spec& spec) {
  switch (backend_traits_of(spec.backend).kind) {
    case backend_kind::virtual_lab:
      return status::success();
    case backend_kind::twin:
      return status(error_code::invalid_argument,
                    "backend twin: a twin is what a calibration is for, not what it measures; calibrate the lab the "
                    "twin stands beside (backend virtual here) and give the twin the file (twin.calibration: FILE)");
    case backend_kind::lab:
      return status(error_code::unsupported,
                    "backend lab: calibrating a hardware lab needs agents on it that report what the soft NICs and the "
                    "soft switch stamp themselves, and a verbs job reports none of it: each message's first and last "
                    "packet on the wire (post to first packet out), the NIC's receive stamp of a message's last packet "
                    "to its ACK out, and the switch's per-port forwarding latency (a hardware switch exposes no such "
                    "histogram; it takes a tapped or PTP-stamped capture on both sides of it). Calibrate the virtual "
                    "copy of this lab with --set backend=virtual");
    case backend_kind::unknown:
      break;
  }
  return status(error_code::invalid_argument, "backend '" + spec.backend + "': calibrate runs on backend virtual");
}

std::uint64_t line_rate_flow_bytes(double link_gbps) {
  constexpr std::uint64_t at_least_bytes = 2u << 20;
  constexpr double at_least_s = 0.030;
  const auto for_time = static_cast<std::uint64_t>(std::ceil(link_gbps * 1e9 * at_least_s / 8));
  return std::max(at_least_bytes, for_time);
}

namespace {

void add(calibration_plan& p, std::uint32_t src, std::uint32_t dst, std::uint64_t bytes, calibration_purpose why) {
  fabric::twin::message m;
  m.src = src;
  m.dst = dst;
  m.bytes = bytes;
  m.tag = p.messages.size();
  p.messages.push_back(m);
  p.purposes.push_back(why);
}

}  // namespace

calibration_plan make_calibration_plan(std::uint32_t hosts, std::uint32_t pings, double link_gbps) {
  calibration_plan p;
  p.hosts = hosts;
  p.receiver = 0;
  p.pings = pings;
  for (std::uint32_t i = 0; i < hosts; ++i) {
    if (i == p.receiver) continue;
    for (std::uint32_t k = 0; k < pings; ++k) add(p, i, p.receiver, calibration_ping_bytes, calibration_purpose::ping);
    for (std::uint32_t k = 0; k < pings; ++k) add(p, p.receiver, i, calibration_ping_bytes, calibration_purpose::ping);
  }
  const std::uint64_t bytes = line_rate_flow_bytes(link_gbps);
  for (std::uint32_t i = 0; i < hosts; ++i)
    add(p, i, i == p.receiver ? (p.receiver + 1) % hosts : p.receiver, bytes, calibration_purpose::line_rate);
  return p;
}

calibration_plan make_incast_plan(std::uint32_t hosts, std::uint64_t bytes) {
  calibration_plan p;
  p.hosts = hosts;
  p.receiver = 0;
  if (hosts < 3) return p;
  add(p, 1, 0, bytes, calibration_purpose::incast);
  add(p, 2, 0, bytes, calibration_purpose::incast);
  return p;
}

void calibration_workload::post(std::size_t i, fabric::twin::twin_context& ctx) {
  fabric::twin::message m = plan_.messages[i];
  m.start_ns = ctx.now_ns();
  (void)ctx.post(m);
}

void calibration_workload::start(fabric::twin::twin_context& ctx) {
  for (next_ = 0; next_ < plan_.messages.size(); ++next_) {
    post(next_, ctx);
    if (plan_.purposes[next_] != calibration_purpose::incast) {
      ++next_;
      break;
    }
  }
}

void calibration_workload::on_message_complete(std::uint64_t, const fabric::twin::message& m, const flow_record&,
                                               fabric::twin::twin_context& ctx) {
  if (m.tag >= plan_.purposes.size() || plan_.purposes[m.tag] == calibration_purpose::incast) return;
  if (next_ < plan_.messages.size()) post(next_++, ctx);
}

double achieved_gbps(const wire_span& w) {
  const std::int64_t span_ns = w.last_tx_ns - w.first_tx_ns;
  const std::int64_t bytes = w.wire_bytes - w.last_wire_bytes;
  if (span_ns <= 0 || bytes <= 0) return 0;
  return static_cast<double>(bytes) * 8 / static_cast<double>(span_ns);
}

std::vector<std::int64_t> cnp_loop_samples(std::span<const loop_frame> frames, std::int64_t link_bps) {
  using address = std::array<std::uint8_t, 16>;
  struct marked {
    std::int64_t t_ns;
    std::int64_t serialization_ns;
  };
  // Per flow (sender, receiver): its CE-marked data packets not yet paired, in order.
  std::map<std::pair<address, address>, std::deque<marked>> waiting;
  const auto serialization_ns = [&](std::uint32_t wire_bytes) {
    return link_bps > 0 ? static_cast<std::int64_t>(wire_bytes) * 8'000'000'000 / link_bps : 0;
  };
  std::vector<std::int64_t> out;
  for (const loop_frame& f : frames) {
    if (!f.cnp) {
      waiting[{f.ip_src, f.ip_dst}].push_back({f.t_ns, serialization_ns(f.wire_bytes)});
      continue;
    }
    auto it = waiting.find({f.ip_dst, f.ip_src});
    if (it == waiting.end()) continue;
    auto& q = it->second;
    const std::int64_t cnp_in_ns = serialization_ns(f.wire_bytes);
    // The latest packet that could have set this CNP off.
    std::size_t trigger = q.size();
    for (std::size_t k = 0; k < q.size(); ++k)
      if (q[k].t_ns + q[k].serialization_ns + cnp_in_ns <= f.t_ns) trigger = k;
    if (trigger == q.size()) continue;
    out.push_back(f.t_ns - q[trigger].t_ns);
    q.erase(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(trigger) + 1);
  }
  return out;
}

calibration measure_calibration(const calibration_plan& plan, const calibration_stamps& stamps) {
  calibration c;
  const auto name = [&](std::uint32_t h) {
    return h < stamps.hosts.size() ? stamps.hosts[h] : "h" + std::to_string(h + 1);
  };
  std::vector<std::vector<std::int64_t>> send(plan.hosts);
  std::vector<double> achieved(plan.hosts, 0.0);
  // Pairs in the order the plan pings them.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pair_order;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::int64_t>> rtts;
  for (std::size_t i = 0; i < plan.messages.size() && i < stamps.messages.size(); ++i) {
    const auto& m = plan.messages[i];
    const measured_message& s = stamps.messages[i];
    if (m.src >= plan.hosts) continue;
    if (s.wire_reported) send[m.src].push_back(s.wire.first_tx_ns - s.start_ns);
    if (plan.purposes[i] == calibration_purpose::ping) {
      const auto key = std::make_pair(m.src, m.dst);
      auto [it, fresh] = rtts.try_emplace(key);
      if (fresh) pair_order.push_back(key);
      if (s.end_ns >= 0) it->second.push_back(s.end_ns - s.start_ns);
    } else if (plan.purposes[i] == calibration_purpose::line_rate && s.wire_reported) {
      achieved[m.src] = achieved_gbps(s.wire);
    }
  }
  for (std::uint32_t h = 0; h < plan.hosts; ++h) {
    host_calibration hc;
    hc.name = name(h);
    hc.send_processing = fabric::delay_quantiles::of(send[h]);
    if (h < stamps.rx_processing.size()) hc.receive_processing = stamps.rx_processing[h].quantiles();
    if (h < stamps.tx_lateness.size()) hc.pacing_lateness = stamps.tx_lateness[h].quantiles();
    hc.achieved_gbps = achieved[h];
    c.hosts.push_back(std::move(hc));
  }
  for (const auto& key : pair_order)
    c.pairs.push_back({name(key.first), name(key.second), fabric::delay_quantiles::of(rtts[key])});
  for (std::uint32_t p = 0; p < stamps.forwarding.size(); ++p) c.ports.push_back({p, stamps.forwarding[p].quantiles()});
  c.cnp_loop = fabric::delay_quantiles::of(stamps.cnp_loop_ns);
  return c;
}

void take_delays_under_load(calibration& c, const calibration_stamps& loaded) {
  // Messages by QP in post order: one whose predecessor on the QP ended after its post
  // waited behind it.
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::vector<const measured_message*>> by_qp;
  for (const measured_message& m : loaded.messages) by_qp[{m.src, m.dst, m.qp}].push_back(&m);
  std::map<std::uint32_t, std::vector<std::int64_t>> send;
  for (auto& [qp, list] : by_qp) {
    std::stable_sort(list.begin(), list.end(), [](const auto* a, const auto* b) { return a->start_ns < b->start_ns; });
    std::int64_t busy_until = -1;
    bool busy_forever = false;
    for (const measured_message* m : list) {
      const bool qp_idle = !busy_forever && busy_until <= m->start_ns;
      if (qp_idle && m->wire_reported) send[m->src].push_back(m->wire.first_tx_ns - m->start_ns);
      if (m->end_ns < 0) busy_forever = true;
      busy_until = std::max(busy_until, m->end_ns);
    }
  }
  for (std::uint32_t h = 0; h < c.hosts.size(); ++h) {
    host_calibration& hc = c.hosts[h];
    if (auto it = send.find(h); it != send.end() && it->second.size() >= min_samples_under_load)
      hc.send_processing = fabric::delay_quantiles::of(it->second);
    auto take = [&](const std::vector<fabric::latency_histogram>& measured, fabric::delay_quantiles& into) {
      if (h >= measured.size()) return;
      const auto q = measured[h].quantiles();
      if (q.samples >= min_samples_under_load) into = q;
    };
    take(loaded.rx_processing, hc.receive_processing);
    take(loaded.tx_lateness, hc.pacing_lateness);
  }
  c.load = calibration_load_workload;
}

}  // namespace rocelab::experiments

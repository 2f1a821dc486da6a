#include "rocelab/experiments/run/virtual_accounting.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace rocelab::experiments {

namespace {

std::uint64_t count_of(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return 0;
  if (it->is_number_integer() && it->get<std::int64_t>() < 0) return 0;
  return it->get<std::uint64_t>();
}

std::string ms_text(std::int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

}  // namespace

result<switch_counts> parse_switch_counts(const nlohmann::json& c) {
  if (!c.is_object() || !c.contains("ports") || !c.at("ports").is_array())
    return status(error_code::malformed_input, "switch counters: no ports array");
  switch_counts out;
  for (const auto& p : c.at("ports")) {
    switch_port_counts s;
    s.rx_packets = count_of(p, "rx_packets");
    s.tx_packets = count_of(p, "tx_packets");
    s.pfc_tx_frames = count_of(p, "pfc_tx_frames");
    s.pfc_rx_frames = count_of(p, "pfc_rx_frames");
    s.ingress_limit_drops = count_of(p, "ingress_limit_drops");
    s.egress_limit_drops = count_of(p, "egress_limit_drops");
    s.headroom_drops = count_of(p, "headroom_drops");
    s.pool_drops = count_of(p, "pool_drops");
    s.ring_drops = count_of(p, "ring_drops");
    s.ring_wait_over_budget = count_of(p, "ring_wait_over_budget");
    s.ring_wait_max_ns = static_cast<std::int64_t>(count_of(p, "ring_wait_max_ns"));
    if (const auto q = p.find("queues"); q != p.end() && q->is_array())
      for (const auto& queue : *q) s.ecn_marked += count_of(queue, "ecn_marked");
    out.ports.push_back(s);
  }
  if (const auto m = c.find("mirror"); m != c.end() && m->is_object()) {
    out.mirror_frames = count_of(*m, "frames");
    out.mirror_pfc_frames = count_of(*m, "pfc_frames");
    out.mirror_arrival_frames = count_of(*m, "arrival_frames");
    out.mirror_errors = count_of(*m, "errors");
  }
  return out;
}

result<switch_counts> counts_since(const switch_counts& start, const switch_counts& end) {
  if (start.ports.size() != end.ports.size())
    return status(error_code::malformed_input, "switch counters: " + std::to_string(start.ports.size()) +
                                                   " ports at the start of the run, " +
                                                   std::to_string(end.ports.size()) + " at its end");
  status bad;
  auto minus = [&](std::uint64_t a, std::uint64_t b, const std::string& what) -> std::uint64_t {
    if (a >= b) return a - b;
    if (bad.ok())
      bad = status(error_code::malformed_input,
                   "switch counters: " + what + " went from " + std::to_string(b) + " to " + std::to_string(a) +
                       " during the run (the switch restarted or its counters were reset)");
    return 0;
  };
  switch_counts d;
  for (std::size_t i = 0; i < end.ports.size(); ++i) {
    const auto& a = end.ports[i];
    const auto& b = start.ports[i];
    const std::string p = "port " + std::to_string(i) + " ";
    switch_port_counts s;
    s.rx_packets = minus(a.rx_packets, b.rx_packets, p + "rx_packets");
    s.tx_packets = minus(a.tx_packets, b.tx_packets, p + "tx_packets");
    s.pfc_tx_frames = minus(a.pfc_tx_frames, b.pfc_tx_frames, p + "pfc_tx_frames");
    s.pfc_rx_frames = minus(a.pfc_rx_frames, b.pfc_rx_frames, p + "pfc_rx_frames");
    s.ingress_limit_drops = minus(a.ingress_limit_drops, b.ingress_limit_drops, p + "ingress_limit_drops");
    s.egress_limit_drops = minus(a.egress_limit_drops, b.egress_limit_drops, p + "egress_limit_drops");
    s.headroom_drops = minus(a.headroom_drops, b.headroom_drops, p + "headroom_drops");
    s.pool_drops = minus(a.pool_drops, b.pool_drops, p + "pool_drops");
    s.ring_drops = minus(a.ring_drops, b.ring_drops, p + "ring_drops");
    s.ecn_marked = minus(a.ecn_marked, b.ecn_marked, p + "ecn_marked");
    s.ring_wait_over_budget = minus(a.ring_wait_over_budget, b.ring_wait_over_budget, p + "ring_wait_over_budget");
    s.ring_wait_max_ns = a.ring_wait_max_ns;
    d.ports.push_back(s);
  }
  d.mirror_frames = minus(end.mirror_frames, start.mirror_frames, "mirror frames");
  d.mirror_pfc_frames = minus(end.mirror_pfc_frames, start.mirror_pfc_frames, "mirror pfc_frames");
  d.mirror_arrival_frames =
      minus(end.mirror_arrival_frames, start.mirror_arrival_frames, "mirror arrival_frames");
  d.mirror_errors = minus(end.mirror_errors, start.mirror_errors, "mirror errors");
  if (!bad.ok()) return bad;
  return d;
}

std::vector<std::string> degraded_reasons(const switch_counts& run, std::int64_t response_budget_ns) {
  std::vector<std::string> out;
  if (response_budget_ns <= 0) return out;
  for (std::size_t i = 0; i < run.ports.size(); ++i) {
    const auto& p = run.ports[i];
    if (p.ring_wait_over_budget == 0) continue;
    out.push_back("switch port " + std::to_string(i) + ": " + std::to_string(p.ring_wait_over_budget) +
                  " frames waited in its receive ring longer than the " + ms_text(response_budget_ns) +
                  " reaction budget the PFC headroom is sized for (longest " + ms_text(p.ring_wait_max_ns) + "); " +
                  (p.drops() > 0 ? "its " + std::to_string(p.drops()) +
                                       " drops are the host's scheduling, not the fabric's behaviour"
                                 : "no drops, but its pauses may have come late (the host's scheduling, not the "
                                   "fabric's behaviour)"));
  }
  return out;
}

std::optional<double> nic_cpu_busy(std::span<const std::int64_t> cpu_ns, std::int64_t span_ns, std::size_t nic_cpus) {
  if (cpu_ns.empty() || span_ns <= 0 || nic_cpus == 0) return std::nullopt;
  double total = 0;
  for (std::int64_t c : cpu_ns) {
    if (c < 0) return std::nullopt;
    total += static_cast<double>(c);
  }
  return total / (static_cast<double>(span_ns) * static_cast<double>(nic_cpus));
}

std::string nic_cpu_degraded_reason(double busy, std::size_t nic_cpus, std::size_t nics) {
  if (!(busy >= nic_cpu_busy_limit)) return {};
  const long percent = std::lround(busy * 100);
  return "the " + std::to_string(nics) + " soft NICs kept their " +
         (nic_cpus == 1 ? std::string("CPU ") : std::to_string(nic_cpus) + " CPUs ") + std::to_string(percent) +
         "% busy over the run: a NIC answered late whenever the others held the CPU, so short flows include the "
         "hosts' wait for it (the host's capacity, not the fabric's behaviour)";
}

capture_accounting account_capture(std::uint64_t mirrored, std::uint64_t mirror_errors, std::uint64_t captured,
                                   std::uint64_t reported_drops) {
  capture_accounting a;
  a.expected = mirrored + mirror_errors;
  a.captured = captured;
  const std::uint64_t missing = a.expected > captured ? a.expected - captured : 0;
  a.extra = captured > a.expected ? captured - a.expected : 0;
  a.loss = std::max(missing, reported_drops);
  return a;
}

}  // namespace rocelab::experiments

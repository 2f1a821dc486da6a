// Victims of PFC head-of-line blocking (definition in victims.hpp).

#include "rocelab/experiments/analysis/victims.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace rocelab::experiments {
namespace {

std::int64_t lifetime_end(const flow_record& f, std::int64_t end_of_run) {
  return f.completed() ? f.end_ns : std::max(f.start_ns, end_of_run);
}

}  // namespace

victim_analysis find_victims(const run_records& records, std::vector<flow_correlation>& flows,
                             const victim_options& options) {
  victim_analysis out;
  const queue_index queues(records.queues);
  const pause_index pauses(records.pauses);
  out.from_queue_samples = !queues.empty();
  const std::int64_t end_of_run = run_end_ns(records);

  // Fan-in: flows by (destination, priority).
  std::map<std::pair<std::uint32_t, std::uint8_t>, std::vector<std::size_t>> by_dst;
  for (std::size_t i = 0; i < records.flows.size(); ++i)
      by_dst[{records.flows[i].dst, records.flows[i].priority}].push_back(i);
  const auto shares_destination = [&](std::size_t i) {
    const flow_record& f = records.flows[i];
    const std::int64_t from = f.start_ns, to = lifetime_end(f, end_of_run);
    for (const std::size_t j : by_dst[{f.dst, f.priority}]) {
      if (j == i) continue;
      const flow_record& g = records.flows[j];
      if (g.start_ns < to && lifetime_end(g, end_of_run) > from) return true;
    }
    return false;
  };

  std::set<pause_index::key> congested;
  std::map<pause_index::key, victim_port> ports;
  std::vector<pause_index::span_ns> spans;
  for (flow_correlation& c : flows) {
    const flow_record& f = records.flows[c.flow];
    if (c.hops.empty() || !c.hops.back().hop.is_switch) continue;
    const std::int64_t from = f.start_ns, to = lifetime_end(f, end_of_run);
    const path_hop& last = c.hops.back().hop;
    const pause_index::key dst_port{last.device, last.egress_port, f.priority};
    const bool dst_congested =
        shares_destination(c.flow) &&
        (!out.from_queue_samples || queues.window(dst_port, from, to).max_bytes >= options.congested_queue_bytes);
    if (dst_congested) {
      congested.insert(dst_port);
      continue;
    }
    victim_flow v;
    v.flow = c.flow;
    spans.clear();
    for (std::size_t h = 0; h + 1 < c.hops.size(); ++h) {
      hop_exposure& e = c.hops[h];
      if (e.paused_ns < std::max<std::int64_t>(1, options.min_pause_ns)) continue;
      e.victim = true;
      v.hops.push_back(h);
      const pause_index::key k{e.hop.device, e.hop.egress_port, f.priority};
      pauses.clipped(k, from, to, spans);
      auto& p = ports[k];
      p.port = k;
      ++p.victims;
      p.victim_paused_ns += e.paused_ns;
    }
    if (v.hops.empty()) continue;
    v.victim_paused_ns = union_length_ns(spans);
    out.victims.push_back(std::move(v));
  }
  out.congested_ports.assign(congested.begin(), congested.end());
  for (auto& [k, p] : ports) out.ports.push_back(p);
  std::sort(out.ports.begin(), out.ports.end(), [](const victim_port& a, const victim_port& b) {
    return a.victims != b.victims ? a.victims > b.victims : a.victim_paused_ns > b.victim_paused_ns;
  });
  return out;
}

}  // namespace rocelab::experiments

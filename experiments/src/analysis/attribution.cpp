// Attribution of the slowest flows, rank correlations, pause summaries and PFC storms
// (see attribution.hpp).

#include "rocelab/experiments/analysis/attribution.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "rocelab/experiments/run/summary.hpp"

namespace rocelab::experiments {

std::vector<flow_attribution> attribute_tail(const run_records& records, std::span<const flow_correlation> flows,
                                             const attribution_options& options) {
  std::vector<double> slowdowns;
  for (const auto& c : flows)
    if (c.slowdown > 0) slowdowns.push_back(c.slowdown);
  std::vector<flow_attribution> out;
  if (slowdowns.empty()) return out;
  std::sort(slowdowns.begin(), slowdowns.end());
  const double cut = percentile(slowdowns, options.percentile);
  const double ns_per_byte = options.sender_gbps > 0 ? 8.0 / options.sender_gbps : 0.0;
  const double packet_ns = static_cast<double>(options.mtu_bytes + options.wire_overhead_bytes) * ns_per_byte;
  // Flows by sending and by receiving host, for the sharing term.
  const std::int64_t run_end = run_end_ns(records);
  const auto lifetime_end = [run_end](const flow_record& f) { return f.completed() ? f.end_ns : run_end; };
  std::map<std::uint32_t, std::vector<std::size_t>> by_src, by_dst;
  for (std::size_t i = 0; i < records.flows.size(); ++i) {
    by_src[records.flows[i].src].push_back(i);
    by_dst[records.flows[i].dst].push_back(i);
  }
  // Bytes the other flows of `group` moved during [start, end], each at an even pace
  // over its own lifetime.
  const auto shared_bytes = [&](const std::vector<std::size_t>& group, std::size_t self, std::int64_t start,
                                std::int64_t end) {
    double bytes = 0;
    for (const std::size_t j : group) {
      if (j == self) continue;
      const flow_record& g = records.flows[j];
      const std::int64_t g_end = lifetime_end(g);
      const std::int64_t overlap = std::min(end, g_end) - std::max(start, g.start_ns);
      if (overlap <= 0) continue;
      const std::int64_t life = std::max<std::int64_t>(1, g_end - g.start_ns);
      bytes += static_cast<double>(g.bytes) * static_cast<double>(overlap) / static_cast<double>(life);
    }
    return bytes;
  };
  for (const auto& c : flows) {
    if (c.slowdown <= 0 || c.slowdown < cut) continue;
    const flow_record& f = records.flows[c.flow];
    flow_attribution a;
    a.flow = c.flow;
    a.slowdown = c.slowdown;
    a.fct_ns = f.fct_ns;
    a.ideal_fct_ns = f.ideal_fct_ns;
    a.excess_ns = std::max<std::int64_t>(0, f.fct_ns - f.ideal_fct_ns);
    std::int64_t left = a.excess_ns;
    const auto take = [&left](double want) {
      const auto t = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::llround(std::max(0.0, want))), 0, left);
      left -= t;
      return t;
    };
    a.pause_ns = take(static_cast<double>(c.paused_ns));
    a.queueing_ns = take(c.queueing_ns.value_or(0));
    a.retransmission_measured = c.retransmits.has_value();
    a.retransmission_ns = take(static_cast<double>(c.retransmits.value_or(0)) * packet_ns);
    const double busier = std::max(shared_bytes(by_src[f.src], c.flow, f.start_ns, f.end_ns),
                                   shared_bytes(by_dst[f.dst], c.flow, f.start_ns, f.end_ns));
    a.sharing_ns = take(busier * ns_per_byte);
    a.unexplained_ns = left;
    out.push_back(a);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.slowdown != b.slowdown ? a.slowdown > b.slowdown : a.flow < b.flow;
  });
  return out;
}

namespace {

std::vector<double> ranks(std::span<const double> v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double mean_rank = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = mean_rank;
    i = j + 1;
  }
  return r;
}

}  // namespace

std::optional<double> spearman(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size() || x.size() < 3) return std::nullopt;
  const auto rx = ranks(x), ry = ranks(y);
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(rx.begin(), rx.end(), 0.0) / n;
  const double my = std::accumulate(ry.begin(), ry.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  if (sxx <= 0 || syy <= 0) return std::nullopt;
  return sxy / std::sqrt(sxx * syy);
}

std::vector<rank_correlation> slowdown_correlations(std::span<const flow_correlation> flows) {
  struct measure {
    const char* name;
    std::optional<double> (*get)(const flow_correlation&);
  };
  static constexpr measure measures[] = {
      {"pause_ns", [](const flow_correlation& c) -> std::optional<double> { return static_cast<double>(c.paused_ns); }},
      {"ce_fraction", [](const flow_correlation& c) -> std::optional<double> { return c.ce_fraction; }},
      {"cnps", [](const flow_correlation& c) -> std::optional<double> {
         if (!c.cnps) return std::nullopt;
         return static_cast<double>(*c.cnps);
       }},
      {"retransmits", [](const flow_correlation& c) -> std::optional<double> {
         if (!c.retransmits) return std::nullopt;
         return static_cast<double>(*c.retransmits);
       }},
      {"queueing_ns", [](const flow_correlation& c) { return c.queueing_ns; }},
  };
  std::vector<rank_correlation> out;
  for (const auto& m : measures) {
    std::vector<double> x, y;
    for (const auto& c : flows) {
      if (c.slowdown <= 0) continue;
      const auto v = m.get(c);
      if (!v) continue;
      x.push_back(*v);
      y.push_back(c.slowdown);
    }
    out.push_back({m.name, x.size(), spearman(x, y)});
  }
  return out;
}

std::vector<port_pause_summary> summarize_pauses(std::span<const pause_interval> pauses) {
  std::map<pause_index::key, port_pause_summary> by_port;
  for (const auto& p : pauses) {
    auto& s = by_port[{p.device, p.port, p.priority}];
    ++s.intervals;
    s.by_source_ns[static_cast<std::size_t>(p.source) % 3] += p.end_ns - p.start_ns;
  }
  const pause_index index(pauses);
  for (const auto& [k, spans] : index.merged()) {
    auto& s = by_port[k];
    s.port = k;
    for (const auto& sp : spans) {
      s.paused_ns += sp.end_ns - sp.start_ns;
      s.longest_ns = std::max(s.longest_ns, sp.end_ns - sp.start_ns);
    }
  }
  std::vector<port_pause_summary> out;
  for (auto& [k, s] : by_port) out.push_back(s);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.paused_ns != b.paused_ns ? a.paused_ns > b.paused_ns : a.port < b.port;
  });
  return out;
}

std::vector<pfc_storm> detect_storms(std::span<const pause_interval> pauses, const storm_options& options) {
  std::map<pause_index::key, std::vector<const pause_interval*>> by_port;
  for (const auto& p : pauses) by_port[{p.device, p.port, p.priority}].push_back(&p);
  std::vector<pfc_storm> out;
  for (auto& [k, v] : by_port) {
    std::sort(v.begin(), v.end(), [](const auto* a, const auto* b) { return a->start_ns < b->start_ns; });
    pfc_storm cur;
    bool open = false;
    const auto close = [&] {
      if (open && cur.end_ns - cur.start_ns > options.threshold_ns) out.push_back(cur);
      open = false;
    };
    for (const pause_interval* p : v) {
      if (open && p->start_ns <= cur.end_ns + options.merge_gap_ns) {
        cur.end_ns = std::max(cur.end_ns, p->end_ns);
      } else {
        close();
        cur = pfc_storm{k, p->start_ns, p->end_ns, {}};
        open = true;
      }
      if (std::find(cur.sources.begin(), cur.sources.end(), p->source) == cur.sources.end())
        cur.sources.push_back(p->source);
    }
    close();
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  return out;
}

}  // namespace rocelab::experiments

// Per-flow correlation of pauses, queues and marks (see correlation.hpp).

#include "rocelab/experiments/analysis/correlation.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <string_view>
#include <tuple>

#include "rocelab/fabric/twin/routing.hpp"

namespace rocelab::experiments {

path_fn twin_paths(const fabric::twin::topology_config& topology, std::uint64_t seed) {
  auto built = fabric::twin::fabric_routes::create(topology);
  if (!built) return {};
  std::shared_ptr<const fabric::twin::fabric_routes> routes = std::move(*built);
  return [routes, seed](const flow_record& f) {
    std::vector<path_hop> out;
    if (f.src >= routes->hosts() || f.dst >= routes->hosts()) return out;
    // Two NICs of one server: their local link, no hop of the fabric's.
    if (routes->graph().same_server(f.src, f.dst)) return out;
    std::vector<fabric::twin::hop> hops;
    routes->hops(f.src, f.dst, routes->path_code({f.src, f.dst, f.qp, 0, 0}, seed), hops);
    out.reserve(hops.size() + 1);
    out.push_back({routes->host_device(f.src), 0, 0, false});
    for (const auto& h : hops) out.push_back({h.device, h.ingress_port, h.egress_port, true});
    return out;
  };
}

path_fn single_switch_paths(single_switch_layout layout) {
  return [layout = std::move(layout)](const flow_record& f) {
    std::vector<path_hop> out;
    if (f.src >= layout.host_device.size() || f.dst >= layout.host_port.size() ||
        f.src >= layout.host_port.size())
      return out;
    out.push_back({layout.host_device[f.src], 0, 0, false});
    out.push_back({layout.switch_device, layout.host_port[f.src], layout.host_port[f.dst], true});
    return out;
  };
}

result<single_switch_layout> infer_single_switch_layout(const run_records& records) {
  single_switch_layout l;
  std::optional<std::uint32_t> sw;
  for (std::uint32_t d = 0; d < records.devices.size(); ++d) {
    const std::string& n = records.devices[d];
    if (n == "sw" || n == "sw0") {
      if (sw) return status(error_code::invalid_argument, "several switch devices (" + records.devices[*sw] + ", " + n + "): not a single-switch run");
      sw = d;
    }
  }
  if (!sw) return status(error_code::not_found, "no switch device (sw or sw0) in the run's devices");
  l.switch_device = *sw;
  for (std::uint32_t h = 0; h < records.hosts.size(); ++h) {
    const auto it = std::find(records.devices.begin(), records.devices.end(), records.hosts[h]);
    l.host_device.push_back(it != records.devices.end() ? static_cast<std::uint32_t>(it - records.devices.begin()) : h);
    l.host_port.push_back(h);
  }
  return l;
}

// ---------------------------------------------------------------- counters

namespace {

struct counter_name {
  bool rx = false;
  std::uint8_t priority = 0;
  bool duration = false;
};

// "rx_prio3_pause", "tx_prio3_pause_duration" (a "nic." or other dotted prefix allowed).
std::optional<counter_name> parse_pause_counter(std::string_view name) {
  if (const auto dot = name.rfind('.'); dot != std::string_view::npos) name.remove_prefix(dot + 1);
  counter_name c;
  if (name.starts_with("rx_prio")) c.rx = true;
  else if (!name.starts_with("tx_prio")) return std::nullopt;
  name.remove_prefix(7);
  if (name.empty() || name[0] < '0' || name[0] > '7') return std::nullopt;
  c.priority = static_cast<std::uint8_t>(name[0] - '0');
  name.remove_prefix(1);
  if (name == "_pause") return c;
  if (name == "_pause_duration") {
    c.duration = true;
    return c;
  }
  return std::nullopt;
}

void merge_sorted(std::vector<pause_index::span_ns>& v) {
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  std::size_t w = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i].end_ns < v[i].start_ns) continue;
    if (w > 0 && v[i].start_ns <= v[w - 1].end_ns) {
      v[w - 1].end_ns = std::max(v[w - 1].end_ns, v[i].end_ns);
    } else {
      v[w++] = v[i];
    }
  }
  v.resize(w);
}

}  // namespace

counter_pause_result pause_intervals_from_counters(std::span<const counter_sample> counters,
                                                   const counter_pause_options& options) {
  // (device, port, rx, priority) -> samples of frames and of duration.
  struct series {
    std::vector<std::pair<std::int64_t, std::uint64_t>> frames, duration;
  };
  std::map<std::tuple<std::uint32_t, std::uint32_t, bool, std::uint8_t>, series> by_key;
  for (const auto& c : counters) {
    const auto n = parse_pause_counter(c.name);
    if (!n) continue;
    auto& s = by_key[{c.device, c.port, n->rx, n->priority}];
    (n->duration ? s.duration : s.frames).emplace_back(c.t_ns, c.value);
  }
  counter_pause_result out;
  std::map<pause_index::key, std::vector<pause_index::span_ns>> spans;
  for (auto& [k, s] : by_key) {
    const auto [device, port, rx, priority] = k;
    pause_index::key target{device, port, priority};
    if (!rx) {
      if (!options.peer) continue;
      const auto p = options.peer(device, port);
      if (!p) continue;
      target = {p->first, p->second, priority};
    }
    auto by_time = [](const auto& a, const auto& b) { return a.first < b.first; };
    std::sort(s.frames.begin(), s.frames.end(), by_time);
    std::sort(s.duration.begin(), s.duration.end(), by_time);
    for (std::size_t i = 1; i < s.frames.size(); ++i)
      if (s.frames[i].second > s.frames[i - 1].second) out.frames += s.frames[i].second - s.frames[i - 1].second;
    const auto& use = s.duration.size() >= 2 ? s.duration : s.frames;
    const bool duration = s.duration.size() >= 2;
    for (std::size_t i = 1; i < use.size(); ++i) {
      const auto [t0, v0] = use[i - 1];
      const auto [t1, v1] = use[i];
      if (v1 <= v0 || t1 <= t0) continue;  // no pause, or a counter reset
      std::int64_t len = t1 - t0;
      if (duration)
        len = std::min<std::int64_t>(len, static_cast<std::int64_t>(static_cast<double>(v1 - v0) * options.duration_unit_ns));
      out.resolution_ns = std::max(out.resolution_ns, t1 - t0);
      spans[target].push_back({t1 - len, t1});
    }
  }
  for (auto& [k, v] : spans) {
    merge_sorted(v);
    for (const auto& s : v) out.intervals.push_back({k.device, k.port, k.priority, s.start_ns, s.end_ns, pause_source::counter});
  }
  return out;
}

// ---------------------------------------------------------------- pause_index

pause_index::pause_index(std::span<const pause_interval> pauses) {
  for (const auto& p : pauses) merged_[{p.device, p.port, p.priority}].push_back({p.start_ns, p.end_ns});
  for (auto& [k, v] : merged_) {
    merge_sorted(v);
    auto& pre = prefix_[k];
    pre.resize(v.size() + 1, 0);
    for (std::size_t i = 0; i < v.size(); ++i) pre[i + 1] = pre[i] + (v[i].end_ns - v[i].start_ns);
  }
}

std::int64_t pause_index::overlap_ns(const key& k, std::int64_t from_ns, std::int64_t to_ns) const {
  const auto it = merged_.find(k);
  if (it == merged_.end() || to_ns <= from_ns) return 0;
  const auto& v = it->second;
  const auto& pre = prefix_.at(k);
  // First interval ending after from, first starting at or after to.
  const auto lo = static_cast<std::size_t>(
      std::upper_bound(v.begin(), v.end(), from_ns, [](std::int64_t t, const span_ns& s) { return t < s.end_ns; }) - v.begin());
  const auto hi = static_cast<std::size_t>(
      std::lower_bound(v.begin(), v.end(), to_ns, [](const span_ns& s, std::int64_t t) { return s.start_ns < t; }) - v.begin());
  if (lo >= hi) return 0;
  std::int64_t total = pre[hi] - pre[lo];
  total -= std::max<std::int64_t>(0, from_ns - v[lo].start_ns);
  total -= std::max<std::int64_t>(0, v[hi - 1].end_ns - to_ns);
  return std::max<std::int64_t>(0, total);
}

void pause_index::clipped(const key& k, std::int64_t from_ns, std::int64_t to_ns, std::vector<span_ns>& out) const {
  const auto it = merged_.find(k);
  if (it == merged_.end() || to_ns <= from_ns) return;
  const auto& v = it->second;
  auto i = std::upper_bound(v.begin(), v.end(), from_ns, [](std::int64_t t, const span_ns& s) { return t < s.end_ns; });
  for (; i != v.end() && i->start_ns < to_ns; ++i)
    out.push_back({std::max(i->start_ns, from_ns), std::min(i->end_ns, to_ns)});
}

std::int64_t union_length_ns(std::vector<pause_index::span_ns> spans) {
  merge_sorted(spans);
  std::int64_t total = 0;
  for (const auto& s : spans) total += s.end_ns - s.start_ns;
  return total;
}

// ---------------------------------------------------------------- queue_index

queue_index::queue_index(std::span<const queue_sample> samples) {
  for (const auto& s : samples) samples_[{s.device, s.port, s.queue}].emplace_back(s.t_ns, s.bytes);
  for (auto& [k, v] : samples_)
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

queue_index::stats queue_index::window(const key& k, std::int64_t from_ns, std::int64_t to_ns) const {
  stats st;
  const auto it = samples_.find(k);
  if (it == samples_.end()) return st;
  const auto& v = it->second;
  // The step in force at from_ns: the last sample at or before it (0 before the first).
  auto i = std::upper_bound(v.begin(), v.end(), from_ns, [](std::int64_t t, const auto& s) { return t < s.first; });
  std::uint64_t depth = i == v.begin() ? 0 : std::prev(i)->second;
  if (to_ns <= from_ns) {
    st.mean_bytes = static_cast<double>(depth);
    st.max_bytes = depth;
    return st;
  }
  double area = 0;
  std::int64_t t = from_ns;
  st.max_bytes = depth;
  for (; i != v.end() && i->first < to_ns; ++i) {
    area += static_cast<double>(depth) * static_cast<double>(i->first - t);
    t = i->first;
    depth = i->second;
    st.max_bytes = std::max(st.max_bytes, depth);
  }
  area += static_cast<double>(depth) * static_cast<double>(to_ns - t);
  st.mean_bytes = area / static_cast<double>(to_ns - from_ns);
  return st;
}

// ---------------------------------------------------------------- flows

std::int64_t run_end_ns(const run_records& r) {
  std::int64_t end = r.simulated_ns;
  for (const auto& f : r.flows) end = std::max({end, f.end_ns, f.start_ns});
  for (const auto& p : r.pauses) end = std::max(end, p.end_ns);
  for (const auto& q : r.queues) end = std::max(end, q.t_ns);
  for (const auto& e : r.events) end = std::max(end, e.t_ns);
  return end;
}

std::vector<flow_correlation> correlate_flows(const run_records& records, const path_fn& paths,
                                              const correlation_options& options) {
  const pause_index pauses(records.pauses);
  const queue_index queues(records.queues);
  const std::int64_t end_of_run = run_end_ns(records);
  const std::uint32_t mtu = std::max<std::uint32_t>(1, options.mtu_bytes);
  std::vector<flow_correlation> out;
  out.reserve(records.flows.size());
  std::vector<pause_index::span_ns> spans;
  for (std::size_t i = 0; i < records.flows.size(); ++i) {
    const flow_record& f = records.flows[i];
    flow_correlation c;
    c.flow = i;
    c.packets = std::max<std::uint64_t>(1, (f.bytes + mtu - 1) / mtu);
    c.ce_fraction = std::min(1.0, static_cast<double>(f.ce_marked) / static_cast<double>(c.packets));
    if (f.cnps_measured) c.cnps = f.cnps;
    if (f.retransmits_measured) c.retransmits = f.retransmits;
    c.slowdown = f.slowdown();
    const std::int64_t from = f.start_ns, to = f.completed() ? f.end_ns : std::max(f.start_ns, end_of_run);
    spans.clear();
    if (paths) {
      for (const path_hop& h : paths(f)) {
        hop_exposure e;
        e.hop = h;
        const pause_index::key k{h.device, h.egress_port, f.priority};
        e.paused_ns = pauses.overlap_ns(k, from, to);
        pauses.clipped(k, from, to, spans);
        if (h.is_switch && !queues.empty()) {  // sampled runs: an absent queue was empty
          const auto st = queues.window(k, from, to);
          e.queue_mean_bytes = st.mean_bytes;
          e.queue_max_bytes = st.max_bytes;
          const double gbps = options.port_gbps ? options.port_gbps(h.device, h.egress_port) : options.default_port_gbps;
          if (gbps > 0) {
            e.queueing_ns = st.mean_bytes * 8.0 / gbps;  // bytes x 8 / (Gb/s) = ns
            c.queueing_ns = c.queueing_ns.value_or(0) + *e.queueing_ns;
          }
        }
        c.hops.push_back(e);
      }
    }
    c.paused_ns = union_length_ns(spans);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace rocelab::experiments

#include "rocelab/experiments/spec/hpcc_ns3.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "rocelab/common/bounded_file.hpp"
#include "rocelab/common/units.hpp"
#include "rocelab/fabric/twin/routing.hpp"
#include "rocelab/traffic/flow_list.hpp"

namespace rocelab::experiments {
namespace {

using fabric::twin::topology_config;

status error_at(const std::string& file, std::size_t line, const std::string& what) {
  return {error_code::malformed_input, file + ":" + std::to_string(line) + ": " + what};
}

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

template <typename T>
bool parse_number(const std::string& text, T& out) {
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && p == end;
}

bool parse_double(const std::string& text, double& out) {
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() && std::isfinite(out);
}

// Keys of the simulator's config that have no effect with CC_MODE 1 (they configure HPCC,
// TIMELY, DCTCP, windows or tracing); read and reported, not errors.
const std::set<std::string> ignored_keys = {
    "TRACE_FILE", "TRACE_OUTPUT_FILE", "ENABLE_TRACE", "DCTCP_RATE_AI", "L2_CHUNK_SIZE",
    "GLOBAL_T", "VAR_WIN", "FAST_REACT", "U_TARGET", "MI_THRESH", "INT_MULTI", "MULTI_RATE",
    "SAMPLE_FEEDBACK", "PINT_LOG_BASE", "PINT_PROB", "RATE_BOUND", "QLEN_MON_FILE",
    "QLEN_MON_START", "QLEN_MON_END"};

struct link {
  std::uint32_t a, b;
  double bps;
  std::int64_t delay_ns;
};

}  // namespace

result<hpcc_scenario> parse_hpcc_scenario(const hpcc_texts& texts) {
  hpcc_scenario sc;
  auto& cfg = sc.config;
  cfg.hpcc_ns3_compat = true;
  auto& dc = cfg.nic.dcqcn;
  // That simulator's DCQCN (rdma-hw.cc, CC_MODE 1): mlx-style alpha updates every
  // ALPHA_RESUME_INTERVAL, no byte counter, a CNP for every marked packet, alpha starting
  // at 1.
  dc.byte_counter_enabled = false;
  dc.min_time_between_cnps_us = 0;
  dc.alpha_update_on_cnp = false;
  dc.initial_alpha_value = 1024;
  dc.rate_to_set_on_first_cnp_mbps = 0;
  cfg.nic.dcqcn_enabled = false;
  cfg.switch_template.ports.resize(1);

  std::string topology_file, flow_file;
  std::int64_t buffer_mb = -1;
  bool dynamic_pfc = false;
  std::map<std::string, std::vector<std::pair<double, double>>> rate_maps;
  std::int64_t stop_ns = -1;
  std::vector<std::string> ignored;

  // --- config.txt ---
  std::istringstream in(texts.config);
  std::size_t lineno = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineno;
    const auto w = split_words(line);
    if (w.empty() || w[0][0] == '#') continue;
    const std::string& key = w[0];
    auto fail = [&](const std::string& what) { return error_at(texts.config_name, lineno, key + ": " + what); };
    auto arg = [&](std::size_t i) -> const std::string& {
      static const std::string none;
      return i < w.size() ? w[i] : none;
    };
    auto integer = [&](std::int64_t& v) { return parse_number(arg(1), v); };
    auto rate_mbps = [&](std::int64_t& mbps) -> status {
      auto bps = parse_rate_bps(arg(1));
      if (!bps) return fail(bps.error().message());
      mbps = std::llround(*bps / 1e6);
      return status::success();
    };
    const bool takes_list = key == "KMAX_MAP" || key == "KMIN_MAP" || key == "PMAX_MAP" || key == "LINK_DOWN";
    if (!takes_list && !ignored_keys.count(key) && w.size() != 2) return fail("expected one value");
    std::int64_t v = 0;
    double d = 0;
    if (key == "TOPOLOGY_FILE") {
      topology_file = arg(1);
    } else if (key == "FLOW_FILE") {
      flow_file = arg(1);
    } else if (key == "FCT_OUTPUT_FILE") {
      sc.fct_output = arg(1);
    } else if (key == "PFC_OUTPUT_FILE") {
      sc.pfc_output = arg(1);
    } else if (key == "ENABLE_QCN") {
      if (!integer(v)) return fail("expected 0 or 1, got '" + arg(1) + "'");
      cfg.nic.dcqcn_enabled = v != 0;
    } else if (key == "USE_DYNAMIC_PFC_THRESHOLD") {
      if (!integer(v)) return fail("expected 0 or 1, got '" + arg(1) + "'");
      dynamic_pfc = v != 0;
    } else if (key == "PACKET_PAYLOAD_SIZE") {
      if (!integer(v) || v < 64 || v > 9000) return fail("expected a payload size in bytes, got '" + arg(1) + "'");
      sc.payload_bytes = static_cast<std::uint32_t>(v);
      cfg.nic.mtu_bytes = sc.payload_bytes;
    } else if (key == "SIMULATOR_STOP_TIME") {
      if (!traffic::parse_seconds_ns(arg(1), stop_ns)) return fail("expected seconds, got '" + arg(1) + "'");
    } else if (key == "CC_MODE") {
      if (!integer(v)) return fail("expected a number, got '" + arg(1) + "'");
      if (v != 1) return fail("only CC_MODE 1 (DCQCN) is supported; HPCC, TIMELY and DCTCP modes are not");
    } else if (key == "ALPHA_RESUME_INTERVAL") {
      if (!integer(v) || v <= 0) return fail("expected microseconds, got '" + arg(1) + "'");
      dc.dce_tcp_rtt_us = v;
    } else if (key == "RATE_DECREASE_INTERVAL") {
      if (!integer(v) || v < 0) return fail("expected microseconds, got '" + arg(1) + "'");
      dc.rate_reduce_monitor_period_us = v;
    } else if (key == "CLAMP_TARGET_RATE") {
      if (!integer(v)) return fail("expected 0 or 1, got '" + arg(1) + "'");
      // rdma-hw.cc CheckRateDecreaseMlx: with CLAMP_TARGET_RATE 0 the target is still
      // clamped when a timer increase happened since the last cut (m_rpTimeStage != 0),
      // which is mlx5's clamp_tgt_rate_after_time_inc.
      dc.clamp_tgt_rate = v != 0;
      dc.clamp_tgt_rate_after_time_inc = true;
    } else if (key == "RP_TIMER") {
      if (!integer(v) || v <= 0) return fail("expected microseconds, got '" + arg(1) + "'");
      dc.rpg_time_reset_us = v;
    } else if (key == "EWMA_GAIN") {
      if (!parse_double(arg(1), d) || d <= 0 || d >= 1) return fail("expected a gain in (0, 1), got '" + arg(1) + "'");
      // The paper's g is (1024 - dce_tcp_g) / 1024 in mlx5's fixed point.
      dc.dce_tcp_g = 1024 - std::llround(d * 1024);
    } else if (key == "FAST_RECOVERY_TIMES") {
      if (!integer(v) || v < 0) return fail("expected a count, got '" + arg(1) + "'");
      dc.rpg_threshold = v;
    } else if (key == "RATE_AI") {
      ROCELAB_RETURN_IF_ERROR(rate_mbps(dc.rpg_ai_rate_mbps));
    } else if (key == "RATE_HAI") {
      ROCELAB_RETURN_IF_ERROR(rate_mbps(dc.rpg_hai_rate_mbps));
    } else if (key == "MIN_RATE") {
      ROCELAB_RETURN_IF_ERROR(rate_mbps(dc.rpg_min_rate_mbps));
    } else if (key == "ERROR_RATE_PER_LINK") {
      if (!parse_double(arg(1), d)) return fail("expected a probability, got '" + arg(1) + "'");
      if (d != 0) return fail("random link errors are not modelled; use 0");
    } else if (key == "L2_ACK_INTERVAL") {
      if (!integer(v) || v < 1) return fail("expected a packet count, got '" + arg(1) + "'");
      cfg.nic.ack_every_packets = static_cast<std::uint32_t>(v);
    } else if (key == "L2_BACK_TO_ZERO") {
      if (!integer(v)) return fail("expected 0 or 1, got '" + arg(1) + "'");
      if (v != 0) return fail("only go-back-N (0) is modelled, not go-back-to-zero");
    } else if (key == "HAS_WIN") {
      if (!integer(v)) return fail("expected 0 or 1, got '" + arg(1) + "'");
      if (v != 0) return fail("windowed senders are not modelled with DCQCN; use 0");
    } else if (key == "ACK_HIGH_PRIO") {
      if (!integer(v)) return fail("expected 0 or 1, got '" + arg(1) + "'");
      // Only the NIC sees it (RdmaEgressQueue::ack_q_idx = 0: ACKs ahead of data and
      // never paused, since nothing pauses queue 0); the switches keep ACKs in the
      // data's queue and priority group (SwitchNode::AckHighPrio stays 0 in third.cc),
      // so an ACK waits behind the data queued at its egress port and counts toward
      // that PG's PFC threshold. Without it the NIC pauses ACKs with the data.
      cfg.nic.ack_priority = -1;
      cfg.nic.control_pause_priority = v != 0 ? 0 : -1;
    } else if (key == "LINK_DOWN") {
      if (w.size() != 4 || w[1] != "0") return fail("link failures are not modelled; use 0 0 0");
    } else if (key == "KMAX_MAP" || key == "KMIN_MAP" || key == "PMAX_MAP") {
      std::int64_t n = 0;
      if (!parse_number(arg(1), n) || n < 1 || w.size() != static_cast<std::size_t>(2 + 2 * n))
        return fail("expected a count and that many (rate in bit/s, value) pairs");
      auto& pairs = rate_maps[key];
      for (std::int64_t i = 0; i < n; ++i) {
        double rate = 0, value = 0;
        if (!parse_double(w[2 + 2 * i], rate) || !parse_double(w[3 + 2 * i], value) || rate <= 0 || value < 0)
          return fail("pair " + std::to_string(i + 1) + " is not (rate, value)");
        pairs.emplace_back(rate, value);
      }
    } else if (key == "BUFFER_SIZE") {
      if (!integer(v) || v <= 0) return fail("expected megabytes, got '" + arg(1) + "'");
      buffer_mb = v;
    } else if (ignored_keys.count(key)) {
      ignored.push_back(key);
    } else {
      return error_at(texts.config_name, lineno, "unknown key " + key);
    }
  }
  if (!ignored.empty()) {
    std::string keys;
    for (const auto& k : ignored) keys += (keys.empty() ? "" : ", ") + k;
    sc.notes.push_back("no effect with CC_MODE 1, ignored: " + keys);
  }
  if (topology_file.empty()) return error_at(texts.config_name, lineno, "TOPOLOGY_FILE missing");
  if (flow_file.empty()) return error_at(texts.config_name, lineno, "FLOW_FILE missing");
  if (buffer_mb < 0) return error_at(texts.config_name, lineno, "BUFFER_SIZE missing");
  // That simulator's switch: BUFFER_SIZE in MiB (SwitchMmu::ConfigBufferSize(x*1024*1024)).
  cfg.switch_template.buffer_bytes = buffer_mb * 1024 * 1024;
  if (stop_ns >= 0) cfg.stop_ns = stop_ns;

  // ECN maps: thresholds in KB (x1000 bytes), keyed by link rate in bit/s.
  if (cfg.nic.dcqcn_enabled) {
    const auto& kmin = rate_maps["KMIN_MAP"];
    const auto& kmax = rate_maps["KMAX_MAP"];
    const auto& pmax = rate_maps["PMAX_MAP"];
    if (kmin.empty() || kmin.size() != kmax.size() || kmin.size() != pmax.size())
      return error_at(texts.config_name, lineno, "KMIN_MAP, KMAX_MAP and PMAX_MAP must list the same rates");
    for (std::size_t i = 0; i < kmin.size(); ++i) {
      if (kmin[i].first != kmax[i].first || kmin[i].first != pmax[i].first)
        return error_at(texts.config_name, lineno, "KMIN_MAP, KMAX_MAP and PMAX_MAP must list the same rates");
      fabric::twin::ecn_for_rate e;
      e.gbps = kmin[i].first / 1e9;
      e.ecn.enabled = true;
      e.ecn.kmin_bytes = std::llround(kmin[i].second * 1000);
      e.ecn.kmax_bytes = std::llround(kmax[i].second * 1000);
      e.ecn.pmax = pmax[i].second;
      cfg.ecn_by_rate.push_back(e);
    }
  }
  if (!dynamic_pfc) sc.notes.push_back("USE_DYNAMIC_PFC_THRESHOLD 0: static PFC thresholds as the twin's compat mode sets them");

  // --- topo.txt ---
  std::istringstream topo(texts.topology);
  lineno = 0;
  std::string line;
  auto next_line = [&](std::istringstream& s, std::size_t& n) {
    while (std::getline(s, line)) {
      ++n;
      if (!split_words(line).empty()) return true;
    }
    return false;
  };
  if (!next_line(topo, lineno)) return error_at(texts.topology_name, lineno, "empty");
  auto head = split_words(line);
  std::uint32_t nodes = 0, switches = 0, links = 0;
  if (head.size() < 3 || !parse_number(head[0], nodes) || !parse_number(head[1], switches) ||
      !parse_number(head[2], links) || switches == 0 || switches >= nodes)
    return error_at(texts.topology_name, lineno, "expected 'nodes switches links'");
  if (!next_line(topo, lineno)) return error_at(texts.topology_name, lineno, "switch ids missing");
  std::set<std::uint32_t> switch_set;
  for (const auto& word : split_words(line)) {
    std::uint32_t id = 0;
    if (!parse_number(word, id) || id >= nodes) return error_at(texts.topology_name, lineno, "bad switch id '" + word + "'");
    switch_set.insert(id);
  }
  if (switch_set.size() != switches) return error_at(texts.topology_name, lineno, "expected " + std::to_string(switches) + " switch ids");
  sc.hosts = nodes - switches;
  if (*switch_set.begin() != sc.hosts)
    return error_at(texts.topology_name, lineno, "hosts must be numbered first (0.." + std::to_string(sc.hosts - 1) + ")");
  std::vector<link> all_links;
  for (std::uint32_t i = 0; i < links; ++i) {
    if (!next_line(topo, lineno)) return error_at(texts.topology_name, lineno, "expected " + std::to_string(links) + " links");
    const auto lw = split_words(line);
    link l{};
    double error_rate = 0;
    if (lw.size() != 5 || !parse_number(lw[0], l.a) || !parse_number(lw[1], l.b) || l.a >= nodes || l.b >= nodes)
      return error_at(texts.topology_name, lineno, "expected 'src dst rate delay error'");
    auto bps = parse_rate_bps(lw[2]);
    if (!bps) return error_at(texts.topology_name, lineno, bps.error().message());
    auto delay = parse_duration_ns(lw[3]);
    if (!delay) return error_at(texts.topology_name, lineno, delay.error().message());
    if (!parse_double(lw[4], error_rate) || error_rate != 0)
      return error_at(texts.topology_name, lineno, "link error rates are not modelled; use 0");
    l.bps = *bps;
    l.delay_ns = *delay;
    all_links.push_back(l);
  }

  // The shape: one switch with every host, or leaves (with hosts, in blocks) and spines,
  // laid out as the twin's own topologies; any other graph as it is (topology kind graph).
  auto& topo_cfg = cfg.topology;
  topo_cfg.hosts = sc.hosts;
  const double host_bps = all_links.front().bps;
  const std::int64_t delay_ns = all_links.front().delay_ns;
  topo_cfg.link_gbps = host_bps / 1e9;
  topo_cfg.link_delay_ns = delay_ns;
  std::map<std::uint32_t, std::vector<std::uint32_t>> hosts_of;     // switch -> hosts
  std::map<std::uint32_t, std::vector<std::uint32_t>> switches_of;  // switch -> switches
  for (const auto& l : all_links) {
    const bool a_sw = switch_set.count(l.a), b_sw = switch_set.count(l.b);
    if (!a_sw && !b_sw) return error_at(texts.topology_name, lineno, "a link between two hosts");
    if (a_sw && b_sw) {
      switches_of[l.a].push_back(l.b);
      switches_of[l.b].push_back(l.a);
    } else {
      hosts_of[a_sw ? l.a : l.b].push_back(a_sw ? l.b : l.a);
    }
  }
  std::vector<std::uint32_t> leaves, spines;
  for (auto id : switch_set) (hosts_of.count(id) ? leaves : spines).push_back(id);
  // Why the topology is not one of the twin's own shapes; empty: it is.
  auto own_shape = [&]() -> std::string {
    for (const auto& l : all_links)
      if (l.delay_ns != delay_ns) return "links of different delays";
    for (const auto& l : all_links)
      if ((!switch_set.count(l.a) || !switch_set.count(l.b)) && l.bps != host_bps) return "host links of different speeds";
    if (switches == 1) {
      topo_cfg.type = topology_config::kind::single_switch;
      if (hosts_of[leaves.at(0)].size() != sc.hosts) return "not every host is on the switch";
      return {};
    }
    topo_cfg.type = topology_config::kind::leaf_spine;
    if (leaves.empty() || spines.empty() || sc.hosts % leaves.size() != 0)
      return "not a two-tier leaf-spine with the same number of hosts per leaf";
    const std::uint32_t per_leaf = sc.hosts / static_cast<std::uint32_t>(leaves.size());
    double uplink_bps = -1;
    for (std::size_t k = 0; k < leaves.size(); ++k) {
      auto hs = hosts_of[leaves[k]];
      std::sort(hs.begin(), hs.end());
      for (std::uint32_t j = 0; j < hs.size(); ++j)
        if (hs.size() != per_leaf || hs[j] != k * per_leaf + j)
          return "hosts must sit in blocks of " + std::to_string(per_leaf) + " per leaf, in leaf order";
      std::set<std::uint32_t> ups(switches_of[leaves[k]].begin(), switches_of[leaves[k]].end());
      if (ups != std::set<std::uint32_t>(spines.begin(), spines.end()) || ups.size() != switches_of[leaves[k]].size())
        return "every leaf must link once to every spine";
    }
    for (const auto& l : all_links) {
      if (!(switch_set.count(l.a) && switch_set.count(l.b))) continue;
      if (uplink_bps < 0) uplink_bps = l.bps;
      if (l.bps != uplink_bps) return "uplinks of different speeds";
    }
    topo_cfg.leaves = static_cast<std::uint32_t>(leaves.size());
    topo_cfg.spines = static_cast<std::uint32_t>(spines.size());
    topo_cfg.spine_link_gbps = uplink_bps / 1e9;
    return {};
  };
  if (const std::string why = own_shape(); why.empty()) {
    sc.switch_nodes = leaves;
    sc.switch_nodes.insert(sc.switch_nodes.end(), spines.begin(), spines.end());
  } else {
    // As ns-3 builds it: switch devices in node id order, ports in link order, routed by
    // shortest paths with ECMP over every equal-cost next hop (fabric/twin/routing.hpp).
    sc.notes.push_back("topology: " + why + ", so not a leaf-spine: the twin builds the graph as it is");
    topo_cfg = topology_config{};
    topo_cfg.type = topology_config::kind::graph;
    topo_cfg.hosts = sc.hosts;
    topo_cfg.link_gbps = host_bps / 1e9;
    topo_cfg.link_delay_ns = delay_ns;
    topo_cfg.switches = switches;
    sc.switch_nodes.assign(switch_set.begin(), switch_set.end());
    for (const auto& l : all_links) topo_cfg.links.push_back({l.a, l.b, l.bps / 1e9, l.delay_ns});
  }
  // Switches pick among next hops with the simulator's own hash, seeded with their node ids.
  topo_cfg.ecmp = topology_config::ecmp_kind::hpcc_ns3;
  topo_cfg.ecmp_seeds = sc.switch_nodes;
  // The template queues' ECN: the entry for host-speed ports.
  for (const auto& e : cfg.ecn_by_rate)
    if (std::abs(e.gbps - topo_cfg.link_gbps) < 1e-9)
      for (auto& q : cfg.switch_template.ports[0].queues) q.ecn = e.ecn;

  // --- flow.txt ---
  auto flows = traffic::parse_flow_list(texts.flows, texts.flows_name, sc.hosts, traffic::flow_list_format::hpcc_ns3);
  if (!flows) return flows.error();
  // The simulator's portNumder: source ports from 10000 per (src, dst) pair, in flow order.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint16_t> next_sport;
  for (const fabric::twin::message& m : flows->messages) {
    hpcc_flow f;
    f.src = m.src;
    f.dst = m.dst;
    f.priority = static_cast<std::uint8_t>(m.priority);
    f.dport = m.udp_dport;
    f.bytes = m.bytes;
    f.start_ns = m.start_ns;
    f.sport = next_sport.try_emplace({f.src, f.dst}, std::uint16_t{10000}).first->second++;
    sc.flows.push_back(f);
  }

  const std::filesystem::path base(texts.base_dir);
  if (!sc.fct_output.empty()) sc.fct_output = (base / sc.fct_output).lexically_normal().string();
  if (!sc.pfc_output.empty()) sc.pfc_output = (base / sc.pfc_output).lexically_normal().string();
  return sc;
}

result<hpcc_scenario> load_hpcc_scenario(const std::string& config_path) {
  auto read = [](const std::filesystem::path& p) -> result<std::string> {
    return read_bounded_file(p.string(), max_scenario_file_bytes, "HPCC scenario file");
  };
  const std::filesystem::path config(config_path);
  const auto dir = config.has_parent_path() ? config.parent_path() : std::filesystem::path(".");
  hpcc_texts texts;
  auto c = read(config);
  if (!c) return c.error();
  texts.config = std::move(*c);
  texts.config_name = config.string();
  texts.base_dir = dir.string();
  // The topology and flow files are named in the config, relative to the simulator's
  // working directory: the config's folder here.
  std::string topo_name, flow_name;
  std::istringstream in(texts.config);
  for (std::string line; std::getline(in, line);) {
    const auto w = split_words(line);
    if (w.size() >= 2 && w[0] == "TOPOLOGY_FILE") topo_name = w[1];
    if (w.size() >= 2 && w[0] == "FLOW_FILE") flow_name = w[1];
  }
  if (topo_name.empty() || flow_name.empty())
    return status(error_code::malformed_input, texts.config_name + ": TOPOLOGY_FILE or FLOW_FILE missing");
  auto t = read(dir / topo_name);
  if (!t) return t.error();
  auto f = read(dir / flow_name);
  if (!f) return f.error();
  texts.topology = std::move(*t);
  texts.flows = std::move(*f);
  texts.topology_name = (dir / topo_name).lexically_normal().string();
  texts.flows_name = (dir / flow_name).lexically_normal().string();
  return parse_hpcc_scenario(texts);
}

std::vector<fabric::twin::message> hpcc_messages(const hpcc_scenario& sc) {
  std::vector<fabric::twin::message> out;
  out.reserve(sc.flows.size());
  for (std::size_t i = 0; i < sc.flows.size(); ++i) {
    const auto& f = sc.flows[i];
    fabric::twin::message m;
    m.src = f.src;
    m.dst = f.dst;
    m.bytes = f.bytes;
    m.start_ns = f.start_ns;
    m.priority = f.priority;
    m.tag = i;
    m.udp_sport = f.sport;
    m.udp_dport = f.dport;
    out.push_back(m);
  }
  return out;
}

namespace {

// third.cc: pairRtt = 2 x (sum of link delays) + sum over hops of one payload's
// serialization; standalone_fct = pairRtt + (bytes + packets x 48 header bytes) x 8 /
// (the path's slowest link). 48: CustomHeader's whole header minus the INT header. The
// path is the one its breadth-first route search found first: on a graph, the routes'
// first next hop at every switch.
std::int64_t ideal_fct_on(const hpcc_scenario& sc, const hpcc_flow& f, const fabric::twin::fabric_routes* routes) {
  const auto& t = sc.config.topology;
  const double host_bps = t.link_gbps * 1e9;
  std::vector<double> hops{host_bps, host_bps};
  std::int64_t delay = 0;
  if (t.type == topology_config::kind::graph && routes != nullptr && f.src < routes->hosts() && f.dst < routes->hosts()) {
    const auto& g = routes->graph();
    hops = {g.host(f.src).link.gbps * 1e9};
    delay = g.host(f.src).link.delay_ns;
    std::vector<fabric::twin::hop> path;
    routes->hops(f.src, f.dst, 0, path);
    for (const auto& h : path) {
      const auto& p = g.switch_at(h.device).ports[h.egress_port];
      hops.push_back(p.gbps * 1e9);
      delay += p.delay_ns;
    }
  } else {
    if (t.type == topology_config::kind::leaf_spine) {
      const std::uint32_t per_leaf = t.hosts / t.leaves;
      if (f.src / per_leaf != f.dst / per_leaf) {
        const double up = t.spine_link_gbps * 1e9;
        hops = {host_bps, up, up, host_bps};
      }
    }
    delay = static_cast<std::int64_t>(hops.size()) * t.link_delay_ns;
  }
  double tx = 0;
  for (double bps : hops) tx += sc.payload_bytes * 8e9 / bps;
  const std::uint64_t packets = (f.bytes + sc.payload_bytes - 1) / sc.payload_bytes;
  const double total_bits = static_cast<double>(f.bytes + packets * 48) * 8;
  const double bottleneck = *std::min_element(hops.begin(), hops.end());
  return 2 * delay + static_cast<std::int64_t>(tx) + static_cast<std::int64_t>(total_bits * 1e9 / bottleneck);
}

std::shared_ptr<const fabric::twin::fabric_routes> graph_routes(const hpcc_scenario& sc) {
  if (sc.config.topology.type != topology_config::kind::graph) return nullptr;
  auto r = fabric::twin::fabric_routes::create(sc.config.topology);
  return r ? *r : nullptr;
}

}  // namespace

std::int64_t hpcc_ideal_fct_ns(const hpcc_scenario& sc, const hpcc_flow& f) {
  return ideal_fct_on(sc, f, graph_routes(sc).get());
}

namespace {
std::uint32_t node_ip(std::uint32_t node) { return 0x0b000001u + (node << 8); }
}  // namespace

std::string format_hpcc_fct(const hpcc_scenario& sc, const run_records& records) {
  std::vector<const flow_record*> done;
  for (const auto& r : records.flows)
    if (r.completed() && r.tag < sc.flows.size()) done.push_back(&r);
  std::stable_sort(done.begin(), done.end(), [](const flow_record* a, const flow_record* b) {
    return a->end_ns != b->end_ns ? a->end_ns < b->end_ns : a->tag < b->tag;
  });
  std::string out;
  char line[160];
  const auto routes = graph_routes(sc);
  for (const flow_record* r : done) {
    const hpcc_flow& f = sc.flows[r->tag];
    std::snprintf(line, sizeof line, "%08x %08x %u %u %llu %lld %lld %lld\n", node_ip(f.src), node_ip(f.dst),
                  f.sport, f.dport, static_cast<unsigned long long>(f.bytes), static_cast<long long>(f.start_ns),
                  static_cast<long long>(r->fct_ns), static_cast<long long>(ideal_fct_on(sc, f, routes.get())));
    out += line;
  }
  return out;
}

std::string format_hpcc_pfc(const hpcc_scenario& sc, const run_records& records) {
  // Device names the twin gives: "hN" (host N-1), "sw0", "leafK", "spineK", and on a graph
  // "swK" (switch K in node id order). ns-3 node ids: hosts 0..H-1, switches as listed in
  // topo.txt (leaves, then spines, on a leaf-spine).
  const auto& t = sc.config.topology;
  const std::uint32_t leaves = t.type == topology_config::kind::leaf_spine ? t.leaves : 1;
  auto node_of = [&](const std::string& name, bool& is_switch) -> std::int64_t {
    auto index = [&](std::size_t prefix) -> std::int64_t {
      std::uint32_t v = 0;
      return parse_number(name.substr(prefix), v) ? v : -1;
    };
    is_switch = true;
    if (name.rfind("sw", 0) == 0) { auto i = index(2); return i >= 0 && static_cast<std::size_t>(i) < sc.switch_nodes.size() ? sc.switch_nodes[i] : -1; }
    if (name.rfind("leaf", 0) == 0) { auto i = index(4); return i >= 0 && i < leaves ? sc.switch_nodes[i] : -1; }
    if (name.rfind("spine", 0) == 0) { auto i = index(5); return i >= 0 && static_cast<std::size_t>(leaves + i) < sc.switch_nodes.size() ? sc.switch_nodes[leaves + i] : -1; }
    is_switch = false;
    if (name.rfind("h", 0) == 0) { auto i = index(1); return i >= 1 && static_cast<std::uint32_t>(i) <= sc.hosts ? i - 1 : -1; }
    return -1;
  };
  struct event {
    std::int64_t t;
    std::int64_t node;
    int node_type, ifindex, type;
  };
  std::vector<event> events;
  for (const auto& p : records.pauses) {
    if (p.device >= records.devices.size()) continue;
    bool is_switch = false;
    const std::int64_t node = node_of(records.devices[p.device], is_switch);
    if (node < 0) continue;
    // A host has one device (ifindex 1). A switch numbers its devices in the order its
    // links appear in topo.txt: hosts first on a leaf or the single switch, then uplinks;
    // on a spine, leaves in order. The twin numbers ports the same way, from 0.
    const int ifindex = is_switch ? static_cast<int>(p.port) + 1 : 1;
    events.push_back({p.start_ns, node, is_switch ? 1 : 0, ifindex, 1});
    events.push_back({p.end_ns, node, is_switch ? 1 : 0, ifindex, 0});
  }
  std::stable_sort(events.begin(), events.end(), [](const event& a, const event& b) { return a.t < b.t; });
  std::string out;
  char line[96];
  for (const auto& e : events) {
    std::snprintf(line, sizeof line, "%lld %lld %d %d %d\n", static_cast<long long>(e.t), static_cast<long long>(e.node),
                  e.node_type, e.ifindex, e.type);
    out += line;
  }
  return out;
}

}  // namespace rocelab::experiments

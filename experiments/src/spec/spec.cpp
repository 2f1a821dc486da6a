// The field table: one row per spec field, with its parser, range and printer.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

#include "rocelab/common/units.hpp"
#include "rocelab/experiments/run/backend_traits.hpp"
#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::experiments {
namespace {

status bad(const std::string& what) { return {error_code::invalid_argument, what}; }

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

result<std::int64_t> parse_integer(std::string_view text) {
  const std::string_view t = trim(text);
  std::int64_t v = 0;
  const char* first = t.data();
  if (!t.empty() && *first == '+') ++first;
  const auto [end, ec] = std::from_chars(first, t.data() + t.size(), v);
  if (t.empty() || ec != std::errc{} || end != t.data() + t.size())
    return bad("'" + std::string(text) + "' is not an integer");
  return v;
}

result<double> parse_real(std::string_view text) {
  const std::string_view t = trim(text);
  double v = 0;
  const char* first = t.data();
  if (!t.empty() && *first == '+') ++first;
  const auto [end, ec] = std::from_chars(first, t.data() + t.size(), v);
  if (t.empty() || ec != std::errc{} || end != t.data() + t.size() || !std::isfinite(v))
    return bad("'" + std::string(text) + "' is not a number");
  return v;
}

result<bool> parse_bool(std::string_view text) {
  const std::string_view t = trim(text);
  // YAML 1.2 core schema booleans, plus 0/1 as the mlx5 knobs write them.
  if (t == "true" || t == "True" || t == "TRUE" || t == "1") return true;
  if (t == "false" || t == "False" || t == "FALSE" || t == "0") return false;
  return bad("'" + std::string(text) + "' is not a boolean (true or false)");
}

// "0,3,5-8" (YAML sequences arrive joined with commas).
result<std::vector<std::uint32_t>> parse_host_list(std::string_view text) {
  std::vector<std::uint32_t> out;
  std::string_view rest = trim(text);
  if (rest.empty() || rest == "[]") return out;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const auto dash = item.find('-', 1);
    auto lo = parse_integer(item.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : parse_integer(item.substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi < *lo || *hi > 1'000'000)
      return bad("'" + std::string(item) + "' is not a host index or range (like 3 or 0-15)");
    for (auto h = *lo; h <= *hi; ++h) out.push_back(static_cast<std::uint32_t>(h));
  }
  return out;
}

std::string format_host_list(const std::vector<std::uint32_t>& hosts) {
  std::string out;
  for (std::size_t i = 0; i < hosts.size();) {
    std::size_t j = i;
    while (j + 1 < hosts.size() && hosts[j + 1] == hosts[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(hosts[i]);
    if (j > i + 1) out += "-" + std::to_string(hosts[j]);
    else if (j == i + 1) out += "," + std::to_string(hosts[j]);
    i = j + 1;
  }
  return out;
}

std::string format_real(double v) {
  std::ostringstream s;
  s.precision(12);
  s << v;
  return s.str();
}

std::string range_text(double lo, double hi) {
  return format_real(lo) + ".." + (hi >= 9e18 ? std::string("") : format_real(hi));
}

// Field builders. `acc` is a generic lambda returning a reference to the member for a
// const or non-const spec.
template <class T, class Acc>
field_info integer_field(std::string path, Acc acc, std::int64_t lo, std::int64_t hi, std::string help) {
  field_info f{std::move(path), field_type::integer, std::move(help), {}, {}, {}};
  f.set = [acc, lo, hi](experiment_spec& s, std::string_view text) -> status {
    auto v = parse_integer(text);
    if (!v) return v.error();
    if (*v < lo || *v > hi) return bad(std::to_string(*v) + " is outside " + range_text(double(lo), double(hi)));
    acc(s) = static_cast<T>(*v);
    return status::success();
  };
  f.get = [acc](const experiment_spec& s) { return std::to_string(acc(s)); };
  return f;
}

template <class Acc>
field_info size_field(std::string path, Acc acc, std::int64_t lo, std::int64_t hi, std::string help) {
  field_info f{std::move(path), field_type::size, std::move(help), {}, {}, {}};
  f.set = [acc, lo, hi](experiment_spec& s, std::string_view text) -> status {
    auto v = parse_size_bytes(text);
    if (!v) return v.error();
    if (*v < lo || *v > hi) return bad(format_size(*v) + " is outside " + format_size(lo) + ".." + format_size(hi));
    acc(s) = static_cast<std::remove_reference_t<decltype(acc(s))>>(*v);
    return status::success();
  };
  f.get = [acc](const experiment_spec& s) { return format_size(static_cast<std::int64_t>(acc(s))); };
  return f;
}

template <class Acc>
field_info duration_field(std::string path, Acc acc, std::int64_t lo, std::string help) {
  field_info f{std::move(path), field_type::duration, std::move(help), {}, {}, {}};
  f.set = [acc, lo](experiment_spec& s, std::string_view text) -> status {
    auto v = parse_duration_ns(text);
    if (!v) return v.error();
    if (*v < lo) return bad(format_duration(*v) + " is below " + format_duration(lo));
    acc(s) = *v;
    return status::success();
  };
  f.get = [acc](const experiment_spec& s) { return format_duration(acc(s)); };
  return f;
}

// A rate in Gb/s: a plain number is Gb/s, or any rate with its unit.
template <class Acc>
field_info gbps_field(std::string path, Acc acc, double lo, std::string help) {
  field_info f{std::move(path), field_type::rate_gbps, std::move(help), {}, {}, {}};
  f.set = [acc, lo](experiment_spec& s, std::string_view text) -> status {
    double gbps = 0;
    if (auto plain = parse_real(text); plain.ok()) {
      gbps = *plain;
    } else {
      auto bps = parse_rate_bps(text);
      if (!bps) return bps.error();
      gbps = *bps / 1e9;
    }
    if (gbps < lo) return bad(format_real(gbps) + " Gb/s is below " + format_real(lo));
    acc(s) = gbps;
    return status::success();
  };
  f.get = [acc](const experiment_spec& s) { return format_real(acc(s)); };
  return f;
}

template <class Acc>
field_info real_field(std::string path, Acc acc, double lo, double hi, std::string help) {
  field_info f{std::move(path), field_type::real, std::move(help), {}, {}, {}};
  f.set = [acc, lo, hi](experiment_spec& s, std::string_view text) -> status {
    auto v = parse_real(text);
    if (!v) return v.error();
    if (*v < lo || *v > hi) return bad(format_real(*v) + " is outside " + range_text(lo, hi));
    acc(s) = *v;
    return status::success();
  };
  f.get = [acc](const experiment_spec& s) { return format_real(acc(s)); };
  return f;
}

template <class Acc>
field_info bool_field(std::string path, Acc acc, std::string help) {
  field_info f{std::move(path), field_type::boolean, std::move(help), {}, {}, {}};
  f.set = [acc](experiment_spec& s, std::string_view text) -> status {
    auto v = parse_bool(text);
    if (!v) return v.error();
    acc(s) = *v;
    return status::success();
  };
  f.get = [acc](const experiment_spec& s) { return std::string(acc(s) ? "true" : "false"); };
  return f;
}

template <class Acc>
field_info text_field(std::string path, Acc acc, std::string help) {
  field_info f{std::move(path), field_type::text, std::move(help), {}, {}, {}};
  f.set = [acc](experiment_spec& s, std::string_view text) -> status {
    acc(s) = std::string(trim(text));
    return status::success();
  };
  f.get = [acc](const experiment_spec& s) { return acc(s); };
  return f;
}

template <class Acc>
field_info choice_field(std::string path, Acc acc, std::vector<std::string> choices, std::string help) {
  field_info f{std::move(path), field_type::choice, std::move(help), choices, {}, {}};
  f.set = [acc, choices](experiment_spec& s, std::string_view text) -> status {
    const std::string_view t = trim(text);
    for (const auto& c : choices)
      if (c == t) {
        acc(s) = c;
        return status::success();
      }
    std::string list;
    for (const auto& c : choices) list += (list.empty() ? "" : ", ") + c;
    return bad("'" + std::string(text) + "' is not one of " + list);
  };
  f.get = [acc](const experiment_spec& s) { return acc(s); };
  return f;
}

template <class Acc>
field_info host_list_field(std::string path, Acc acc, std::string help) {
  field_info f{std::move(path), field_type::host_list, std::move(help), {}, {}, {}};
  f.set = [acc](experiment_spec& s, std::string_view text) -> status {
    auto v = parse_host_list(text);
    if (!v) return v.error();
    acc(s) = std::move(*v);
    return status::success();
  };
  f.get = [acc](const experiment_spec& s) { return format_host_list(acc(s)); };
  return f;
}

// A DCQCN knob by its mlx5 name. The value is in the knob's mlx5 unit (us, Mb/s, bytes,
// plain); a value with a unit is converted to it.
enum class knob_unit { plain, us, mbps, bytes };

field_info dcqcn_field(const std::string& name, knob_unit unit, std::string help) {
  field_info f{"nic.dcqcn." + name, field_type::integer, std::move(help), {}, {}, {}};
  f.set = [name, unit](experiment_spec& s, std::string_view text) -> status {
    std::int64_t value = 0;
    if (auto plain = parse_integer(text); plain.ok()) {
      value = *plain;
    } else if (unit == knob_unit::us) {
      auto ns = parse_duration_ns(text);
      if (!ns) return ns.error();
      if (*ns % 1000 != 0) return bad(std::string(text) + " is not a whole number of microseconds");
      value = *ns / 1000;
    } else if (unit == knob_unit::mbps) {
      auto bps = parse_rate_bps(text);
      if (!bps) return bps.error();
      value = static_cast<std::int64_t>(std::llround(*bps / 1e6));
    } else if (unit == knob_unit::bytes) {
      auto b = parse_size_bytes(text);
      if (!b) return b.error();
      value = *b;
    } else if (auto b = parse_bool(text); b.ok()) {
      value = *b ? 1 : 0;
    } else {
      return plain.error();
    }
    // dcqcn_config::set validates the whole config; its message already names the knob.
    fabric::dcqcn_config copy = s.nic.dcqcn;
    if (auto st = copy.set(name, value); !st.ok()) return bad(st.message());
    s.nic.dcqcn = copy;
    return status::success();
  };
  f.get = [name](const experiment_spec& s) { return std::to_string(s.nic.dcqcn.get(name).value_or(0)); };
  return f;
}

std::vector<field_info> build_table() {
  constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t u32max = std::numeric_limits<std::uint32_t>::max();
  std::vector<field_info> t;
  // --- run ---
  t.push_back(text_field("name", [](auto& s) -> auto& { return s.name; }, "a label for reports"));
  t.push_back(choice_field("backend", [](auto& s) -> auto& { return s.backend; }, known_backend_names(),
                           "twin: the packet-level model in virtual time"));
  t.push_back(integer_field<std::uint64_t>("seed", [](auto& s) -> auto& { return s.seed; }, 0, big,
                                           "seeds workloads and ECN marking; repeat i uses seed + i"));
  t.push_back(integer_field<std::uint32_t>("repeats", [](auto& s) -> auto& { return s.repeats; }, 1, 10000,
                                           "runs with seeds seed .. seed + repeats - 1"));
  // --- topology ---
  t.push_back(choice_field("topology.type", [](auto& s) -> auto& { return s.topology.type; },
                           {"single_switch", "leaf_spine", "fat_tree", "rail_optimized"},
                           "one switch, two-tier leaf-spine, three-tier k-ary fat-tree, or rails of multi-NIC "
                           "servers joined by spines"));
  t.push_back(integer_field<std::uint32_t>("topology.hosts", [](auto& s) -> auto& { return s.topology.hosts; }, 2,
                                           100000, "hosts in all; rail_optimized: NICs in all (servers x nics_per_host)"));
  t.push_back(gbps_field("topology.link_gbps", [](auto& s) -> auto& { return s.topology.link_gbps; }, 0.001,
                         "host link speed"));
  t.push_back(duration_field("topology.link_delay_ns", [](auto& s) -> auto& { return s.topology.link_delay_ns; }, 0,
                             "propagation delay of every link"));
  t.push_back(size_field("topology.frame_overhead_bytes",
                         [](auto& s) -> auto& { return s.topology.frame_overhead_bytes; }, 0, 64,
                         "bytes a frame holds its link for beyond itself: preamble and SFD (8) and inter-frame gap "
                         "(12) on Ethernet; 0 for a reference that counts none (htsim, HPCC ns-3) (twin only)"));
  t.push_back(integer_field<std::uint32_t>("topology.leaves", [](auto& s) -> auto& { return s.topology.leaves; }, 0,
                                           10000, "leaf_spine: leaf switches; rail_optimized: leaves a rail"));
  t.push_back(integer_field<std::uint32_t>("topology.spines", [](auto& s) -> auto& { return s.topology.spines; }, 0,
                                           10000, "leaf_spine: spine switches; rail_optimized: spines joining every "
                                                  "rail leaf"));
  t.push_back(integer_field<std::uint32_t>("topology.nics_per_host",
                                           [](auto& s) -> auto& { return s.topology.nics_per_host; }, 1, 64,
                                           "rail_optimized: NICs (rails) a server; NIC i of every server on rail i"));
  t.push_back(gbps_field("topology.local_link_gbps", [](auto& s) -> auto& { return s.topology.local_link_gbps; },
                         0.001, "rail_optimized: the link between a server's NICs, each way (NVLink 4: 3600)"));
  t.push_back(duration_field("topology.local_link_delay_ns",
                             [](auto& s) -> auto& { return s.topology.local_link_delay_ns; }, 0,
                             "rail_optimized: the local link's latency"));
  t.push_back(integer_field<std::uint32_t>("topology.k", [](auto& s) -> auto& { return s.topology.k; }, 0, 62,
                                           "fat_tree: ports per switch (even): k pods, (k/2)^2 cores, k^3/4 hosts"));
  t.push_back(gbps_field("topology.spine_link_gbps", [](auto& s) -> auto& { return s.topology.spine_link_gbps; }, 0,
                         "leaf_spine, fat_tree, rail_optimized: switch-to-switch link speed; 0 derives it from "
                         "oversubscription"));
  t.push_back(real_field("topology.oversubscription", [](auto& s) -> auto& { return s.topology.oversubscription; },
                         0.01, 1000, "leaf_spine, fat_tree, rail_optimized: host bandwidth / uplink bandwidth per "
                                     "leaf (edge)"));
  // --- switch ---
  t.push_back(size_field("switch.buffer_bytes", [](auto& s) -> auto& { return s.sw.buffer_bytes; }, 1, big,
                         "shared buffer of each switch"));
  t.push_back(size_field("switch.cell_bytes", [](auto& s) -> auto& { return s.sw.cell_bytes; }, 1, 65536,
                         "buffer accounting unit (1: bytes)"));
  t.push_back(integer_field<std::int32_t>("switch.dynamic_th", [](auto& s) -> auto& { return s.sw.dynamic_th; }, -7,
                                          3, "lossless PG alpha = 2^dynamic_th (SONiC dynamic_th)"));
  t.push_back(integer_field<std::int32_t>("switch.lossy_dynamic_th", [](auto& s) -> auto& { return s.sw.lossy_dynamic_th; },
                                          -7, 3, "lossy PGs and queues: alpha = 2^lossy_dynamic_th"));
  t.push_back(size_field("switch.queue_limit_bytes", [](auto& s) -> auto& { return s.sw.queue_limit_bytes; }, 0, big,
                         "every egress queue holds at most this many bytes (a static threshold, in cells) and drops "
                         "beyond, as ns-3's and htsim's fixed queues; 0: dynamic_th / lossy_dynamic_th (twin only)"));
  t.push_back(bool_field("switch.ecn_mark_on_dequeue", [](auto& s) -> auto& { return s.sw.ecn_mark_on_dequeue; },
                         "mark at dequeue (HPCC ns-3) instead of enqueue"));
  t.push_back(bool_field("switch.pfc.enabled", [](auto& s) -> auto& { return s.sw.pfc.enabled; },
                         "PFC on the lossless priorities"));
  t.push_back(host_list_field("switch.pfc.priorities", [](auto& s) -> auto& { return s.sw.pfc.priorities; },
                              "lossless priorities (0-7)"));
  t.push_back(integer_field<std::uint32_t>("switch.pfc.pause_quanta", [](auto& s) -> auto& { return s.sw.pfc.pause_quanta; },
                                           0, 65535, "quanta in XOFF frames"));
  t.push_back(size_field("switch.pfc.headroom_bytes", [](auto& s) -> auto& { return s.sw.pfc.headroom_bytes; }, 0,
                         big, "per lossless PG; 0 computes it from speed, cable and MTU"));
  t.push_back(size_field("switch.pfc.xon_offset_bytes", [](auto& s) -> auto& { return s.sw.pfc.xon_offset_bytes; }, 0,
                         big, "XON at the XOFF threshold minus this"));
  t.push_back(real_field("switch.pfc.cable_m", [](auto& s) -> auto& { return s.sw.pfc.cable_m; }, 0, 100000,
                         "cable length for the headroom calculation"));
  t.push_back(bool_field("switch.pfc.watchdog.enabled", [](auto& s) -> auto& { return s.sw.pfc.watchdog.enabled; },
                         "PFC watchdog (SONiC pfcwd) on the lossless queues"));
  t.push_back(duration_field("switch.pfc.watchdog.detection_ns",
                             [](auto& s) -> auto& { return s.sw.pfc.watchdog.detection_ns; }, 1,
                             "a lossless queue held this long with packets and no departure is in a PFC storm"));
  t.push_back(duration_field("switch.pfc.watchdog.restoration_ns",
                             [](auto& s) -> auto& { return s.sw.pfc.watchdog.restoration_ns; }, 1,
                             "no XOFF received for this long ends the storm"));
  t.push_back(choice_field("switch.pfc.watchdog.action", [](auto& s) -> auto& { return s.sw.pfc.watchdog.action; },
                           {"drop", "forward", "alert"}, "what a stormed queue does (SONiC pfcwd action)"));
  t.push_back(bool_field("switch.ecn.enabled", [](auto& s) -> auto& { return s.sw.ecn.enabled; },
                         "ECN marking on switch.ecn.queues"));
  t.push_back(size_field("switch.ecn.kmin_bytes", [](auto& s) -> auto& { return s.sw.ecn.kmin_bytes; }, 0, big,
                         "queue depth where marking starts"));
  t.push_back(size_field("switch.ecn.kmax_bytes", [](auto& s) -> auto& { return s.sw.ecn.kmax_bytes; }, 0, big,
                         "queue depth above which every packet is marked"));
  t.push_back(real_field("switch.ecn.pmax", [](auto& s) -> auto& { return s.sw.ecn.pmax; }, 0, 1,
                         "marking probability at kmax (0..1)"));
  t.push_back(host_list_field("switch.ecn.queues", [](auto& s) -> auto& { return s.sw.ecn.queues; },
                              "egress queues with ECN (0-7)"));
  // --- nic ---
  t.push_back(integer_field<std::uint32_t>("nic.mtu_bytes", [](auto& s) -> auto& { return s.nic.mtu_bytes; }, 256,
                                           4096, "RoCE MTU (payload per packet)"));
  t.push_back(integer_field<std::uint32_t>("nic.data_priority", [](auto& s) -> auto& { return s.nic.data_priority; },
                                           0, 7, "802.1p of RoCE data"));
  t.push_back(duration_field("nic.retransmit_timeout_ns",
                             [](auto& s) -> auto& { return s.nic.retransmit_timeout_ns; }, 1,
                             "go-back-N after this long without ACK progress"));
  t.push_back(integer_field<std::uint32_t>("nic.ack_every_packets",
                                           [](auto& s) -> auto& { return s.nic.ack_every_packets; }, 1, 65536,
                                           "the responder ACKs every Nth packet"));
  t.push_back(bool_field("nic.qp_per_peer", [](auto& s) -> auto& { return s.nic.qp_per_peer; },
                         "one RC QP per peer: a message waits behind earlier ones to the same peer and "
                         "shares their DCQCN state, as the labs' NICs always run; false: a QP per message (twin)"));
  t.push_back(bool_field("nic.dcqcn.enabled", [](auto& s) -> auto& { return s.nic.dcqcn_enabled; },
                         "DCQCN rate control (off: line rate, PFC only)"));
  // mlx5 knobs (NVIDIA "DCQCN CC Parameters"; dcqcn.hpp).
  const std::pair<const char*, knob_unit> knobs[] = {
      {"rate_to_set_on_first_cnp", knob_unit::mbps}, {"rpg_min_rate", knob_unit::mbps},
      {"rpg_max_rate", knob_unit::mbps},             {"initial_alpha_value", knob_unit::plain},
      {"dce_tcp_g", knob_unit::plain},               {"dce_tcp_rtt", knob_unit::us},
      {"rate_reduce_monitor_period", knob_unit::us}, {"rpg_time_reset", knob_unit::us},
      {"rpg_byte_reset", knob_unit::bytes},          {"rpg_threshold", knob_unit::plain},
      {"rpg_ai_rate", knob_unit::mbps},              {"rpg_hai_rate", knob_unit::mbps},
      {"rpg_min_dec_fac", knob_unit::plain},         {"clamp_tgt_rate", knob_unit::plain},
      {"clamp_tgt_rate_after_time_inc", knob_unit::plain}, {"min_time_between_cnps", knob_unit::us},
      {"cnp_dscp", knob_unit::plain},                {"cnp_802p_prio", knob_unit::plain},
      {"byte_counter_enabled", knob_unit::plain},    {"alpha_update_on_cnp", knob_unit::plain},
  };
  for (const auto& [name, unit] : knobs) {
    const char* unit_text = unit == knob_unit::us     ? "mlx5 knob, microseconds"
                            : unit == knob_unit::mbps ? "mlx5 knob, Mb/s"
                            : unit == knob_unit::bytes ? "mlx5 knob, bytes"
                                                       : "mlx5 knob";
    t.push_back(dcqcn_field(name, unit, unit_text));
  }
  // --- workload.incast ---
  t.push_back(bool_field("workload.incast.enabled", [](auto& s) -> auto& { return s.workload.incast.enabled; },
                         "on when the section is present"));
  t.push_back(integer_field<std::uint32_t>("workload.incast.receiver",
                                           [](auto& s) -> auto& { return s.workload.incast.receiver; }, 0, u32max,
                                           "receiving host"));
  t.push_back(integer_field<std::uint32_t>("workload.incast.senders",
                                           [](auto& s) -> auto& { return s.workload.incast.senders; }, 1, u32max,
                                           "sender count (hosts drawn from the seed)"));
  t.push_back(host_list_field("workload.incast.sender_hosts",
                              [](auto& s) -> auto& { return s.workload.incast.sender_hosts; },
                              "explicit senders; overrides senders"));
  t.push_back(size_field("workload.incast.flow_bytes", [](auto& s) -> auto& { return s.workload.incast.flow_bytes; },
                         1, big, "bytes each sender sends per round"));
  t.push_back(integer_field<std::uint32_t>("workload.incast.rounds",
                                           [](auto& s) -> auto& { return s.workload.incast.rounds; }, 1, u32max,
                                           "rounds; the next starts after the previous completed"));
  t.push_back(duration_field("workload.incast.round_gap_ns",
                             [](auto& s) -> auto& { return s.workload.incast.round_gap_ns; }, 0,
                             "pause between a round's end and the next round"));
  t.push_back(duration_field("workload.incast.start_ns", [](auto& s) -> auto& { return s.workload.incast.start_ns; }, 0,
                             "first round's start"));
  t.push_back(duration_field("workload.incast.start_jitter_ns",
                             [](auto& s) -> auto& { return s.workload.incast.start_jitter_ns; }, 0,
                             "each sender starts uniformly within this after the round start"));
  t.push_back(integer_field<std::int32_t>("workload.incast.priority",
                                          [](auto& s) -> auto& { return s.workload.incast.priority; }, -1, 7,
                                          "-1: nic.data_priority"));
  // --- workload.allreduce ---
  t.push_back(bool_field("workload.allreduce.enabled", [](auto& s) -> auto& { return s.workload.allreduce.enabled; },
                         "on when the section is present"));
  t.push_back(choice_field("workload.allreduce.algorithm",
                           [](auto& s) -> auto& { return s.workload.allreduce.algorithm; },
                           {"ring", "halving_doubling", "hierarchical_ring", "tree", "hierarchical_tree"},
                           "collective algorithm; tree: NCCL's double binary tree; hierarchical_ring and "
                           "hierarchical_tree: NCCL's rings or trees over rails on a rail_optimized fabric (a "
                           "server's ranks on its local link, one ring or tree a rail), the ring or tree elsewhere"));
  t.push_back(integer_field<std::uint32_t>("workload.allreduce.slices",
                                           [](auto& s) -> auto& { return s.workload.allreduce.slices; }, 1, 16,
                                           "pipelining as NCCL does it: the buffer in this many slices, each "
                                           "started one step after the one before it"));
  t.push_back(integer_field<std::uint32_t>("workload.allreduce.ranks",
                                           [](auto& s) -> auto& { return s.workload.allreduce.ranks; }, 2, u32max,
                                           "ranks on hosts 0 .. ranks-1"));
  t.push_back(host_list_field("workload.allreduce.rank_hosts",
                              [](auto& s) -> auto& { return s.workload.allreduce.rank_hosts; },
                              "host of each rank; overrides ranks"));
  t.push_back(size_field("workload.allreduce.bytes", [](auto& s) -> auto& { return s.workload.allreduce.bytes; }, 1,
                         big, "buffer per rank (nccl-tests size)"));
  t.push_back(integer_field<std::uint32_t>("workload.allreduce.iterations",
                                           [](auto& s) -> auto& { return s.workload.allreduce.iterations; }, 1,
                                           1 << 23, "back-to-back all-reduces"));
  t.push_back(duration_field("workload.allreduce.start_ns",
                             [](auto& s) -> auto& { return s.workload.allreduce.start_ns; }, 0, "first start"));
  t.push_back(duration_field("workload.allreduce.iteration_gap_ns",
                             [](auto& s) -> auto& { return s.workload.allreduce.iteration_gap_ns; }, 0,
                             "idle time between iterations"));
  t.push_back(integer_field<std::int32_t>("workload.allreduce.priority",
                                          [](auto& s) -> auto& { return s.workload.allreduce.priority; }, -1, 7,
                                          "-1: nic.data_priority"));
  // --- workload.background ---
  t.push_back(bool_field("workload.background.enabled",
                         [](auto& s) -> auto& { return s.workload.background.enabled; },
                         "on when the section is present"));
  t.push_back(text_field("workload.background.cdf", [](auto& s) -> auto& { return s.workload.background.cdf; },
                         "websearch, hadoop or a CDF file"));
  t.push_back(real_field("workload.background.load", [](auto& s) -> auto& { return s.workload.background.load; },
                         1e-6, 1, "offered load per host as a fraction of the link rate"));
  t.push_back(host_list_field("workload.background.hosts",
                              [](auto& s) -> auto& { return s.workload.background.hosts; },
                              "participating hosts; empty: all"));
  t.push_back(duration_field("workload.background.start_ns",
                             [](auto& s) -> auto& { return s.workload.background.start_ns; }, 0, "first arrival after"));
  t.push_back(duration_field("workload.background.duration_ns",
                             [](auto& s) -> auto& { return s.workload.background.duration_ns; }, 1,
                             "arrivals stop after this"));
  t.push_back(integer_field<std::uint64_t>("workload.background.max_flows",
                                           [](auto& s) -> auto& { return s.workload.background.max_flows; }, 0, big,
                                           "0: no limit"));
  t.push_back(integer_field<std::int32_t>("workload.background.priority",
                                          [](auto& s) -> auto& { return s.workload.background.priority; }, -1, 7,
                                          "-1: nic.data_priority"));
  // --- workload.victim ---
  t.push_back(bool_field("workload.victim.enabled", [](auto& s) -> auto& { return s.workload.victim.enabled; },
                         "on when the section is present"));
  t.push_back(host_list_field("workload.victim.hosts", [](auto& s) -> auto& { return s.workload.victim.hosts; },
                              "senders of victim flows; empty: the incast's senders"));
  t.push_back(host_list_field("workload.victim.receivers",
                              [](auto& s) -> auto& { return s.workload.victim.receivers; },
                              "empty: hosts that are neither the incast's receiver nor its senders"));
  t.push_back(size_field("workload.victim.flow_bytes", [](auto& s) -> auto& { return s.workload.victim.flow_bytes; },
                         1, big, "bytes of each victim flow"));
  t.push_back(integer_field<std::uint32_t>("workload.victim.flows_per_sender",
                                           [](auto& s) -> auto& { return s.workload.victim.flows_per_sender; }, 1,
                                           1 << 20, "victim flows each sender starts"));
  t.push_back(duration_field("workload.victim.start_ns", [](auto& s) -> auto& { return s.workload.victim.start_ns; }, 0,
                             "first victim flows start"));
  t.push_back(duration_field("workload.victim.gap_ns", [](auto& s) -> auto& { return s.workload.victim.gap_ns; }, 0,
                             "between one sender's consecutive victim flows"));
  t.push_back(integer_field<std::int32_t>("workload.victim.priority",
                                          [](auto& s) -> auto& { return s.workload.victim.priority; }, -1, 7,
                                          "-1: nic.data_priority (the incast's paused priority)"));
  // --- workload.flow_list ---
  t.push_back(text_field("workload.flow_list", [](auto& s) -> auto& { return s.workload.flow_list; },
                         "flows from a file (relative to the spec): CSV (src,dst,bytes,start_ns[,priority][,tag]), "
                         "an htsim connection matrix or HPCC ns-3's flow.txt, told apart by content; empty: none"));
  // --- fabric ---
  t.push_back(choice_field("fabric.link", [](auto& s) -> auto& { return s.fabric.link; }, {"roce", "infiniband", "uec"},
                           "roce: Ethernet, PFC, ECN, DCQCN; infiniband: credits per VL, IB CC; uec: Ultra Ethernet "
                           "(spraying, trimming, NSCC/RCCC) (twin only)"));
  t.push_back(choice_field("fabric.routing", [](auto& s) -> auto& { return s.fabric.routing; }, {"ecmp", "adaptive"},
                           "ecmp: 5-tuple hash; adaptive: least-loaded uplink per packet (twin only)"));
  t.push_back(duration_field("fabric.switch_latency_ns", [](auto& s) -> auto& { return s.fabric.switch_latency_ns; },
                             0, "port-to-port latency of each switch"));
  t.push_back(size_field("fabric.ib_vl_buffer_bytes", [](auto& s) -> auto& { return s.fabric.ib_vl_buffer_bytes; }, 0,
                         big, "InfiniBand buffer per port and VL; 0: the switch buffer split evenly"));
  // --- fabric.uec (fabric.link uec only) ---
  t.push_back(choice_field("fabric.uec.profile", [](auto& s) -> auto& { return s.fabric.uec.profile; },
                           {"rocelab", "htsim"},
                           "rocelab: the fields below and the switch section as given; htsim: queues, ECN, trimming "
                           "and RTO derived from the fabric's BDP as htsim_uec derives them, frames without preamble "
                           "or gap"));
  t.push_back(choice_field("fabric.uec.load_balancing", [](auto& s) -> auto& { return s.fabric.uec.load_balancing; },
                           {"ecmp", "oblivious", "reps"},
                           "entropy per packet: ecmp one per flow, oblivious sprays, reps re-uses unmarked paths"));
  t.push_back(bool_field("fabric.uec.nscc", [](auto& s) -> auto& { return s.fabric.uec.nscc; },
                         "NSCC sender window from ECN and queueing delay"));
  t.push_back(bool_field("fabric.uec.rccc", [](auto& s) -> auto& { return s.fabric.uec.rccc; },
                         "RCCC receiver credits (bounds an incast's queue by the budget)"));
  t.push_back(bool_field("fabric.uec.trimming", [](auto& s) -> auto& { return s.fabric.uec.trimming; },
                         "switches cut data to its header instead of dropping it; the receiver NACKs at once"));
  t.push_back(size_field("fabric.uec.trim_threshold_bytes",
                         [](auto& s) -> auto& { return s.fabric.uec.trim_threshold_bytes; }, 0, big,
                         "trim past this many bytes queued; 0: where the queue would drop"));
  t.push_back(size_field("fabric.uec.rccc_budget_bytes", [](auto& s) -> auto& { return s.fabric.uec.rccc_budget_bytes; },
                         0, big, "credit a receiver has outstanding at most; 0: one BDP"));
  t.push_back(duration_field("fabric.uec.nscc_target_qdelay_ns",
                             [](auto& s) -> auto& { return s.fabric.uec.nscc_target_qdelay_ns; }, 0,
                             "NSCC's target queueing delay; 0: 0.75 network RTT with trimming, 1 without"));
  t.push_back(duration_field("fabric.uec.retransmit_timeout_ns",
                             [](auto& s) -> auto& { return s.fabric.uec.retransmit_timeout_ns; }, 0,
                             "resend a packet not acknowledged this long; 0: adaptive (SRTT + 4 RTTVAR, at least 4 RTTs and 50 us)"));
  t.push_back(bool_field("fabric.uec.credit_flow_control",
                         [](auto& s) -> auto& { return s.fabric.uec.credit_flow_control; },
                         "credit-based link flow control (CBFC) on every link: lossless without PFC"));
  t.push_back(real_field("fabric.uec.link_frame_loss_rate",
                         [](auto& s) -> auto& { return s.fabric.uec.link_frame_loss_rate; }, 0, 0.5,
                         "probability that a link loses a data or ACK frame (bit errors), drawn from the run's seed"));
  t.push_back(bool_field("fabric.uec.link_level_retry", [](auto& s) -> auto& { return s.fabric.uec.link_level_retry; },
                         "links replay a lost frame after one link round trip, in order (UEC LLR): the transport "
                         "never sees the loss"));
  // --- twin ---
  t.push_back(duration_field("twin.stop_ns", [](auto& s) -> auto& { return s.twin.stop_ns; }, 1,
                             "virtual-time limit; flows not done are incomplete"));
  t.push_back(duration_field("twin.queue_sample_interval_ns",
                             [](auto& s) -> auto& { return s.twin.queue_sample_interval_ns; }, 0,
                             "queue depth sampling; 0: none"));
  t.push_back(duration_field("twin.flow_timeline_interval_ns",
                             [](auto& s) -> auto& { return s.twin.flow_timeline_interval_ns; }, 0,
                             "per-flow transmit timelines (bytes per flow per interval at the receiver's switch "
                             "port): the twin's sampling, the virtual lab's bins (1 ms when 0); 0: none on the twin"));
  t.push_back(bool_field("twin.hpcc_ns3_compat", [](auto& s) -> auto& { return s.twin.hpcc_ns3_compat; },
                         "reproduce the HPCC ns-3 simulator's modelling shortcuts"));
  t.push_back(integer_field<std::uint64_t>("twin.max_events", [](auto& s) -> auto& { return s.twin.max_events; }, 0,
                                           big, "congestion events (marks, CNPs, retransmits, drops) kept; 0: none"));
  t.push_back(text_field("twin.calibration", [](auto& s) -> auto& { return s.twin.calibration; },
                         "a lab's calibration file (rocelab calibrate) the twin models: its NICs' send and receive "
                         "processing and achieved rates, its switch's forwarding latency; empty: ideal ones"));
  // --- timing ---
  t.push_back(duration_field("timing.max_start_skew_ns", [](auto& s) -> auto& { return s.timing.max_start_skew_ns; },
                             0,
                             "virtual and hardware runs: start skew of the senders plus clock uncertainty beyond "
                             "which the run is marked degraded; 0: no limit"));
  // --- scaling ---
  t.push_back(gbps_field("scaling.hardware_gbps", [](auto& s) -> auto& { return s.scaling.hardware_gbps; }, 0,
                         "the hardware link speed this spec stands for; 0: none. DCQCN runs k = hardware_gbps / "
                         "link_gbps times slower: its times x k, its rates / k, its knobs and every byte threshold as "
                         "on hardware (the virtual lab: 0.5 Gb/s for 100)"));
  t.push_back(integer_field<std::uint32_t>("nic.data_dscp", [](auto& s) -> auto& { return s.nic.data_dscp; }, 0, 63,
                                           "DSCP of RoCE data; the switch maps it to nic.data_priority"));
  return t;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string_view last_component(std::string_view path) {
  const auto dot = path.rfind('.');
  return dot == std::string_view::npos ? path : path.substr(dot + 1);
}

// The workload section a path is in ("workload.incast"), or "".
std::string workload_section(std::string_view path) {
  if (path.rfind("workload.", 0) != 0) return {};
  const auto dot = path.find('.', 9);
  return dot == std::string_view::npos ? std::string{} : std::string(path.substr(0, dot));
}

}  // namespace

const std::vector<field_info>& field_table() {
  static const std::vector<field_info> table = build_table();
  return table;
}

const field_info* find_field(std::string_view path) {
  for (const field_info& f : field_table())
    if (f.path == path) return &f;
  return nullptr;
}

bool is_section(std::string_view path) {
  if (path.empty()) return true;
  for (const field_info& f : field_table())
    if (f.path.size() > path.size() && f.path.compare(0, path.size(), path) == 0 && f.path[path.size()] == '.')
      return true;
  return false;
}

std::string nearest_path(std::string_view path) {
  // A right key in the wrong section ("switch.kmin_bytes" -> "switch.ecn.kmin_bytes")
  // beats a similar spelling: the leaf name is what the user meant.
  const std::string_view leaf = last_component(path);
  std::string best;
  std::size_t best_distance = std::string::npos;
  for (const field_info& f : field_table()) {
    if (last_component(f.path) != leaf) continue;
    const std::size_t d = edit_distance(path, f.path);
    if (d < best_distance) best_distance = d, best = f.path;
  }
  if (!best.empty()) return best;
  // Otherwise the nearest spelling among fields and sections, if it is close.
  for (const field_info& f : field_table()) {
    std::vector<std::string> candidates{f.path};
    for (auto dot = f.path.find('.'); dot != std::string::npos; dot = f.path.find('.', dot + 1))
      candidates.push_back(f.path.substr(0, dot));
    for (const auto& c : candidates) {
      const std::size_t d = edit_distance(path, c);
      if (d < best_distance) best_distance = d, best = c;
    }
  }
  if (best_distance <= std::max<std::size_t>(2, path.size() / 4)) return best;
  return {};
}

status set_field(experiment_spec& spec, std::string_view path, std::string_view value, const std::string& origin) {
  const field_info* f = find_field(path);
  if (f == nullptr) {
    std::string msg = "unknown key " + std::string(path);
    if (is_section(path)) msg = std::string(path) + " is a section, not a value";
    else if (auto near = nearest_path(path); !near.empty()) msg += " (did you mean " + near + "?)";
    return bad(msg);
  }
  if (auto st = f->set(spec, value); !st.ok()) return bad(std::string(path) + ": " + st.message());
  spec.origins[std::string(path)] = origin;
  // Naming a workload's field turns the workload on, unless the spec said enabled: false.
  if (const std::string section = workload_section(path); !section.empty()) {
    const std::string enabled = section + ".enabled";
    if (path != enabled && spec.origins.find(enabled) == spec.origins.end()) {
      (void)find_field(enabled)->set(spec, "true");
      if (spec.origins.find(section) == spec.origins.end()) spec.origins[section] = origin;
    }
  }
  return status::success();
}

result<std::string> get_field(const experiment_spec& spec, std::string_view path) {
  const field_info* f = find_field(path);
  if (f == nullptr) {
    std::string msg = "unknown key " + std::string(path);
    if (auto near = nearest_path(path); !near.empty()) msg += " (did you mean " + near + "?)";
    return bad(msg);
  }
  return f->get(spec);
}

status apply_override(experiment_spec& spec, std::string_view assignment) {
  const std::string origin = "--set " + std::string(assignment);
  const auto eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) return bad(origin + ": expected path=value");
  const std::string_view path = trim(assignment.substr(0, eq));
  return set_field(spec, path, assignment.substr(eq + 1), origin).with_context(origin);
}

}  // namespace rocelab::experiments

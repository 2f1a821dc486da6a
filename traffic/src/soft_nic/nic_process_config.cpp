// The NIC process's config line (nic_process.hpp): nic_process_config to and from JSON,
// the address parsers it shares with the orchestrator, and the NIC counters as JSON.
#include "rocelab/traffic/soft_nic/nic_process.hpp"

#include <sched.h>

#include <cstdio>

namespace rocelab::traffic::soft_nic {

using json = nlohmann::json;

namespace {

constexpr const char* dcqcn_names[] = {
    "rate_to_set_on_first_cnp", "rpg_min_rate", "rpg_max_rate", "initial_alpha_value", "dce_tcp_g",
    "dce_tcp_rtt", "rate_reduce_monitor_period", "rpg_time_reset", "rpg_byte_reset", "rpg_threshold",
    "rpg_ai_rate", "rpg_hai_rate", "rpg_min_dec_fac", "clamp_tgt_rate", "clamp_tgt_rate_after_time_inc",
    "min_time_between_cnps", "cnp_dscp", "cnp_802p_prio", "byte_counter_enabled", "alpha_update_on_cnp"};

json endpoint_json(const endpoint& e) { return {{"mac", format_mac(e.mac)}, {"ip", format_ipv4(e.ip)}}; }

result<endpoint> endpoint_from(const json& j) {
  auto mac = parse_mac(j.value("mac", ""));
  if (!mac) return mac.error();
  auto ip = parse_ipv4(j.value("ip", ""));
  if (!ip) return ip.error();
  return endpoint{*mac, *ip};
}

}  // namespace

result<mac_address> parse_mac(const std::string& s) {
  mac_address m{};
  unsigned b[6];
  if (std::sscanf(s.c_str(), "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
    return status(error_code::invalid_argument, "not a MAC address: '" + s + "'");
  for (int i = 0; i < 6; ++i) m[i] = static_cast<std::uint8_t>(b[i]);
  return m;
}

result<ipv4_address> parse_ipv4(const std::string& s) {
  unsigned b[4];
  if (std::sscanf(s.c_str(), "%u.%u.%u.%u", &b[0], &b[1], &b[2], &b[3]) != 4 || b[0] > 255 || b[1] > 255 ||
      b[2] > 255 || b[3] > 255)
    return status(error_code::invalid_argument, "not an IPv4 address: '" + s + "'");
  return ipv4_address{static_cast<std::uint8_t>(b[0]), static_cast<std::uint8_t>(b[1]),
                      static_cast<std::uint8_t>(b[2]), static_cast<std::uint8_t>(b[3])};
}

std::string format_mac(const mac_address& m) {
  char b[18];
  std::snprintf(b, sizeof b, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return b;
}

std::string format_ipv4(const ipv4_address& a) {
  return std::to_string(a[0]) + "." + std::to_string(a[1]) + "." + std::to_string(a[2]) + "." +
         std::to_string(a[3]);
}

json to_json(const nic_process_config& c) {
  json dcqcn = json::object();
  for (const char* n : dcqcn_names)
    if (auto v = c.nic.dcqcn.get(n)) dcqcn[n] = *v;
  json qps = json::array();
  for (const auto& q : c.qps)
    qps.push_back({{"local_qpn", q.local_qpn}, {"remote_qpn", q.remote_qpn}, {"remote", endpoint_json(q.remote)},
                   {"send_psn", q.send_psn}, {"recv_psn", q.recv_psn}, {"udp_src_port", q.udp_src_port},
                   {"peer", q.peer}});
  return {{"version", nic_protocol_version},
          {"ifname", c.ifname},
          {"deadline_ns", c.deadline_ns},
          {"rt_priority", c.rt_priority},
          {"start_rt_priority", c.start_rt_priority},
          {"start_cpu", c.start_cpu},
          {"nic",
           {{"local", endpoint_json(c.nic.local)},
            {"line_rate_bps", c.nic.line_rate_bps},
            {"mtu_bytes", c.nic.mtu_bytes},
            {"data_dscp", c.nic.data_dscp},
            {"data_priority", c.nic.data_priority},
            {"dcqcn_enabled", c.nic.dcqcn_enabled},
            {"dcqcn", dcqcn},
            {"dcqcn_time_scale", c.nic.dcqcn.time_scale},
            {"pfc_enabled", c.nic.pfc_enabled},
            {"retransmit_timeout_ns", c.nic.retransmit_timeout_ns},
            {"ack_every_packets", c.nic.ack_every_packets},
            {"max_outstanding_packets", c.nic.max_outstanding_packets}}},
          {"qps", qps}};
}

result<nic_process_config> nic_process_config_from_json(const json& j) {
  try {
    if (j.value("version", 0) != nic_protocol_version)
      return status(error_code::unsupported, "NIC config version " + std::to_string(j.value("version", 0)) +
                                                 " (this build speaks " + std::to_string(nic_protocol_version) + ")");
    nic_process_config c;
    c.ifname = j.at("ifname").get<std::string>();
    c.deadline_ns = j.value("deadline_ns", std::int64_t{0});
    c.rt_priority = j.value("rt_priority", 0);
    if (c.rt_priority < 0 || c.rt_priority > 99)
      return status(error_code::invalid_argument, "rt_priority: 0 (none) or a SCHED_FIFO priority 1..99");
    c.start_rt_priority = j.value("start_rt_priority", 0);
    if (c.start_rt_priority < 0 || c.start_rt_priority > 99)
      return status(error_code::invalid_argument, "start_rt_priority: 0 (none) or a SCHED_FIFO priority 1..99");
    c.start_cpu = j.value("start_cpu", -1);
    if (c.start_cpu < -1 || c.start_cpu >= CPU_SETSIZE)
      return status(error_code::invalid_argument,
                    "start_cpu: -1 (none) or a CPU number below " + std::to_string(CPU_SETSIZE));
    const json& n = j.at("nic");
    auto local = endpoint_from(n.at("local"));
    if (!local) return local.error().with_context("nic.local");
    c.nic.local = *local;
    c.nic.line_rate_bps = n.at("line_rate_bps").get<std::int64_t>();
    c.nic.mtu_bytes = n.at("mtu_bytes").get<std::uint32_t>();
    c.nic.data_dscp = n.at("data_dscp").get<std::uint8_t>();
    c.nic.data_priority = n.at("data_priority").get<std::uint8_t>();
    c.nic.dcqcn_enabled = n.at("dcqcn_enabled").get<bool>();
    for (const auto& [k, v] : n.at("dcqcn").items()) {
      auto st = c.nic.dcqcn.set(k, v.get<std::int64_t>());
      if (!st.ok()) return st.with_context("nic.dcqcn." + k);
    }
    c.nic.dcqcn.time_scale = n.value("dcqcn_time_scale", 1.0);
    if (auto st = c.nic.dcqcn.validate(); !st.ok()) return st.with_context("nic.dcqcn (dcqcn_time_scale: the lab's dilation)");
    c.nic.pfc_enabled = n.at("pfc_enabled").get<bool>();
    c.nic.retransmit_timeout_ns = n.at("retransmit_timeout_ns").get<std::int64_t>();
    c.nic.ack_every_packets = n.at("ack_every_packets").get<std::uint32_t>();
    c.nic.max_outstanding_packets = n.at("max_outstanding_packets").get<std::uint32_t>();
    for (const auto& q : j.at("qps")) {
      qp_connection qc;
      qc.local_qpn = q.at("local_qpn").get<std::uint32_t>();
      qc.remote_qpn = q.at("remote_qpn").get<std::uint32_t>();
      auto r = endpoint_from(q.at("remote"));
      if (!r) return r.error().with_context("qps.remote");
      qc.remote = *r;
      qc.send_psn = q.at("send_psn").get<std::uint32_t>();
      qc.recv_psn = q.at("recv_psn").get<std::uint32_t>();
      qc.udp_src_port = q.at("udp_src_port").get<std::uint16_t>();
      qc.peer = q.at("peer").get<std::uint32_t>();
      c.qps.push_back(qc);
    }
    return c;
  } catch (const json::exception& e) {
    return status(error_code::malformed_input, std::string("NIC config: ") + e.what());
  }
}

json to_json(const nic_counters& c) {
  return {{"tx_frames", c.tx_frames}, {"tx_bytes", c.tx_bytes}, {"tx_data_packets", c.tx_data_packets},
          {"tx_lost", c.tx_lost}, {"tx_acks", c.tx_acks}, {"tx_naks", c.tx_naks}, {"tx_cnps", c.tx_cnps},
          {"rx_frames", c.rx_frames}, {"rx_data_packets", c.rx_data_packets}, {"rx_acks", c.rx_acks},
          {"rx_naks", c.rx_naks}, {"rx_cnps", c.rx_cnps}, {"rx_pfc", c.rx_pfc},
          {"rx_icrc_errors", c.rx_icrc_errors}, {"rx_ignored", c.rx_ignored},
          {"rx_out_of_sequence", c.rx_out_of_sequence}, {"rx_duplicates", c.rx_duplicates},
          {"rx_ce_marked", c.rx_ce_marked}, {"retransmitted_packets", c.retransmitted_packets},
          {"timeouts", c.timeouts}, {"paused_ns", c.paused_ns}};
}

}  // namespace rocelab::traffic::soft_nic

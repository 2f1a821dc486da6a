#include "rocelab/experiments/bringup/bringup_check.hpp"

#include <algorithm>
#include <array>
#include <sstream>

#include <nlohmann/json.hpp>

#include "host_sync_items.hpp"
#include "rocelab/captures/dpdk_rx_plan.hpp"
#include "switch_qos_items.hpp"

namespace rocelab::experiments {
namespace {

using nlohmann::json;

// IPv4 20 + UDP 8 + BTH 12 + RETH 16 + ICRC 4: an RDMA WRITE First/Only at the path MTU
// is the largest packet a mirror port sees (fabric/twin/frames.hpp without Ethernet).
constexpr std::uint32_t roce_l3_overhead_bytes = 60;
// GRH + UDP + BTH + XRC + AtomicETH + ICRC, as iboe_get_mtu subtracts them.
constexpr std::uint32_t iboe_overhead_bytes = 96;
// RTE_MBUF_DEFAULT_DATAROOM; the largest data room a DPDK mbuf has (UINT16_MAX less
// RTE_PKTMBUF_HEADROOM).
constexpr std::uint32_t dpdk_default_data_room = 2048;
constexpr std::uint32_t dpdk_max_data_room = 65535 - 128;

std::string priorities_text(const std::vector<std::uint8_t>& p) {
  if (p.empty()) return "none";
  std::string out;
  for (auto v : p) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

bool has(const std::vector<std::uint8_t>& v, std::uint8_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

check_item make(std::string item, std::string target) {
  check_item c;
  c.item = std::move(item);
  c.target = std::move(target);
  return c;
}

std::string note_or(const host_facts& f, const std::string& fact, const std::string& otherwise) {
  const auto n = f.notes.find(fact);
  return n != f.notes.end() && !n->second.empty() ? n->second : otherwise;
}

std::string facts_fix(const host_facts& f, const std::string& ip) {
  if (f.driver == "soft")
    return "bring the virtual lab up (`rocelab lab up --name NAME --hosts N`) and pass --name NAME";
  return "run `rocelab lab facts --host " + f.host + " --device " + f.device + (ip.empty() ? "" : " --ip " + ip) +
         " > " + f.host + ".json` on " + f.host + " and pass the directory with --host-facts";
}

// ---- host items ----

check_item rdma_item(const host_facts& f, const bringup_inventory::host& h, const std::string& target) {
  const std::string& ip = h.nic_ip;
  check_item c = make("rdma_device", target);
  c.expected =
      "an RDMA device on " + f.device + " with a RoCE v2 GID" + (h.nic_ip.empty() ? std::string() : " for " + h.nic_ip);
  if (!f.unavailable.empty()) {
    c.observed = f.unavailable;
    c.fix = facts_fix(f, ip);
    return c;
  }
  if (!f.rdma_device) {
    c.verdict = check_verdict::fail;
    c.observed = note_or(f, "rdma_device", "no RDMA device on " + f.device);
    c.fix =
        "load the RDMA driver (`modprobe mlx5_ib`); `rdma link show` must list a device whose netdev is " + f.device;
    return c;
  }
  if (!f.roce_v2_gid) {
    c.verdict = check_verdict::fail;
    c.observed = *f.rdma_device + ", no RoCE v2 GID" + (f.gid_note.empty() ? std::string() : " (" + f.gid_note + ")");
    c.fix = "give " + f.device + " its RoCE address: `ip addr add " + (h.nic_ip.empty() ? "ADDR" : h.nic_ip) +
            "/24 dev " + f.device + "` (the kernel adds the RoCE v2 GID; `ibv_devinfo -v` lists them)";
    return c;
  }
  c.verdict = check_verdict::pass;
  c.observed = *f.rdma_device + ", RoCE v2 GID " +
               (f.roce_v2_gid_index ? "index " + std::to_string(*f.roce_v2_gid_index) + " " : std::string()) +
               *f.roce_v2_gid;
  return c;
}

check_item mtu_item(const bringup_expectation& want, const host_facts& f, const std::string& ip,
                    const std::string& switch_port, const std::string& target) {
  check_item c = make("active_mtu", target);
  c.expected = "active MTU >= path MTU " + std::to_string(want.path_mtu_bytes) +
               " (netdev MTU >= " + std::to_string(want.path_mtu_bytes + iboe_overhead_bytes) + ")";
  if (!f.unavailable.empty() || !f.netdev_mtu) {
    c.observed = !f.unavailable.empty() ? f.unavailable : note_or(f, "netdev_mtu", "netdev MTU unknown");
    c.fix = !f.unavailable.empty() ? facts_fix(f, ip) : "`ip link show dev " + f.device + "` on " + f.host;
    return c;
  }
  const std::uint32_t active = roce_active_mtu(*f.netdev_mtu);
  c.observed = "netdev MTU " + std::to_string(*f.netdev_mtu) + ", active MTU " +
               (active == 0 ? std::string("none") : std::to_string(active));
  if (active >= want.path_mtu_bytes) {
    c.verdict = check_verdict::pass;
    return c;
  }
  c.verdict = check_verdict::fail;
  c.observed += " (a path MTU of " + std::to_string(want.path_mtu_bytes) + " would send oversize frames)";
  if (f.driver == "soft")
    c.fix = "bring the lab up with a larger MTU: `rocelab lab down` then `rocelab lab up --mtu " +
            std::to_string(want.path_mtu_bytes + iboe_overhead_bytes + 8) + "`";
  else
    c.fix = "`ip link set dev " + f.device + " mtu 9000` on " + f.host +
            " (and the switch port's MTU at least as large, SONiC `sudo config "
            "interface mtu " +
            (switch_port.empty() ? std::string("PORT") : switch_port) +
            " 9100`), or a spec with a smaller nic.mtu_bytes";
  return c;
}

check_item nic_pfc_item(const bringup_expectation& want, const host_facts& f, const std::string& ip,
                        const std::string& target) {
  check_item c = make("nic_pfc", target);
  const std::uint8_t p = want.lossless.data_priority;
  c.expected = "PFC on priority " + std::to_string(p);
  if (!want.lossless.pfc) {
    c.verdict = check_verdict::skip;
    c.observed = "the spec runs without PFC (switch.pfc.enabled false)";
    return c;
  }
  if (!f.unavailable.empty() || !f.pfc_priorities) {
    c.observed = !f.unavailable.empty() ? f.unavailable : note_or(f, "pfc_priorities", "PFC state unknown");
    c.fix = !f.unavailable.empty() ? facts_fix(f, ip)
                                   : "install iproute2's dcb on " + f.host + " (`dcb pfc show dev " + f.device + "`)";
    return c;
  }
  c.observed = "PFC on " + priorities_text(*f.pfc_priorities) +
               (f.pfc_source.empty() ? std::string() : " (" + f.pfc_source + ")");
  if (has(*f.pfc_priorities, p)) {
    c.verdict = check_verdict::pass;
    return c;
  }
  c.verdict = check_verdict::fail;
  std::string mask;
  for (std::uint8_t q = 0; q < 8; ++q)
    mask += std::string(q ? "," : "") + (q == p || has(*f.pfc_priorities, q) ? "1" : "0");
  c.fix = "`dcb pfc set dev " + f.device + " prio-pfc " + std::to_string(p) + ":on` on " + f.host +
          " (MLNX_OFED: `mlnx_qos -i " + f.device + " --pfc " + mask + "`)";
  return c;
}

// ---- switch items ----

struct port_verdict {
  std::string port;
  bool ok = false;
  std::string observed;
  std::string fix;
};

// One line for a switch item over every host port: pass when each passes, else fail
// listing the ports that do not, with their fixes.
check_item switch_line(std::string item, const std::string& target, std::string expected,
                       const std::vector<port_verdict>& ports) {
  check_item c = make(std::move(item), target);
  c.expected = std::move(expected);
  std::vector<std::string> bad, fixes, good;
  for (const auto& p : ports) {
    if (p.ok) {
      good.push_back(p.observed);
      continue;
    }
    bad.push_back(p.port + ": " + p.observed);
    if (!p.fix.empty() && std::find(fixes.begin(), fixes.end(), p.fix) == fixes.end()) fixes.push_back(p.fix);
  }
  if (bad.empty()) {
    c.verdict = check_verdict::pass;
    // Every port the same: say it once.
    const bool same = std::all_of(good.begin(), good.end(), [&](const std::string& g) { return g == good.front(); });
    c.observed = good.empty() ? "no ports" : same ? good.front() + " on every port" : join(good, "; ");
    if (good.empty()) c.verdict = check_verdict::missing;
    return c;
  }
  c.verdict = check_verdict::fail;
  c.observed = join(bad, "; ");
  c.fix = join(fixes, "; ");
  return c;
}

std::string soft_ctl(const std::string& lab, const std::string& args) {
  return "`rocelab switch-ctl --lab " + (lab.empty() ? std::string("NAME") : lab) + " " + args + "`";
}

std::vector<port_verdict> pfc_ports(const bringup_expectation& want, const switch_facts& sw, const std::string& lab,
                                    const std::vector<std::string>& ports) {
  const std::uint8_t p = want.lossless.data_priority;
  std::vector<port_verdict> out;
  for (const auto& port : ports) {
    std::vector<std::uint8_t> on;
    for (const auto& s : sw.settings->pfc)
      if (s.port == port) on = s.priorities;
    port_verdict v{port, has(on, p), "PFC on " + priorities_text(on), {}};
    if (!v.ok) {
      if (sw.driver == "soft") {
        unsigned mask = 1u << p;
        for (auto q : on) mask |= 1u << q;
        v.fix = soft_ctl(lab, "set field=lossless_priorities value=" + std::to_string(mask));
      } else {
        v.fix = "`sudo config interface pfc priority " + port + " " + std::to_string(p) + " on`";
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<port_verdict> dscp_ports(const bringup_expectation& want, const switch_facts& sw, const std::string& lab,
                                     const std::vector<std::string>& ports) {
  const auto entries = fabric::switch_class_entries(want.lossless);
  std::vector<port_verdict> out;
  for (const auto& port : ports) {
    std::map<std::uint8_t, std::uint8_t> map;
    for (const auto& m : sw.settings->dscp_maps)
      if (m.port == port) map = m.dscp_to_tc;
    port_verdict v{port, true, {}, {}};
    std::vector<std::string> seen, patch, soft_entries;
    const auto map_name = sw.dscp_map_names.find(port);
    const std::string name = map_name != sw.dscp_map_names.end() ? map_name->second : std::string();
    for (const auto& [dscp, tc] : entries) {
      const auto it = map.find(dscp);
      seen.push_back("DSCP " + std::to_string(dscp) + " -> " +
                     (it == map.end() ? std::string("unmapped") : "TC " + std::to_string(it->second)));
      if (it != map.end() && it->second == tc) continue;
      v.ok = false;
      patch.push_back(R"({"op":")" + std::string(it == map.end() ? "add" : "replace") +
                      R"(","path":"/DSCP_TO_TC_MAP/)" + (name.empty() ? "MAP" : name) + "/" + std::to_string(dscp) +
                      R"(","value":")" + std::to_string(tc) + R"("})");
      soft_entries.push_back("\"" + std::to_string(dscp) + "\":" + std::to_string(tc));
    }
    v.observed = join(seen, ", ");
    if (!v.ok) {
      if (sw.driver == "soft")
        v.fix = soft_ctl(lab, R"('{"op":"set","field":"dscp_to_tc","value":{)" + join(soft_entries, ",") + "}}'");
      else if (name.empty() && sw.driver == "sonic")
        v.fix = "bind a DSCP_TO_TC_MAP to " + port + " (PORT_QOS_MAP|" + port + " dscp_to_tc_map) holding " +
                join(soft_entries, ", ");
      else
        v.fix = "`echo '[" + join(patch, ",") + "]' | sudo config apply-patch /dev/stdin`";
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<port_verdict> ecn_ports(const bringup_expectation& want, const switch_facts& sw, const std::string& lab,
                                    const std::vector<std::string>& ports) {
  const std::uint8_t q = want.lossless.data_priority;
  std::vector<port_verdict> out;
  for (const auto& port : ports) {
    const fabric::drivers::ecn_setting* e = nullptr;
    for (const auto& s : sw.settings->ecn)
      if (s.port == port && s.queue == q) e = &s;
    port_verdict v{port, false, {}, {}};
    if (!e) {
      v.observed = "queue " + std::to_string(q) + " has no WRED profile";
    } else {
      std::ostringstream o;
      o << "queue " << static_cast<int>(q) << (e->enabled ? " marks" : " does not mark") << ": Kmin " << e->kmin_bytes
        << " B, Kmax " << e->kmax_bytes << " B, Pmax " << e->pmax;
      v.observed = o.str();
      v.ok = e->enabled && e->kmax_bytes > 0 && e->kmin_bytes <= e->kmax_bytes;
    }
    if (!v.ok)
      v.fix = sw.driver == "soft"
                  ? soft_ctl(lab, "set field=queue.ecn.enabled value=true priority=" + std::to_string(q))
                  // The queue's field alone, in place: `config apply-patch` on QUEUE takes
                  // the port admin down and up (patch_sorter.py RequiredValueIdentifier), and
                  // adding the whole key would drop its scheduler.
                  : "`sudo sonic-db-cli CONFIG_DB HSET 'QUEUE|" + port + "|" + std::to_string(q) +
                        "' wred_profile AZURE_LOSSLESS` (AZURE_LOSSLESS with ecn ecn_all; written in place: "
                        "`config apply-patch` on QUEUE would flap the port)";
    out.push_back(std::move(v));
  }
  return out;
}

check_item mirror_item(const bringup_inventory& inv, const switch_facts& sw, const std::string& target,
                       const std::vector<std::string>& host_ports) {
  check_item c = make("mirror_session", target);
  c.expected = "session " + inv.mirror_session + " to " + inv.mirror_destination_port;
  const auto& m = sw.settings->mirror;
  if (sw.driver == "soft") {
    // The soft switch has one session, mirroring every port to the lab's mirror port; a
    // capturing run enables it and disables it again.
    if (!m) {
      c.verdict = check_verdict::fail;
      c.observed = "the switch reports no mirror session";
      c.fix = "restart the lab's switch (`rocelab lab down`, `rocelab lab up`)";
      return c;
    }
    c.observed = "the switch's session to " +
                 (m->destination_port.empty() ? std::string("no port") : m->destination_port) +
                 (m->enabled ? ", enabled" : ", off until a capturing run enables it");
    c.verdict = m->destination_port == inv.mirror_destination_port ? check_verdict::pass : check_verdict::fail;
    if (c.verdict == check_verdict::fail)
      c.fix = "the inventory's mirror.destination_port must be the lab's mirror port (" + m->destination_port + ")";
    return c;
  }
  const std::string sources = join(host_ports, ",");
  const std::string dst = inv.mirror_destination_port;
  // config mirror_session span add refuses a destination that is an L3 interface, a VLAN
  // member or a port-channel member (config/main.py validate_mirror_session_config).
  std::string clear_dst;
  if (const auto m = sw.port_memberships.find(dst); m != sw.port_memberships.end())
    for (const auto& what : m->second) {
      const auto bar = what.find('|');
      const std::string table = what.substr(0, bar), rest = what.substr(bar + 1);
      const auto bar2 = rest.find('|');
      if (table == "INTERFACE" && bar2 != std::string::npos)
        clear_dst += "`sudo config interface ip remove " + dst + " " + rest.substr(bar2 + 1) + "`, ";
      else if (table == "INTERFACE")
        clear_dst += "`sudo sonic-db-cli CONFIG_DB DEL 'INTERFACE|" + dst + "'`, ";
      else if (table == "VLAN_MEMBER")
        clear_dst += "`sudo config vlan member del " + rest.substr(4, bar2 - 4) + " " + dst + "`, ";
      else if (table == "PORTCHANNEL_MEMBER")
        clear_dst += "`sudo config portchannel member del " + rest.substr(0, bar2) + " " + dst + "`, ";
    }
  const std::string add = (clear_dst.empty() ? std::string() : "first free " + dst + ": " + clear_dst + "then ") +
                          "`sudo config mirror_session span add " + inv.mirror_session + " " + dst + " " + sources + " " +
                          inv.mirror_direction + "` (the destination must be no L3 interface, VLAN or port-channel member)";
  const auto session = std::find_if(sw.mirror_settings.begin(), sw.mirror_settings.end(),
                                    [&](const auto& s) { return s.name == inv.mirror_session; });
  if (session == sw.mirror_settings.end()) {
    c.verdict = check_verdict::fail;
    c.observed = sw.mirror_sessions.empty() ? "no MIRROR_SESSION" : "sessions " + join(sw.mirror_sessions, ", ");
    c.fix = add;
    return c;
  }
  const auto& s = *session;
  const char* dir = s.direction == fabric::drivers::mirror_direction::rx   ? "rx"
                    : s.direction == fabric::drivers::mirror_direction::tx ? "tx"
                                                                           : "both";
  c.expected += " from " + sources + ", direction " + inv.mirror_direction;
  c.observed = "MIRROR_SESSION|" + inv.mirror_session +
               (s.dst_ip.empty() ? " SPAN to " + (s.destination_port.empty() ? std::string("no port") : s.destination_port)
                                 : " ERSPAN to " + s.dst_ip) +
               " from " + (s.source_ports.empty() ? std::string("no port") : join(s.source_ports, ",")) + ", direction " +
               dir;
  std::vector<std::string> wrong;
  if (s.dst_ip.empty() && s.destination_port != dst) wrong.push_back("it mirrors to another port");
  for (const auto& p : host_ports)
    if (std::find(s.source_ports.begin(), s.source_ports.end(), p) == s.source_ports.end())
      wrong.push_back("it does not mirror " + p);
  if (inv.mirror_direction != dir) wrong.push_back("direction " + std::string(dir) + ", not " + inv.mirror_direction);
  if (wrong.empty()) {
    c.verdict = check_verdict::pass;
    return c;
  }
  c.verdict = check_verdict::fail;
  c.observed += " (" + join(wrong, "; ") + ")";
  c.fix = "`sudo config mirror_session remove " + inv.mirror_session + "`, then " + add;
  return c;
}

check_item capture_item(const bringup_expectation& want, const capture_facts& cap) {
  check_item c = make("capture_mtu", "capture " + cap.host + " " + cap.device);
  const std::uint32_t need = want.path_mtu_bytes + roce_l3_overhead_bytes;
  c.expected = "MTU >= " + std::to_string(need) + " (an RDMA WRITE at path MTU " + std::to_string(want.path_mtu_bytes) +
               " whole)";
  if (!cap.unavailable.empty() || !cap.netdev_mtu) {
    c.observed = !cap.unavailable.empty() ? cap.unavailable : "capture device MTU unknown";
    c.fix = "run `rocelab lab facts --host " + cap.host + " --device " + cap.device + " --driver capture > " +
            cap.host + ".json` on " + cap.host + " and pass the directory with --host-facts";
    return c;
  }
  // What `rocelab capture --dpdk` asks of a port that takes frames up to the netdev MTU.
  captures::dpdk_rx_caps caps;
  caps.max_mtu = static_cast<std::uint16_t>(std::min<std::uint32_t>(*cap.netdev_mtu, 0xffff));
  caps.max_rx_pktlen = *cap.netdev_mtu + 18;
  const auto plan = captures::plan_dpdk_rx(caps, want.dpdk_capture_mtu, dpdk_default_data_room, dpdk_max_data_room);
  c.observed = "netdev MTU " + std::to_string(*cap.netdev_mtu) + "; DPDK rx plan: rxmode.mtu " +
               std::to_string(plan.mtu) + ", frames up to " + std::to_string(plan.frame_bytes) + " bytes, " +
               (plan.scatter ? "scatter" : "mbuf data room " + std::to_string(plan.mbuf_data_bytes)) +
               ", af_packet framesz " + std::to_string(captures::af_packet_frame_size(plan.mtu));
  if (*cap.netdev_mtu >= need && plan.mtu >= need) {
    c.verdict = check_verdict::pass;
    return c;
  }
  c.verdict = check_verdict::fail;
  c.fix = "`ip link set dev " + cap.device + " mtu 9000` on " + cap.host +
          " (mirrored RoCE frames longer than the MTU are dropped before the capture sees them)";
  return c;
}

}  // namespace

const char* to_string(check_verdict v) noexcept {
  switch (v) {
    case check_verdict::pass:
      return "PASS";
    case check_verdict::fail:
      return "FAIL";
    case check_verdict::missing:
      return "MISSING";
    case check_verdict::skip:
      return "SKIP";
  }
  return "?";
}

std::uint32_t roce_active_mtu(std::uint32_t netdev_mtu) noexcept {
  if (netdev_mtu < iboe_overhead_bytes) return 0;
  const std::uint32_t room = netdev_mtu - iboe_overhead_bytes;
  for (std::uint32_t m = 4096; m >= 256; m /= 2)
    if (room >= m) return m;
  return 0;
}

result<std::vector<std::uint8_t>> parse_pfc_priorities(std::string_view text) {
  std::vector<std::uint8_t> out;
  // iproute2 dcb: "prio-pfc 0:off 1:off 2:off 3:on ..."
  if (const auto at = text.find("prio-pfc"); at != std::string_view::npos) {
    std::istringstream in{std::string(text.substr(at + 8))};
    std::string word;
    bool any = false;
    while (in >> word) {
      const auto colon = word.find(':');
      if (colon != 1 || word[0] < '0' || word[0] > '7') break;
      any = true;
      if (word.substr(2) == "on") out.push_back(static_cast<std::uint8_t>(word[0] - '0'));
    }
    if (!any) return status(error_code::malformed_input, "dcb pfc: no priority after prio-pfc");
    return out;
  }
  // mlnx_qos: a "priority 0 1 ... 7" row then "enabled 0 0 0 1 ..." under "PFC configuration".
  if (const auto at = text.find("PFC configuration"); at != std::string_view::npos) {
    const auto en = text.find("enabled", at);
    if (en == std::string_view::npos) return status(error_code::malformed_input, "mlnx_qos: no 'enabled' row");
    const auto eol = text.find('\n', en);
    std::istringstream in{
        std::string(text.substr(en + 7, eol == std::string_view::npos ? std::string_view::npos : eol - en - 7))};
    int v = 0;
    std::uint8_t p = 0;
    while (p < 8 && in >> v) {
      if (v == 1) out.push_back(p);
      ++p;
    }
    if (p != 8) return status(error_code::malformed_input, "mlnx_qos: the 'enabled' row has not 8 priorities");
    return out;
  }
  return status(error_code::malformed_input,
                "neither `dcb pfc show` (prio-pfc) nor `mlnx_qos` (PFC configuration) output");
}

std::vector<check_item> check_bringup(const bringup_expectation& want, const bringup_inventory& inv,
                                      const lab_facts& facts) {
  std::vector<check_item> out;
  for (std::size_t i = 0; i < inv.hosts.size(); ++i) {
    const auto& h = inv.hosts[i];
    host_facts f;
    f.host = h.name;
    f.device = h.nic_device;
    f.driver = h.nic_driver;
    f.unavailable = "no facts gathered";
    for (const auto& g : facts.hosts)
      if (g.host == h.name) f = g;
    const std::string target = h.name + " " + h.nic_device;
    out.push_back(rdma_item(f, h, target));
    out.push_back(mtu_item(want, f, h.nic_ip, h.switch_port, target));
    out.push_back(nic_pfc_item(want, f, h.nic_ip, target));
    out.push_back(bringup_detail::nic_trust_item(want, f, facts_fix(f, h.nic_ip), target));
    out.push_back(bringup_detail::clock_source_item(f, facts_fix(f, h.nic_ip), target));
  }

  std::vector<std::string> ports;
  for (const auto& h : inv.hosts)
    if (std::find(ports.begin(), ports.end(), h.switch_port) == ports.end()) ports.push_back(h.switch_port);
  const std::string target = "switch " + inv.switch_name + " (" + join(ports, ", ") + ")";
  const switch_facts& sw = facts.sw;
  if (!sw.unavailable.empty() || !sw.settings) {
    const std::string why = sw.unavailable.empty() ? "switch settings not read" : sw.unavailable;
    const std::string fix = inv.switch_driver == "soft"
                                ? "bring the virtual lab up with its switch (`rocelab lab up`) and pass --name NAME"
                                : "pass --switch-ssh admin@SWITCH, or --config-db FILE (`sudo sonic-cfggen -d "
                                  "--print-data > config_db.json` on the switch)";
    for (const char* item : {"switch_pfc", "dscp_map", "ecn", "priority_group", "pfc_queue", "pfc_watchdog",
                             "mirror_session"}) {
      check_item c = make(item, target);
      c.observed = why;
      c.fix = fix;
      out.push_back(std::move(c));
    }
  } else {
    const std::uint8_t p = want.lossless.data_priority;
    if (want.lossless.pfc) {
      out.push_back(switch_line("switch_pfc", target, "PFC on priority " + std::to_string(p),
                                pfc_ports(want, sw, inv.virtual_lab, ports)));
    } else {
      check_item c = make("switch_pfc", target);
      c.verdict = check_verdict::skip;
      c.observed = "the spec runs without PFC (switch.pfc.enabled false)";
      out.push_back(std::move(c));
    }
    std::string expected;
    for (const auto& [d, tc] : fabric::switch_class_entries(want.lossless))
      expected += (expected.empty() ? "" : ", ") + ("DSCP " + std::to_string(d) + " -> TC " + std::to_string(tc));
    out.push_back(switch_line("dscp_map", target, expected, dscp_ports(want, sw, inv.virtual_lab, ports)));
    if (want.ecn) {
      out.push_back(switch_line("ecn", target, "ECN marking on queue " + std::to_string(p),
                                ecn_ports(want, sw, inv.virtual_lab, ports)));
    } else {
      check_item c = make("ecn", target);
      c.verdict = check_verdict::skip;
      c.observed = "the spec runs without ECN (switch.ecn.enabled false)";
      out.push_back(std::move(c));
    }
    out.push_back(bringup_items::priority_group_item(want, sw, target, ports));
    out.push_back(bringup_items::pfc_queue_item(want, sw, target, ports));
    out.push_back(bringup_items::pfc_watchdog_item(want, sw, target, ports));
    out.push_back(mirror_item(inv, sw, "switch " + inv.switch_name, ports));
  }
  capture_facts cap = facts.capture;
  if (cap.host.empty()) cap.host = inv.capture_host;
  if (cap.device.empty()) cap.device = inv.capture_device;
  out.push_back(capture_item(want, cap));
  return out;
}

bool bringup_passed(const std::vector<check_item>& items) noexcept {
  return std::all_of(items.begin(), items.end(), [](const check_item& c) {
    return c.verdict == check_verdict::pass || c.verdict == check_verdict::skip;
  });
}

std::string bringup_text(const std::vector<check_item>& items) {
  std::ostringstream o;
  std::array<int, 4> counts{};
  for (const auto& c : items) {
    ++counts[static_cast<std::size_t>(c.verdict)];
    std::string verdict = to_string(c.verdict), item = c.item;
    verdict.resize(8, ' ');
    item.resize(15, ' ');
    o << verdict << item << c.target << ": " << c.observed;
    if (c.verdict != check_verdict::pass && !c.expected.empty()) o << " (expected " << c.expected << ")";
    o << "\n";
    if ((c.verdict == check_verdict::fail || c.verdict == check_verdict::missing) && !c.fix.empty())
      o << "        fix: " << c.fix << "\n";
  }
  o << counts[0] << " passed, " << counts[1] << " failed, " << counts[2] << " missing, " << counts[3] << " skipped\n";
  return o.str();
}

std::string bringup_json(const std::vector<check_item>& items) {
  json arr = json::array();
  for (const auto& c : items)
    arr.push_back({{"item", c.item},
                   {"target", c.target},
                   {"verdict", to_string(c.verdict)},
                   {"observed", c.observed},
                   {"expected", c.expected},
                   {"fix", c.fix}});
  return json{{"passed", bringup_passed(items)}, {"items", arr}}.dump(2);
}

// ---- host facts as JSON ----

std::string host_facts_json(const host_facts& f) {
  json j = {{"host", f.host}, {"device", f.device}, {"driver", f.driver}};
  if (!f.unavailable.empty()) j["unavailable"] = f.unavailable;
  if (f.netdev_mtu) j["netdev_mtu"] = *f.netdev_mtu;
  if (f.rdma_device) j["rdma_device"] = *f.rdma_device;
  if (f.roce_v2_gid) j["roce_v2_gid"] = *f.roce_v2_gid;
  if (f.roce_v2_gid_index) j["roce_v2_gid_index"] = *f.roce_v2_gid_index;
  if (!f.gid_note.empty()) j["gid_note"] = f.gid_note;
  if (f.pfc_priorities) j["pfc_priorities"] = *f.pfc_priorities;
  if (!f.pfc_source.empty()) j["pfc_source"] = f.pfc_source;
  if (f.clocksource) j["clocksource"] = *f.clocksource;
  if (f.phc) j["phc"] = *f.phc;
  if (f.nic_trust) j["nic_trust"] = *f.nic_trust;
  if (f.dscp_to_priority) {
    json m = json::object();
    for (const auto& [d, p] : *f.dscp_to_priority) m[std::to_string(d)] = p;
    j["dscp_to_priority"] = m;
  }
  if (!f.trust_source.empty()) j["trust_source"] = f.trust_source;
  if (f.clock_sync) j["clock_sync"] = *f.clock_sync;
  if (f.clock_bound_ns) j["clock_bound_ns"] = *f.clock_bound_ns;
  if (!f.clock_sync_detail.empty()) j["clock_sync_detail"] = f.clock_sync_detail;
  if (!f.notes.empty()) j["notes"] = f.notes;
  return j.dump(2);
}

result<host_facts> host_facts_from_json(std::string_view text, const std::string& source_name) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return status(error_code::malformed_input, source_name + ": not a JSON object");
  host_facts f;
  static const std::array<const char*, 20> known = {
      "host",        "device",          "driver",           "unavailable",  "netdev_mtu",     "rdma_device",
      "roce_v2_gid", "roce_v2_gid_index", "gid_note",       "pfc_priorities", "pfc_source",   "clocksource",
      "phc",         "nic_trust",       "dscp_to_priority", "trust_source", "clock_sync",     "clock_bound_ns",
      "clock_sync_detail", "notes"};
  for (const auto& [key, value] : j.items())
    if (std::find_if(known.begin(), known.end(), [&](const char* k) { return key == k; }) == known.end())
      return status(error_code::malformed_input, source_name + ": unknown field '" + key + "'");
  // Each field's type is checked before it is read: a wrong one names the field, the type
  // expected and the type found.
  const auto wrong = [&](const std::string& field, const char* expected, const json& found) {
    return status(error_code::malformed_input, source_name + ": field " + field + ": expected " + expected +
                                                   ", found " + std::string(found.type_name()));
  };
  const auto string_field = [&](const char* field, std::string& into, bool required) -> status {
    const auto it = j.find(field);
    if (it == j.end()) return required ? status(error_code::malformed_input, source_name + ": no field " + field)
                                       : status::success();
    if (!it->is_string()) return wrong(field, "a string", *it);
    into = it->get<std::string>();
    return status::success();
  };
  const auto optional_text = [&](const char* field, std::optional<std::string>& into) -> status {
    std::string v;
    if (!j.contains(field)) return status::success();
    ROCELAB_RETURN_IF_ERROR(string_field(field, v, true));
    into = std::move(v);
    return status::success();
  };
  const auto count = [&](const char* field, std::optional<std::uint32_t>& into) -> status {
    const auto it = j.find(field);
    if (it == j.end()) return status::success();
    if (!it->is_number_unsigned() || it->get<std::uint64_t>() > UINT32_MAX)
      return wrong(field, "a whole number 0..4294967295", *it);
    into = it->get<std::uint32_t>();
    return status::success();
  };
  ROCELAB_RETURN_IF_ERROR(string_field("host", f.host, true));
  ROCELAB_RETURN_IF_ERROR(string_field("device", f.device, true));
  ROCELAB_RETURN_IF_ERROR(string_field("driver", f.driver, true));
  ROCELAB_RETURN_IF_ERROR(string_field("unavailable", f.unavailable, false));
  ROCELAB_RETURN_IF_ERROR(count("netdev_mtu", f.netdev_mtu));
  ROCELAB_RETURN_IF_ERROR(optional_text("rdma_device", f.rdma_device));
  ROCELAB_RETURN_IF_ERROR(optional_text("roce_v2_gid", f.roce_v2_gid));
  ROCELAB_RETURN_IF_ERROR(count("roce_v2_gid_index", f.roce_v2_gid_index));
  ROCELAB_RETURN_IF_ERROR(string_field("gid_note", f.gid_note, false));
  if (const auto it = j.find("pfc_priorities"); it != j.end()) {
    if (!it->is_array()) return wrong("pfc_priorities", "an array of priorities 0..7", *it);
    std::vector<std::uint8_t> p;
    for (const auto& v : *it) {
      if (!v.is_number_integer()) return wrong("pfc_priorities", "an array of priorities 0..7", v);
      const auto x = v.get<std::int64_t>();
      if (x < 0 || x > 7)
        return status(error_code::malformed_input,
                      source_name + ": pfc_priorities: " + std::to_string(x) + " is not 0..7");
      p.push_back(static_cast<std::uint8_t>(x));
    }
    f.pfc_priorities = std::move(p);
  }
  ROCELAB_RETURN_IF_ERROR(string_field("pfc_source", f.pfc_source, false));
  ROCELAB_RETURN_IF_ERROR(optional_text("clocksource", f.clocksource));
  ROCELAB_RETURN_IF_ERROR(optional_text("phc", f.phc));
  ROCELAB_RETURN_IF_ERROR(optional_text("nic_trust", f.nic_trust));
  if (f.nic_trust && *f.nic_trust != "dscp" && *f.nic_trust != "pcp")
    return status(error_code::malformed_input, source_name + ": nic_trust: '" + *f.nic_trust + "' is neither dscp nor pcp");
  if (const auto it = j.find("dscp_to_priority"); it != j.end()) {
    if (!it->is_object()) return wrong("dscp_to_priority", "an object of DSCP 0..63 -> priority 0..7", *it);
    std::map<std::uint8_t, std::uint8_t> m;
    for (const auto& [key, value] : it->items()) {
      std::size_t used = 0;
      int d = -1;
      try {
        d = std::stoi(key, &used);
      } catch (const std::exception&) {
      }
      if (used != key.size() || d < 0 || d > 63 || !value.is_number_integer() || value.get<std::int64_t>() < 0 ||
          value.get<std::int64_t>() > 7)
        return status(error_code::malformed_input, source_name + ": dscp_to_priority: '" + key + "': " + value.dump() +
                                                       " is not DSCP 0..63 -> priority 0..7");
      m[static_cast<std::uint8_t>(d)] = static_cast<std::uint8_t>(value.get<std::int64_t>());
    }
    f.dscp_to_priority = std::move(m);
  }
  ROCELAB_RETURN_IF_ERROR(string_field("trust_source", f.trust_source, false));
  ROCELAB_RETURN_IF_ERROR(optional_text("clock_sync", f.clock_sync));
  if (const auto it = j.find("clock_bound_ns"); it != j.end()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0)
      return wrong("clock_bound_ns", "a whole number of nanoseconds >= 0", *it);
    f.clock_bound_ns = it->get<std::int64_t>();
  }
  ROCELAB_RETURN_IF_ERROR(string_field("clock_sync_detail", f.clock_sync_detail, false));
  if (const auto it = j.find("notes"); it != j.end()) {
    if (!it->is_object()) return wrong("notes", "an object of strings", *it);
    for (const auto& [key, value] : it->items()) {
      if (!value.is_string()) return wrong("notes." + key, "a string", value);
      f.notes[key] = value.get<std::string>();
    }
  }
  return f;
}

}  // namespace rocelab::experiments

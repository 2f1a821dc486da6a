#include "rocelab/experiments/lab/bringup_facts.hpp"

#include "sonic_qos_facts.hpp"

#include <arpa/inet.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "rocelab/agents/clock/host_clock_reader.hpp"
#include "rocelab/common/sysfs_line.hpp"
#include "rocelab/common/unique_fd.hpp"
#include "rocelab/fabric/drivers/process_runner.hpp"
#include "rocelab/fabric/drivers/soft_switch_driver.hpp"
#include "rocelab/traffic/verbs/gid_table.hpp"

namespace rocelab::experiments {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

constexpr const char* clocksource_path = "devices/system/clocksource/clocksource0/current_clocksource";

void read_clocksource(const fs::path& root, host_facts& f) {
  if (auto c = read_sysfs_line(root / clocksource_path))
    f.clocksource = *c;
  else
    f.notes["clocksource"] = "cannot read " + (root / clocksource_path).string();
}

// The RDMA device whose netdev is `ifname`, walking the links the kernel makes.
std::optional<std::string> rdma_device_of(const fs::path& root, const std::string& ifname) {
  if (auto d = entries(root / "class/net" / ifname / "device/infiniband"); !d.empty()) return d.front();
  for (const auto& dev : entries(root / "class/infiniband")) {
    std::error_code ec;
    if (fs::exists(root / "class/infiniband" / dev / "device/net" / ifname, ec)) return dev;
  }
  return std::nullopt;
}

bool ipv4_mapped(const traffic::verbs::gid_bytes& g) {
  return std::all_of(g.begin(), g.begin() + 10, [](std::uint8_t b) { return b == 0; }) && g[10] == 0xff &&
         g[11] == 0xff;
}

// ::ffff:a.b.c.d for an IPv4-mapped GID (as `ibv_devinfo -v` and `show_gids` print it),
// the sysfs form otherwise.
std::string gid_text(const traffic::verbs::gid_bytes& g) {
  if (!ipv4_mapped(g)) return traffic::verbs::format_gid(g);
  return "::ffff:" + std::to_string(g[12]) + "." + std::to_string(g[13]) + "." + std::to_string(g[14]) + "." +
         std::to_string(g[15]);
}

void read_gid(const fs::path& root, const std::string& dev, const std::string& ifname, const std::string& ip,
              host_facts& f) {
  namespace v = traffic::verbs;
  auto table = v::read_gid_table(root.string(), dev, 1);
  if (!table) {
    f.gid_note = table.error().message();
    return;
  }
  std::vector<v::gid_entry> mine;
  for (const auto& e : *table)
    if (e.netdev.empty() || e.netdev == ifname) mine.push_back(e);
  if (!ip.empty()) {
    auto g = v::select_roce_v2_gid(mine, ip);
    if (!g) {
      f.gid_note = g.error().message();
      return;
    }
    f.roce_v2_gid = gid_text(g->gid);
    f.roce_v2_gid_index = g->index;
    return;
  }
  // No address named: the first RoCE v2 entry of an IPv4 address (::ffff:a.b.c.d).
  for (const auto& e : mine) {
    if (e.type == v::gid_type::roce_v2 && ipv4_mapped(e.gid)) {
      f.roce_v2_gid = gid_text(e.gid);
      f.roce_v2_gid_index = e.index;
      return;
    }
  }
  f.gid_note = "the GID table of " + dev + " has no RoCE v2 entry of an IPv4 address on " + ifname;
}

// mlnx_qos (MLNX_OFED's mlnx-tools) where installed, iproute2's dcb otherwise: either
// names the trust state (dcb through the APP table mlx5 keys it on).
void read_trust(const sysfs_host_options& o, host_facts& f) {
  std::string text, source = o.trust_source;
  if (o.trust_text) {
    text = *o.trust_text;
  } else {
    const auto why = [](const result<fabric::drivers::process_output>& r) {
      if (!r) return r.error().message();
      std::string err = r->err.substr(0, 200);
      while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
      return "exited " + std::to_string(r->exit_code) + ": " + err;
    };
    auto mlnx = fabric::drivers::run_process({"mlnx_qos", "-i", o.device}, "", std::chrono::seconds(5));
    if (mlnx && mlnx->exit_code == 0) {
      text = mlnx->out;
      source = "mlnx_qos -i";
    } else {
      auto dcb = fabric::drivers::run_process({"dcb", "-N", "app", "show", "dev", o.device}, "", std::chrono::seconds(5));
      if (!dcb || dcb->exit_code != 0) {
        f.notes["nic_trust"] = "`mlnx_qos -i " + o.device + "`: " + why(mlnx) + "; `dcb -N app show dev " + o.device +
                               "`: " + why(dcb);
        return;
      }
      text = dcb->out;
      source = "dcb app show";
    }
  }
  auto t = parse_nic_trust(text);
  if (!t) {
    f.notes["nic_trust"] = source + ": " + t.error().message();
    return;
  }
  f.nic_trust = t->trust;
  if (t->trust == "dscp") f.dscp_to_priority = t->dscp_to_priority;
  f.trust_source = source;
}

void set_clock_sync(const agents::clock::clock_source& s, host_facts& f) {
  f.clock_sync = agents::clock::to_string(s.kind);
  if (s.synchronised()) f.clock_bound_ns = s.error_bound_ns;
  f.clock_sync_detail = s.detail;
}

std::string ipv4_gid(const std::string& ip) {
  return "::ffff:" + ip;
}

}  // namespace

host_facts read_sysfs_host_facts(const sysfs_host_options& o) {
  host_facts f;
  f.host = o.host;
  f.device = o.device;
  f.driver = o.driver;
  const fs::path root = o.sysfs_root;
  const fs::path net = root / "class/net" / o.device;
  std::error_code ec;
  if (!fs::exists(net, ec)) {
    f.unavailable = "no netdev " + o.device + " under " + (root / "class/net").string();
    return f;
  }
  if (auto mtu = read_sysfs_line(net / "mtu")) {
    try {
      f.netdev_mtu = static_cast<std::uint32_t>(std::stoul(*mtu));
    } catch (const std::exception&) {
      f.notes["netdev_mtu"] = (net / "mtu").string() + ": not a number: " + *mtu;
    }
  } else {
    f.notes["netdev_mtu"] = "cannot read " + (net / "mtu").string();
  }
  read_clocksource(root, f);
  if (o.driver == "capture") return f;

  f.rdma_device = rdma_device_of(root, o.device);
  if (!f.rdma_device)
    f.notes["rdma_device"] = "no RDMA device links to " + o.device + " (" + (net / "device/infiniband").string() +
                             ", " + (root / "class/infiniband").string() + "/*/device/net)";
  else
    read_gid(root, *f.rdma_device, o.device, o.ip, f);

  const fs::path ptp = net / "device/ptp";
  if (fs::is_directory(ptp, ec)) {
    const auto clocks = entries(ptp);
    f.phc = clocks.empty() ? std::string() : clocks.front();
  } else {
    f.phc = std::string();
  }

  std::string text;
  if (o.pfc_text) {
    text = *o.pfc_text;
  } else {
    auto run = fabric::drivers::run_process({"dcb", "pfc", "show", "dev", o.device}, "", std::chrono::seconds(5));
    if (!run) {
      f.notes["pfc_priorities"] = "`dcb pfc show dev " + o.device + "`: " + run.error().message();
    } else if (run->exit_code != 0) {
      f.notes["pfc_priorities"] = "`dcb pfc show dev " + o.device + "` exited " + std::to_string(run->exit_code) +
                                  ": " + run->err.substr(0, 200);
    }
    if (run && run->exit_code == 0) text = run->out;
  }
  if (!text.empty()) {
    if (auto p = parse_pfc_priorities(text)) {
      f.pfc_priorities = *p;
      f.pfc_source = o.pfc_source;
    } else {
      f.notes["pfc_priorities"] = o.pfc_source + ": " + p.error().message();
    }
  }
  read_trust(o, f);
  set_clock_sync(o.clock ? *o.clock : agents::clock::read_host_clock(), f);
  return f;
}

host_facts read_soft_host_facts(const agents::lab::lab_state& lab, const std::string& host,
                                const fabric::lossless_class& lossless) {
  const std::uint8_t data_priority = lossless.data_priority;
  host_facts f;
  f.host = host;
  f.driver = "soft";
  const auto h = std::find_if(lab.hosts.begin(), lab.hosts.end(), [&](const auto& x) { return x.name == host; });
  if (h == lab.hosts.end()) {
    f.device = "eth0";
    f.unavailable = "lab " + lab.name + " has no host " + host;
    return f;
  }
  f.device = h->ifname;
  std::optional<std::uint32_t> mtu;
  std::optional<std::string> ip;
  std::optional<int> phc_index;
  std::map<std::string, std::string> notes;
  const status st = agents::lab::in_netns(h->netns, [&]() -> status {
    const unique_fd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!s.valid()) return status::from_errno("socket in " + h->netns);
    ifreq req{};
    std::strncpy(req.ifr_name, h->ifname.c_str(), IFNAMSIZ - 1);
    if (::ioctl(s.get(), SIOCGIFMTU, &req) == 0)
      mtu = static_cast<std::uint32_t>(req.ifr_mtu);
    else
      notes["netdev_mtu"] = status::from_errno("SIOCGIFMTU " + h->ifname).message();
    req = ifreq{};
    std::strncpy(req.ifr_name, h->ifname.c_str(), IFNAMSIZ - 1);
    if (::ioctl(s.get(), SIOCGIFADDR, &req) == 0) {
      sockaddr_in a{};
      std::memcpy(&a, &req.ifr_addr, sizeof a);
      char text[INET_ADDRSTRLEN] = {};
      if (::inet_ntop(AF_INET, &a.sin_addr, text, sizeof text)) ip = text;
    } else {
      notes["rdma_device"] = status::from_errno("SIOCGIFADDR " + h->ifname).message();
    }
    ethtool_ts_info ts{};
    ts.cmd = ETHTOOL_GET_TS_INFO;
    req = ifreq{};
    std::strncpy(req.ifr_name, h->ifname.c_str(), IFNAMSIZ - 1);
    req.ifr_data = reinterpret_cast<char*>(&ts);
    if (::ioctl(s.get(), SIOCETHTOOL, &req) == 0) phc_index = ts.phc_index;
    return status::success();
  });
  if (!st.ok()) {
    f.unavailable = st.message();
    return f;
  }
  f.netdev_mtu = mtu;
  f.notes = notes;
  if (ip) {
    f.rdma_device = "soft RoCEv2 NIC (user space)";
    f.roce_v2_gid = ipv4_gid(*ip);
  } else {
    f.gid_note = "no IPv4 address on " + h->ifname;
    f.rdma_device = "soft RoCEv2 NIC (user space)";
  }
  if (phc_index) f.phc = *phc_index >= 0 ? "ptp" + std::to_string(*phc_index) : std::string();
  f.pfc_priorities = std::vector<std::uint8_t>{data_priority};
  f.pfc_source = "soft NIC: PFC on the run's data priority, set per run (nic_config.pfc_enabled)";
  f.nic_trust = "dscp";
  f.dscp_to_priority = std::map<std::uint8_t, std::uint8_t>{{lossless.data_dscp, data_priority}};
  f.trust_source = "soft NIC: the run's data DSCP on its data priority, set per run (nic_config)";
  f.clock_sync = "same-kernel";
  f.clock_sync_detail = "the virtual lab's hosts are network namespaces of this machine";
  read_clocksource("/sys", f);
  return f;
}

capture_facts read_soft_capture_facts(const agents::lab::lab_state& lab) {
  capture_facts c;
  c.host = "capture namespace " + lab.capture_netns;
  c.device = lab.capture_ifname;
  const status st = agents::lab::in_netns(lab.capture_netns, [&]() -> status {
    const unique_fd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!s.valid()) return status::from_errno("socket");
    ifreq req{};
    std::strncpy(req.ifr_name, lab.capture_ifname.c_str(), IFNAMSIZ - 1);
    if (::ioctl(s.get(), SIOCGIFMTU, &req) != 0) return status::from_errno("SIOCGIFMTU " + lab.capture_ifname);
    c.netdev_mtu = static_cast<std::uint32_t>(req.ifr_mtu);
    return status::success();
  });
  if (!st.ok()) c.unavailable = st.message();
  return c;
}

switch_facts read_soft_switch_facts(const agents::lab::lab_state& lab, const std::string& name,
                                    const std::vector<std::string>& ports) {
  switch_facts f;
  f.name = name;
  f.driver = "soft";
  auto drv = fabric::drivers::soft_switch_driver::connect({lab.control_socket});
  if (!drv) {
    f.unavailable = drv.error().message();
    return f;
  }
  auto s = (*drv)->read_settings(ports);
  if (!s) {
    f.unavailable = s.error().message();
    return f;
  }
  f.settings = std::move(*s);
  f.mirror_sessions = {"mirror"};
  return f;
}

result<switch_facts> sonic_switch_facts(const nlohmann::json& config_db, const std::string& name,
                                        const std::vector<std::string>& ports) {
  switch_facts f;
  f.name = name;
  f.driver = "sonic";
  auto settings = fabric::drivers::settings_from_config_db(config_db, ports);
  if (!settings) return settings.error();
  f.settings = std::move(*settings);
  if (config_db.contains("MIRROR_SESSION"))
    for (const auto& [session, entry] : config_db["MIRROR_SESSION"].items()) f.mirror_sessions.push_back(session);
  for (const auto& port : ports)
    if (auto map = fabric::drivers::dscp_to_tc_map_name(config_db, port); !map.empty()) f.dscp_map_names[port] = map;
  add_sonic_qos_facts(config_db, ports, f);
  return f;
}

switch_facts read_sonic_switch_facts(fabric::drivers::sonic_options options, const std::string& name,
                                     const std::vector<std::string>& ports) {
  const std::string host = options.host;
  auto drv = fabric::drivers::sonic_switch_driver::open(std::move(options));
  if (!drv) {
    switch_facts f;
    f.name = name;
    f.driver = "sonic";
    f.unavailable = drv.error().message();
    return f;
  }
  auto db = (*drv)->read_config_db();
  if (!db) {
    switch_facts f;
    f.name = name;
    f.driver = "sonic";
    f.unavailable = db.error().with_context("reading config_db of " + host).message();
    return f;
  }
  auto f = sonic_switch_facts(*db, name, ports);
  if (f) return std::move(*f);
  switch_facts unread;
  unread.name = name;
  unread.driver = "sonic";
  unread.unavailable = f.error().with_context("reading config_db of " + host).message();
  return unread;
}

}  // namespace rocelab::experiments

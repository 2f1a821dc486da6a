// rocelab switch: the soft switch daemon (fabric/soft_switch), run inside the switch
// namespace (`rocelab lab up` starts it with --lab). rocelab switch-ctl: its control client.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "number_checks.hpp"
#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/fabric/soft_switch/control_client.hpp"
#include "rocelab/fabric/soft_switch/soft_switch.hpp"

namespace rocelab::cli {
namespace {

namespace ss = fabric::soft_switch;
namespace lab = agents::lab;

std::atomic<bool> stop_requested{false};
void on_switch_stop_signal(int) { stop_requested.store(true); }

result<ss::mac_address> parse_mac(const std::string& s) {
  ss::mac_address m{};
  unsigned b[6];
  if (std::sscanf(s.c_str(), "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
    return status(error_code::invalid_argument, "not a MAC address: " + s);
  for (int i = 0; i < 6; ++i) m[i] = static_cast<std::uint8_t>(b[i]);
  return m;
}

result<std::array<std::uint8_t, 4>> parse_ipv4(const std::string& s) {
  unsigned b[4];
  if (std::sscanf(s.c_str(), "%u.%u.%u.%u", &b[0], &b[1], &b[2], &b[3]) != 4)
    return status(error_code::invalid_argument, "not an IPv4 address: " + s);
  return std::array<std::uint8_t, 4>{static_cast<std::uint8_t>(b[0]), static_cast<std::uint8_t>(b[1]),
                                     static_cast<std::uint8_t>(b[2]), static_cast<std::uint8_t>(b[3])};
}

struct switch_args {
  std::string lab_name;
  std::string state_root = lab::default_state_root;
  std::vector<std::string> ports;  // IF or IF=mac,mac (standalone)
  std::string mirror;
  std::string control;
  double link_gbps = 10;
  std::int64_t buffer_kb = 1024;
  int mtu = 4200;
  std::string ring = "v2";
  bool no_ecn = false;
  bool no_pfc = false;
  int rt_priority = 50;
  double response_us = static_cast<double>(ss::lab_response_budget_ns) / 1000;
  std::uint32_t ring_frames = 0;
  double port_kpps = 0;
};

result<ss::soft_switch_options> options_from(const switch_args& a) {
  ss::soft_switch_options o;
  double gbps = a.link_gbps;
  std::int64_t buffer = a.buffer_kb * 1024;
  int mtu = a.mtu;
  if (!a.lab_name.empty()) {
    auto s = lab::load_lab(a.state_root, a.lab_name);
    if (!s) return s.error();
    gbps = s->link_gbps;
    buffer = s->buffer_bytes;
    mtu = s->mtu;
    for (const auto& h : s->hosts) {
      auto mac = parse_mac(h.switch_port_mac);
      auto peer = parse_mac(h.mac);
      if (!mac || !peer) return status(error_code::malformed_input, "lab state: bad MAC of " + h.name);
      o.ports.push_back({h.switch_port, *mac, {*peer}});
    }
    o.mirror_ifname = s->mirror_port;
    auto mm = parse_mac(s->mirror_port_mac);
    auto cm = parse_mac(s->capture_mac);
    auto mi = parse_ipv4(s->mirror_ipv4);
    auto ci = parse_ipv4(s->capture_ipv4);
    if (!mm || !cm || !mi || !ci) return status(error_code::malformed_input, "lab state: bad mirror addresses");
    o.mirror.src_mac = *mm;
    o.mirror.dst_mac = *cm;
    o.mirror.src_ip = *mi;
    o.mirror.dst_ip = *ci;
    o.control_socket = s->control_socket;
  } else {
    int i = 0;
    for (const auto& p : a.ports) {
      ss::port_spec spec;
      const auto eq = p.find('=');
      spec.ifname = p.substr(0, eq);
      spec.mac = {0x02, 0x52, 0x4c, 0x01, 0x00, static_cast<std::uint8_t>(++i)};
      if (eq != std::string::npos) {
        std::string rest = p.substr(eq + 1);
        while (!rest.empty()) {
          const auto comma = rest.find(',');
          auto mac = parse_mac(rest.substr(0, comma));
          if (!mac) return mac.error();
          spec.peer_macs.push_back(*mac);
          rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
        }
      }
      o.ports.push_back(std::move(spec));
    }
    o.mirror_ifname = a.mirror;
    o.control_socket = a.control;
  }
  if (o.ports.empty()) return status(error_code::invalid_argument, "no ports (--lab or --port)");
  const auto rate_bps = static_cast<std::int64_t>(gbps * 1e9);
  const auto response_ns = static_cast<std::int64_t>(a.response_us * 1000);
  o.settings = ss::lab_default_settings(o.ports.size(), rate_bps, buffer, mtu, response_ns);
  if (const std::int64_t want = ss::lab_headroom_bytes(rate_bps, mtu, response_ns);
      o.settings.model.ports[0].pgs[3].headroom_bytes < want)
    std::cerr << "rocelab switch: a " << buffer / 1024 << " KiB buffer leaves "
              << o.settings.model.ports[0].pgs[3].headroom_bytes << " bytes of PFC headroom per port, less than the "
              << want << " a " << response_ns / 1000 << " us reaction at this rate needs; lossless traffic may drop\n";
  o.rt_priority = a.rt_priority;
  o.response_budget_ns = response_ns;
  // Receive rings hold what arrives while the loop is away: twice the response budget
  // at the port rate in MTU frames, at least 512 frames (small frames, ACKs and CNPs,
  // also take one slot each), each slot the next power of two above the frame.
  std::uint32_t slot = 2048;
  while (slot < static_cast<std::uint32_t>(mtu + 18 + 64)) slot *= 2;
  o.ring.frame_bytes = slot;
  const auto in_flight = static_cast<double>(rate_bps) / 8 * 2 * static_cast<double>(response_ns) / 1e9;
  // With a frame-rate limit, as many frames as that rate brings in twice the same time.
  const double in_flight_frames = std::max(in_flight / (mtu + 18), a.port_kpps * 1000 * 4 * static_cast<double>(response_ns) / 1e9);
  o.ring.frames = a.ring_frames != 0 ? a.ring_frames
                                     : std::clamp<std::uint32_t>(static_cast<std::uint32_t>(in_flight_frames) + 64, 512, 16384);
  if (a.no_ecn)
    for (auto& p : o.settings.model.ports) p.queues[3].ecn.enabled = false;
  if (a.no_pfc) o.settings.model.lossless_priorities = 0;
  o.max_frame_bytes = static_cast<std::uint32_t>(mtu + 18 + 64);
  o.port_rate_pps = static_cast<std::int64_t>(a.port_kpps * 1000);
  if (a.ring == "v3") o.ring.version = ss::ring_version::v3;
  else if (a.ring != "v2") return status(error_code::invalid_argument, "--ring: v2 or v3");
  return o;
}

std::function<int()> setup_switch(CLI::App& app) {
  auto a = std::make_shared<switch_args>();
  app.description("The soft switch daemon (run inside the switch namespace; `rocelab lab up` starts it)");
  app.add_option("--lab", a->lab_name, "Take ports, addresses and settings from this lab's state file");
  app.add_option("--state-root", a->state_root, "Lab state root")->capture_default_str();
  app.add_option("--port", a->ports, "Standalone: a port interface, optionally IF=peer-mac[,mac...]");
  app.add_option("--mirror", a->mirror, "Standalone: the mirror destination interface");
  app.add_option("--control", a->control, "Standalone: control socket path");
  app.add_option("--link-gbps", a->link_gbps, "Standalone: port rate")
      ->check(finite_in(0.001, 100000, "Gb/s"))
      ->capture_default_str();
  app.add_option("--buffer-kb", a->buffer_kb, "Standalone: shared buffer")->capture_default_str();
  app.add_option("--mtu", a->mtu, "Standalone: interface MTU")->capture_default_str();
  app.add_option("--ring", a->ring, "AF_PACKET ring: v2 (per-frame) or v3 (blocks)")->capture_default_str();
  app.add_flag("--no-ecn", a->no_ecn, "Start with ECN marking off");
  app.add_flag("--no-pfc", a->no_pfc, "Start with no lossless priority");
  app.add_option("--rt-priority", a->rt_priority,
                 "SCHED_FIFO priority of the data path (bounds the switch's reaction time); 0: SCHED_OTHER")
      ->capture_default_str();
  app.add_option("--response-us", a->response_us,
                 "Reaction time the PFC headroom and the receive rings are sized for, in microseconds")
      ->check(finite_in(0, 1e7, "us"))
      ->capture_default_str();
  app.add_option("--ring-frames", a->ring_frames, "Receive ring slots per port (0: from --response-us)");
  app.add_option("--port-kpps", a->port_kpps,
                 "Shape every port to at most this many thousand frames per second as well (0: bits only)")
      ->check(finite_in(0, 1e6, "kpps"))
      ->capture_default_str();
  return [a] {
    auto o = options_from(*a);
    if (!o) {
      std::cerr << "rocelab switch: " << o.error().message() << "\n";
      return 1;
    }
    std::string names;
    for (const auto& p : o->ports) names += " " + p.ifname;
    auto sw = ss::soft_switch::create(std::move(*o));
    if (!sw) {
      std::cerr << "rocelab switch: " << sw.error().message() << "\n";
      return 1;
    }
    struct sigaction sa{};
    sa.sa_handler = on_switch_stop_signal;
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGINT, &sa, nullptr);
    std::cout << "rocelab switch: forwarding on" << names << std::endl;
    if (const status st = (*sw)->run(stop_requested); !st.ok()) {
      std::cerr << "rocelab switch: " << st.message() << "\n";
      return 1;
    }
    std::cout << "rocelab switch: stopped" << std::endl;
    return 0;
  };
}

std::function<int()> setup_ctl(CLI::App& app) {
  auto lab_name = std::make_shared<std::string>();
  auto root = std::make_shared<std::string>(lab::default_state_root);
  auto socket = std::make_shared<std::string>();
  auto words = std::make_shared<std::vector<std::string>>();
  app.description(
      "Send one request to a soft switch: raw JSON ('{\"op\":\"counters\"}') or OP [key=value ...], e.g.\n"
      "  switch-ctl --lab x set field=queue.ecn.enabled value=false port=p1 priority=3\n"
      "  switch-ctl --lab x prometheus");
  app.add_option("--lab", *lab_name, "The lab whose switch to talk to");
  app.add_option("--state-root", *root, "Lab state root")->capture_default_str();
  app.add_option("--socket", *socket, "The control socket path (instead of --lab)");
  app.add_option("request", *words, "Request")->required();
  return [lab_name, root, socket, words] {
    std::string path = *socket;
    if (path.empty()) {
      auto s = lab::load_lab(*root, lab_name->empty() ? "lab" : *lab_name);
      if (!s) {
        std::cerr << "rocelab switch-ctl: " << s.error().message() << "\n";
        return 1;
      }
      path = s->control_socket;
    }
    std::string line;
    if (!words->empty() && words->front().starts_with("{")) {
      for (const auto& w : *words) line += w + " ";
    } else {
      nlohmann::json req = {{"op", words->front()}};
      for (std::size_t i = 1; i < words->size(); ++i) {
        const std::string& w = (*words)[i];
        const auto eq = w.find('=');
        if (eq == std::string::npos) {
          std::cerr << "rocelab switch-ctl: expected key=value, got '" << w << "'\n";
          return 2;
        }
        const std::string v = w.substr(eq + 1);
        nlohmann::json parsed = nlohmann::json::parse(v, nullptr, false);
        req[w.substr(0, eq)] = parsed.is_discarded() ? nlohmann::json(v) : parsed;
      }
      line = req.dump();
    }
    auto client = ss::control_client::connect(path);
    if (!client) {
      std::cerr << "rocelab switch-ctl: " << client.error().message() << "\n";
      return 1;
    }
    auto response = client->call_line(line);
    if (!response) {
      std::cerr << "rocelab switch-ctl: " << response.error().message() << "\n";
      return 1;
    }
    nlohmann::json j = nlohmann::json::parse(*response, nullptr, false);
    if (!j.is_discarded() && j.contains("text") && j["text"].is_string()) {
      std::cout << j["text"].get<std::string>();
    } else {
      std::cout << (j.is_discarded() ? *response : j.dump(2)) << "\n";
    }
    return !j.is_discarded() && j.value("ok", false) ? 0 : 1;
  };
}

}  // namespace

ROCELAB_COMMAND(switch, setup_switch);
// "switch-ctl" has a dash, which ROCELAB_COMMAND cannot spell.
static const command_registrar switch_ctl_registrar{"switch-ctl", setup_ctl};

}  // namespace rocelab::cli

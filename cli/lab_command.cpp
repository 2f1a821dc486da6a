// rocelab lab up|down|status: the virtual lab (agents/lab): one namespace per
// host, one for the soft switch, one for the capture host, veth links between them, and
// the switch process. Needs root.
// `lab up --controller ADDR --token-file F` also starts one agent per host (`rocelab
// agent --netns <host namespace>`), registered with that controller; `lab down` stops them.
#include <iostream>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "rocelab/agents/lab/virtual_lab.hpp"

namespace rocelab::cli {
namespace {

namespace lab = agents::lab;

struct lab_args {
  lab::lab_options up;
  std::string name = "lab";
  std::string state_root = lab::default_state_root;
  bool json = false;
  std::vector<std::string> switch_args;
};

int run_up(const lab_args& a) {
  lab::lab_options o = a.up;
  o.name = a.name;
  o.state_root = a.state_root;
  o.switch_args = a.switch_args;
  if (!o.controller.empty() && o.token_file.empty()) {
    std::cerr << "rocelab lab up: --controller needs --token-file (the agents authenticate with the lab token)\n";
    return 2;
  }
  if (!o.controller.empty() && !o.start_switch) {
    std::cerr << "rocelab lab up: --controller needs the switch (agents run traffic through it); drop --no-switch\n";
    return 2;
  }
  auto s = lab::lab_up(o);
  if (!s) {
    std::cerr << "rocelab lab up: " << s.error().message() << "\n";
    return 1;
  }
  if (a.json) {
    std::cout << lab::to_json(*s).dump(2) << "\n";
    return 0;
  }
  std::cout << "lab " << s->name << " up: " << s->hosts.size() << " hosts at " << s->link_gbps << " Gb/s, buffer "
            << s->buffer_bytes / 1024 << " KB, MTU " << s->mtu << "\n";
  for (const auto& h : s->hosts)
    std::cout << "  " << h.name << "  netns " << h.netns << "  " << h.ifname << " " << h.ipv4 << "/" << h.prefix_len
              << " " << h.mac << "  <->  switch " << h.switch_port
              << (h.agent_pid > 0 ? "  agent pid " + std::to_string(h.agent_pid) : std::string()) << "\n";
  std::cout << "  switch   netns " << s->switch_netns << "  pid " << s->switch_pid << "  control " << s->control_socket
            << "\n  capture  netns " << s->capture_netns << "  " << s->capture_ifname << " " << s->capture_ipv4
            << "  <->  switch " << s->mirror_port << "\n  state    " << s->state_dir << "/lab.json\n";
  return 0;
}

int run_down(const lab_args& a) {
  if (const status st = lab::lab_down(a.name, a.state_root); !st.ok()) {
    std::cerr << "rocelab lab down: " << st.message() << "\n";
    return 1;
  }
  std::cout << "lab " << a.name << " down\n";
  return 0;
}

int run_status(const lab_args& a, bool all) {
  const std::vector<std::string> names = all ? lab::list_labs(a.state_root) : std::vector<std::string>{a.name};
  nlohmann::json out = nlohmann::json::array();
  for (const auto& n : names) {
    const lab::lab_presence p = lab::lab_inspect(n, a.state_root);
    nlohmann::json j = {{"name", n}, {"state_file", p.state_file}, {"namespaces", p.namespaces},
                        {"switch_pid", p.switch_pid}, {"switch_alive", p.switch_alive},
                        {"agents_alive", p.agents_alive}};
    if (auto s = lab::load_lab(a.state_root, n)) j["state"] = lab::to_json(*s);
    out.push_back(std::move(j));
  }
  if (a.json) {
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  if (out.empty()) std::cout << "no labs\n";
  for (const auto& j : out) {
    const bool nothing = !j["state_file"].get<bool>() && j["namespaces"].empty();
    std::cout << "lab " << j["name"].get<std::string>() << ": "
              << (nothing ? "absent" : j["switch_alive"].get<bool>() ? "up" : "degraded (switch not running)") << "\n";
    if (nothing) continue;
    std::cout << "  state file  " << (j["state_file"].get<bool>() ? "yes" : "no") << "\n  switch pid  "
              << j["switch_pid"] << (j["switch_alive"].get<bool>() ? " (running)" : " (not running)") << "\n";
    if (j["agents_alive"].get<int>() > 0) std::cout << "  agents      " << j["agents_alive"] << " running\n";
    for (const auto& ns : j["namespaces"]) std::cout << "  netns       " << ns.get<std::string>() << "\n";
  }
  return 0;
}

std::function<int()> setup(CLI::App& app) {
  auto a = std::make_shared<lab_args>();
  auto all = std::make_shared<bool>(false);
  app.description("The virtual lab: host namespaces, a soft switch, a capture host (root)");
  app.require_subcommand(1);
  app.fallthrough();  // `lab up --name x` as well as `lab --name x up`
  app.add_option("--name", a->name, "Lab name (a-z, 0-9, up to 8)")->capture_default_str();
  app.add_option("--state-root", a->state_root, "Where lab state directories live")->capture_default_str();
  app.add_flag("--json", a->json, "Print JSON");
  CLI::App* up = app.add_subcommand("up", "Create the lab and start its switch");
  up->add_option("--hosts", a->up.hosts, "Hosts")->check(CLI::Range(1, 64))->capture_default_str();
  up->add_option("--link-gbps", a->up.link_gbps, "Port rate the switch shapes to")->capture_default_str();
  up->add_option("--buffer-kb", a->up.buffer_kb, "Switch shared buffer")->capture_default_str();
  up->add_option("--mtu", a->up.mtu, "Interface MTU (RoCE MTU 4096 needs ~4200)")->capture_default_str();
  up->add_option("--switch-arg", a->switch_args, "Extra argument for `rocelab switch` (repeatable)");
  up->add_option("--controller", a->up.controller, "Start one agent per host, registered with this controller (host:port)");
  up->add_option("--token-file", a->up.token_file, "The lab token for the agents (with --controller)");
  up->add_flag("--no-switch", [a](std::int64_t) { a->up.start_switch = false; }, "Do not start the switch");
  CLI::App* down = app.add_subcommand("down", "Remove the lab (idempotent; also after a crash)");
  CLI::App* st = app.add_subcommand("status", "What exists of the lab");
  st->add_flag("--all", *all, "Every lab found");
  return [a, all, up, down, st] {
    if (up->parsed()) return run_up(*a);
    if (down->parsed()) return run_down(*a);
    if (st->parsed()) return run_status(*a, *all);
    return 2;
  };
}

}  // namespace

ROCELAB_COMMAND(lab, setup);

}  // namespace rocelab::cli

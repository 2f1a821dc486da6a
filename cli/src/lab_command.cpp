// rocelab lab up|down|status: the virtual lab (agents/lab): one namespace per
// host, one for the soft switch, one for the capture host, veth links between them, and
// the switch process. Needs root.
// `lab up --controller ADDR --token-file F` also starts one agent per host (`rocelab
// agent --netns <host namespace>`), registered with that controller; `lab down` stops them.
// `lab check --inventory FILE`: the bring-up checklist (experiments/bringup/bringup_check.hpp)
// over the facts of the inventory's hosts, switch and capture host; exit 0 when every item
// passes, 1 when one fails or cannot be known, 2 on usage. `lab facts`: one host's facts
// as JSON (run on a host of a real lab; `lab check --host-facts DIR` reads them).
#include <filesystem>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "rocelab/agents/lab/virtual_lab.hpp"
#include "rocelab/common/bounded_file.hpp"
#include "rocelab/controller/inventory.hpp"
#include "rocelab/experiments/bringup/bringup_check.hpp"
#include "rocelab/experiments/lab/bringup_facts.hpp"
#include "rocelab/experiments/spec/build.hpp"
#include "rocelab/experiments/spec/spec.hpp"

namespace rocelab::cli {
namespace {

namespace lab = agents::lab;

struct check_args {
  std::string inventory;
  std::string spec;
  std::uint32_t path_mtu = 0;  // 0: the spec's nic.mtu_bytes with --spec, else 4096
  std::string host_facts;      // directory of <host>.json from `rocelab lab facts`
  std::string config_db;       // a SONiC config_db dump
  std::string switch_ssh;      // SONiC: ssh destination
  std::vector<std::string> ssh_options;
};

struct facts_args {
  std::string host;
  std::string device;
  std::string driver = "mlx5";
  std::string ip;
  std::string sysfs_root = "/sys";
  std::string pfc_file;  // recorded `dcb pfc show` / `mlnx_qos` output instead of running dcb
  std::string trust_file;  // recorded `mlnx_qos -i` / `dcb app show` output instead of running them
};

struct lab_args {
  lab::lab_options up;
  check_args check;
  facts_args facts;
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

experiments::bringup_inventory to_bringup(const controller::lab_inventory& inv) {
  experiments::bringup_inventory out;
  out.switch_name = inv.switch_name;
  out.switch_driver = inv.switch_driver;
  for (const auto& h : inv.hosts) out.hosts.push_back({h.name, h.nic_device, h.nic_driver, h.nic_ip, h.switch_port});
  out.mirror_session = inv.mirror_session;
  out.mirror_destination_port = inv.mirror_destination_port;
  out.mirror_direction = inv.mirror_direction;
  out.capture_host = inv.capture_host;
  out.capture_device = inv.capture_device;
  return out;
}

// <dir>/<host>.json, when --host-facts names a directory that has it.
std::optional<result<experiments::host_facts>> facts_file(const std::string& dir, const std::string& host) {
  if (dir.empty()) return std::nullopt;
  const std::string path = (std::filesystem::path(dir) / (host + ".json")).string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  auto text = read_bounded_file(path, max_state_file_bytes, "reading host facts " + path);
  if (!text) return result<experiments::host_facts>(text.error());
  return experiments::host_facts_from_json(*text, path);
}

int run_check(const lab_args& a) {
  const check_args& c = a.check;
  auto inv = controller::load_inventory_file(c.inventory);
  if (!inv) {
    std::cerr << "rocelab lab check: " << inv.error().message() << "\n";
    return 2;
  }
  experiments::experiment_spec spec;
  if (!c.spec.empty()) {
    auto loaded = experiments::load_spec_file(c.spec);
    if (!loaded) {
      std::cerr << "rocelab lab check: " << loaded.error().message() << "\n";
      return 2;
    }
    spec = std::move(*loaded);
  }
  auto cls = experiments::lossless_class_of(spec);
  if (!cls) {
    std::cerr << "rocelab lab check: " << cls.error().message() << "\n";
    return 2;
  }
  experiments::bringup_expectation want;
  want.lossless = *cls;
  want.path_mtu_bytes = c.path_mtu != 0 ? c.path_mtu : !c.spec.empty() ? spec.nic.mtu_bytes : 4096;
  want.ecn = spec.sw.ecn.enabled;
  experiments::bringup_inventory binv = to_bringup(*inv);

  // The virtual lab, when the inventory has soft parts.
  bool soft = inv->switch_driver == "soft";
  for (const auto& h : inv->hosts) soft = soft || h.nic_driver == "soft";
  std::optional<result<lab::lab_state>> state;
  if (soft) {
    state = lab::load_lab(a.state_root, a.name);
    binv.virtual_lab = a.name;
  }
  const auto lab_missing = [&]() -> std::string {
    return !state || state->ok() ? std::string()
                                 : "virtual lab " + a.name + ": " + state->error().message();
  };

  experiments::lab_facts facts;
  for (const auto& h : inv->hosts) {
    if (auto f = facts_file(c.host_facts, h.name)) {
      if (!*f) {
        std::cerr << "rocelab lab check: " << f->error().message() << "\n";
        return 2;
      }
      facts.hosts.push_back(std::move(**f));
      continue;
    }
    experiments::host_facts f;
    f.host = h.name;
    f.device = h.nic_device;
    f.driver = h.nic_driver;
    if (h.nic_driver == "soft") {
      if (const std::string why = lab_missing(); !why.empty())
        f.unavailable = why;
      else
        f = experiments::read_soft_host_facts(**state, h.name, *cls);
      f.device = h.nic_device;
    } else {
      f.unavailable = c.host_facts.empty() ? "no facts of " + h.name + " (no --host-facts)"
                                           : "no " + h.name + ".json in " + c.host_facts;
    }
    facts.hosts.push_back(std::move(f));
  }

  std::vector<std::string> ports;
  for (const auto& h : inv->hosts) ports.push_back(h.switch_port);
  if (inv->switch_driver == "soft") {
    if (const std::string why = lab_missing(); !why.empty()) {
      facts.sw.unavailable = why;
    } else {
      facts.sw = experiments::read_soft_switch_facts(**state, inv->switch_name, ports);
    }
  } else if (!c.config_db.empty()) {
    auto text = read_bounded_file(c.config_db, max_report_file_bytes, "reading config_db " + c.config_db);
    const auto db = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
    if (!text || db.is_discarded() || !db.is_object()) {
      std::cerr << "rocelab lab check: " << (text ? c.config_db + ": not a JSON object" : text.error().message())
                << "\n";
      return 2;
    }
    auto sw = experiments::sonic_switch_facts(db, inv->switch_name, ports);
    if (!sw) {
      std::cerr << "rocelab lab check: " << sw.error().with_context(c.config_db).message() << "\n";
      return 2;
    }
    facts.sw = std::move(*sw);
  } else if (!c.switch_ssh.empty()) {
    fabric::drivers::sonic_options o;
    o.host = c.switch_ssh;
    o.ssh_options = c.ssh_options;
    o.ports = ports;
    facts.sw = experiments::read_sonic_switch_facts(std::move(o), inv->switch_name, ports);
  } else {
    facts.sw.name = inv->switch_name;
    facts.sw.driver = inv->switch_driver;
    facts.sw.unavailable = "SONiC switch " + inv->switch_name + " not read (no --config-db or --switch-ssh)";
  }

  facts.capture.host = inv->capture_host;
  facts.capture.device = inv->capture_device;
  if (auto f = facts_file(c.host_facts, inv->capture_host)) {
    if (!*f) {
      std::cerr << "rocelab lab check: " << f->error().message() << "\n";
      return 2;
    }
    facts.capture.unavailable = (*f)->unavailable;
    facts.capture.netdev_mtu = (*f)->netdev_mtu;
  } else if (inv->switch_driver == "soft") {
    if (const std::string why = lab_missing(); !why.empty()) {
      facts.capture.unavailable = why;
    } else {
      facts.capture = experiments::read_soft_capture_facts(**state);
      facts.capture.host = inv->capture_host;
    }
  } else {
    facts.capture.unavailable = "no facts of " + inv->capture_host;
  }

  const auto items = experiments::check_bringup(want, binv, facts);
  if (a.json)
    std::cout << experiments::bringup_json(items) << "\n";
  else
    std::cout << "lab " << inv->name << ": bring-up checklist (data priority " << int(cls->data_priority)
              << ", DSCP " << int(cls->data_dscp) << ", path MTU " << want.path_mtu_bytes << ")\n"
              << experiments::bringup_text(items);
  return experiments::bringup_passed(items) ? 0 : 1;
}

int run_facts(const lab_args& a) {
  const facts_args& f = a.facts;
  experiments::sysfs_host_options o;
  o.host = f.host.empty() ? f.device : f.host;
  o.device = f.device;
  o.driver = f.driver;
  o.ip = f.ip;
  o.sysfs_root = f.sysfs_root;
  // A recorded tool output in place of running the tool: its text and where it came from.
  const auto read_recorded = [](const std::string& file, const std::string& what, std::optional<std::string>& text,
                                std::string& source) {
    if (file.empty()) return true;
    auto read = read_bounded_file(file, max_state_file_bytes, "reading " + what + " " + file);
    if (!read) {
      std::cerr << "rocelab lab facts: " << read.error().message() << "\n";
      return false;
    }
    text = std::move(*read);
    source = file;
    return true;
  };
  if (!read_recorded(f.pfc_file, "PFC state", o.pfc_text, o.pfc_source) ||
      !read_recorded(f.trust_file, "NIC trust state", o.trust_text, o.trust_source))
    return 2;
  std::cout << experiments::host_facts_json(experiments::read_sysfs_host_facts(o)) << "\n";
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
  CLI::App* check = app.add_subcommand(
      "check", "The hardware bring-up checklist: PASS/FAIL per item with the fix (exit 1 when one fails)");
  check->add_option("--inventory", a->check.inventory, "Lab inventory YAML")->required()->check(CLI::ExistingFile);
  check->add_option("--spec", a->check.spec, "Spec whose lossless class, path MTU and ECN the lab must carry "
                                              "(default: the default spec at path MTU 4096)")
      ->check(CLI::ExistingFile);
  check->add_option("--path-mtu", a->check.path_mtu, "RoCE path MTU to check the ports against")
      ->check(CLI::IsMember({256, 512, 1024, 2048, 4096}));
  check->add_option("--host-facts", a->check.host_facts,
                    "Directory of <host>.json written by `rocelab lab facts` on each host (real labs)");
  check->add_option("--config-db", a->check.config_db, "SONiC: a config_db dump (sonic-cfggen -d --print-data)");
  check->add_option("--switch-ssh", a->check.switch_ssh, "SONiC: read config_db over ssh from this destination");
  check->add_option("--ssh-option", a->check.ssh_options, "SONiC: an ssh argument (repeatable)")
      ->allow_extra_args(false);
  CLI::App* facts = app.add_subcommand("facts", "This host's NIC facts for `lab check --host-facts` (JSON)");
  facts->add_option("--device", a->facts.device, "The RoCE netdev (or the capture device)")->required();
  facts->add_option("--driver", a->facts.driver, "mlx5, or capture for the capture host")
      ->check(CLI::IsMember({"mlx5", "capture"}))
      ->capture_default_str();
  facts->add_option("--host", a->facts.host, "This host's name in the inventory (default: the device)");
  facts->add_option("--ip", a->facts.ip, "The RoCE address (selects the RoCE v2 GID)");
  facts->add_option("--sysfs-root", a->facts.sysfs_root, "The sysfs root (a recorded tree in tests)")
      ->capture_default_str();
  facts->add_option("--pfc-file", a->facts.pfc_file,
                    "Recorded `dcb pfc show dev IF` or `mlnx_qos -i IF` output (default: run dcb)");
  facts->add_option("--trust-file", a->facts.trust_file,
                    "Recorded `mlnx_qos -i IF` or `dcb app show dev IF` output (default: run mlnx_qos, else dcb)");
  return [a, all, up, down, st, check, facts] {
    if (up->parsed()) return run_up(*a);
    if (down->parsed()) return run_down(*a);
    if (st->parsed()) return run_status(*a, *all);
    if (check->parsed()) return run_check(*a);
    if (facts->parsed()) return run_facts(*a);
    return 2;
  };
}

}  // namespace

ROCELAB_COMMAND(lab, setup);

}  // namespace rocelab::cli

// rocelab controller --listen ADDR --db FILE --token-file F [--inventory FILE]: the
// controller daemon (controller/controller.hpp). Agents and clients connect over TLS-PSK
// with the token in F; runs go into the SQLite store FILE.
// SIGINT/SIGTERM: the first cancels the runs in flight (each stored `interrupted` with its
// records so far, its client told so) and stops; a second exits at once (the store stays
// consistent; its runs are marked interrupted at the store's next open).
#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <thread>

#include "command.hpp"
#include "rocelab/cli/in_process_agents.hpp"
#include "rocelab/controller/controller.hpp"
#include "rocelab/protocol/security.hpp"
#include "rocelab/traffic/soft_nic/nic_fleet.hpp"

namespace rocelab::cli {
namespace {

struct controller_args {
  std::string listen = "127.0.0.1:7420";
  std::string db = "rocelab.db";
  std::string token_file;
  std::string inventory;
  std::string switch_ssh;
  std::string switch_config_db;
  int heartbeat_ms = 250;
  int agent_timeout_ms = 2000;
  int deadman_ms = 5000;
  std::string lab = "run";
  std::string log_dir;
};

std::function<int()> setup(CLI::App& app) {
  auto a = std::make_shared<controller_args>();
  app.description("The controller: agents and clients connect over TLS with the lab token; runs go into the store");
  app.add_option("--listen", a->listen, "host:port to listen on")->capture_default_str();
  app.add_option("--db", a->db, "the run store (SQLite)")->capture_default_str();
  app.add_option("--token-file", a->token_file, "the lab token (first line, mode 600)")->required();
  app.add_option("--lab", a->lab,
                 "backend virtual: the virtual lab to run on (its agents from `lab up --controller`; brought up "
                 "for the run when it is not up)")
      ->capture_default_str();
  app.add_option("--log-dir", a->log_dir, "backend virtual: where the soft NICs of hosts without an agent log");
  app.add_option("--inventory", a->inventory, "lab inventory YAML (hosts, NICs, switch ports, mirror, capture)");
  app.add_option("--switch-ssh", a->switch_ssh,
                 "SONiC: read config_db over ssh from this destination and check the lossless class before T0");
  app.add_option("--switch-config-db", a->switch_config_db,
                 "SONiC: check the lossless class before T0 against this config_db dump instead");
  app.add_option("--heartbeat-ms", a->heartbeat_ms, "clock probe / heartbeat interval")->capture_default_str();
  app.add_option("--agent-timeout-ms", a->agent_timeout_ms, "an agent silent this long is lost")->capture_default_str();
  app.add_option("--deadman-ms", a->deadman_ms, "agents restore their settings after this long without us")
      ->capture_default_str();
  return [a] {
    auto token = protocol::read_token_file(a->token_file);
    if (!token) {
      std::cerr << "rocelab controller: " << token.error().message() << "\n";
      return 2;
    }
    controller::controller_options o;
    o.listen = a->listen;
    o.db_path = a->db;
    o.token = *token;
    o.heartbeat_interval = std::chrono::milliseconds(a->heartbeat_ms);
    o.agent_timeout = std::chrono::milliseconds(a->agent_timeout_ms);
    o.deadman = std::chrono::milliseconds(a->deadman_ms);
    o.virtual_options.lab_name = a->lab;
    o.virtual_options.log_dir = a->log_dir;
    // Without an inventory the controller serves the virtual lab on this machine.
    if (a->inventory.empty()) o.io_rt_priority = traffic::soft_nic::lab_relay_rt_priority;
    o.launcher = std::make_shared<in_process_agents>();
    if (!a->inventory.empty()) {
      auto inv = controller::load_inventory_file(a->inventory);
      if (!inv) {
        std::cerr << "rocelab controller: " << inv.error().message() << "\n";
        return 2;
      }
      o.inventory = std::move(*inv);
      o.switch_ssh = a->switch_ssh;
      o.switch_config_db = a->switch_config_db;
    }
    // Block the stop signals before any thread starts, then wait for one here.
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    auto c = controller::controller::start(o);
    if (!c) {
      std::cerr << "rocelab controller: " << c.error().message() << "\n";
      return 1;
    }
    std::cout << "rocelab controller: listening on " << (*c)->address() << ", store " << a->db << std::endl;
    int sig = 0;
    sigwait(&stop, &sig);
    (*c)->cancel_runs();
    std::cerr << "rocelab controller: stopping (signal " << sig
              << "); runs in flight end interrupted; a second signal exits at once\n";
    std::thread([stop] {
      int again = 0;
      sigwait(&stop, &again);
      std::_Exit(128 + again);
    }).detach();
    c->reset();
    return 0;
  };
}

}  // namespace

ROCELAB_COMMAND(controller, setup);

}  // namespace rocelab::cli

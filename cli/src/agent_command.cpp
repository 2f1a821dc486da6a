// rocelab agent --controller ADDR --name H --token-file F: the agent daemon of one lab
// host (agents/agent/agent.hpp). Runs until SIGINT/SIGTERM; reconnects while the controller
// is away and restores its settings by itself after --deadman-ms without it.
// --netns NS: soft jobs run the host's NIC in namespace NS (the virtual lab's host
// namespaces; `rocelab lab up --controller` starts one agent per host so), and the agent's
// thread runs SCHED_FIFO above the lab's NICs (soft_nic::lab_relay_rt_priority).
#include <signal.h>

#include <iostream>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "command.hpp"
#include "rocelab/agents/agent/agent.hpp"
#include "rocelab/common/realtime_section.hpp"
#include "rocelab/protocol/security.hpp"
#include "rocelab/traffic/soft_nic/nic_fleet.hpp"

namespace rocelab::cli {
namespace {

struct agent_args {
  std::string controller;
  std::string name;
  std::string token_file;
  int deadman_ms = 10000;
  std::string sysfs_root = "/sys";
  std::string netns;
  std::string log_dir;
};

std::function<int()> setup(CLI::App& app) {
  auto a = std::make_shared<agent_args>();
  app.description("The agent of one lab host: registers with the controller and runs its typed operations");
  app.add_option("--controller", a->controller, "controller host:port")->required();
  app.add_option("--name", a->name, "this host's name in the lab inventory")->required();
  app.add_option("--token-file", a->token_file, "the lab token (first line, mode 600)")->required();
  app.add_option("--deadman-ms", a->deadman_ms, "restore settings after this long without the controller")
      ->capture_default_str();
  app.add_option("--sysfs-root", a->sysfs_root, "the sysfs root of the mlx5 ports (a recorded tree in tests)")
      ->capture_default_str();
  app.add_option("--netns", a->netns, "run soft jobs' NICs in this network namespace (/run/netns/NS)");
  app.add_option("--log-dir", a->log_dir, "write each soft NIC's log here");
  return [a] {
    auto token = protocol::read_token_file(a->token_file);
    if (!token) {
      std::cerr << "rocelab agent: " << token.error().message() << "\n";
      return 2;
    }
    ::signal(SIGPIPE, SIG_IGN);
    agents::agent::agent_options o;
    o.controller = a->controller;
    o.name = a->name;
    o.token = *token;
    o.deadman = std::chrono::milliseconds(a->deadman_ms);
    o.sysfs_root = a->sysfs_root;
    o.netns = a->netns;
    o.log_dir = a->log_dir;
    auto ag = agents::agent::agent::make(o);
    if (!ag) {
      std::cerr << "rocelab agent: " << ag.error().message() << "\n";
      return 2;
    }
    boost::asio::io_context io;
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    // Stop: the session closes and running jobs end (their NICs read EOF); the loop
    // returns when nothing is left, at most 3 s later.
    boost::asio::steady_timer give_up(io);
    signals.async_wait([&](const boost::system::error_code& ec, int) {
      if (ec) return;
      (*ag)->stop();
      give_up.expires_after(std::chrono::seconds(3));
      give_up.async_wait([&](const boost::system::error_code& e) {
        if (!e) io.stop();
      });
    });
    (*ag)->start(io.get_executor());
    // The agent of a virtual lab host (--netns) relays its soft NIC's posts and
    // completions. The lab's NICs and switch run SCHED_FIFO on this machine, and through an
    // incast a normal thread gets only the kernel's RT-throttling remainder of the CPUs (a
    // closed loop's next round then went out up to a second late, and the controller took
    // the silent agents for lost): the relay runs above the NICs, as `rocelab run`'s
    // in-process agents do. Its NIC processes set their own priority.
    const realtime_section relay(a->netns.empty() ? 0 : traffic::soft_nic::lab_relay_rt_priority);
    io.run();
    return 0;
  };
}

}  // namespace

ROCELAB_COMMAND(agent, setup);

}  // namespace rocelab::cli

// rocelab agent --controller ADDR --name H --token-file F: the agent daemon of one lab
// host (agents/agent/agent.hpp). Runs until SIGINT/SIGTERM; reconnects while the controller
// is away and restores its settings by itself after --deadman-ms without it.
#include <signal.h>

#include <iostream>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "command.hpp"
#include "rocelab/agents/agent/agent.hpp"

namespace rocelab::cli {
namespace {

struct agent_args {
  std::string controller;
  std::string name;
  std::string token_file;
  int deadman_ms = 10000;
  std::string sysfs_root = "/sys/class/net";
};

std::function<int()> setup(CLI::App& app) {
  auto a = std::make_shared<agent_args>();
  app.description("The agent of one lab host: registers with the controller and runs its typed operations");
  app.add_option("--controller", a->controller, "controller host:port")->required();
  app.add_option("--name", a->name, "this host's name in the lab inventory")->required();
  app.add_option("--token-file", a->token_file, "the lab token (first line, mode 600)")->required();
  app.add_option("--deadman-ms", a->deadman_ms, "restore settings after this long without the controller")
      ->capture_default_str();
  app.add_option("--sysfs-root", a->sysfs_root, "where the mlx5 ecn knobs live (a recorded tree in tests)")
      ->capture_default_str();
  return [a] {
    auto token = controller::read_token_file(a->token_file);
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
    auto ag = agents::agent::agent::make(o);
    if (!ag) {
      std::cerr << "rocelab agent: " << ag.error().message() << "\n";
      return 2;
    }
    boost::asio::io_context io;
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code&, int) {
      (*ag)->stop();
      io.stop();
    });
    (*ag)->start(io.get_executor());
    io.run();
    return 0;
  };
}

}  // namespace

ROCELAB_COMMAND(agent, setup);

}  // namespace rocelab::cli

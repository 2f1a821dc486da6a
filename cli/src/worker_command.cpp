// rocelab worker --controller ADDR --token-file F [--name NAME] [--quiet]
// Runs sweep trials for a controller (controller/worker.hpp): registers as a worker (with
// its Slurm job, array task and node when it runs under Slurm), runs each trial it is given
// on the twin and returns the records. `rocelab tune|compare|buffers --executor local|slurm`
// start workers themselves; start one by hand to add this host to a running sweep.
// Exit codes: 0 the controller ended the session; 1 it could not be reached or went
// silent; 2 usage; 130 stopped by SIGINT/SIGTERM.
#include <iostream>

#include "command.hpp"
#include "rocelab/controller/worker.hpp"
#include "rocelab/protocol/security.hpp"
#include "stop_signal.hpp"

namespace rocelab::cli {
namespace {

struct worker_args {
  std::string controller;
  std::string token_file;
  std::string name;
  bool quiet = false;
};

std::function<int()> setup(CLI::App& app) {
  auto args = std::make_shared<worker_args>();
  app.description("Run sweep trials for a controller (started by --executor local|slurm, or by hand)");
  app.add_option("--controller", args->controller, "the controller's host:port")->required();
  app.add_option("--token-file", args->token_file, "the sweep's token (first line, mode 600)")->required();
  app.add_option("--name", args->name, "the worker's name (default <host>-<pid>, or <host>-<job>_<task>-<pid> under Slurm)");
  app.add_flag("--quiet", args->quiet, "no log lines on stderr");
  return [args]() -> int {
    auto token = protocol::read_token_file(args->token_file);
    if (!token) {
      std::cerr << "rocelab worker: " << token.error().message() << "\n";
      return 2;
    }
    stop_signal stop;
    controller::worker_options o;
    o.controller = args->controller;
    o.token = *token;
    o.identity = controller::worker_identity();
    if (!args->name.empty()) o.identity.name = args->name;
    o.stop_requested = [&stop] { return stop.requested(); };
    if (!args->quiet) o.log = [name = o.identity.name](const std::string& line) {
      std::cerr << "rocelab worker " << name << ": " << line << "\n";
    };
    const status st = controller::run_worker(o);
    if (stop.requested()) return stop_signal::exit_status;
    if (!st.ok()) {
      std::cerr << "rocelab worker: " << st.message() << "\n";
      return 1;
    }
    return 0;
  };
}

}  // namespace

ROCELAB_COMMAND(worker, setup);

}  // namespace rocelab::cli

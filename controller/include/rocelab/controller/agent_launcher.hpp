#pragma once
// The seam through which a controller gets agents in its own process: for the hosts of a
// virtual-lab run that have no agent registered, the controller asks its launcher to
// start one per host, waits for them to register like any other agent, and stops them
// after the run. The controller defines the interface so that it links no agent code; the
// harness that implements it with the agent daemon lives above both
// (cli/include/rocelab/cli/in_process_agents.hpp).
//
// Threading: start() and stop() are called from a run's thread and from the controller's
// destructor; implementations lock. Errors: start() fails when the agent cannot be made
// (its token, its options); a started agent that cannot reach the controller never
// registers, which the controller reports as a registration timeout.

#include <string>

#include "rocelab/common/result.hpp"

namespace rocelab::controller {

struct agent_launch {
  std::string controller;      // host:port the agent connects to
  std::string name;            // the host it serves ("h1")
  std::string token;           // the controller's token
  std::string netns;           // its soft NIC runs in this namespace (/run/netns/<netns>)
  std::string rocelab_binary;  // runs `nic-run`; empty: the agent's own default
  std::string log_dir;         // the soft NIC's stderr; empty: discarded
  bool log = true;
};

class agent_launcher {
 public:
  virtual ~agent_launcher() = default;
  // Starts an agent that connects to launch.controller and registers as launch.name.
  [[nodiscard]] virtual status start(const agent_launch& launch) = 0;
  // Stops the named agent's loops and jobs (a controlled stop: the controller restores
  // what it applied); a name it does not run is ignored.
  virtual void stop(const std::string& name) = 0;
};

}  // namespace rocelab::controller

#pragma once
// The jobs an agent runs (start_job), behind one small interface so the session code does
// not know transports. Private to agents/src/agent.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "rocelab/agents/agent/agent.hpp"
#include "rocelab/protocol/messages.hpp"

namespace rocelab::agents::agent {

using job_report_fn = std::function<void(protocol::job_report)>;
// Lines a job's NIC wrote (soft jobs), for the controller (nic_event).
using job_event_fn = std::function<void(std::vector<std::string>)>;

// What a job gets from its agent.
struct job_context {
  asio::any_io_executor executor;
  protocol::clock_source clock;
  std::shared_ptr<start_gate> gate;  // armed starts wait here
  std::string rocelab_binary;  // runs `nic-run`
  std::string netns;           // soft NICs run here; empty: the agent's own namespace
  std::string log_dir;         // the NIC's stderr: <log_dir>/nic-<agent>-<job>.log; empty: none
  std::string agent_name;
  job_report_fn report;
  job_event_fn events;
};

class agent::job {
 public:
  virtual ~job() = default;
  virtual void start() = 0;
  // Stops the job now; it still sends its final report (done, error "stopped").
  virtual void cancel() = 0;
  // Command lines for the job's NIC (nic_command); jobs without one ignore them.
  virtual void command(const std::vector<std::string>& lines) { (void)lines; }
};

// Job kinds this build can run (said in hello).
[[nodiscard]] std::vector<std::string> available_transports();

[[nodiscard]] result<std::shared_ptr<agent::job>> make_job(const protocol::start_job& spec, job_context context);

}  // namespace rocelab::agents::agent

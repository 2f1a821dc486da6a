#pragma once
// The jobs an agent runs (start_job), behind one small interface so the session code does
// not know transports. Private to agents/src/agent.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "rocelab/agents/agent/agent.hpp"
#include "rocelab/controller/protocol.hpp"

namespace rocelab::agents::agent {

using job_report_fn = std::function<void(controller::job_report)>;

class agent::job {
 public:
  virtual ~job() = default;
  virtual void start() = 0;
  // Stops the job now; it still sends its final report (done, error "stopped").
  virtual void cancel() = 0;
};

// Job kinds this build can run (said in hello).
[[nodiscard]] std::vector<std::string> available_transports();

[[nodiscard]] result<std::shared_ptr<agent::job>> make_job(asio::any_io_executor executor,
                                                           const controller::start_job& spec,
                                                           const controller::clock_source& clock, job_report_fn report);

}  // namespace rocelab::agents::agent

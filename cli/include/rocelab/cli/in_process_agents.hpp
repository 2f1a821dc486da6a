#pragma once
// Agents in the controller's own process (controller/agent_launcher.hpp), for the hosts of
// a virtual-lab run that have no agent of their own: `rocelab run`'s embedded controller,
// `rocelab controller`, and the tests. Each is the agent daemon (agents/agent/agent.hpp),
// run on one io_context thread this launcher owns, started when the first agent is.
//
// Threading: start() and stop() lock; the destructor stops every agent still running and
// joins the thread.

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "rocelab/controller/agent_launcher.hpp"

namespace rocelab::agents::agent {
class agent;
}

namespace rocelab::cli {

class in_process_agents final : public controller::agent_launcher {
 public:
  // rt_priority > 0: the agents' thread runs SCHED_FIFO at it (soft_nic::lab_relay_rt_priority).
  explicit in_process_agents(int rt_priority = 0);
  ~in_process_agents() override;
  in_process_agents(const in_process_agents&) = delete;
  in_process_agents& operator=(const in_process_agents&) = delete;

  [[nodiscard]] status start(const controller::agent_launch& launch) override;
  void stop(const std::string& name) override;

 private:
  using work_guard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;

  int rt_priority_ = 0;
  std::mutex mutex_;
  std::unique_ptr<boost::asio::io_context> io_;
  std::optional<work_guard> work_;
  std::thread thread_;
  std::map<std::string, std::shared_ptr<agents::agent::agent>> agents_;
};

}  // namespace rocelab::cli

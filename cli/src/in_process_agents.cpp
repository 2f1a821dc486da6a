#include "rocelab/cli/in_process_agents.hpp"

#include "rocelab/agents/agent/agent.hpp"
#include "rocelab/common/realtime_section.hpp"

namespace rocelab::cli {

in_process_agents::in_process_agents(int rt_priority) : rt_priority_(rt_priority) {}

in_process_agents::~in_process_agents() {
  {
    std::lock_guard lock(mutex_);
    for (auto& [name, a] : agents_) a->stop();
    agents_.clear();
    work_.reset();
  }
  if (thread_.joinable()) thread_.join();
}

status in_process_agents::start(const controller::agent_launch& launch) {
  agents::agent::agent_options o;
  o.controller = launch.controller;
  o.name = launch.name;
  o.token = launch.token;
  o.netns = launch.netns;
  o.rocelab_binary = launch.rocelab_binary;
  o.log_dir = launch.log_dir;
  o.log = launch.log;
  std::lock_guard lock(mutex_);
  if (!io_) {
    io_ = std::make_unique<boost::asio::io_context>();
    work_.emplace(boost::asio::make_work_guard(*io_));
    thread_ = std::thread([io = io_.get(), priority = rt_priority_] {
      const realtime_section rt(priority);
      io->run();
    });
  }
  auto a = agents::agent::agent::make(o);
  if (!a) return a.error();
  (*a)->start(io_->get_executor());
  agents_[launch.name] = *a;
  return status::success();
}

void in_process_agents::stop(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (auto it = agents_.find(name); it != agents_.end()) {
    it->second->stop();
    agents_.erase(it);
  }
}

}  // namespace rocelab::cli

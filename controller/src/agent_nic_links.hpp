#pragma once
// The controller's carrier for a fleet's soft NICs (traffic/soft_nic/nic_links.hpp): each
// host's NIC is a soft job on that host's agent, and its lines travel as nic_command and
// nic_event messages. The fleet runs on a run thread; the agents' messages arrive on the
// controller's io thread, so the two meet in agent_nic_relay (a locked inbox).
// Private to controller/src.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "rocelab/traffic/soft_nic/nic_links.hpp"

namespace rocelab::controller {

// Filled on the io thread (controller.cpp), read by the fleet's thread.
struct agent_nic_relay {
  std::mutex mutex;
  std::condition_variable arrived;
  std::deque<std::pair<std::uint32_t, std::string>> inbox;  // (host, event line), in arrival order
  std::vector<std::string> lost;  // per host: why its NIC is gone; empty while it runs
  std::vector<bool> ended;        // per host: its job's final report came

  explicit agent_nic_relay(std::size_t hosts) : lost(hosts), ended(hosts, false) {}
  void push(std::uint32_t host, std::string line);
  void end(std::uint32_t host, const std::string& why);  // why empty: a clean end
};

class agent_nic_links final : public traffic::soft_nic::nic_links {
 public:
  // send_line(host, line) and stop_job(host) hand work to the io thread; release() runs
  // once, from the destructor, to drop the controller's listeners.
  agent_nic_links(std::shared_ptr<agent_nic_relay> relay, std::function<void(std::uint32_t, std::string)> send_line,
                  std::function<void(std::uint32_t)> stop_job, std::function<void()> release);
  ~agent_nic_links() override;

  bool send(std::uint32_t host, const std::string& line) override;
  void receive(int wait_ms, const traffic::soft_nic::nic_line_fn& on_line) override;
  [[nodiscard]] std::string lost(std::uint32_t host) const override;
  void stop(const traffic::soft_nic::nic_line_fn& on_line) override;

 private:
  std::shared_ptr<agent_nic_relay> relay_;
  std::function<void(std::uint32_t, std::string)> send_line_;
  std::function<void(std::uint32_t)> stop_job_;
  std::function<void()> release_;
  bool stopped_ = false;
};

}  // namespace rocelab::controller

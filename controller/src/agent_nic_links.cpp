#include "agent_nic_links.hpp"

#include <chrono>

namespace rocelab::controller {

void agent_nic_relay::push(std::uint32_t host, std::string line) {
  {
    std::lock_guard lock(mutex);
    inbox.emplace_back(host, std::move(line));
  }
  arrived.notify_all();
}

void agent_nic_relay::end(std::uint32_t host, const std::string& why) {
  {
    std::lock_guard lock(mutex);
    if (ended[host]) return;
    ended[host] = true;
    lost[host] = why.empty() ? "its soft job ended" : why;
  }
  arrived.notify_all();
}

agent_nic_links::agent_nic_links(std::shared_ptr<agent_nic_relay> relay,
                                 std::function<void(std::uint32_t, std::string)> send_line,
                                 std::function<void(std::uint32_t)> stop_job, std::function<void()> release)
    : relay_(std::move(relay)),
      send_line_(std::move(send_line)),
      stop_job_(std::move(stop_job)),
      release_(std::move(release)) {}

agent_nic_links::~agent_nic_links() {
  stop({});
  if (release_) release_();
}

bool agent_nic_links::send(std::uint32_t host, const std::string& line) {
  {
    std::lock_guard lock(relay_->mutex);
    if (!relay_->lost.at(host).empty()) return false;
  }
  send_line_(host, line);
  return true;
}

void agent_nic_links::receive(int wait_ms, const traffic::soft_nic::nic_line_fn& on_line) {
  std::deque<std::pair<std::uint32_t, std::string>> batch;
  {
    std::unique_lock lock(relay_->mutex);
    relay_->arrived.wait_for(lock, std::chrono::milliseconds(wait_ms), [&] { return !relay_->inbox.empty(); });
    batch.swap(relay_->inbox);
  }
  if (on_line)
    for (const auto& [host, line] : batch) on_line(host, line);
}

std::string agent_nic_links::lost(std::uint32_t host) const {
  std::lock_guard lock(relay_->mutex);
  // Lines still in the inbox come before the end they precede.
  for (const auto& [h, line] : relay_->inbox)
    if (h == host) return {};
  return relay_->lost.at(host);
}

void agent_nic_links::stop(const traffic::soft_nic::nic_line_fn& on_line) {
  if (stopped_) return;
  stopped_ = true;
  const std::size_t hosts = relay_->ended.size();
  for (std::uint32_t h = 0; h < hosts; ++h)
    if (lost(h).empty()) send_line_(h, "{\"op\":\"stop\"}");
  // The NICs write their counters and exit; each agent then sends the job's final report.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  auto all_ended = [&] {
    std::lock_guard lock(relay_->mutex);
    for (bool e : relay_->ended)
      if (!e) return false;
    return true;
  };
  while (!all_ended() && std::chrono::steady_clock::now() < deadline) receive(50, on_line);
  receive(0, on_line);
  for (std::uint32_t h = 0; h < hosts; ++h) {
    std::lock_guard lock(relay_->mutex);
    if (!relay_->ended[h]) stop_job_(h);  // the agent kills its NIC and reports
  }
}

}  // namespace rocelab::controller

#include "rocelab/controller/trial_queue.hpp"

#include <algorithm>

namespace rocelab::controller {

std::uint64_t trial_queue::add(trial_work work) {
  const std::uint64_t id = ++next_id_;
  trials_[id].work = std::move(work);
  queue_.push_back(id);
  return id;
}

std::optional<trial_assignment_plan> trial_queue::assign(const std::string& worker) {
  if (queue_.empty() || by_worker_.contains(worker)) return std::nullopt;
  const std::uint64_t id = queue_.front();
  queue_.pop_front();
  entry& e = trials_.at(id);
  e.worker = worker;
  e.assigned_to.insert(worker);
  ++e.attempts;
  by_worker_[worker] = id;
  return trial_assignment_plan{id, e.attempts, worker};
}

std::optional<std::uint64_t> trial_queue::running_on(const std::string& worker) const {
  auto it = by_worker_.find(worker);
  if (it == by_worker_.end()) return std::nullopt;
  return it->second;
}

std::optional<trial_finish> trial_queue::worker_lost(const std::string& worker, const std::string& why,
                                                     bool others_connected) {
  auto it = by_worker_.find(worker);
  if (it == by_worker_.end()) return std::nullopt;
  const std::uint64_t id = it->second;
  by_worker_.erase(it);
  entry& e = trials_.at(id);
  e.worker.clear();
  e.losses.push_back("worker " + worker + " lost: " + why);
  if (e.requeues < max_requeues_ && others_connected) {
    ++e.requeues;
    queue_.push_front(id);  // first in line: it has waited longest
    return std::nullopt;
  }
  return finish(id, false, "", losses_text(e, others_connected ? "" : "no other worker is connected"));
}

std::vector<trial_finish> trial_queue::no_worker_left(const std::string& why) {
  std::vector<std::uint64_t> retried;
  for (const std::uint64_t id : queue_)
    if (trials_.at(id).attempts > 0) retried.push_back(id);
  std::vector<trial_finish> out;
  for (const std::uint64_t id : retried) out.push_back(finish(id, false, "", losses_text(trials_.at(id), why)));
  return out;
}

std::string trial_queue::losses_text(const entry& e, const std::string& then) {
  std::string error = "lost " + std::to_string(e.losses.size()) + (e.losses.size() == 1 ? " time (" : " times (");
  for (std::size_t i = 0; i < e.losses.size(); ++i) error += (i ? "; " : "") + e.losses[i];
  error += ")";
  if (!then.empty()) error += "; " + then;
  return error;
}

std::optional<trial_finish> trial_queue::complete(const std::string& worker, std::uint64_t trial) {
  auto it = trials_.find(trial);
  if (it == trials_.end() || !it->second.assigned_to.contains(worker)) return std::nullopt;
  return finish(trial, true, worker, "");
}

std::optional<trial_finish> trial_queue::cancel(std::uint64_t trial, const std::string& why) {
  if (!trials_.contains(trial)) return std::nullopt;
  return finish(trial, false, "", why);
}

const trial_work* trial_queue::work(std::uint64_t trial) const {
  auto it = trials_.find(trial);
  return it == trials_.end() ? nullptr : &it->second.work;
}

trial_finish trial_queue::finish(std::uint64_t id, bool completed, const std::string& worker, std::string error) {
  entry& e = trials_.at(id);
  trial_finish f{id, completed, e.attempts, worker, std::move(error)};
  if (!e.worker.empty()) by_worker_.erase(e.worker);
  queue_.erase(std::remove(queue_.begin(), queue_.end(), id), queue_.end());
  trials_.erase(id);
  finished_.insert(id);
  return f;
}

}  // namespace rocelab::controller

#pragma once
// The controller's queue of sweep trials for its workers: pure bookkeeping, no I/O, no
// clock (the controller's worker sessions call it on the io thread).
//
// A trial is queued, then assigned to an idle worker (one trial per worker at a time),
// then either completed by that worker's result or, when the worker is lost with it
// (connection closed, heartbeat missed, killed, dropped for a result the controller
// refused), queued again at the front for another connected worker, at most
// `max_requeues` times; lost once more, or lost while no other worker is connected, it is
// finished failed at once with every loss's reason (nobody would ever run it: its caller
// must not wait for its own timeout).
// A result finishes a trial only while it is unfinished: a second result (a worker that
// was given up on answers after all, or answers twice) is dropped, so a trial never lands
// twice. A result from a worker the trial was never assigned to is dropped too.
//
// Ids are the queue's own, from 1.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace rocelab::controller {

inline constexpr std::uint32_t default_max_requeues = 2;

struct trial_work {
  std::string spec_yaml;    // resolved, files inlined
  std::string source_name;  // for messages
  // What the spec asks of a result: one repeat per seed, seeds seed .. seed + repeats - 1
  // (trial_result_check.hpp refuses any other).
  std::uint64_t seed = 0;
  std::uint32_t repeats = 1;
};

struct trial_assignment_plan {
  std::uint64_t trial = 0;
  std::uint32_t attempt = 0;  // 1, 2, ...
  std::string worker;
};

// How a trial ended as far as the queue is concerned.
struct trial_finish {
  std::uint64_t trial = 0;
  bool completed = false;       // a worker's result arrived (the result itself may report an error)
  std::uint32_t attempts = 0;   // assignments made
  std::string worker;           // completed: the worker whose result counted
  std::string error;            // not completed: why (every loss, or a cancel)
};

class trial_queue {
 public:
  explicit trial_queue(std::uint32_t max_requeues = default_max_requeues) : max_requeues_(max_requeues) {}

  std::uint64_t add(trial_work work);
  // The next queued trial for `worker`, which must be idle (a worker already running a
  // trial gets nothing).
  [[nodiscard]] std::optional<trial_assignment_plan> assign(const std::string& worker);
  // The trial `worker` runs, if any.
  [[nodiscard]] std::optional<std::uint64_t> running_on(const std::string& worker) const;
  // The worker is gone: its trial goes back to the queue, or fails (returned) once it was
  // re-queued max_requeues times or when `others_connected` is false (no worker could
  // take it).
  [[nodiscard]] std::optional<trial_finish> worker_lost(const std::string& worker, const std::string& why,
                                                        bool others_connected = true);
  // The last worker is gone: every queued trial some worker already lost fails (returned,
  // with its losses and `why`). Trials no worker has taken yet stay queued for workers
  // still to come (a sweep's executor starts them).
  [[nodiscard]] std::vector<trial_finish> no_worker_left(const std::string& why);
  // A result from `worker` for `trial`: the finish when it counts, nullopt when dropped
  // (unknown or finished trial, or a worker it was never assigned to).
  [[nodiscard]] std::optional<trial_finish> complete(const std::string& worker, std::uint64_t trial);
  // Ends an unfinished trial (its caller gave up on it); nullopt when finished or unknown.
  [[nodiscard]] std::optional<trial_finish> cancel(std::uint64_t trial, const std::string& why);

  [[nodiscard]] const trial_work* work(std::uint64_t trial) const;
  [[nodiscard]] std::size_t queued() const noexcept { return queue_.size(); }
  [[nodiscard]] std::size_t running() const noexcept { return by_worker_.size(); }
  [[nodiscard]] bool finished(std::uint64_t trial) const { return finished_.contains(trial); }

 private:
  struct entry {
    trial_work work;
    std::uint32_t attempts = 0;
    std::uint32_t requeues = 0;
    std::string worker;                   // running on; empty while queued
    std::set<std::string> assigned_to;    // every worker it was given to
    std::vector<std::string> losses;      // "worker w1 lost: heartbeat missed"
  };
  trial_finish finish(std::uint64_t id, bool completed, const std::string& worker, std::string error);
  // "lost 2 times (worker w1 lost: ...; worker w2 lost: ...)[; then]"
  static std::string losses_text(const entry& e, const std::string& then);

  std::uint32_t max_requeues_;
  std::uint64_t next_id_ = 0;
  std::map<std::uint64_t, entry> trials_;          // unfinished
  std::deque<std::uint64_t> queue_;                // waiting, in order
  std::map<std::string, std::uint64_t> by_worker_; // running
  std::set<std::uint64_t> finished_;
};

}  // namespace rocelab::controller

#pragma once
// Armed starts: a thread that sleeps until an agreed instant on CLOCK_MONOTONIC
// (clock_nanosleep with TIMER_ABSTIME, timer slack 1 ns) and then fires every start armed
// for that instant, in instant order, each with the CLOCK_MONOTONIC time it opened at.
//
// Why a thread of its own: an io_context that is encoding a report or relaying NIC lines
// at T0 would start its jobs late, one after another; the gate's thread does nothing but
// wait, so the only work after T0 is reading the clock and the callback's hand-off.
// Agents of one process (the scale bench, the loopback tests) may share one gate: one
// wake-up at T0 opens all of them: every start whose instant has come by one clock read
// opens with that read, and the callbacks run once the instants close together have all
// been read (no hand-off delays a later start's read). The spin runs at SCHED_FIFO where
// the process may.
//
// Contract: arm() is called before the instant (a start armed for a past instant fires at
// once, with the time it really fired). The callback runs on the gate's thread and must
// only hand off (asio::post); it must not block. cancel() before the instant guarantees
// the start never fires; at or after it, the start may already be firing (its owner
// checks its own state in the handed-off work).
// Threading: arm and cancel are safe from any thread. The destructor stops the thread;
// starts still armed then never fire.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace rocelab::agents::agent {

class start_gate {
 public:
  using fire_fn = std::function<void(std::int64_t fired_monotonic_ns)>;

  start_gate();
  ~start_gate();
  start_gate(const start_gate&) = delete;
  start_gate& operator=(const start_gate&) = delete;

  // Arms `fire` for `at_monotonic_ns`; returns its id for cancel().
  std::uint64_t arm(std::int64_t at_monotonic_ns, fire_fn fire);
  void cancel(std::uint64_t id);

 private:
  void run();

  struct armed {
    std::uint64_t id = 0;
    fire_fn fire;
  };
  std::mutex mutex_;
  std::condition_variable changed_;
  std::multimap<std::int64_t, armed> armed_;  // by instant
  std::uint64_t next_id_ = 0;
  bool stopping_ = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace rocelab::agents::agent

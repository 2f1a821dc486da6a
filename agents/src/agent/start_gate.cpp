#include "rocelab/agents/agent/start_gate.hpp"

#include <sys/prctl.h>
#include <time.h>

#include <cerrno>
#include <chrono>
#include <vector>

#include "rocelab/common/monotonic_clock.hpp"
#include "rocelab/common/realtime_section.hpp"

namespace rocelab::agents::agent {

namespace {

// The condition variable wakes the thread this long before the wake-up below; the rest is
// one clock_nanosleep at SCHED_FIFO, which a cancel cannot cut short (a cancelled start is
// dropped when the sleep ends). Long enough to absorb a normal thread's late wake-up on a
// busy machine (milliseconds), so the last stretch is timed by the real-time wake-up.
constexpr std::int64_t final_sleep_ns = 20'000'000;
// The sleep ends this long before the earliest instant, and the thread spins from there
// to each instant within spin_window_ns of it: one wake-up for everyone (then spun to each
// start in turn) spreads the starts far less than one late wake-up per start. Even at
// SCHED_FIFO a wake-up on the lab's VMs comes up to ~0.8 ms late (the vCPU's timer), and
// a wake-up after the first instants would open them together, late by their spread.
// Instants of one T0 differ by the agents' offset estimates, well inside the window.
constexpr std::int64_t early_wake_ns = 2'000'000;
constexpr std::int64_t spin_window_ns = 10'000'000;
// From the final sleep until the last start of the window is handed off, the thread runs
// at SCHED_FIFO (best effort): a thread at normal priority wakes behind the io threads
// and then shares its CPU with them, losing it for a scheduler slice at a time. Above
// every normal thread, below the soft switch (50) and the soft NICs' start priority (60),
// which have their own instants to keep.
constexpr int spin_rt_priority = 30;
// Starts opened so far are handed off only while the next instant is at least this far
// ahead, room for their hand-offs before it comes.
constexpr std::int64_t handoff_slack_ns = 200'000;

void sleep_until_monotonic(std::int64_t at_ns) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(at_ns / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(at_ns % 1'000'000'000);
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace

start_gate::start_gate() : thread_([this] { run(); }) {}

start_gate::~start_gate() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

std::uint64_t start_gate::arm(std::int64_t at_monotonic_ns, fire_fn fire) {
  std::uint64_t id = 0;
  {
    std::lock_guard lock(mutex_);
    id = ++next_id_;
    armed_.emplace(at_monotonic_ns, armed{id, std::move(fire)});
  }
  changed_.notify_all();
  return id;
}

void start_gate::cancel(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  for (auto it = armed_.begin(); it != armed_.end(); ++it)
    if (it->second.id == id) {
      armed_.erase(it);
      return;
    }
}

void start_gate::run() {
  // The default slack (50 us) would let the kernel defer the wake-up by that much; this
  // thread only ever sleeps to an instant.
  (void)::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (armed_.empty()) {
      changed_.wait(lock);
      continue;
    }
    const std::int64_t next = armed_.begin()->first;
    const std::int64_t now = monotonic_ns();
    if (next - now > final_sleep_ns + early_wake_ns) {
      const auto until =
          std::chrono::steady_clock::now() + std::chrono::nanoseconds(next - now - final_sleep_ns - early_wake_ns);
      changed_.wait_until(lock, until);
      continue;  // re-read: a start may have been armed earlier, or cancelled
    }
    lock.unlock();
    const realtime_section rt(spin_rt_priority);
    sleep_until_monotonic(next - early_wake_ns);
    lock.lock();
    // Everything due within the spin window fires in instant order.
    std::vector<std::pair<std::int64_t, fire_fn>> due;
    while (!armed_.empty() && armed_.begin()->first <= next + spin_window_ns) {
      due.emplace_back(armed_.begin()->first, std::move(armed_.begin()->second.fire));
      armed_.erase(armed_.begin());
    }
    lock.unlock();
    // Spin to each instant and note the clock read that opened it (every start whose
    // instant has come by that read opens with it). The hand-offs wait until the next
    // instant is handoff_slack_ns away or the window is done: a hand-off is a system call
    // that may wake another thread, and the thread can lose its CPU in one, so hand-offs
    // between the instants would push the later starts back by however long that took.
    std::vector<std::int64_t> opened_at(due.size());
    std::size_t handed = 0;
    const auto hand_off_opened = [&](std::size_t opened) {
      for (; handed < opened; ++handed) due[handed].second(opened_at[handed]);
    };
    for (std::size_t i = 0; i < due.size();) {
      std::int64_t t = monotonic_ns();
      if (handed < i && due[i].first - t >= handoff_slack_ns) {
        hand_off_opened(i);
        continue;
      }
      while (t < due[i].first) t = monotonic_ns();
      for (; i < due.size() && due[i].first <= t; ++i) opened_at[i] = t;
    }
    hand_off_opened(due.size());
    lock.lock();
  }
}

}  // namespace rocelab::agents::agent

#include "rocelab/agents/agent/start_gate.hpp"

#include <sys/prctl.h>
#include <time.h>

#include <cerrno>
#include <chrono>
#include <vector>

#include "rocelab/common/monotonic_clock.hpp"

namespace rocelab::agents::agent {

namespace {

// The condition variable wakes the thread this long before the instant; the rest is one
// clock_nanosleep, which a cancel cannot cut short (a cancelled start is dropped when the
// sleep ends).
constexpr std::int64_t final_sleep_ns = 2'000'000;
// Starts due within this much after the earliest fire in the same wake-up: the clock
// is read for each (spinning to its instant), rather than sleeping again, since a
// second wake-up costs tens of microseconds.
constexpr std::int64_t spin_window_ns = 50'000;

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
    if (next - now > final_sleep_ns) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(next - now - final_sleep_ns);
      changed_.wait_until(lock, until);
      continue;  // re-read: a start may have been armed earlier, or cancelled
    }
    lock.unlock();
    sleep_until_monotonic(next);
    lock.lock();
    // Everything due now or within the spin window fires in instant order; each reads the
    // clock as it fires and hands off.
    std::vector<std::pair<std::int64_t, fire_fn>> due;
    while (!armed_.empty() && armed_.begin()->first <= next + spin_window_ns) {
      due.emplace_back(armed_.begin()->first, std::move(armed_.begin()->second.fire));
      armed_.erase(armed_.begin());
    }
    lock.unlock();
    for (auto& [at, fire] : due) {
      std::int64_t t = monotonic_ns();
      while (t < at) t = monotonic_ns();
      fire(t);
    }
    lock.lock();
  }
}

}  // namespace rocelab::agents::agent

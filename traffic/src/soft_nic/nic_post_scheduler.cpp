#include "nic_post_scheduler.hpp"

#include <sched.h>

#include <algorithm>

#include "nic_process_io.hpp"
#include "rocelab/common/realtime_section.hpp"
#include "rocelab/fabric/soft_switch/realtime_clock.hpp"

namespace rocelab::traffic::soft_nic {

namespace ss = fabric::soft_switch;

void post_scheduler::post_now(const post_command& p) {
  auto id = nic_.post(p.qpn, p.kind, p.bytes, p.ref, ss::monotonic_ns());
  if (!id) write_event(out_fd_, error_event{p.ref, id.error().message()});
}

std::int64_t post_scheduler::next_instant() const {
  return std::min(armed_instant_, held_.empty() ? fabric::never_ns : held_.begin()->first);
}

void post_scheduler::take(const post_command& p) {
  if (p.at_ns > 0) {
    ++counters_.armed_posts;
    const std::int64_t now_ns = ss::monotonic_ns();
    if (p.at_ns > now_ns) {
      held_.emplace(p.at_ns, p);
      return;
    }
    ++counters_.armed_arrived_late;
    counters_.armed_late_max_ns = std::max(counters_.armed_late_max_ns, now_ns - p.at_ns);
  }
  post_now(p);
}

void post_scheduler::release_due() {
  for (std::int64_t now_ns = ss::monotonic_ns(); !held_.empty() && held_.begin()->first <= now_ns;
       now_ns = ss::monotonic_ns()) {
    counters_.armed_late_max_ns = std::max(counters_.armed_late_max_ns, now_ns - held_.begin()->first);
    post_now(held_.begin()->second);
    held_.erase(held_.begin());
  }
}

void post_scheduler::arm_next() {
  if (armed_instant_ != fabric::never_ns || held_.empty() || held_.begin()->first - ss::monotonic_ns() > armed_boost_ns)
    return;
  const std::int64_t instant = held_.begin()->first;
  for (auto it = held_.begin(); it != held_.end() && it->first == instant;) {
    const post_command& p = it->second;
    auto id = nic_.post_armed(p.qpn, p.kind, p.bytes, p.ref, instant);
    if (!id && id.error().code() == error_code::unavailable) break;
    if (!id) write_event(out_fd_, error_event{p.ref, id.error().message()});
    if (id) armed_instant_ = instant;
    it = held_.erase(it);
  }
}

void post_scheduler::after_transmit(std::int64_t t_ns) {
  if (armed_instant_ <= t_ns) {
    counters_.armed_late_max_ns = std::max(counters_.armed_late_max_ns, t_ns - armed_instant_);
    armed_instant_ = fabric::never_ns;
  }
  if (boosted_ && next_instant() - t_ns > armed_boost_ns) {
    leave_start_cpu(pin_, cfg_.rt_priority);
    boosted_ = false;
  }
}

wake_plan post_scheduler::plan_wake(std::int64_t t, std::int64_t wake) {
  const std::int64_t instant = next_instant();
  if (instant == fabric::never_ns) return {wake, false};
  wake = std::min(wake, instant);
  if (!boosted_ && cfg_.start_rt_priority > 0 && counters_.armed_boosts_refused == 0) {
    if (instant - t <= armed_boost_ns) {
      boosted_ = set_thread_priority(cfg_.start_rt_priority);
      ++(boosted_ ? counters_.armed_boosts : counters_.armed_boosts_refused);
      if (boosted_ && cfg_.start_cpu >= 0) ++(pin_.hold() ? counters_.armed_pins : counters_.armed_pins_refused);
    } else {
      wake = std::min(wake, instant - armed_boost_ns);
    }
  }
  // armed_spin_ns before the instant the transmit path is warmed, once per instant and
  // whatever timer woke the loop; only with time to spare, since the first warm-up on a
  // cold CPU costs what the first frame would have, and the CPU's other senders warm
  // after it.
  if (boosted_ && warmer_ && warmed_instant_ != instant) {
    if (instant - t <= armed_spin_ns) {
      warmed_instant_ = instant;
      if (instant - t >= armed_spin_ns / 2) counters_.armed_warmups += warmer_->warm() ? 1 : 0;
    } else {
      wake = std::min(wake, instant - armed_spin_ns);
    }
  }
  // The last armed_spin_ns before the instant: yield instead of sleep. Every sender is
  // then runnable at the instant and takes the CPU from the one before it as soon as that
  // one has sent (sched_yield rotates equal SCHED_FIFO priorities), instead of each
  // waiting for its own timer wake-up (tens of microseconds on the lab's VM) behind the
  // others'. Bounded by the instant; only at start_rt_priority.
  if (boosted_ && wake == instant) {
    if (instant - t <= armed_spin_ns) return {instant, true};
    wake = instant - armed_spin_ns;
  }
  return {wake, false};
}

}  // namespace rocelab::traffic::soft_nic

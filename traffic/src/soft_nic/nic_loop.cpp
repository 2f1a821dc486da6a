#include "nic_loop.hpp"

#include <poll.h>
#include <sched.h>

#include <algorithm>
#include <ctime>

#include "nic_commands.hpp"

namespace rocelab::traffic::soft_nic {

namespace ss = fabric::soft_switch;

// Receive budget per pass: bounds how long a burst of frames holds back due sends.
constexpr std::size_t frames_per_pass = 256;

void nic_loop::run() {
  for (;;) {
    const std::int64_t now = ss::monotonic_ns();
    if (stop.load() || (cfg.deadline_ns > 0 && now > cfg.deadline_ns)) return;
    clk.run_due(now);
    port.receive(frames_per_pass, receiver);
    // The lines read before the end of the input still count.
    const bool input_open = in.fill();
    if (handle_commands(in, posts, out_fd) || !input_open) return;
    posts.release_due();
    posts.arm_next();
    // Due packets go out now (a late wake-up catches up by at most one packet time,
    // rc_nic::poll_transmit); the next is due at next_tx.
    const std::int64_t t = ss::monotonic_ns();
    const std::int64_t next_tx = nic.poll_transmit(t);
    posts.after_transmit(t);
    const wake_plan plan = posts.plan_wake(t, std::min(next_tx, clk.next_due_ns()));
    if (plan.spin) {
      send_at_instant(plan.wake_ns);
      continue;
    }
    if (plan.wake_ns <= t) continue;
    sleep_until(t, plan.wake_ns);
  }
}

void nic_loop::send_at_instant(std::int64_t instant) {
  while (ss::monotonic_ns() < instant) ::sched_yield();
  const std::int64_t at = ss::monotonic_ns();
  clk.run_due(at);
  port.receive(frames_per_pass, receiver);
  posts.release_due();
  sink.yield_after_next_send(true);
  (void)nic.poll_transmit(at, 1);
  sink.yield_after_next_send(false);
  posts.after_transmit(at);
}

void nic_loop::sleep_until(std::int64_t now_ns, std::int64_t wake_ns) {
  // ppoll takes the nanoseconds (pacing gaps are microseconds); anything not due within
  // 100 ms is re-checked then (the stop flag, the deadline).
  const std::int64_t wait_ns = std::min<std::int64_t>(wake_ns - now_ns, 100'000'000);
  pollfd fds[2] = {{port.fd(), POLLIN, 0}, {in_fd, POLLIN, 0}};
  const timespec ts{static_cast<time_t>(wait_ns / 1'000'000'000), static_cast<long>(wait_ns % 1'000'000'000)};
  (void)::ppoll(fds, 2, &ts, nullptr);
}

}  // namespace rocelab::traffic::soft_nic

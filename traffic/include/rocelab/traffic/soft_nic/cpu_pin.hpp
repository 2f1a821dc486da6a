#pragma once
// Holds the calling thread to one CPU for a while, then gives back the CPUs it had: a soft
// NIC around an armed instant (nic_process_config::start_cpu), so an instant's senders
// share the machine's CPUs evenly instead of as the kernel's balancer of SCHED_FIFO tasks
// leaves them (6 of 8 on one CPU of 2 was seen). With it, the thread's real-time priority,
// which it raises for the instant and lowers after.

#include <sched.h>

namespace rocelab::traffic::soft_nic {

class cpu_pin {
 public:
  // `cpu` < 0: nothing to hold.
  explicit cpu_pin(int cpu) noexcept : cpu_(cpu) {}
  ~cpu_pin() { release(); }
  cpu_pin(const cpu_pin&) = delete;
  cpu_pin& operator=(const cpu_pin&) = delete;

  // true once the thread runs on `cpu` alone. false when there is no CPU to hold or the
  // kernel refused it (a CPU outside the thread's cpuset or not online); the thread then
  // keeps the CPUs it had.
  bool hold() noexcept;
  // Back to the CPUs the thread had before hold(); nothing when not held.
  void release() noexcept;
  [[nodiscard]] bool held() const noexcept { return held_; }

 private:
  int cpu_;
  bool held_ = false;
  cpu_set_t saved_{};
};

// The end of an armed start's boost: the thread leaves `pin`'s CPU while it still has its
// boosted priority, then takes `priority`. The other order strands it: the pinned CPU may
// be the soft switch's, whose SCHED_FIFO priority lies between the two, and a thread that
// lowered itself there first could not run to move away until the switch slept (5 ms
// behind a busy port on a 2-CPU lab). The priority as set_thread_priority sets it.
void leave_start_cpu(cpu_pin& pin, int priority);

}  // namespace rocelab::traffic::soft_nic

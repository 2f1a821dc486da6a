#pragma once
// Holds the calling thread to one CPU for a while, then gives back the CPUs it had: a soft
// NIC around an armed instant (nic_process_config::start_cpu), so an instant's senders
// share the machine's CPUs evenly instead of as the kernel's balancer of SCHED_FIFO tasks
// leaves them (6 of 8 on one CPU of 2 was seen).

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

}  // namespace rocelab::traffic::soft_nic

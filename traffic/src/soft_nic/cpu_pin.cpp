#include "rocelab/traffic/soft_nic/cpu_pin.hpp"

#include "rocelab/common/realtime_section.hpp"

namespace rocelab::traffic::soft_nic {

bool cpu_pin::hold() noexcept {
  if (held_) return true;
  if (cpu_ < 0 || cpu_ >= CPU_SETSIZE) return false;
  if (::sched_getaffinity(0, sizeof saved_, &saved_) != 0) return false;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu_, &one);
  held_ = ::sched_setaffinity(0, sizeof one, &one) == 0;
  return held_;
}

void cpu_pin::release() noexcept {
  if (held_) (void)::sched_setaffinity(0, sizeof saved_, &saved_);
  held_ = false;
}

void leave_start_cpu(cpu_pin& pin, int priority) {
  pin.release();
  (void)set_thread_priority(priority);
}

}  // namespace rocelab::traffic::soft_nic

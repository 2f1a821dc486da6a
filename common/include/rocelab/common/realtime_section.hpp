#pragma once
// SCHED_FIFO at a given priority for the calling thread while the section lives, the
// thread's previous policy after. For the few microseconds that must not be split by the
// scheduler (a start instant, an XON/XOFF pair): a normal-priority thread on a busy
// machine can lose the CPU for milliseconds. Best effort: without CAP_SYS_NICE the
// thread keeps its policy. Keep sections short: a spinning FIFO
// thread holds its CPU from every normal thread (the kernel's RT throttling bounds it).

#include <pthread.h>
#include <sched.h>

namespace rocelab {

class realtime_section {
 public:
  // priority <= 0: none (the section does nothing).
  explicit realtime_section(int priority) {
    if (priority <= 0) return;
    ok_ = ::pthread_getschedparam(::pthread_self(), &policy_, &param_) == 0;
    sched_param rt{};
    rt.sched_priority = priority;
    ok_ = ok_ && ::pthread_setschedparam(::pthread_self(), SCHED_FIFO, &rt) == 0;
  }
  ~realtime_section() {
    if (ok_) (void)::pthread_setschedparam(::pthread_self(), policy_, &param_);
  }
  realtime_section(const realtime_section&) = delete;
  realtime_section& operator=(const realtime_section&) = delete;

 private:
  bool ok_ = false;
  int policy_ = SCHED_OTHER;
  sched_param param_{};
};

// The calling thread at SCHED_FIFO `priority` from now on (0: the default policy again),
// with SCHED_RESET_ON_FORK: the threads and processes it starts begin at the default
// policy and raise themselves if they need to. false when refused (no CAP_SYS_NICE).
inline bool set_thread_priority(int priority) {
  sched_param sp{};
  sp.sched_priority = priority;
  return ::sched_setscheduler(0, (priority > 0 ? SCHED_FIFO : SCHED_OTHER) | SCHED_RESET_ON_FORK, &sp) == 0;
}

}  // namespace rocelab

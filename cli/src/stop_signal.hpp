#pragma once
// SIGINT/SIGTERM as a flag that long commands poll (a run's cancel hook): the first
// signal asks the command to stop where it is and keep what it measured; a second one
// ends the process at once (_exit, status 130: a run being stored stays `running` in the
// store and is marked interrupted by the next open, with every batch already committed).
// The handlers before it come back when the guard ends. Exit status 130 follows the
// shell's 128 + SIGINT.
#include <unistd.h>

#include <atomic>
#include <csignal>

namespace rocelab::cli {

class stop_signal {
 public:
  stop_signal() {
    flag().store(false);
    struct sigaction sa {};
    sa.sa_handler = [](int) {
      // exchange and _exit are async-signal-safe.
      if (flag().exchange(true)) ::_exit(exit_status);
    };
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
  }
  ~stop_signal() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  stop_signal(const stop_signal&) = delete;
  stop_signal& operator=(const stop_signal&) = delete;

  [[nodiscard]] bool requested() const noexcept { return flag().load(); }
  static constexpr int exit_status = 130;

 private:
  static std::atomic<bool>& flag() noexcept {
    static std::atomic<bool> f{false};  // lock-free, so safe to store from a handler
    return f;
  }
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace rocelab::cli

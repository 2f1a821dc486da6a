#pragma once
// Reads this host's clock source (clock_source.hpp) through three small adapters, each
// behind an interface so tests inject recorded pmc or chronyc output, timex values or a
// process table:
//   pmc_reader         runs `pmc -u -b 0 'GET TIME_STATUS_NP'` (no shell: argv given; at
//                      most pmc_timeout, then killed) and returns what it printed.
//   timex_reader       ntp_adjtime(2) with modes 0: read-only, allowed unprivileged.
//   discipline_reader  who disciplines the system clock: whether a phc2sys process runs
//                      (/proc/<pid>/comm), and `chronyc -n tracking` (same timeout as pmc).
// read_host_clock() combines them; `rocelab lab facts` and the agents call it.
//
// host_clock_monitor keeps the latest reading fresh on a thread of its own, so the
// callers that need it often (every clock probe an agent answers) never wait on pmc.

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "rocelab/agents/clock/clock_source.hpp"
#include "rocelab/common/result.hpp"

namespace rocelab::agents::clock {

class pmc_reader {
 public:
  virtual ~pmc_reader() = default;
  // pmc's standard output; an error when it could not run or ended without answering.
  [[nodiscard]] virtual result<std::string> time_status_text() = 0;
};

class timex_reader {
 public:
  virtual ~timex_reader() = default;
  [[nodiscard]] virtual result<timex_reading> read() = 0;
};

class discipline_reader {
 public:
  virtual ~discipline_reader() = default;
  [[nodiscard]] virtual bool phc2sys_running() = 0;
  // chronyc's standard output; an error when it could not run or chronyd did not answer.
  [[nodiscard]] virtual result<std::string> chronyc_tracking_text() = 0;
};

inline constexpr std::chrono::milliseconds pmc_timeout{1000};

// The real adapters. `pmc_binary` is looked up on PATH when it has no slash.
[[nodiscard]] std::unique_ptr<pmc_reader> make_pmc_reader(std::string pmc_binary = "pmc");
[[nodiscard]] std::unique_ptr<timex_reader> make_timex_reader();
// Processes under `proc_root`; `chronyc_binary` looked up on PATH when it has no slash.
[[nodiscard]] std::unique_ptr<discipline_reader> make_discipline_reader(std::string proc_root = "/proc",
                                                                        std::string chronyc_binary = "chronyc");

// One reading through the given adapters (a timex error counts as not synchronised).
[[nodiscard]] clock_source read_host_clock(pmc_reader& pmc, timex_reader& timex, discipline_reader& discipline);
// One reading of this host with the real adapters.
[[nodiscard]] clock_source read_host_clock();

class host_clock_monitor {
 public:
  // Reads once before returning (current() is valid at once), then every `interval`.
  host_clock_monitor(std::unique_ptr<pmc_reader> pmc, std::unique_ptr<timex_reader> timex,
                     std::unique_ptr<discipline_reader> discipline,
                     std::chrono::milliseconds interval = std::chrono::milliseconds(1000));
  ~host_clock_monitor();
  host_clock_monitor(const host_clock_monitor&) = delete;
  host_clock_monitor& operator=(const host_clock_monitor&) = delete;

  // This host with the real adapters.
  [[nodiscard]] static std::shared_ptr<host_clock_monitor> of_this_host();

  [[nodiscard]] clock_source current() const;

 private:
  void run(std::chrono::milliseconds interval);

  std::unique_ptr<pmc_reader> pmc_;
  std::unique_ptr<timex_reader> timex_;
  std::unique_ptr<discipline_reader> discipline_;
  mutable std::mutex mutex_;
  std::condition_variable stop_;
  clock_source latest_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace rocelab::agents::clock

namespace rocelab::agents::clock {

// CLOCK_REALTIME minus CLOCK_MONOTONIC, read back to back (a pair whose monotonic reads
// are more than 20 us apart, from a preemption, is read again, up to 4 times;
// common/realtime_read.hpp). Two hosts
// whose realtime clocks are synchronised map each other's monotonic clocks with it.
[[nodiscard]] std::int64_t realtime_minus_monotonic_ns() noexcept;


}  // namespace rocelab::agents::clock

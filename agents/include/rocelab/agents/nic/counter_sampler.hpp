#pragma once
// Samples a NIC's counters periodically during a run into counter_sample time series
// (device and port as the run's records index them, t_ns from the caller's clock, which
// the agent maps onto the controller's timeline).
//
// Threading: start() runs the sampling on a thread of its own until stop(); while it
// runs, nothing else may use the driver. take() may be called from any thread.
// Bounded: at most max_samples rounds, then it stops by itself.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "rocelab/agents/nic/nic_driver.hpp"
#include "rocelab/common/records.hpp"

namespace rocelab::agents::nic {

struct sampler_options {
  std::uint32_t device = 0;  // index into run_records::devices
  std::uint32_t port = 0;
  std::chrono::milliseconds interval{100};
  std::function<std::int64_t()> now_ns;  // required: the agent's clock
  std::uint64_t max_samples = 100'000;   // rounds
};

class counter_sampler {
 public:
  counter_sampler(nic_driver& driver, sampler_options options);
  counter_sampler(const counter_sampler&) = delete;
  counter_sampler& operator=(const counter_sampler&) = delete;
  ~counter_sampler();  // stops the thread

  // One round now, in the calling thread.
  [[nodiscard]] status sample_once();
  void start();
  // Ends the thread (after one last round, so the series covers the end of the run) and
  // returns the first error a round met, if any.
  [[nodiscard]] status stop();
  // The samples so far, removed from the sampler.
  [[nodiscard]] std::vector<counter_sample> take();
  [[nodiscard]] std::uint64_t rounds() const;

 private:
  void loop();

  nic_driver& driver_;
  sampler_options options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::uint64_t rounds_ = 0;
  status first_error_;
  std::vector<counter_sample> samples_;
  std::thread thread_;  // last: started after everything it uses exists
};

}  // namespace rocelab::agents::nic

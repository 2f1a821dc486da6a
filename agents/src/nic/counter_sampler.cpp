#include "rocelab/agents/nic/counter_sampler.hpp"

namespace rocelab::agents::nic {

counter_sampler::counter_sampler(nic_driver& driver, sampler_options options)
    : driver_(driver), options_(std::move(options)) {}

counter_sampler::~counter_sampler() { (void)stop(); }

status counter_sampler::sample_once() {
  const std::int64_t t = options_.now_ns();
  auto counters = driver_.read_counters();
  std::lock_guard lock(mutex_);
  ++rounds_;
  if (!counters.ok()) {
    if (first_error_.ok()) first_error_ = counters.error();
    return counters.error();
  }
  for (auto& c : *counters) samples_.push_back({options_.device, options_.port, std::move(c.name), t, c.value});
  return status::success();
}

void counter_sampler::start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { loop(); });
}

void counter_sampler::loop() {
  for (;;) {
    (void)sample_once();  // errors are kept in first_error_ for stop()
    std::unique_lock lock(mutex_);
    if (rounds_ >= options_.max_samples) return;
    if (wake_.wait_for(lock, options_.interval, [this] { return stopping_; })) break;
  }
  (void)sample_once();
}

status counter_sampler::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  return first_error_;
}

std::vector<counter_sample> counter_sampler::take() {
  std::lock_guard lock(mutex_);
  return std::exchange(samples_, {});
}

std::uint64_t counter_sampler::rounds() const {
  std::lock_guard lock(mutex_);
  return rounds_;
}

}  // namespace rocelab::agents::nic

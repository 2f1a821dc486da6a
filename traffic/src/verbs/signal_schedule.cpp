#include "rocelab/traffic/verbs/signal_schedule.hpp"

#include <algorithm>

namespace rocelab::traffic::verbs {

signal_schedule::signal_schedule(std::uint32_t every, std::uint32_t depth) noexcept
    : every_(std::max<std::uint32_t>(1, std::min(every, std::max<std::uint32_t>(1, depth)))),
      depth_(std::max<std::uint32_t>(1, depth)) {}

bool signal_schedule::post(std::uint64_t total) {
  ++posted_;
  ++unsignalled_;
  // every <= depth: the WRs in flight follow a signalled one (or the start), so a full
  // window always holds a signalled WR and the sender never waits on none.
  const bool signalled = unsignalled_ >= every_ || posted_ >= total;
  if (signalled) {
    batches_.push_back(unsignalled_);
    unsignalled_ = 0;
  }
  return signalled;
}

std::uint64_t signal_schedule::complete() {
  if (batches_.empty()) return 0;
  const std::uint64_t n = batches_.front();
  batches_.pop_front();
  completed_ += n;
  return n;
}

}  // namespace rocelab::traffic::verbs

#include "rocelab/fabric/clock.hpp"

#include <algorithm>

namespace rocelab::fabric {

timer_id virtual_clock::schedule(std::int64_t at_ns, timer_client& client, std::uint64_t cookie) {
  std::uint32_t slot = 0;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  slot_record& rec = slots_[slot];
  rec.client = &client;
  rec.cookie = cookie;
  heap_.push_back(entry{std::max(at_ns, now_ns_), seq_++, slot, rec.gen});
  std::push_heap(heap_.begin(), heap_.end(), later);
  ++live_;
  return (static_cast<std::uint64_t>(rec.gen) << 32) | slot;
}

bool virtual_clock::cancel(timer_id id) {
  const auto slot = static_cast<std::uint32_t>(id & 0xffffffffu);
  const auto gen = static_cast<std::uint32_t>(id >> 32);
  if (id == no_timer || slot >= slots_.size() || slots_[slot].gen != gen) return false;
  // Bumping the generation orphans the heap entry; the slot can be reused at once.
  ++slots_[slot].gen;
  slots_[slot].client = nullptr;
  free_slots_.push_back(slot);
  --live_;
  return true;
}

void virtual_clock::drop_stale_top() {
  while (!heap_.empty() && heap_.front().gen != slots_[heap_.front().slot].gen) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
  }
}

std::int64_t virtual_clock::next_event_ns() {
  drop_stale_top();
  return heap_.empty() ? never_ns : heap_.front().at_ns;
}

bool virtual_clock::step() {
  drop_stale_top();
  if (heap_.empty()) return false;
  const entry e = heap_.front();
  std::pop_heap(heap_.begin(), heap_.end(), later);
  heap_.pop_back();
  slot_record& rec = slots_[e.slot];
  timer_client* client = rec.client;
  const std::uint64_t cookie = rec.cookie;
  // Release before the call so the client may schedule again (even reuse this slot).
  ++rec.gen;
  rec.client = nullptr;
  free_slots_.push_back(e.slot);
  --live_;
  now_ns_ = e.at_ns;
  client->on_timer(now_ns_, cookie);
  return true;
}

std::size_t virtual_clock::run_until(std::int64_t until_ns) {
  std::size_t n = 0;
  while (next_event_ns() <= until_ns && step()) ++n;
  now_ns_ = std::max(now_ns_, until_ns);
  return n;
}

std::size_t virtual_clock::run() {
  std::size_t n = 0;
  while (step()) ++n;
  return n;
}

void virtual_clock::reserve(std::size_t timers) {
  heap_.reserve(timers);
  slots_.reserve(timers);
  free_slots_.reserve(timers);
}

}  // namespace rocelab::fabric

// The twin engine's clock for fabric objects (DCQCN reaction and notification points,
// PFC watchdogs, IB CC timers): timer slots with generation-tagged ids, and the
// cancel-then-reschedule revival that keeps one queue entry per armed timer.

#include "engine.hpp"

namespace rocelab::fabric::twin::engine_impl {

std::int64_t node_clock::now_ns() const { return e_.now_ns(); }
timer_id node_clock::schedule(std::int64_t at_ns, timer_client& client, std::uint64_t cookie) {
  return e_.schedule_timer(at_ns, client, cookie, host_);
}
bool node_clock::cancel(timer_id id) { return e_.cancel_timer(id); }

timer_id engine::schedule_timer(std::int64_t at_ns, timer_client& client, std::uint64_t cookie, std::int32_t host) {
  at_ns = std::max(at_ns, now_);
  std::uint32_t slot;
  if (last_cancelled_ < slots_.size() && slots_[last_cancelled_].st == timer_slot::state::cancelled &&
      slots_[last_cancelled_].client == &client && slots_[last_cancelled_].cookie == cookie &&
      slots_[last_cancelled_].queued_ns <= at_ns) {
    slot = last_cancelled_;  // revive: its queued entry surfaces first and is re-pushed
  } else {
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    slots_[slot].queued_ns = at_ns;
    q_.push(at_ns, ev_timer, slot);
  }
  last_cancelled_ = no_slot;
  timer_slot& s = slots_[slot];
  s.client = &client;
  s.cookie = cookie;
  s.host = host;
  s.due_ns = at_ns;
  s.st = timer_slot::state::live;
  ++s.gen;
  // id: generation in the high half, slot + 1 in the low half (0 stays no_timer).
  return (static_cast<std::uint64_t>(s.gen) << 32) | (slot + 1u);
}

bool engine::cancel_timer(timer_id id) {
  if (id == no_timer) return false;
  const std::uint32_t slot = static_cast<std::uint32_t>(id & 0xffffffffu) - 1u;
  if (slot >= slots_.size()) return false;
  timer_slot& s = slots_[slot];
  if (s.st != timer_slot::state::live || s.gen != static_cast<std::uint32_t>(id >> 32)) return false;
  s.st = timer_slot::state::cancelled;  // freed when its queued entry surfaces
  last_cancelled_ = slot;
  return true;
}

void engine::on_timer_event(std::uint32_t idx) {
  timer_slot& s = slots_[idx];
  if (s.st == timer_slot::state::cancelled) {
    s.st = timer_slot::state::free;
    s.client = nullptr;
    if (last_cancelled_ == idx) last_cancelled_ = no_slot;
    free_slots_.push_back(idx);
    return;
  }
  if (s.due_ns > now_) {  // revived with a later due time
    s.queued_ns = s.due_ns;
    q_.push(s.due_ns, ev_timer, idx);
    return;
  }
  timer_client* client = s.client;
  const std::uint64_t cookie = s.cookie;
  const std::int32_t host = s.host;
  s.st = timer_slot::state::free;
  s.client = nullptr;
  free_slots_.push_back(idx);
  client->on_timer(now_, cookie);
  if (host >= 0) nic_kick(static_cast<std::uint32_t>(host));  // a DCQCN rate may have risen
}

}  // namespace rocelab::fabric::twin::engine_impl

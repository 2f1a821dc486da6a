#pragma once
// The clock interface the fabric model sees, and the virtual-time implementation the
// tests and the twin drive it with.
//
// Contract:
// - Times are integer nanoseconds on one timeline (DESIGN.md, "Time").
// - `schedule` calls `client.on_timer(at_ns, cookie)` once, at `at_ns` (a time in the
//   past fires at the next opportunity, stamped with the clock's current time). It never
//   allocates in steady state: the client is a plain interface and the cookie tells the
//   client which of its timers fired, so no closure is built per timer.
// - `cancel` of a fired, cancelled or unknown id is a harmless no-op returning false.
// - A client must outlive its pending timers or cancel them; objects that register
//   themselves as clients are therefore neither copyable nor movable.
// - Threading: a clock and the objects it drives are used from one thread. A real-time
//   implementation (the soft switch issue) keeps the same interface.

#include <cstdint>
#include <limits>
#include <vector>

namespace rocelab::fabric {

using timer_id = std::uint64_t;
inline constexpr timer_id no_timer = 0;
inline constexpr std::int64_t never_ns = std::numeric_limits<std::int64_t>::max();

class timer_client {
 public:
  virtual void on_timer(std::int64_t now_ns, std::uint64_t cookie) = 0;

 protected:
  ~timer_client() = default;
};

class clock {
 public:
  virtual ~clock() = default;
  [[nodiscard]] virtual std::int64_t now_ns() const = 0;
  virtual timer_id schedule(std::int64_t at_ns, timer_client& client, std::uint64_t cookie) = 0;
  virtual bool cancel(timer_id id) = 0;
};

// Discrete-event clock: a binary heap keyed by (time, insertion sequence), so events at
// the same nanosecond run in the order they were scheduled and every run is
// reproducible. Timer records live in a slot array recycled through a free list; a
// cancelled timer leaves a stale heap entry that is skipped when it surfaces (its slot
// generation no longer matches), which keeps cancel O(1).
class virtual_clock final : public clock {
 public:
  explicit virtual_clock(std::int64_t start_ns = 0) : now_ns_(start_ns) {}

  [[nodiscard]] std::int64_t now_ns() const override { return now_ns_; }
  timer_id schedule(std::int64_t at_ns, timer_client& client, std::uint64_t cookie) override;
  bool cancel(timer_id id) override;

  // Runs the earliest live event; false when none is pending.
  bool step();
  // Runs every event with time <= until_ns, then sets the time to until_ns (if later).
  // Returns the number of events run.
  std::size_t run_until(std::int64_t until_ns);
  // Runs until no event is pending; returns the number run.
  std::size_t run();
  // Live (scheduled, not cancelled, not fired) timers.
  [[nodiscard]] std::size_t pending() const { return live_; }
  // Time of the earliest live event, or never_ns.
  [[nodiscard]] std::int64_t next_event_ns();
  // Pre-sizes the heap and slot arrays so a run of this size never allocates.
  void reserve(std::size_t timers);

 private:
  struct entry {
    std::int64_t at_ns;
    std::uint64_t seq;
    std::uint32_t slot;
    std::uint32_t gen;
  };
  struct slot_record {
    timer_client* client = nullptr;
    std::uint64_t cookie = 0;
    std::uint32_t gen = 1;
  };
  static bool later(const entry& a, const entry& b) {
    return a.at_ns != b.at_ns ? a.at_ns > b.at_ns : a.seq > b.seq;
  }
  void drop_stale_top();

  std::int64_t now_ns_;
  std::uint64_t seq_ = 0;
  std::size_t live_ = 0;
  std::vector<entry> heap_;
  std::vector<slot_record> slots_;
  std::vector<std::uint32_t> free_slots_;
};

}  // namespace rocelab::fabric

#pragma once
// When the NIC process hands posts to its rc_nic: at once, or held until their armed
// instant (post_command::at_ns, nic_process.hpp), with the armed start's machinery around
// the instant: armed_boost_ns before it the instant's posts go to the NIC armed (first
// frame built) and the process takes start_rt_priority (on start_cpu), armed_spin_ns
// before it the transmit path is warmed and the loop yields instead of sleeping.
// The loop (nic_loop.hpp) calls it in its order; it reads the clock where the loop did.
#include <cstdint>
#include <map>
#include <optional>

#include "rocelab/fabric/clock.hpp"
#include "rocelab/traffic/soft_nic/cpu_pin.hpp"
#include "rocelab/traffic/soft_nic/nic_channel.hpp"
#include "rocelab/traffic/soft_nic/nic_process.hpp"
#include "rocelab/traffic/soft_nic/rc_nic.hpp"
#include "rocelab/traffic/soft_nic/transmit_path_warmer.hpp"

namespace rocelab::traffic::soft_nic {

// How well armed starts held, for the counters line (nic_process.hpp).
struct armed_start_counters {
  std::uint64_t armed_posts = 0;         // posts with an instant
  std::uint64_t armed_arrived_late = 0;  // of those, arrived after it
  // The largest lateness of a post against its instant: its arrival, its release, or for
  // a post armed in the NIC the poll_transmit that sent its first frame.
  std::int64_t armed_late_max_ns = 0;
  std::uint64_t armed_boosts = 0, armed_boosts_refused = 0;  // start_rt_priority taken
  std::uint64_t armed_pins = 0, armed_pins_refused = 0;      // start_cpu held while boosted
  std::uint64_t armed_warmups = 0;                           // warm-up frames sent to lo
};

// What the loop does next: sleep until `wake_ns`, or (spin) yield until the armed
// instant `wake_ns` and send its first frames (nic_loop::send_at_instant).
struct wake_plan {
  std::int64_t wake_ns = 0;
  bool spin = false;
};

class post_scheduler {
 public:
  // Borrows all; `warmer` may be empty (no warm-up). Failed posts go to `out_fd` as
  // error events.
  post_scheduler(rc_nic& nic, const nic_process_config& cfg, cpu_pin& pin,
                 std::optional<transmit_path_warmer>& warmer, int out_fd)
      : nic_(nic), cfg_(cfg), pin_(pin), warmer_(warmer), out_fd_(out_fd) {}

  // A post command as it arrives: held when its instant is still ahead, else posted.
  void take(const post_command& p);
  // Posts whose instant has come, in arrival order.
  void release_due();
  // Within armed_boost_ns of the next held instant and none armed: its posts to the NIC
  // armed, in arrival order; the first refused (its QP busy) and those after it stay held.
  void arm_next();
  // After a poll_transmit at `t_ns`: an armed instant it reached is settled (lateness
  // counted), and once the instant's first frames are out the process goes back below
  // the switch, unless the next instant is already close.
  void after_transmit(std::int64_t t_ns);
  // The loop's wake-up at `t_ns` given `wake_ns` (its next send or timer), with the next
  // instant's boost, warm-up and spin taken or scheduled.
  [[nodiscard]] wake_plan plan_wake(std::int64_t t_ns, std::int64_t wake_ns);

  [[nodiscard]] const armed_start_counters& counters() const noexcept { return counters_; }

 private:
  void post_now(const post_command& p);
  // The earliest of the armed instant and the held ones; never_ns: none.
  [[nodiscard]] std::int64_t next_instant() const;

  rc_nic& nic_;
  const nic_process_config& cfg_;
  cpu_pin& pin_;
  std::optional<transmit_path_warmer>& warmer_;
  int out_fd_;
  // Posts held for a later instant, in time order; a multimap keeps arrival order among
  // equal instants. A post whose QP is still busy at arming stays here and is posted at
  // its instant.
  std::multimap<std::int64_t, post_command> held_;
  std::int64_t armed_instant_ = fabric::never_ns;   // the instant the NIC's armed posts wait for
  std::int64_t warmed_instant_ = fabric::never_ns;  // the instant whose transmit path was last warmed
  bool boosted_ = false;         // start_rt_priority held
  armed_start_counters counters_;
};

}  // namespace rocelab::traffic::soft_nic

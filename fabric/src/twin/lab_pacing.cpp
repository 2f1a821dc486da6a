// The twin engine's model of a calibrated NIC's pacing wake-ups
// (host_timing::pacing_lateness), kept as the lab's soft NIC keeps its pacing
// (traffic/soft_nic rc_nic: send_data_packet and poll_transmit): each data frame has a
// due instant, the later of the port's (line rate) and its QP's (DCQCN rate); a frame not
// yet due at the NIC's previous send needs a wake-up of its own and leaves at due + a
// draw; after a send at t with gap g, the next due instant is max(due, t - g) + g, so a
// wake-up later than one frame time lets exactly one more frame follow at once.

#include "engine.hpp"

namespace rocelab::fabric::twin::engine_impl {

bool engine::lab_pacing_holds(std::uint32_t h, const flow_state& fl, std::int64_t now_ps, std::int64_t qp_due_ps,
                              std::int64_t& wake_ps) {
  lab_pacing& lp = pacing_[h];
  lp.catching_up = false;
  if (!lp.lateness.active()) return false;
  if (lp.held_until_ps >= 0) {
    // The NIC sleeps until its late wake-up; whichever frame is next then goes.
    if (now_ps >= lp.held_until_ps) {
      lp.held_until_ps = -1;
      return false;
    }
    wake_ps = std::min(wake_ps, lp.held_until_ps);
    return true;
  }
  if (fl.snd_max == 0) return false;  // a message's first frame: its send processing was drawn
  const std::int64_t due = std::max(lp.due_ps, qp_due_ps);
  if (due <= lp.wake_ps) {  // due at the last wake-up: sent in it
    lp.catching_up = true;
    return false;
  }
  const std::int64_t at = due + lp.lateness.next() * 1000;
  if (at <= now_ps) return false;
  lp.held_until_ps = at;
  wake_ps = std::min(wake_ps, at);
  return true;
}

void engine::lab_paced_sent(std::uint32_t h, flow_state& fl, std::int64_t qp_due_ps, std::int64_t start_ps,
                            std::int64_t port_gap_ps) {
  lab_pacing& lp = pacing_[h];
  lp.due_ps = std::max(lp.due_ps, start_ps - port_gap_ps) + port_gap_ps;
  if (!lp.catching_up) lp.wake_ps = start_ps;
  // The QP's spacing counts from its due instant (nic_try adds this frame's time at the
  // QP's rate), with the same one-frame catch-up.
  if (const rate_control* rp = rp_of(fl).get(); qp_due_ps > 0 && rp) {
    const auto qp_gap = static_cast<std::int64_t>(std::ceil(fl.last_bits * 1e12 / rp->rate_bps()));
    fl.last_tx_ps = std::max(qp_due_ps, start_ps - qp_gap);
  }
}

}  // namespace rocelab::fabric::twin::engine_impl

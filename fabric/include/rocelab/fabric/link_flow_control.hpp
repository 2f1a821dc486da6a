#pragma once
// Link-level flow control, the seam between the switch's buffer and its neighbours.
//
// `link_flow_control` is what the switch model calls: on the receive side after every
// occupancy change of a lossless priority group, on the transmit side to learn which
// priorities may start a frame. PFC (802.1Qbb) is one implementation; InfiniBand
// credit-based flow control is the other (credits returned on ingress drain, consumed in
// on_transmit).
//
// `pfc_pause_state` is the transmit-side half alone (honouring received PFC frames),
// usable by a NIC model as well as by the switch.
//
// Threading: single-threaded, like the clock that drives it.

#include <array>
#include <cstdint>
#include <vector>

#include "rocelab/fabric/clock.hpp"
#include "rocelab/fabric/packet.hpp"
#include "rocelab/fabric/switch_config.hpp"

namespace rocelab::fabric {

// Honours received PFC frames for one port: a frame with quanta q > 0 for priority p
// stops new frames of p for q x 512 bit times at the port speed (802.1Qbb clause 36.1.3,
// 802.3 Annex 31B); q = 0 (XON) resumes at once. A frame already being sent completes.
// Pause ends are kept in picoseconds: a quantum is 5.12 ns at 100 Gb/s, 1.28 ns at 400.
class pfc_pause_state {
 public:
  pfc_pause_state() = default;
  pfc_pause_state(std::int64_t rate_bps, bool pause_until_resume)
      : rate_bps_(rate_bps), pause_until_resume_(pause_until_resume) {}

  // A PFC frame fully received at now_ns; bit p of class_enable selects quanta[p].
  void on_frame(std::uint8_t class_enable, const std::array<std::uint16_t, num_priorities>& quanta,
                std::int64_t now_ns);
  // Bit p set: priority p may start a frame at now_ns. Inline for the unpaused case.
  [[nodiscard]] std::uint8_t allowed_mask(std::int64_t now_ns) const {
    if (latest_until_ps_ != never_ns && now_ns * 1000 >= latest_until_ps_) return 0xff;
    return allowed_mask_per_priority(now_ns);
  }
  [[nodiscard]] bool paused(std::uint8_t prio, std::int64_t now_ns) const {
    return ((allowed_mask(now_ns) >> prio) & 1u) == 0;
  }
  // First whole nanosecond at which prio may send again (rounded up), never_ns while
  // held by a pause-until-resume frame, or a time <= now when not paused.
  [[nodiscard]] std::int64_t resume_ns(std::uint8_t prio) const;
  // Pause length of q quanta at this port's speed, in picoseconds.
  [[nodiscard]] std::int64_t quanta_ps(std::uint16_t q) const;

 private:
  // The latest pause end over all priorities (never_ns if one is held until XON): at or
  // after it every priority may send, which answers allowed_mask without the loop in
  // the common unpaused case (it is asked before every frame). First, so that answer
  // reads the first bytes of the object, which its owner can keep beside its own
  // per-frame state.
  std::int64_t latest_until_ps_ = 0;
  std::int64_t rate_bps_ = 100'000'000'000;
  bool pause_until_resume_ = false;
  std::array<std::int64_t, num_priorities> paused_until_ps_{};  // 0: not paused

  [[nodiscard]] std::uint8_t allowed_mask_per_priority(std::int64_t now_ns) const;
};

// What the MMU reports about an ingress priority group, in cells.
struct pg_occupancy {
  std::int64_t shared_cells = 0;
  std::int64_t headroom_cells = 0;
  std::int64_t xoff_cells = 0;  // current XOFF threshold (its shared limit, static or dynamic)
  std::int64_t xon_cells = 0;   // current XON threshold
};

// Sends control frames on a port; implemented by the switch model, which reserves link
// time for them (a MAC control frame goes ahead of queued data but not into the middle
// of a frame being sent).
class control_frame_port {
 public:
  // quanta 0 is XON; refresh marks a repeated XOFF.
  virtual void send_pfc(std::uint16_t port, std::uint8_t prio, std::uint16_t quanta, bool refresh,
                        std::int64_t now_ns) = 0;

 protected:
  ~control_frame_port() = default;
};

class link_flow_control {
 public:
  virtual ~link_flow_control() = default;
  // Receive side. Called after a lossless PG's occupancy changed.
  virtual void on_ingress_occupancy(std::uint16_t port, std::uint8_t prio, const pg_occupancy& occ,
                                    std::int64_t now_ns) = 0;
  // True while the receive side has told the peer to stop prio (the MMU then lands
  // further arrivals of that PG in headroom).
  [[nodiscard]] virtual bool ingress_stopped(std::uint16_t port, std::uint8_t prio) const = 0;
  // Transmit side. A flow-control frame from the peer, fully received at now_ns.
  virtual void on_pfc_frame(std::uint16_t port, std::uint8_t class_enable,
                            const std::array<std::uint16_t, num_priorities>& quanta, std::int64_t now_ns) = 0;
  // Bit p set: priority p may start a frame on port at now_ns.
  [[nodiscard]] virtual std::uint8_t transmit_allowed(std::uint16_t port, std::int64_t now_ns) const = 0;
  // Earliest time prio may start on port (never_ns if held until an explicit resume).
  [[nodiscard]] virtual std::int64_t resume_ns(std::uint16_t port, std::uint8_t prio) const = 0;
  // A frame of prio starts on port (credit schemes consume credits here; PFC ignores it).
  virtual void on_transmit(std::uint16_t port, std::uint8_t prio, std::uint32_t bytes, std::int64_t now_ns) = 0;
};

struct pfc_pg_counters {
  std::uint64_t xoff_sent = 0;     // transitions to XOFF
  std::uint64_t xon_sent = 0;      // transitions to XON (counted even when send_xon is off)
  std::uint64_t refresh_sent = 0;  // repeated XOFF frames while paused
};

// PFC per 802.1Qbb: XOFF when a lossless PG's shared occupancy reaches its XOFF threshold
// or it uses headroom; XON when the headroom is empty and the shared occupancy is at or
// below the XON threshold (or zero). These are the HPCC ns-3 switch's CheckShouldPause /
// CheckShouldResume conditions, with SONiC's xon/xon_offset choice of XON threshold.
class pfc_flow_control final : public link_flow_control, private timer_client {
 public:
  pfc_flow_control(const switch_config& cfg, clock& clk, control_frame_port& out);
  pfc_flow_control(const pfc_flow_control&) = delete;
  pfc_flow_control& operator=(const pfc_flow_control&) = delete;
  ~pfc_flow_control() override;

  void on_ingress_occupancy(std::uint16_t port, std::uint8_t prio, const pg_occupancy& occ,
                            std::int64_t now_ns) override;
  [[nodiscard]] bool ingress_stopped(std::uint16_t port, std::uint8_t prio) const override {
    return stopped_[index(port, prio)] != 0;
  }
  void on_pfc_frame(std::uint16_t port, std::uint8_t class_enable,
                    const std::array<std::uint16_t, num_priorities>& quanta, std::int64_t now_ns) override;
  [[nodiscard]] std::uint8_t transmit_allowed(std::uint16_t port, std::int64_t now_ns) const override {
    return egress_[port].allowed_mask(now_ns);
  }
  [[nodiscard]] std::int64_t resume_ns(std::uint16_t port, std::uint8_t prio) const override {
    return egress_[port].resume_ns(prio);
  }
  void on_transmit(std::uint16_t, std::uint8_t, std::uint32_t, std::int64_t) override {}

  [[nodiscard]] const pfc_pg_counters& counters(std::uint16_t port, std::uint8_t prio) const {
    return counters_[index(port, prio)];
  }

 private:
  static std::size_t index(std::uint16_t port, std::uint8_t prio) {
    return static_cast<std::size_t>(port) * num_priorities + prio;
  }
  void on_timer(std::int64_t now_ns, std::uint64_t cookie) override;

  clock& clock_;
  control_frame_port& out_;
  pfc_config cfg_;
  std::vector<std::int64_t> refresh_ns_;    // per port
  std::vector<std::uint8_t> stopped_;       // per PG
  std::vector<timer_id> refresh_timer_;     // per PG
  std::vector<pfc_pg_counters> counters_;   // per PG
  std::vector<pfc_pause_state> egress_;     // per port
};

}  // namespace rocelab::fabric

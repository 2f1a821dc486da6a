#pragma once
// The soft switch: rocelab::fabric's switch_model run in real time over real frames.
//
// Data path, one thread, one event loop:
//   receive (packet_port rings) -> parse -> MAC control? (PFC/PAUSE honoured, consumed)
//   -> ingress mirror -> faults (drop/mark the k-th packet of a QP) -> forwarding (static
//   FDB from the lab, learned source MACs, flooding of group/unknown destinations)
//   -> classification (DSCP/PCP -> traffic class) -> switch_model::admit
//   ... switch_model::dequeue when the port's shaper allows -> ECN rewrite if the model
//   marked CE -> egress mirror -> port delay line (fault) -> send.
// PFC frames the model decides on (XOFF, refresh, XON) are built as real 802.1Qbb
// frames and sent out of the congested ingress port at once.
//
// Real-time shaping: the model serializes frames at rate_bps in picoseconds; the loop
// sends a frame when the model says the link is free. When the loop wakes late (by at
// most max_catchup_ns) it continues back to back from the exact end of the previous
// frame, so the long-run rate is the configured one; after a longer idle period the next
// frame starts at the real time (no burst credit is saved up). When the loop itself was
// away for W beyond that window (the first frame of a receive batch waited W in its ring,
// or a wake-up came W late), the port would have been sending all along, so the window
// widens to W (at most max_stall_catchup_ns) until the port has caught up, and an idle
// port starts W ago: the loop's stalls below that bound cost no drops and no pauses
// below the shaped rate. A paused port owes nothing for the time it was paused: no
// catch-up starts before the last PFC frame the port received, and a stall's credit ends
// while everything queued is paused (else an XON would release a burst).
//
// Packet-rate shaping (rate_pps): a port may also be limited in frames per second (see
// packet_pacer.hpp), the rate the forwarder is declared to sustain; frames above it wait
// in the shared buffer like frames above rate_bps, so the MMU (drop, or PFC on a lossless
// priority) decides what happens to them, not a ring overflow. Departures are handed to
// the kernel in batches (one sendmmsg per port and loop pass).
//
// Drops: every cause is counted apart (see drop_causes.hpp; `counters` has "drops" per
// port and for the switch), forwarder losses separate from the shaper's.
//
// Buffers: a preallocated pool of frame slots; a model packet's cookie is its slot. No
// allocation per packet. When the pool is empty an arriving frame is dropped and counted
// (pool_drops); the pool holds buffer_bytes / cell_bytes + 1024 slots (cells of at least
// 64 bytes), more than the model can keep resident: every packet takes at least one cell.
//
// Run-time changes (control API `set`): the model is rebuilt with the new config; the
// packets it held are moved into the new model in their departure order (dropped and
// counted as reconfig_drops if the new thresholds refuse them); counters carry over;
// priority groups that were XOFF and are not any more get an XON frame.
//
// Reaction time: every port counts how long frames waited in its receive ring
// (ring_wait_max_ns and a log2 histogram in `counters`); PFC headroom must cover the
// bytes that arrive during that wait (see rt_priority and lab_default_settings).
//
// Threading: create() and run() on one thread; handle_request() on that same thread (the
// control socket is served by run()), or any thread while run() is not running.
// Errors: create() returns what could not be opened; run() returns only on stop or on
// an error of the loop itself (epoll), never per packet.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rocelab/common/result.hpp"
#include "rocelab/fabric/soft_switch/control_api.hpp"
#include "rocelab/fabric/soft_switch/frame_ops.hpp"
#include "rocelab/fabric/soft_switch/mirror.hpp"
#include "rocelab/fabric/soft_switch/packet_pacer.hpp"
#include "rocelab/fabric/soft_switch/packet_port.hpp"
#include "rocelab/fabric/soft_switch/switch_settings.hpp"

namespace rocelab::fabric::soft_switch {

struct port_spec {
  std::string ifname;
  mac_address mac{};                   // the switch port's own MAC (source of its PFC frames)
  std::vector<mac_address> peer_macs;  // static FDB entries: hosts behind this port
};

struct soft_switch_options {
  std::vector<port_spec> ports;
  std::string mirror_ifname;  // empty: no mirror port
  switch_settings settings;   // settings.model.ports must have ports.size() entries
  mirror_settings mirror;
  std::string control_socket;  // empty: no control socket (handle_request still works)
  packet_port_options ring;    // ifname ignored
  std::uint32_t max_frame_bytes = 9216 + 64;
  std::int64_t max_catchup_ns = 50'000;
  std::int64_t max_stall_catchup_ns = 20'000'000;
  // Frames per second each port sends at most (packet_pacer); 0: no limit beyond rate_bps.
  std::int64_t port_rate_pps = 0;
  std::int64_t spin_ns = 20'000;  // sleep only when the next deadline is further away
  bool learn = true;              // learn source MACs (static entries win)
  // Real-time scheduling of the data-path loop (SCHED_FIFO at this priority, memory
  // locked); 0 keeps the default policy. The switch's reaction time -- from a frame
  // entering a port's ring to the PFC decision it causes -- is the time the loop is kept
  // off the CPU; under SCHED_OTHER on a loaded machine that is tens of milliseconds, more
  // than any sane headroom, while a SCHED_FIFO loop is woken within microseconds (it
  // sleeps whenever nothing is due, so it does not hold a CPU). When the policy cannot be
  // set (no CAP_SYS_NICE) the switch runs anyway and says so in `status`.
  int rt_priority = 0;
  // The reaction time the headroom was sized for (see lab_default_settings); reported in
  // `status` beside the measured ring waits so an operator sees whether it held.
  std::int64_t response_budget_ns = 0;
};

class soft_switch {
 public:
  [[nodiscard]] static result<std::unique_ptr<soft_switch>> create(soft_switch_options options);
  ~soft_switch();
  soft_switch(const soft_switch&) = delete;
  soft_switch& operator=(const soft_switch&) = delete;

  // Runs until `stop` is set (checked at least every 50 ms).
  [[nodiscard]] status run(const std::atomic<bool>& stop);

  // One control request line -> one response line (no newline).
  [[nodiscard]] std::string handle_request(std::string_view line);

  class impl;

 private:
  explicit soft_switch(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

}  // namespace rocelab::fabric::soft_switch

#pragma once
// Why frames were lost at one soft switch port, one counter a cause, split into the two
// kinds an operator must tell apart:
// - forwarder losses: the soft path itself could not keep up (a receive ring overflowed,
//   the interface dropped, the kernel refused a send, no frame buffer was free). Below
//   the port's shaped rate these must all stay 0: the lab's lossless class rests on it.
// - shaper losses: the shared buffer (MMU) refused a frame because the port's shaper
//   (rate_bps, and rate_pps where set) let the egress queue grow past its limit, or the
//   PFC watchdog discarded it. That is a switch doing its job above its rate; a lossless
//   priority gets PFC instead, and its drops here mean the sender ignored the pause.
// Faults injected through the control API are neither and are counted on their own.
//
// Pure: built from counters the switch already keeps; no I/O.

#include <cstdint>

#include <nlohmann/json.hpp>

namespace rocelab::fabric::soft_switch {

struct port_drop_causes {
  // forwarder
  std::uint64_t ring = 0;        // receive ring full (PACKET_STATISTICS tp_drops)
  std::uint64_t link_rx = 0;     // the port's interface, before the ring (rx_dropped)
  std::uint64_t link_tx = 0;     // the port's interface, after the switch sent (tx_dropped)
  std::uint64_t tx_refused = 0;  // sendmmsg/sendto refused the frame
  std::uint64_t pool = 0;        // no free frame buffer
  std::uint64_t oversize = 0;    // longer than the switch's largest frame
  // shaper (MMU)
  std::uint64_t ingress_limit = 0, egress_limit = 0, headroom = 0, pfc_watchdog = 0;
  // neither
  std::uint64_t fault = 0, reconfig = 0;

  [[nodiscard]] std::uint64_t forwarder() const noexcept {
    return ring + link_rx + link_tx + tx_refused + pool + oversize;
  }
  [[nodiscard]] std::uint64_t shaper() const noexcept { return ingress_limit + egress_limit + headroom + pfc_watchdog; }
  [[nodiscard]] std::uint64_t total() const noexcept { return forwarder() + shaper() + fault + reconfig; }

  port_drop_causes& operator+=(const port_drop_causes& o) noexcept {
    ring += o.ring;
    link_rx += o.link_rx;
    link_tx += o.link_tx;
    tx_refused += o.tx_refused;
    pool += o.pool;
    oversize += o.oversize;
    ingress_limit += o.ingress_limit;
    egress_limit += o.egress_limit;
    headroom += o.headroom;
    pfc_watchdog += o.pfc_watchdog;
    fault += o.fault;
    reconfig += o.reconfig;
    return *this;
  }

  // {"forwarder": {cause: n, ..., "total": n}, "shaper": {...}, "fault": n, "reconfig": n, "total": n}
  [[nodiscard]] nlohmann::json to_json() const {
    return {{"forwarder",
             {{"ring", ring}, {"link_rx", link_rx}, {"link_tx", link_tx}, {"tx_refused", tx_refused},
              {"pool", pool}, {"oversize", oversize}, {"total", forwarder()}}},
            {"shaper",
             {{"ingress_limit", ingress_limit}, {"egress_limit", egress_limit}, {"headroom", headroom},
              {"pfc_watchdog", pfc_watchdog}, {"total", shaper()}}},
            {"fault", fault},
            {"reconfig", reconfig},
            {"total", total()}};
  }
};

}  // namespace rocelab::fabric::soft_switch
